"""The app's shared objects: the background-job registry (Judges page), the queue plans."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest

from calibrate_app import judge_info
from calibrate_app.resources import BackgroundJob, JobRegistry, QueuePlans, _HeapFreeze
from judges.config import load_builtin
from judges.providers.scripted import ScriptedProvider
from judges.runner import run_judge
from labels import LabelStore
from labels.importing import import_rows
from labels.sampling import QueueSettings, plan_queue


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


def test_a_judge_order_plan_is_rebuilt_off_the_page_once_old_enough(
    store: LabelStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(
        f'{{"id": "r{k}", "question": "Is {k} even?", "answer": "yes", '
        f'"sources": [{{"text": "{k} is a number."}}]}}\n' for k in range(12)
    ))
    import_rows(store, path, "d")
    settings = QueueSettings("stratified", 3, 1)
    young, aged = QueuePlans(refresh=3600.0), QueuePlans(refresh=0.0)
    before = young.get(store, "d", 12, settings)
    assert before.order == "random" and before.note is not None  # no judge run yet
    assert aged.get(store, "d", 12, settings) == before
    verdicts = iter(["PASS", "FAIL"] * 6)
    run_judge(load_builtin("faithfulness-oneshot"), "d", store=store,
              provider=ScriptedProvider("x", responder=lambda r: f"VERDICT: {next(verdicts)}"))
    # A judge run stores verdicts call by call: a plan younger than `refresh` stays as it is,
    # and an older one is served once more while its rebuild runs in the background.
    looked: list[str] = []
    fingerprint = judge_info.fingerprint
    monkeypatch.setattr(judge_info, "fingerprint",
                        lambda s, d: looked.append(d) or fingerprint(s, d))
    assert young.get(store, "d", 12, settings) is before
    assert looked == []  # a young plan is served without reading the verdicts
    assert aged.get(store, "d", 12, settings) == before
    aged.wait()
    after = aged.get(store, "d", 12, settings)
    assert after == plan_queue(store.item_ids("d"), order="stratified", seed=3,
                               verdicts=judge_info.latest_verdicts(store, "d"))
    assert after.order == "stratified" and set(after.strata.values()) == {"pass", "fail"}
    assert aged.get(store, "d", 12, settings) is after  # verdicts unchanged: no rebuild
    aged.wait()
    assert young.get(store, "d", 12, settings) is before


def test_settling_freezes_the_heap_once_unless_a_job_holds_it() -> None:
    heap = _HeapFreeze()
    assert gc.get_freeze_count() == 0
    try:
        assert heap.settle() and gc.get_freeze_count() > 0
        assert not heap.settle()  # already frozen: nothing to do
        gc.unfreeze()  # what the end of the last running job does
        job = BackgroundJob(key="k", title="a job")
        heap.hold(job)
        gc.unfreeze()
        assert not heap.settle()  # a running job decides when the heap is frozen
        heap.release(job)
        assert heap.settle()
    finally:
        gc.unfreeze()
