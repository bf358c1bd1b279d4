"""Run a judge through a provider's batch service: submit, poll, collect — resumable after kill -9.

:func:`run_judge_batch` plans the run exactly like an online run (:func:`judges.run_plan.plan_run`:
stored replies are cached), then:

1. **Recovers** the submissions of this judge that an earlier run left open: a ``submitting``
   one (killed between the request and the reply) is looked up at the provider and adopted,
   or abandoned when it never arrived; ``submitted`` ones are polled and collected below.
2. **Submits** every planned call that is neither stored nor in an open batch, in
   provider-sized batches. Each submission and the calls it carries are stored *before* its
   request is sent, and its batch id right after (:class:`~judges.stores.batch_store.BatchStore`):
   no call is ever submitted twice.
3. **Polls** the open batches with backoff (``poll_interval`` doubling up to
   ``max_poll_interval``, back to the start when anything moves), reporting each status.
4. **Collects** each ended batch in one transaction: every reply becomes a ``judge_calls`` row
   exactly like an online call's (request, raw reply and response, verdict or unscored reason,
   tokens), priced at the batch price (:data:`~judges.batch.api.BATCH_DISCOUNT`) and with
   ``latency_ms`` = the time the batch took. Expired, cancelled and retryable failed items go
   into the next batch, up to ``policy.max_retries`` times; then (or at once when not
   retryable) they are stored as ``failed`` with the error, as an online call is, and the
   next run retries them.

Stopping (``should_stop``) leaves the open batches at the provider — they are paid for — and
the next run collects them. Claim-split judges need several dependent calls per judgement
and cannot be batched.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import Any, TypeVar

from judges.batch.api import (
    BATCH_DISCOUNT,
    BatchAPI,
    BatchRequest,
    BatchState,
    BatchUnsupportedError,
    ItemResult,
)
from judges.batch.services import batch_api
from judges.calls import CallContext, CallPolicy, StopFlag, record_reply, request_for, stopped
from judges.config import JudgeConfig
from judges.pricing import Price
from judges.providers import Provider, get_provider
from judges.providers.base import CompletionRequest, Message, ProviderError
from judges.run_plan import PRICES_HINT, CostEstimate, PlannedCall, plan_run
from judges.runner import ProgressCallback, RunSummary
from judges.settings import Settings
from judges.stores.batch_store import BatchCall, BatchStore, StoredBatch, new_batch_key
from judges.stores.judge_store import CallRecord
from judges.workspace import Workspace
from labels.errors import CalibrateError

T = TypeVar("T")
StatusCallback = Callable[[str], None]
Key = tuple[str, int, str]


def batch_price(price: Price | None) -> Price | None:
    """The batch price of a model (half its online price), ``None`` when unknown."""
    if price is None:
        return None
    return Price(price.input_per_mtok * BATCH_DISCOUNT, price.output_per_mtok * BATCH_DISCOUNT)


def describe_batch_cost(estimate: CostEstimate, *, prices_hint: str | None = PRICES_HINT) -> str:
    """The estimate's cost online and through the batch API, for people.

    ``prices_hint`` says how to give a missing price (see :meth:`CostEstimate.describe`).
    """
    if estimate.cost_typical is None or estimate.cost_max is None:
        hint = f"; {prices_hint}" if prices_hint else ""
        return f"cost unknown online and in batch (no price for this model{hint})"
    return (
        f"online about ${estimate.cost_typical:,.4f} (at most ${estimate.cost_max:,.4f}); "
        f"batch API ({BATCH_DISCOUNT:.0%} of the price, results within 24 h) about "
        f"${estimate.cost_typical * BATCH_DISCOUNT:,.4f} "
        f"(at most ${estimate.cost_max * BATCH_DISCOUNT:,.4f})"
    )


@dataclass
class BatchRunSummary(RunSummary):
    """A :class:`RunSummary` plus what the batches did.

    Attributes:
        batches_submitted: batches this run created at the provider.
        batches_recovered: submissions whose creation reply an earlier run lost, found again.
        batches_collected: batches whose results this run stored (its own and earlier ones).
        batches_open: batches still at the provider when the run ended (stopped).
        resubmitted: items sent again after expiring, being cancelled or failing.
        collected_other: replies collected for calls outside this run's plan (another
            dataset or limit of the same judge); stored, not counted above.
    """

    batches_submitted: int = 0
    batches_recovered: int = 0
    batches_collected: int = 0
    batches_open: int = 0
    resubmitted: int = 0
    collected_other: int = 0

    def describe(self) -> str:
        """The online summary plus one line on the batches."""
        line = (f"  batches: {self.batches_submitted} submitted, {self.batches_collected} "
                f"collected, {self.batches_open} still at the provider; "
                f"{self.resubmitted} items resubmitted")
        if self.batches_recovered:
            line += f"; {self.batches_recovered} lost submissions found again"
        if self.collected_other:
            line += f"; {self.collected_other} replies for calls outside this plan"
        return super().describe() + "\n" + line


@dataclass
class BatchPolling:
    """How often to poll: from ``interval`` seconds, ×1.5 per quiet poll, up to ``max_interval``."""

    interval: float = 5.0
    max_interval: float = 60.0


@dataclass
class _Open:
    """A submission at the provider and its last poll.

    Its calls stay in the store until the batch is collected: a million calls in flight are
    not a million objects in memory.
    """

    key: str
    batch_id: str
    submitted_at: float
    last: BatchState | None = None


@dataclass
class _Engine:
    config: JudgeConfig
    api: BatchAPI
    batches: BatchStore
    context: CallContext
    summary: BatchRunSummary
    polling: BatchPolling
    calls_per_batch: int
    on_progress: ProgressCallback | None
    on_status: StatusCallback | None
    open: list[_Open] = field(default_factory=list)
    attempts: dict[Key, list[dict[str, Any]]] = field(default_factory=dict)
    counted: set[Key] = field(default_factory=set)
    planned: set[Key] = field(default_factory=set)
    """The keys of this run's plan (filled while its calls are submitted)."""

    @property
    def spec(self) -> str:
        return self.api.provider.spec

    def status(self, text: str) -> None:
        if self.on_status is not None:
            self.on_status(text)

    def progress(self) -> None:
        if self.on_progress is not None:
            self.on_progress(self.summary.done, self.summary.planned, self.summary)

    async def api_call(self, what: str, make: Callable[[], Awaitable[T]]) -> T:
        """One batch-API request with the run's retries for rate limits, 5xx and resets."""
        policy = self.context.policy
        attempt = 0
        while True:
            try:
                return await make()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # classified: unsupported, retryable, or fatal
                error = self.api.provider.classify_error(exc)
                unsupported = self.api.unsupported(error)
                if unsupported is not None:
                    raise unsupported from None
                if not error.retryable or attempt >= policy.max_retries:
                    raise CalibrateError(f"{what} failed: {error}") from None
                delay = error.retry_after if error.retry_after is not None else min(
                    policy.backoff * 2.0**attempt, policy.max_backoff)
                await asyncio.sleep(min(delay, policy.max_retry_wait))
                attempt += 1

    # -- recovery -------------------------------------------------------------------------

    async def recover(self) -> None:
        """Adopt or abandon the submissions an earlier run left open."""
        for stored in self.batches.open_batches(self.config.config_id, self.spec):
            batch_id = stored.batch_id
            if stored.state == "submitting":
                batch_id = await self.find_lost(stored)
                if batch_id is None:
                    self.batches.abandon(stored.batch_key, "never reached the provider")
                    continue
            assert batch_id is not None
            self.open.append(_Open(stored.batch_key, batch_id,
                                   (stored.submitted_at or stored.created_at).timestamp()))

    async def find_lost(self, stored: StoredBatch) -> str | None:
        known = self.batches.known_batch_ids(self.spec)
        found = await self.api_call(
            f"looking for submission {stored.batch_key}",
            lambda: self.api.find(stored.batch_key, stored.calls, stored.created_at, known))
        if found is None:
            return None
        self.batches.submitted(stored.batch_key, found.batch_id, found.input_file_id)
        self.summary.batches_recovered += 1
        self.status(f"found batch {found.batch_id} of submission {stored.batch_key} again "
                    "(its creation reply was lost); collecting it, not sending it again")
        return found.batch_id

    # -- submission -----------------------------------------------------------------------

    def chunks(self, calls: Iterable[BatchCall]) -> Iterator[list[BatchCall]]:
        """Calls in batches under the provider's count and size limits (one batch in memory)."""
        chunk: list[BatchCall] = []
        size = 0
        for call in calls:
            line = self.api.line_bytes(BatchRequest(call.custom_id, _request(call.request)))
            if chunk and (len(chunk) >= self.calls_per_batch
                          or size + line > self.api.max_bytes):
                yield chunk
                chunk, size = [], 0
            chunk.append(call)
            size += line
        if chunk:
            yield chunk

    async def submit(self, calls: Iterable[BatchCall]) -> None:
        for chunk in self.chunks(calls):
            if stopped(self.context.should_stop):
                return
            self.open.append(await self.submit_one(chunk))

    async def submit_one(self, chunk: list[BatchCall]) -> _Open:
        """Record, then send one batch; a lost reply is looked up before anything is resent."""
        policy = self.context.policy
        attempt = 0
        while True:
            key = new_batch_key()
            chunk = [BatchCall(f"{key}_{n}", c.item_id, c.item_hash, c.repeat, c.ordering,
                               c.request) for n, c in enumerate(chunk)]
            self.batches.begin(key, config_id=self.config.config_id, provider=self.spec,
                               run_id=self.context.run_id, calls=chunk)
            items = [BatchRequest(c.custom_id, _request(c.request)) for c in chunk]
            try:
                submitted = await self.api.submit(key, items)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # classified below: lost reply, refusal, or transient
                error = self.api.provider.classify_error(exc)
                unsupported = self.api.unsupported(error)
                if unsupported is None and error.kind in ("timeout", "connection"):
                    # The request may have arrived although its reply did not.
                    stored = next((s for s in self.batches.batches(states=("submitting",))
                                   if s.batch_key == key), None)
                    found = await self.find_lost(stored) if stored is not None else None
                    if found is not None:
                        return _Open(key, found, time.time())
                # Not created: the calls are free again (a retry carries them under a new key).
                self.batches.abandon(key, str(error))
                if unsupported is not None:
                    raise unsupported from None
                if not error.retryable or attempt >= policy.max_retries:
                    raise CalibrateError(
                        f"submitting a batch of {len(chunk)} calls failed: {error}") from None
                attempt += 1
                await _sleep(min(policy.backoff * 2.0**attempt, policy.max_backoff),
                             self.context.should_stop)
                continue
            self.batches.submitted(key, submitted.batch_id, submitted.input_file_id)
            self.summary.batches_submitted += 1
            self.status(f"submitted batch {submitted.batch_id}: {len(chunk)} calls")
            return _Open(key, submitted.batch_id, time.time())

    # -- polling and collection -----------------------------------------------------------

    async def poll(self) -> list[BatchCall]:
        """Poll until every open batch is collected (or the run is stopped); return retries."""
        retries: list[BatchCall] = []
        interval = self.polling.interval
        while self.open and not stopped(self.context.should_stop):
            moved = False
            for entry in list(self.open):
                state = await self.api_call(f"polling batch {entry.batch_id}",
                                            partial(self.api.state, entry.batch_id))
                if state.error:  # the provider's words, stored in the batch and its calls' rows
                    state = replace(state, error=self.api.provider.redact(state.error))
                if entry.last is None or (state.status, state.counts) != (
                        entry.last.status, entry.last.counts):
                    moved = True
                    self.batches.update_status(entry.key, state.status, state.counts,
                                               state.ended_at)
                    counts = ", ".join(f"{k} {v}" for k, v in state.counts.items())
                    self.status(f"batch {state.batch_id}: {state.status} ({counts})")
                entry.last = state
                if state.ended:
                    retries.extend(await self.collect(entry, state))
                    self.open.remove(entry)
            if self.open:
                interval = self.polling.interval if moved else min(
                    interval * 1.5, self.polling.max_interval)
                self.status(f"{len(self.open)} batches at the provider; next check in "
                            f"{interval:.0f} s")
                await _sleep(interval, self.context.should_stop)
        return retries

    async def collect(self, entry: _Open, state: BatchState) -> list[BatchCall]:
        results = await self.api_call(f"reading the results of batch {entry.batch_id}",
                                      lambda: self.api.results(state))
        by_id: dict[str, ItemResult] = {r.custom_id: r for r in results}
        # The provider's own timestamps when it gives them (OpenAI's are whole seconds, so a
        # batch within one second reads 0: then the time from our submission to this poll).
        latency_ms = 0.0
        if state.created_at is not None and state.ended_at is not None:
            latency_ms = (state.ended_at - state.created_at).total_seconds() * 1000
        if latency_ms <= 0:
            latency_ms = (time.time() - entry.submitted_at) * 1000
        records: list[CallRecord] = []
        outcomes: dict[str, str] = {}
        retries: list[BatchCall] = []
        for call in self.batches.calls(entry.key):
            result = by_id.get(call.custom_id) or ItemResult(
                call.custom_id, "errored", error=ProviderError(
                    f"the batch returned no result for this request ({state.error})"
                    if state.error else "the batch returned no result for this request",
                    kind="batch_failed" if state.error else "batch_missing",
                    retryable=state.error is None))
            record = self.record(call, result, entry.batch_id, latency_ms)
            if record is None:
                outcomes[call.custom_id] = "retry"
                retries.append(call)
                continue
            outcomes[call.custom_id] = "stored" if record.status != "failed" else "failed"
            records.append(record)
        if not self.batches.collect(entry.key, self.context.run_id, records, outcomes,
                                    error=state.error):
            self.status(f"batch {entry.batch_id} was collected by another run")
            return []
        self.summary.batches_collected += 1
        self.summary.resubmitted += len(retries)
        for record in records:
            if record.key in self.planned and record.key not in self.counted:
                self.counted.add(record.key)
                self.summary.add(record)
            else:
                self.summary.collected_other += 1
        self.status(f"collected batch {entry.batch_id}: {len(records)} stored, "
                    f"{len(retries)} to send again")
        self.progress()
        return retries

    def record(self, call: BatchCall, result: ItemResult, batch_id: str,
               latency_ms: float) -> CallRecord | None:
        """The call row of one result, or ``None`` when the item goes into another batch."""
        earlier = self.attempts.setdefault(call.key, [])
        record = CallRecord(
            run_id=self.context.run_id, config_id=self.config.config_id, item_id=call.item_id,
            item_hash=call.item_hash, repeat=call.repeat, ordering=call.ordering,
            status="failed", request=call.request, attempts=list(earlier),
            retries=len(earlier), latency_ms=latency_ms,
        )
        if result.completion is not None:
            record = record_reply(record, self.config, result.completion, self.context.price)
            record.latency_ms = latency_ms
            return record
        error = self.api.provider.redacted(
            result.error or ProviderError("no result", kind="batch_missing"))
        earlier.append({"attempt": len(earlier), "kind": error.kind, "status": error.status,
                        "error": str(error)[:500], "batch_id": batch_id,
                        "seconds": round(latency_ms / 1000, 3)})
        policy = self.context.policy
        if error.retryable and len(earlier) <= policy.max_retries and not stopped(
                self.context.should_stop):
            return None
        give_up = ("not retryable" if not error.retryable
                   else f"gave up after {len(earlier)} batches" if len(
                       earlier) > policy.max_retries
                   else "the run was stopped")
        record.attempts = list(earlier)
        record.error = f"{error} ({give_up})"
        record.error_kind = error.kind
        return record

    def fresh(self, plan: Iterable[PlannedCall], in_flight: set[Key]) -> Iterator[BatchCall]:
        """The planned calls no open batch carries, rendered one at a time as they are sent."""
        for planned in plan:
            self.planned.add(planned.key)
            if planned.key not in in_flight:
                yield _batch_call(self.context, planned)

    async def run(self, plan: Iterable[PlannedCall]) -> None:
        await self.recover()
        in_flight = self.batches.in_flight_keys(self.config.config_id)
        todo: Iterable[BatchCall] = self.fresh(plan, in_flight)
        while True:
            await self.submit(todo)
            if stopped(self.context.should_stop):
                break
            todo = await self.poll()
            if not todo and not self.open:
                break
        self.summary.batches_open = len(self.open)


def _request(record: Mapping[str, Any]) -> CompletionRequest:
    """The :class:`CompletionRequest` a stored request record was made from."""
    fields = dict(record)
    fields["messages"] = tuple(Message(m["role"], m["content"]) for m in fields["messages"])
    return CompletionRequest(**fields)


async def _sleep(seconds: float, should_stop: StopFlag | None) -> None:
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0 and not stopped(should_stop):
        await asyncio.sleep(min(left, 0.1))


def _batch_call(context: CallContext, planned: PlannedCall) -> BatchCall:
    request = request_for(context, planned)
    return BatchCall("", planned.item.item_id, planned.item_hash, planned.repeat,
                     planned.order, request.record())


def run_judge_batch(config: JudgeConfig, dataset: str, **options: Any) -> BatchRunSummary:
    """Run ``config`` over ``dataset`` through the batch API in an event loop of its own.

    The keyword arguments are :func:`run_judge_batch_async`'s.
    """
    return asyncio.run(run_judge_batch_async(config, dataset, **options))


async def run_judge_batch_async(
    config: JudgeConfig, dataset: str, *, workspace: Workspace,
    provider: Provider | None = None,
    settings: Settings | None = None, repeats: int | None = None, swap: bool | None = None,
    item_ids: Iterable[str] | None = None, labelled_only: bool = False,
    limit: int | None = None, policy: CallPolicy | None = None, dry_run: bool = False,
    prices: Mapping[str, Price] | None = None, on_progress: ProgressCallback | None = None,
    on_status: StatusCallback | None = None, should_stop: StopFlag | None = None,
    polling: BatchPolling | None = None, calls_per_batch: int | None = None,
) -> BatchRunSummary:
    """Run ``config`` over ``dataset`` through the provider's batch API (module docstring).

    Args:
        config: the judge (a single-call judge: claim splits cannot be batched).
        dataset: the dataset name in ``workspace``.
        workspace: the open database (items, judge calls and batches).
        provider: an Anthropic or OpenAI provider (default: ``get_provider(config.model)``).
        settings: keys and base URLs for the default provider.
        repeats: samples per item and order (default ``config.repeats``).
        swap: also run the swapped order (default ``config.swap``).
        item_ids: only these items.
        labelled_only: only items with a human label for the criterion.
        limit: at most this many items.
        policy: retries of the batch-API requests, and how many batches an expired or
            failed item may go into (``max_retries``).
        dry_run: plan and estimate only.
        prices: a price table (default :data:`judges.pricing.DEFAULT_PRICES`); batch calls
            cost :data:`~judges.batch.api.BATCH_DISCOUNT` of it.
        on_progress: ``(done, total, summary)`` at the start and after each collected batch.
        should_stop: once set, no further batch is submitted and polling stops; the open
            batches stay at the provider for the next run to collect.
        on_status: called with a line of text whenever a batch is submitted, changes status,
            is collected, or the next poll is scheduled.
        polling: how often to poll (:class:`BatchPolling`).
        calls_per_batch: most calls per batch (default: the provider's limit).

    Raises:
        BatchUnsupportedError: the provider, or the server behind its base URL, has no batch
            API; or the judge is a claim-split judge.
    """
    if config.claim_split is not None:
        raise BatchUnsupportedError(
            f"judge {config.name!r} splits answers into claims (several dependent calls per "
            "judgement), which a batch cannot carry; run it without --batch"
        )
    policy = policy or CallPolicy()
    judge_store = workspace.judges
    if provider is None and not dry_run:
        provider = get_provider(config.model, settings=settings)
    api = batch_api(provider) if provider is not None else None
    plan = plan_run(
        workspace, config, dataset, repeats=repeats, swap=swap, item_ids=item_ids,
        labelled_only=labelled_only, limit=limit, prices=prices, judge_store=judge_store,
        model=provider.spec if provider is not None else None,
    )
    summary = BatchRunSummary.for_plan(config, dataset, plan)
    if dry_run or api is None or provider is None:
        return summary.dry_run_of(plan)
    batches = workspace.batches
    judge_store.save_config(config)
    options = {
        "mode": "batch", "repeats": plan.repeats, "swap": len(plan.orders) == 2,
        "limit": limit, "labelled_only": labelled_only, "items": len(plan.item_ids),
        "provider": provider.spec, "policy": asdict(policy),
    }
    run_id = judge_store.create_run(config.config_id, dataset, options=options,
                                    planned=plan.planned)
    summary.run_id = run_id
    context = CallContext(
        config=config, config_id=config.config_id, provider=provider, run_id=run_id,
        policy=policy, price=batch_price(plan.estimate.price), should_stop=should_stop,
        rng=random.Random(),
    )
    engine = _Engine(
        config=config, api=api, batches=batches, context=context, summary=summary,
        polling=polling or BatchPolling(),
        calls_per_batch=min(calls_per_batch or api.max_calls, api.max_calls),
        on_progress=on_progress, on_status=on_status,
    )
    started = time.perf_counter()
    status = "failed"
    try:
        engine.progress()
        await engine.run(plan.calls)
        status = "cancelled" if summary.batches_open or summary.done < summary.planned else (
            "completed")
    except asyncio.CancelledError:
        status = "cancelled"
        raise
    finally:
        summary.not_run = summary.planned - summary.done
        summary.status = status
        summary.wall_seconds = time.perf_counter() - started
        judge_store.finish_run(run_id, status, summary.to_dict())
        await provider.aclose()
    return summary


__all__ = [
    "BatchPolling", "BatchRunSummary", "StatusCallback", "batch_price", "describe_batch_cost",
    "run_judge_batch", "run_judge_batch_async",
]
