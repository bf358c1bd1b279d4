"""The app's shared objects: the background-job registry (used by the Judges page)."""

from __future__ import annotations

import gc
import threading

from calibrate_app.resources import BackgroundJob, JobRegistry


def test_a_job_runs_reports_progress_and_returns_its_result() -> None:
    registry = JobRegistry()
    go = threading.Event()

    def work(job: BackgroundJob) -> str:
        job.advance(0, total=3, message="planned")
        go.wait(10)
        for done in (1, 2, 3):
            job.advance(done)
        return "finished"

    job = registry.start("k", "a job", work)
    assert registry.start("k", "again", work) is job  # one running job per key
    go.set()
    job.join(10)
    assert (job.status, job.done, job.total, job.result) == ("done", 3, 3, "finished")
    assert job.finished_at is not None and registry.get("k") is job
    assert registry.jobs() == [job]


def test_a_failing_job_keeps_its_error() -> None:
    def work(job: BackgroundJob) -> None:
        raise ValueError("no provider key")

    job = JobRegistry().start("bad", "failing", work)
    job.join(10)
    assert job.status == "failed"
    assert job.error == "ValueError: no provider key"


def test_a_job_can_be_cancelled() -> None:
    started = threading.Event()

    def work(job: BackgroundJob) -> None:
        started.set()
        while not job.cancelled:
            threading.Event().wait(0.01)

    job = JobRegistry().start("c", "cancellable", work)
    started.wait(10)
    job.cancel()
    job.join(10)
    assert job.status == "cancelled"


def test_the_heap_is_frozen_while_a_job_works_after_its_setup() -> None:
    assert gc.get_freeze_count() == 0
    step = threading.Event()
    seen: list[int] = []

    def work(job: BackgroundJob) -> None:
        job.advance(0, total=2)  # still setting up: nothing frozen
        seen.append(gc.get_freeze_count())
        job.advance(1)  # the first unit is done: the setup's objects are frozen
        seen.append(gc.get_freeze_count())
        step.wait(10)

    job = JobRegistry().start("f", "freezes", work)
    while len(seen) < 2:
        threading.Event().wait(0.01)
    assert seen[0] == 0 and seen[1] > 0
    step.set()
    job.join(10)
    assert gc.get_freeze_count() == 0  # unfrozen when the last running job ends
