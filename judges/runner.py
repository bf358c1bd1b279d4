"""Run a judge over a dataset: item × repeat × order, concurrently, resumably, every call logged.

:func:`run_judge` plans the calls (:func:`judges.run_plan.plan_run`: ``items × repeats ×
orders``), skips every call whose key ``(config id, item content hash, repeat, order)`` already
has a stored reply, and sends the rest through the provider with bounded async concurrency
(one call, its retries and its row: :mod:`judges.calls`; the claim-split judgement:
:mod:`judges.claimsplit`). Failed calls are retried by the next run; stored replies are never
paid for again, so re-running an interrupted run resumes it.

Threading: :func:`run_judge` runs its own event loop (``asyncio.run``), so it can be called
from a plain background thread (the Streamlit app does this). Rows are written by a dedicated
writer thread in small transactions through :class:`~labels.stores.db.Database` cursors, never a
shared cursor. ``should_stop`` (a :class:`threading.Event`) stops dispatching new calls; calls
in flight finish and are stored. ``on_progress(done, total, summary)`` is called after each
call, from the thread running the loop.

Cost: :func:`~judges.run_plan.plan_run` estimates calls, tokens and cost before anything is sent
(``dry_run`` stops there), from :mod:`judges.pricing`.
"""

from __future__ import annotations

import asyncio
import queue
import random
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Required, Self, TypedDict, Unpack

from judges.calls import CallContext, CallPolicy, StopFlag, call_single, stopped
from judges.claimsplit import call_claim_split
from judges.config import JudgeConfig
from judges.pricing import Price
from judges.providers import STAND_IN_NOTE, Provider, get_provider, is_stand_in
from judges.run_plan import CostEstimate, PlannedCall, RunPlan, plan_run
from judges.settings import Settings
from judges.stores.judge_store import CallRecord, JudgeStore
from judges.workspace import Workspace
from labels.errors import CalibrateError


@dataclass
class RunSummary:
    """What a run did. ``cached + scored + unscored + failed + not_run == planned``.

    Attributes:
        status: ``dry_run``, ``running``, ``completed``, ``cancelled`` or ``failed``.
        cached: planned calls that already had a stored reply (no provider call).
        scored / unscored / failed: new calls by outcome.
        not_run: calls never sent because the run was stopped.
        retries: retry attempts in total; ``retried_ok``: calls that got a reply after retrying.
        provider_requests: requests sent to the provider (first attempts plus retries).
        unscored_reasons / failure_kinds / verdicts: counts over this run's new calls.
    """

    config_id: str
    config_name: str
    revision: int
    dataset: str
    model: str
    run_id: str | None = None
    status: str = "running"
    planned: int = 0
    cached: int = 0
    scored: int = 0
    unscored: int = 0
    failed: int = 0
    not_run: int = 0
    retries: int = 0
    retried_ok: int = 0
    provider_requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0
    wall_seconds: float = 0.0
    unscored_reasons: dict[str, int] = field(default_factory=dict)
    failure_kinds: dict[str, int] = field(default_factory=dict)
    verdicts: dict[str, int] = field(default_factory=dict)
    estimate: CostEstimate | None = None

    @classmethod
    def for_plan(cls, config: JudgeConfig, dataset: str, plan: RunPlan) -> Self:
        """The summary of a run of ``config`` on ``dataset`` about to start on ``plan``."""
        return cls(
            config_id=config.config_id, config_name=config.name, revision=config.revision,
            dataset=dataset, model=plan.estimate.model, planned=plan.planned,
            cached=plan.cached, estimate=plan.estimate,
        )

    def dry_run_of(self, plan: RunPlan) -> Self:
        """End as a dry run: nothing of ``plan`` was sent."""
        self.status = "dry_run"
        self.not_run = len(plan.calls)
        return self

    @property
    def done(self) -> int:
        """Planned calls that are finished (cached or new)."""
        return self.cached + self.scored + self.unscored + self.failed

    def add(self, record: CallRecord) -> None:
        """Count one finished call."""
        if record.status == "scored":
            self.scored += 1
            if record.verdict:
                self.verdicts[record.verdict] = self.verdicts.get(record.verdict, 0) + 1
        elif record.status == "unscored":
            self.unscored += 1
            reason = record.unscored_reason or "unknown"
            self.unscored_reasons[reason] = self.unscored_reasons.get(reason, 0) + 1
        else:
            self.failed += 1
            kind = record.error_kind or "error"
            self.failure_kinds[kind] = self.failure_kinds.get(kind, 0) + 1
        self.retries += record.retries
        self.provider_requests += len(record.attempts) + (record.status != "failed")
        if record.status != "failed" and record.retries:
            self.retried_ok += 1
        self.input_tokens += record.input_tokens or 0
        self.output_tokens += record.output_tokens or 0
        if record.status != "failed":
            if record.cost is None:
                self.cost = None
            elif self.cost is not None:
                self.cost += record.cost

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (what ``judge_runs.summary`` stores)."""
        data = asdict(self)
        data["done"] = self.done
        data["estimate"] = self.estimate.to_dict() if self.estimate else None
        return data

    def describe(self) -> str:
        """A few lines for people."""
        cost = "unknown" if self.cost is None else f"${self.cost:,.4f}"
        stand_in = (f"\n  STAND-IN: {self.model}, a {STAND_IN_NOTE}" if is_stand_in(self.model)
                    else "")
        lines = [
            f"run {self.run_id or '(dry run)'}: judge {self.config_name} r{self.revision} "
            f"({self.config_id[:11]}) on {self.dataset!r} — {self.status}{stand_in}",
            f"  calls: {self.planned} planned, {self.cached} cached, {self.scored} scored, "
            f"{self.unscored} unscored, {self.failed} failed"
            + (f", {self.not_run} not run" if self.not_run else ""),
            f"  retries: {self.retries} ({self.retried_ok} calls succeeded after retrying); "
            f"provider requests: {self.provider_requests}",
            f"  tokens: {self.input_tokens:,} in, {self.output_tokens:,} out; cost {cost}; "
            f"wall time {self.wall_seconds:.1f} s",
        ]
        if self.unscored_reasons:
            lines.append("  unscored: " + ", ".join(
                f"{k} {v}" for k, v in sorted(self.unscored_reasons.items())))
        if self.failure_kinds:
            lines.append("  failed: " + ", ".join(
                f"{k} {v}" for k, v in sorted(self.failure_kinds.items())))
        if self.verdicts:
            lines.append("  verdicts: " + ", ".join(
                f"{k} {v}" for k, v in sorted(self.verdicts.items())))
        return "\n".join(lines)


ProgressCallback = Callable[[int, int, RunSummary], None]


WRITE_INTERVAL = 0.25
"""Seconds between write transactions at most: a commit costs ~5 ms of CPU whatever its size,
so under load rows are gathered for up to this long; a kill -9 loses at most these replies
(sent again by the resumed run). At 160 calls/s, 0.1 s cost the writer ~0.4 ms per call."""


class _CallWriter:
    """Writes finished calls from a queue in small transactions, on its own thread."""

    def __init__(self, judge_store: JudgeStore, batch_size: int) -> None:
        self._store = judge_store
        self._batch_size = batch_size
        self._queue: queue.Queue[CallRecord | None] = queue.Queue()
        self.error: BaseException | None = None
        self.written = 0
        self._thread = threading.Thread(target=self._run, name="judge-call-writer", daemon=True)
        self._thread.start()

    def put(self, record: CallRecord) -> None:
        if self.error is not None:
            raise CalibrateError(f"storing judge calls failed: {self.error}") from self.error
        self._queue.put(record)

    def _run(self) -> None:
        closing = False
        last_commit = 0.0
        while not closing:
            first = self._queue.get()
            if first is None:
                break
            batch = [first]
            # A row that arrives after a quiet spell is written at once; under load, rows
            # are gathered until WRITE_INTERVAL after the previous commit began.
            deadline = last_commit + WRITE_INTERVAL
            while len(batch) < self._batch_size:
                wait = deadline - time.monotonic()
                try:
                    more = self._queue.get(timeout=wait) if wait > 0 else self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    closing = True
                    break
                batch.append(more)
            if self.error is not None:
                continue
            # Stamped before the write: rows queued during a slow commit are written when it
            # ends, not WRITE_INTERVAL later (at most WRITE_INTERVAL after the commit began).
            last_commit = time.monotonic()
            try:
                self._store.write_calls(batch)
                self.written += len(batch)
            except BaseException as error:  # reported to the run via .error
                self.error = error

    def close(self) -> None:
        """Flush what is queued and stop; raise if any write failed."""
        self._queue.put(None)
        self._thread.join()
        if self.error is not None:
            raise CalibrateError(f"storing judge calls failed: {self.error}") from self.error


async def _judge(context: CallContext, planned: PlannedCall) -> CallRecord:
    # The config validator ties claim_split to strategy: claim_split.
    split = context.config.claim_split
    if split is not None:
        return await call_claim_split(context, planned, split)
    return await call_single(context, planned)


async def _execute(
    plan: RunPlan, provider: Provider, judge_store: JudgeStore, run_id: str, policy: CallPolicy,
    summary: RunSummary, concurrency: int, batch_size: int,
    on_progress: ProgressCallback | None, should_stop: StopFlag | None,
) -> None:
    calls = iter(plan.calls)  # built a chunk at a time (see PlannedCalls)
    dispatched = 0
    context = CallContext(
        config=plan.config, config_id=plan.config.config_id, provider=provider, run_id=run_id,
        policy=policy, price=plan.estimate.price, should_stop=should_stop, rng=random.Random(),
    )
    writer = _CallWriter(judge_store, batch_size)

    async def worker() -> None:
        nonlocal dispatched
        while not stopped(should_stop):
            planned = next(calls, None)
            if planned is None:
                break
            dispatched += 1
            record = await _judge(context, planned)
            writer.put(record)
            summary.add(record)
            if on_progress is not None:
                on_progress(summary.done, summary.planned, summary)

    try:
        await _in_workers(provider, concurrency, len(plan.calls), worker)
    finally:
        summary.not_run = len(plan.calls) - dispatched
        try:
            await asyncio.to_thread(writer.close)
        finally:
            await provider.aclose()


async def judge_in_memory_async(
    plan: RunPlan, provider: Provider, *, policy: CallPolicy | None = None,
    concurrency: int = 4, should_stop: StopFlag | None = None,
) -> list[CallRecord]:
    """Make every call of ``plan`` and return the call records; nothing is written.

    The calls are made exactly as :func:`run_judge_async` makes them (same requests, retries,
    parsing and claim splits), but no config, run or call row is stored, so nothing is cached
    either: every planned call goes to the provider. For trying an edited judge on a few rows
    (the Judges page's "Try on N rows"); plan with :func:`~judges.run_plan.plan_run` without a
    ``judge_store``, so that no stored reply counts as cached.
    """
    if concurrency < 1:
        raise CalibrateError("concurrency must be at least 1")
    policy = policy or CallPolicy()
    context = CallContext(
        config=plan.config, config_id=plan.config.config_id, provider=provider,
        run_id="in-memory", policy=policy, price=plan.estimate.price, should_stop=should_stop,
        rng=random.Random(),
    )
    calls = iter(plan.calls)
    records: list[CallRecord] = []

    async def worker() -> None:
        while not stopped(should_stop):
            planned = next(calls, None)
            if planned is None:
                break
            records.append(await _judge(context, planned))

    try:
        await _in_workers(provider, concurrency, len(plan.calls), worker)
    finally:
        await provider.aclose()
    return records


async def _in_workers(provider: Provider, concurrency: int, n_calls: int,
                      worker: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run ``worker`` in as many tasks as the provider allows (at most one per call)."""
    if provider.max_concurrency is not None:
        concurrency = min(concurrency, provider.max_concurrency)
    provider.expect_concurrency(concurrency)
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, min(concurrency, n_calls))):
                group.create_task(worker())
    except BaseExceptionGroup as group_error:
        # One worker's failure cancels the others; report the failure itself, not the group.
        raise group_error.exceptions[0] from None


def judge_in_memory(
    plan: RunPlan, provider: Provider, *, policy: CallPolicy | None = None,
    concurrency: int = 4, should_stop: StopFlag | None = None,
) -> list[CallRecord]:
    """:func:`judge_in_memory_async` in an event loop of its own (callable from any thread)."""
    return asyncio.run(judge_in_memory_async(plan, provider, policy=policy,
                                             concurrency=concurrency, should_stop=should_stop))


class RunJudgeOptions(TypedDict, total=False):
    """The keyword arguments of :func:`run_judge_async`, which :func:`run_judge` forwards."""

    workspace: Required[Workspace]
    provider: Provider | None
    settings: Settings | None
    repeats: int | None
    swap: bool | None
    item_ids: Iterable[str] | None
    labelled_only: bool
    limit: int | None
    concurrency: int
    policy: CallPolicy | None
    dry_run: bool
    prices: Mapping[str, Price] | None
    on_progress: ProgressCallback | None
    should_stop: StopFlag | None
    batch_size: int


def run_judge(config: JudgeConfig, dataset: str, **options: Unpack[RunJudgeOptions]) -> RunSummary:
    """Run ``config`` over ``dataset`` in an event loop of its own; see :func:`run_judge_async`.

    Safe to call from a plain background thread (the Streamlit app does this); the keyword
    arguments are :func:`run_judge_async`'s (:class:`RunJudgeOptions`).
    """
    return asyncio.run(run_judge_async(config, dataset, **options))


async def run_judge_async(
    config: JudgeConfig, dataset: str, *, workspace: Workspace,
    provider: Provider | None = None, settings: Settings | None = None,
    repeats: int | None = None, swap: bool | None = None,
    item_ids: Iterable[str] | None = None, labelled_only: bool = False,
    limit: int | None = None, concurrency: int = 8, policy: CallPolicy | None = None,
    dry_run: bool = False, prices: Mapping[str, Price] | None = None,
    on_progress: ProgressCallback | None = None, should_stop: StopFlag | None = None,
    batch_size: int = 512,
) -> RunSummary:
    """Run ``config`` over ``dataset`` in the caller's event loop (see the module docstring).

    Args:
        config: the judge.
        dataset: the dataset name in ``workspace``.
        workspace: the open database (items from its label store, calls into its judge store).
        provider: the provider to call (default: ``get_provider(config.model, settings)``).
        settings: keys and base URLs for the default provider.
        repeats: samples per item and order (default ``config.repeats``); each is its own call.
        swap: also run the swapped order (default ``config.swap``).
        item_ids: only these items (see :func:`~judges.run_plan.select_items`).
        labelled_only: only items with a human label (see
            :func:`~judges.run_plan.select_items`).
        limit: at most this many items (see :func:`~judges.run_plan.select_items`).
        concurrency: calls in flight at once.
        policy: timeout and retries (:class:`CallPolicy`).
        dry_run: plan and estimate only; nothing is sent or written.
        prices: a price table (default :data:`judges.pricing.DEFAULT_PRICES`).
        on_progress: ``(done, total, summary)`` after every call (and once at the start).
        should_stop: a :class:`threading.Event` (or any :class:`StopFlag`); once set, no new
            call starts, calls in flight finish and are stored, and the summary says
            ``cancelled``.
        batch_size: most rows per write transaction (see :data:`WRITE_INTERVAL`).

    Returns:
        The :class:`RunSummary` (also stored on the run row).
    """
    if concurrency < 1:
        raise CalibrateError("concurrency must be at least 1")
    policy = policy or CallPolicy()
    judge_store = workspace.judges
    if provider is None and not dry_run:
        provider = get_provider(config.model, settings=settings)
    plan = plan_run(
        workspace, config, dataset, repeats=repeats, swap=swap, item_ids=item_ids,
        labelled_only=labelled_only, limit=limit, prices=prices, judge_store=judge_store,
        model=provider.spec if provider is not None else None,
    )
    summary = RunSummary.for_plan(config, dataset, plan)
    if dry_run:
        return summary.dry_run_of(plan)
    assert provider is not None  # built above unless dry_run
    judge_store.save_config(config)
    options = {
        "repeats": plan.repeats, "swap": len(plan.orders) == 2, "concurrency": concurrency,
        "limit": limit, "labelled_only": labelled_only, "items": len(plan.item_ids),
        "provider": provider.spec, "policy": asdict(policy),
    }
    if provider.info():
        options["provider_info"] = provider.info()
    run_id = judge_store.create_run(config.config_id, dataset, options=options,
                                    planned=plan.planned)
    summary.run_id = run_id
    started = time.perf_counter()
    status = "failed"
    try:
        if on_progress is not None:
            on_progress(summary.done, summary.planned, summary)
        await _execute(plan, provider, judge_store, run_id, policy, summary, concurrency,
                       batch_size, on_progress, should_stop)
        status = "cancelled" if summary.not_run else "completed"
    except asyncio.CancelledError:
        status = "cancelled"
        raise
    finally:
        summary.status = status
        summary.wall_seconds = time.perf_counter() - started
        judge_store.finish_run(run_id, status, summary.to_dict())
    return summary


__all__ = [
    "ProgressCallback", "RunJudgeOptions", "RunSummary", "judge_in_memory",
    "judge_in_memory_async", "run_judge", "run_judge_async",
]
