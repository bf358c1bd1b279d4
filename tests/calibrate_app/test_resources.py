"""The app's shared objects: the background-job registry (Judges page), the queue plans."""

from __future__ import annotations

import gc
import logging
import threading
import time
import traceback
from collections import Counter
from typing import Any

import pytest

from calibrate_app import resources
from calibrate_app.resources import BackgroundJob, JobRegistry, QueuePlans, _HeapFreeze
from judges.config import load_builtin
from judges.providers.scripted import ScriptedProvider
from judges.runner import run_judge
from judges.workflows import queue as label_queue
from judges.workspace import Workspace
from labels import LabelStore
from labels.sampling import QueuePlan, QueueSettings, plan_queue


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


TWELVE_ROWS = [{"id": f"r{k}", "question": f"Is {k} even?", "answer": "yes",
                "sources": [{"text": f"{k} is a number."}]} for k in range(12)]


def _judge(store: LabelStore, answers: list[str]) -> None:
    verdicts = iter(answers)
    run_judge(load_builtin("faithfulness-oneshot"), "d", workspace=Workspace.of(store),
              provider=ScriptedProvider("x", responder=lambda r: f"VERDICT: {next(verdicts)}"))


def test_a_judge_order_plan_is_rebuilt_off_the_page_once_old_enough(
    store: LabelStore, make_dataset: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    make_dataset("d", TWELVE_ROWS)
    settings = QueueSettings("stratified", 3, 1)
    young, aged = QueuePlans(refresh=3600.0), QueuePlans(refresh=0.0)
    before = young.get(Workspace.of(store), "d", 12, settings)
    assert before.order == "random" and before.note is not None  # no judge run yet
    assert aged.get(Workspace.of(store), "d", 12, settings) == before
    aged.wait()  # its check of the verdicts runs in the background: done before the judge runs
    _judge(store, ["PASS", "FAIL"] * 6)
    # A judge run stores verdicts call by call: a plan younger than `refresh` stays as it is,
    # and an older one is served once more while its rebuild runs in the background.
    looked: list[str] = []
    fingerprint = label_queue.fingerprint
    monkeypatch.setattr(label_queue, "fingerprint",
                        lambda s, d: looked.append(d) or fingerprint(s, d))
    assert young.get(Workspace.of(store), "d", 12, settings) is before
    assert looked == []  # a young plan is served without reading the verdicts
    assert aged.get(Workspace.of(store), "d", 12, settings) == before
    aged.wait()
    after = aged.get(Workspace.of(store), "d", 12, settings)
    found = label_queue.queue_verdicts(Workspace.of(store), "d")
    assert found is not None
    assert after == plan_queue(store.item_ids("d"), order="stratified", seed=3,
                               verdicts=found.verdicts, judge=found.config_id)
    assert after.judge == found.config_id  # the config whose verdicts built it
    assert after.order == "stratified" and set(after.strata.values()) == {"pass", "fail"}
    # verdicts unchanged: no rebuild
    assert aged.get(Workspace.of(store), "d", 12, settings) is after
    aged.wait()
    assert young.get(Workspace.of(store), "d", 12, settings) is before


def test_an_active_plan_reads_the_judge_calls_once(
    store: LabelStore, make_dataset: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    make_dataset("d", TWELVE_ROWS)
    asked: Counter[str] = Counter()

    def respond(request: Any) -> str:
        # Rows 1 and 2 get a different second answer, so their uncertainty is 1 (others 0).
        text = request.messages[-1].content
        asked[text] += 1
        flips = "Is 1 even?" in text or "Is 2 even?" in text
        return "VERDICT: FAIL" if flips and asked[text] == 2 else "VERDICT: PASS"

    run_judge(load_builtin("faithfulness-oneshot"), "d", workspace=Workspace.of(store), repeats=2,
              provider=ScriptedProvider("x", responder=respond))
    found = label_queue.queue_verdicts(Workspace.of(store), "d")
    scores = label_queue.uncertainty(Workspace.of(store), "d")
    assert found is not None and scores is not None
    assert sorted(k for k, v in scores.items() if v == 1.0) == ["r1", "r2"]
    assert set(scores.values()) == {0.0, 1.0}
    expected = plan_queue(store.item_ids("d"), order="active", seed=3, verdicts=found.verdicts,
                          uncertainty=scores, judge=found.config_id)
    reads: list[str] = []
    read = label_queue.judge_verdicts
    monkeypatch.setattr(label_queue, "judge_verdicts",
                        lambda s, d, *a, **k: reads.append(d) or read(s, d, *a, **k))
    plan = QueuePlans().get(Workspace.of(store), "d", 12, QueueSettings("active", 3, 1))
    assert plan == expected
    assert reads == ["d"]  # verdicts, flips and uncertainty from one read of the calls


class _Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    @staticmethod
    def sleep(seconds: float) -> None:
        time.sleep(seconds)


def test_unchanged_verdicts_are_read_again_only_once_per_refresh_age(
    store: LabelStore, make_dataset: Any, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger=resources.__name__)
    make_dataset("d", TWELVE_ROWS)
    _judge(store, ["PASS", "FAIL"] * 6)
    clock = _Clock()
    monkeypatch.setattr(resources, "time", clock)
    looked: list[str] = []
    fingerprint = label_queue.fingerprint
    monkeypatch.setattr(label_queue, "fingerprint",
                        lambda s, d: looked.append(d) or fingerprint(s, d))
    plans, settings = QueuePlans(refresh=30.0), QueueSettings("stratified", 3, 1)
    plan = plans.get(Workspace.of(store), "d", 12, settings)
    assert len(looked) == 1  # the first build reads it
    clock.now += 31.0
    assert plans.get(Workspace.of(store), "d", 12, settings) is plan
    plans.wait()  # the comparison runs in the background
    assert len(looked) == 2  # old enough: compared, unchanged
    for _ in range(50):  # key presses within the next 30 s read nothing
        clock.now += 0.5
        assert plans.get(Workspace.of(store), "d", 12, settings) is plan
    assert len(looked) == 2
    clock.now += 6.0
    assert plans.get(Workspace.of(store), "d", 12, settings) is plan
    plans.wait()
    assert len(looked) == 3
    assert not [r for r in caplog.records if r.name == resources.__name__]  # no failed check


def test_a_due_plan_is_served_without_reading_the_verdicts_on_the_page(
    store: LabelStore, make_dataset: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The fingerprint is a count over every judge call of the dataset: a key press must not
    # wait for it, even when the plan is due for a check.
    make_dataset("d", TWELVE_ROWS)
    _judge(store, ["PASS", "FAIL"] * 6)
    readers: list[threading.Thread] = []
    fingerprint = label_queue.fingerprint

    def spy(s: Workspace, d: str) -> str:
        readers.append(threading.current_thread())
        return fingerprint(s, d)

    monkeypatch.setattr(label_queue, "fingerprint", spy)
    plans, settings = QueuePlans(refresh=0.0), QueueSettings("stratified", 3, 1)
    plan = plans.get(Workspace.of(store), "d", 12, settings)
    assert readers == [threading.current_thread()]  # the first plan is built on the page
    strict = load_builtin("faithfulness-oneshot").with_revision(system="Be strict.")
    run_judge(strict, "d", workspace=Workspace.of(store),
              provider=ScriptedProvider("x", ["VERDICT: FAIL"] * 12))
    assert plans.get(Workspace.of(store), "d", 12, settings) is plan
    plans.wait()  # newer verdicts (a newer config): compared and rebuilt in the background
    assert len(readers) == 2 and readers[1] is not threading.current_thread()
    rebuilt = plans.get(Workspace.of(store), "d", 12, settings)
    assert rebuilt.judge == strict.config_id and rebuilt.strata is not None
    assert set(rebuilt.strata.values()) == {"fail"}
    plans.wait()
    assert threading.current_thread() not in readers[1:]


def test_a_failed_rebuild_is_logged_with_its_traceback_and_the_old_plan_served(
    store: LabelStore, make_dataset: Any, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    make_dataset("d", TWELVE_ROWS)
    _judge(store, ["PASS"] * 12)
    plans, settings = QueuePlans(refresh=0.0), QueueSettings("stratified", 3, 1)
    before = plans.get(Workspace.of(store), "d", 12, settings)

    def broken(*args: object) -> QueuePlan:
        raise RuntimeError("verdicts unreadable")

    monkeypatch.setattr(label_queue, "build_queue_plan", broken)
    # Newer verdicts (as a running judge stores them): the next request starts a rebuild.
    monkeypatch.setattr(label_queue, "fingerprint", lambda s, d: "moved")
    with caplog.at_level(logging.ERROR, logger=resources.__name__):
        assert plans.get(Workspace.of(store), "d", 12, settings) is before
        plans.wait()
    record = next(r for r in caplog.records if r.name == resources.__name__)
    assert record.levelno == logging.ERROR and record.exc_info is not None
    assert "'d'" in record.getMessage()
    error = "".join(traceback.format_exception(*record.exc_info))
    assert "Traceback" in error
    assert "RuntimeError: verdicts unreadable" in error
    assert "Traceback" in caplog.text and "RuntimeError: verdicts unreadable" in caplog.text
    assert plans.get(Workspace.of(store), "d", 12, settings) is before  # still served
    plans.wait()


def test_sessions_asking_at_once_build_the_first_plan_once(
    store: LabelStore, make_dataset: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    make_dataset("d", TWELVE_ROWS)
    built: list[int] = []
    build = label_queue.build_queue_plan

    def slow(*args: Any) -> QueuePlan:
        built.append(1)
        time.sleep(0.2)  # long enough for every session to arrive while it runs
        return build(*args)

    monkeypatch.setattr(label_queue, "build_queue_plan", slow)
    plans, settings = QueuePlans(), QueueSettings("random", 3, 1)
    start = threading.Barrier(4)
    got: list[QueuePlan] = []

    def session() -> None:
        start.wait()
        got.append(plans.get(Workspace.of(store), "d", 12, settings))

    threads = [threading.Thread(target=session) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(built) == 1 and len(got) == 4
    assert all(plan is got[0] for plan in got)


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
