"""Run a judge over a dataset: item × repeat × order, concurrently, resumably, every call logged.

:func:`run_judge` plans the calls (``items × repeats × orders``), skips every call whose key
``(config id, item content hash, repeat, order)`` already has a stored reply, and sends the rest
through the provider with bounded async concurrency. Each call gets a per-call timeout and
retries with exponential backoff that honours ``retry-after``; every attempt is recorded. A call
ends exactly one way: ``scored`` (a verdict), ``unscored`` (a reply without a usable verdict:
empty, refused, truncated, unparseable, off the label list — with its reason) or ``failed`` (no
reply after the retries, with the error). Failed calls are retried by the next run; stored
replies are never paid for again, so re-running an interrupted run resumes it.

Threading: :func:`run_judge` runs its own event loop (``asyncio.run``), so it can be called
from a plain background thread (the Streamlit app does this). Rows are written by a dedicated
writer thread in small transactions through :class:`~labels.db.Database` cursors, never a
shared cursor. ``should_stop`` (a :class:`threading.Event`) stops dispatching new calls; calls
in flight finish and are stored. ``on_progress(done, total, summary)`` is called after each
call, from the thread running the loop.

Cost: :func:`plan_run` estimates calls, tokens and cost before anything is sent (``dry_run``
stops there). Prices come from :data:`DEFAULT_PRICES` (USD per million tokens, editable, or
loaded from a file with :func:`load_prices`); a model without a price has an unknown cost,
never a made-up one.
"""

from __future__ import annotations

import asyncio
import queue
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from judges.claimsplit import ClaimScore, claim_verdict, parse_claim_lines, score_check
from judges.config import ClaimSplit, JudgeConfig
from judges.parsing import Unscored, Verdict, map_back, parse_reply
from judges.prompts import ORDERS, Neutraliser, Order, RenderedPrompt, render, render_check
from judges.providers import Provider, get_provider
from judges.providers.base import Completion, CompletionRequest, ProviderError
from judges.settings import Settings
from judges.store import CallRecord, JudgeStore, item_hash
from labels.errors import CalibrateError, ImportFileError, NotFoundError
from labels.models import Item
from labels.store import LabelStore

# -- prices -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """Cost of one call with these token counts."""
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


DEFAULT_PRICES: dict[str, Price] = {
    # List prices (USD / million tokens) as published when this table was written; check them,
    # edit this table, or pass prices= / --prices FILE for your contract. A model missing here
    # has an unknown cost (never a guessed one).
    "anthropic/claude-haiku-4-5": Price(1.00, 5.00),
    "anthropic/claude-sonnet-4-5": Price(3.00, 15.00),
    "anthropic/claude-sonnet-4-6": Price(3.00, 15.00),  # assumed: Sonnet's price since 3.5
    "anthropic/claude-opus-4-1": Price(15.00, 75.00),
    "openai/gpt-4o": Price(2.50, 10.00),
    "openai/gpt-4o-mini": Price(0.15, 0.60),
    "openai/gpt-4.1": Price(2.00, 8.00),
    "openai/gpt-4.1-mini": Price(0.40, 1.60),
    "openai/gpt-4.1-nano": Price(0.10, 0.40),
    "scripted/*": Price(0.0, 0.0),
}


def price_for(model: str, prices: Mapping[str, Price] | None = None) -> Price | None:
    """The price of ``provider/model``: an exact entry, else the longest ``prefix*`` entry."""
    table = DEFAULT_PRICES if prices is None else prices
    if model in table:
        return table[model]
    matches = [k for k in table if k.endswith("*") and model.startswith(k[:-1])]
    return table[max(matches, key=len)] if matches else None


def load_prices(path: str | Path) -> dict[str, Price]:
    """Read a price table: ``{"provider/model": {input: 0.15, output: 0.6}, ...}`` (YAML/JSON).

    The entries extend (and override) :data:`DEFAULT_PRICES`.
    """
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ImportFileError("no such file", path=str(path)) from None
    except yaml.YAMLError as error:
        raise ImportFileError(f"not valid YAML/JSON: {error}", path=str(path)) from None
    if not isinstance(data, dict):
        raise ImportFileError("a price table must map provider/model to prices", path=str(path))
    table = dict(DEFAULT_PRICES)
    for model, entry in data.items():
        if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
            raise ImportFileError(
                f"{model}: give exactly 'input' and 'output' (USD per million tokens)",
                path=str(path),
            )
        try:
            table[str(model)] = Price(float(entry["input"]), float(entry["output"]))
        except (TypeError, ValueError):
            raise ImportFileError(f"{model}: prices must be numbers", path=str(path)) from None
    return table


# -- planning ---------------------------------------------------------------------------------

TYPICAL_OUTPUT_TOKENS = {
    "marker": 150, "json": 250, "label": 3, "claims": 450, "claim_split": 60,
}
"""Output tokens assumed per call before any call of the config has been stored."""
TYPICAL_CLAIMS = 3
"""Claims per answer assumed when estimating a claim-split judgement (one check call each)."""


@dataclass(frozen=True)
class PlannedCall:
    """One call to make: an item, a repeat index, an order, and the rendered prompt."""

    item: Item
    item_hash: str
    repeat: int
    order: Order
    prompt: RenderedPrompt

    @property
    def key(self) -> tuple[str, int, str]:
        """The cache key within the config."""
        return (self.item_hash, self.repeat, self.order)


@dataclass(frozen=True)
class Estimate:
    """What a run will cost before it starts.

    ``*_max`` assumes every reply uses ``max_tokens``; ``*_typical`` uses the mean output
    tokens of this config's stored calls, or a per-contract guess before there are any.
    Costs are ``None`` when the model has no price.
    """

    model: str
    calls_planned: int
    calls_cached: int
    calls_to_make: int
    input_tokens: int
    output_tokens_typical: int
    output_tokens_max: int
    price: Price | None
    cost_typical: float | None
    cost_max: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)

    def describe(self) -> str:
        """One paragraph for people."""
        cost = (
            "cost unknown (no price for this model; pass --prices FILE)"
            if self.cost_typical is None or self.cost_max is None
            else f"about ${self.cost_typical:,.4f} (at most ${self.cost_max:,.4f})"
        )
        return (
            f"{self.calls_planned} calls planned, {self.calls_cached} already stored, "
            f"{self.calls_to_make} to make with {self.model}: ~{self.input_tokens:,} input "
            f"tokens, ~{self.output_tokens_typical:,} output tokens (at most "
            f"{self.output_tokens_max:,}); {cost}"
        )


@dataclass
class RunPlan:
    """The calls a run will make and what they will cost."""

    config: JudgeConfig
    dataset: str
    items: list[Item]
    repeats: int
    orders: tuple[Order, ...]
    planned: int
    cached: int
    calls: list[PlannedCall]
    estimate: Estimate


def select_items(
    store: LabelStore, dataset: str, config: JudgeConfig, *, item_ids: Iterable[str] | None = None,
    labelled_only: bool = False, limit: int | None = None,
) -> list[Item]:
    """The items a run covers, in file order.

    Args:
        store: the label store holding ``dataset``.
        dataset: the dataset name; its kind (pointwise/pairwise) must match ``config.kind``.
        config: the judge; its criterion decides what counts as labelled.
        item_ids: only these items (unknown ids raise :class:`NotFoundError`).
        labelled_only: only items with at least one human label for ``config.criterion``.
        limit: the first ``limit`` items after the other filters.
    """
    info = store.dataset(dataset)
    if info.kind != config.kind:
        raise CalibrateError(
            f"judge {config.name!r} is {config.kind} but dataset {dataset!r} is {info.kind}; "
            f"pick a {info.kind} judge"
        )
    wanted = list(item_ids) if item_ids is not None else None
    items = store.items(dataset, item_ids=wanted)
    if wanted is not None:
        missing = sorted(set(wanted) - {i.item_id for i in items})
        if missing:
            raise NotFoundError(
                f"dataset {dataset!r} has no item {missing[0]!r}"
                + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
            )
    if labelled_only:
        labelled = set(store.label_counts(dataset, config.criterion))
        items = [i for i in items if i.item_id in labelled]
        if not items:
            raise CalibrateError(
                f"dataset {dataset!r} has no rows labelled for criterion {config.criterion!r}; "
                "label some first or drop --labelled-only"
            )
    if limit is not None:
        if limit < 1:
            raise CalibrateError("limit must be at least 1")
        items = items[:limit]
    if not items:
        raise CalibrateError(f"dataset {dataset!r} has no items to judge")
    return items


def _typical_output_tokens(config: JudgeConfig, judge_store: JudgeStore | None) -> int:
    if judge_store is not None:
        with judge_store.db.cursor() as cur:
            row = cur.execute(
                "SELECT avg(output_tokens) FROM judge_calls WHERE config_id = ? "
                "AND output_tokens IS NOT NULL",
                [config.config_id],
            ).fetchall()
        if row and row[0][0] is not None:
            return min(config.generation.max_tokens, round(float(row[0][0])))
    if config.strategy == "claim_split":
        return TYPICAL_OUTPUT_TOKENS["claim_split"]
    kind = "claims" if config.output.verdict_from_claims else config.output.format
    return min(config.generation.max_tokens, TYPICAL_OUTPUT_TOKENS[kind])


def _input_tokens(config: JudgeConfig, call: PlannedCall, neutralise: Neutraliser) -> int:
    """Approximate input tokens of one judgement (a claim split adds its typical checks)."""
    tokens = call.prompt.approx_tokens()
    if config.claim_split is not None:
        check = render_check(config, call.item, "a typical claim of about this length",
                             call.order, neutralise=neutralise)
        tokens += TYPICAL_CLAIMS * check.approx_tokens()
    return tokens


def plan_run(
    store: LabelStore, config: JudgeConfig, dataset: str, *, repeats: int | None = None,
    swap: bool | None = None, item_ids: Iterable[str] | None = None,
    labelled_only: bool = False, limit: int | None = None,
    prices: Mapping[str, Price] | None = None, judge_store: JudgeStore | None = None,
    model: str | None = None,
) -> RunPlan:
    """Render every call of a run and estimate its cost; nothing is sent or written.

    ``repeats``/``swap`` override the config's defaults; ``model`` (``provider/model``, default
    ``config.model``) is what the prices are looked up for. Calls already stored for this config
    (same item content, repeat and order) count as cached and are not planned again.

    Raises:
        RenderError: an item lacks a variable the template uses (before any call is made).
    """
    n_repeats = config.repeats if repeats is None else repeats
    if n_repeats < 1:
        raise CalibrateError("repeats must be at least 1")
    do_swap = config.swap if swap is None else swap
    orders: tuple[Order, ...] = ORDERS if do_swap else ("original",)
    items = select_items(
        store, dataset, config, item_ids=item_ids, labelled_only=labelled_only, limit=limit
    )
    done = judge_store.completed_keys(config.config_id) if judge_store is not None else set()
    neutralise = Neutraliser(config)
    calls: list[PlannedCall] = []
    planned = 0
    rendered: dict[tuple[str, Order], RenderedPrompt] = {}
    for item in items:
        digest = item_hash(item)
        for order in orders:
            for repeat in range(n_repeats):
                planned += 1
                if (digest, repeat, order) in done:
                    continue
                # Two rows with the same content share one call.
                done.add((digest, repeat, order))
                prompt = rendered.get((item.item_id, order))
                if prompt is None:
                    prompt = render(config, item, order, neutralise=neutralise)
                    rendered[(item.item_id, order)] = prompt
                calls.append(PlannedCall(item, digest, repeat, order, prompt))
    typical = _typical_output_tokens(config, judge_store)
    model = model or config.model
    price = price_for(model, prices)
    input_tokens = sum(_input_tokens(config, c, neutralise) for c in calls)
    out_typical = typical * len(calls)
    per_call_max = config.generation.max_tokens
    if config.claim_split is not None:
        per_call_max += config.claim_split.max_claims * config.claim_split.check_max_tokens
    out_max = per_call_max * len(calls)
    estimate = Estimate(
        model=model, calls_planned=planned, calls_cached=planned - len(calls),
        calls_to_make=len(calls), input_tokens=input_tokens, output_tokens_typical=out_typical,
        output_tokens_max=out_max, price=price,
        cost_typical=price.cost(input_tokens, out_typical) if price else None,
        cost_max=price.cost(input_tokens, out_max) if price else None,
    )
    return RunPlan(config, dataset, items, n_repeats, orders, planned, planned - len(calls),
                   calls, estimate)


# -- summary ----------------------------------------------------------------------------------


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
    estimate: Estimate | None = None

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
        lines = [
            f"run {self.run_id or '(dry run)'}: judge {self.config_name} r{self.revision} "
            f"({self.config_id[:11]}) on {self.dataset!r} — {self.status}",
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


class StopFlag(Protocol):
    """Anything with ``is_set()``: a :class:`threading.Event`, or an app job's cancel flag."""

    def is_set(self) -> bool:
        """True once the run should stop dispatching calls."""
        ...

# -- execution --------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallPolicy:
    """Timeout and retry policy of every call in a run.

    Attributes:
        timeout: seconds per attempt (passed to the SDK; the runner adds a small guard).
        max_retries: retries after the first attempt, for retryable errors only.
        backoff: first backoff in seconds; doubles per retry up to ``max_backoff``, with
            25 % jitter (the SDKs' own schedule). A ``retry-after`` from the server is used
            instead when present.
        max_retry_wait: a ``retry-after`` longer than this fails the call instead of sleeping.
    """

    timeout: float = 60.0
    max_retries: int = 4
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_wait: float = 60.0


WRITE_INTERVAL = 0.1
"""Seconds between write transactions at most: a commit costs ~5 ms of CPU whatever its size,
so under load rows are gathered for up to this long; a kill -9 loses at most these replies."""


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
            # are gathered until WRITE_INTERVAL after the previous commit.
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
            try:
                self._store.write_calls(batch)
                self.written += len(batch)
            except BaseException as error:  # reported to the run via .error
                self.error = error
            last_commit = time.monotonic()

    def close(self) -> None:
        """Flush what is queued and stop; raise if any write failed."""
        self._queue.put(None)
        self._thread.join()
        if self.error is not None:
            raise CalibrateError(f"storing judge calls failed: {self.error}") from self.error


def _stopped(should_stop: StopFlag | None) -> bool:
    return should_stop is not None and should_stop.is_set()


async def _sleep(seconds: float, should_stop: StopFlag | None) -> bool:
    """Sleep unless asked to stop; False when stopped early."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        if _stopped(should_stop):
            return False
        await asyncio.sleep(min(left, 0.05))
    return True


def _request(config: JudgeConfig, provider: Provider, planned: PlannedCall,
             timeout: float) -> CompletionRequest:
    params = config.generation
    # Repeat r samples with seed + r: with one fixed seed every repeat would be the same sample.
    seed = None
    if params.seed is not None and provider.supports_seed:
        seed = params.seed + planned.repeat
    return CompletionRequest(
        model=provider.model, system=planned.prompt.system, messages=planned.prompt.messages,
        max_tokens=params.max_tokens, temperature=params.temperature, seed=seed,
        json_mode=params.json_mode, timeout=timeout,
    )


def _claims_text(verdict: Verdict) -> str:
    lines = [f"{n}. {c.status}: {c.text}" for n, c in enumerate(verdict.claims, 1)]
    if verdict.note:
        lines.append(verdict.note)
    return "\n".join(lines)


def record_reply(
    record: CallRecord, config: JudgeConfig, completion: Completion, price: Price | None
) -> CallRecord:
    """Fill ``record`` from a reply: raw text and response first, then the parsed verdict."""
    record.reply = completion.text
    record.raw_response = dict(completion.raw)
    record.finish_reason = completion.finish_reason
    record.input_tokens = completion.usage.input_tokens
    record.output_tokens = completion.usage.output_tokens
    if price is not None and record.input_tokens is not None and record.output_tokens is not None:
        record.cost = price.cost(record.input_tokens, record.output_tokens)
    parsed = parse_reply(
        config, completion.text, finish_reason=completion.finish_reason,
        refusal=completion.refusal,
    )
    if isinstance(parsed, Unscored):
        record.status = "unscored"
        record.unscored_reason = parsed.reason
        record.detail = parsed.detail or None
    else:
        record.status = "scored"
        record.verdict = map_back(config, parsed.value, record.ordering)
        record.reply_label = parsed.label
        record.reasoning = parsed.reasoning
        record.detail = _claims_text(parsed) or None
    return record


async def _send(
    provider: Provider, request: CompletionRequest, record: CallRecord, policy: CallPolicy,
    should_stop: StopFlag | None, rng: random.Random, step: int | None = None,
) -> Completion | None:
    """One request with the run's retries; every failed attempt is appended to ``record``.

    Returns the reply, or ``None`` after giving up (``record`` then says ``failed`` and why).
    ``step`` tags the attempts of a multi-call judgement (0 = the first call).
    """
    attempt = 0
    while True:
        started = time.perf_counter()
        try:
            # The SDKs time out by themselves; this guard covers providers that do not.
            async with asyncio.timeout(policy.timeout * 1.2 + 0.05):
                completion = await provider.complete(request)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # every failure is classified and recorded
            error = provider.classify_error(exc)
            seconds = time.perf_counter() - started
            entry: dict[str, Any] = {
                "attempt": attempt, "kind": error.kind, "status": error.status,
                "error": str(error)[:500], "retry_after": error.retry_after,
                "seconds": round(seconds, 4),
            }
            if step is not None:
                entry["step"] = step
            record.attempts.append(entry)
            record.latency_ms = seconds * 1000
            give_up = _give_up_reason(error, attempt, policy)
            if give_up is None:
                delay = _delay(error, attempt, policy, rng)
                if await _sleep(delay, should_stop):
                    attempt += 1
                    record.retries += 1
                    continue
                give_up = "the run was stopped while waiting to retry"
            record.status = "failed"
            record.error = f"{error} ({give_up})" + (f" [call {step}]" if step else "")
            record.error_kind = error.kind
            return None
        record.latency_ms = (time.perf_counter() - started) * 1000
        return completion


async def _call(
    planned: PlannedCall, config: JudgeConfig, config_id: str, provider: Provider, run_id: str,
    policy: CallPolicy, price: Price | None, should_stop: StopFlag | None,
    rng: random.Random,
) -> CallRecord:
    # The config validator ties claim_split to strategy: claim_split.
    if config.claim_split is not None:
        return await _call_claim_split(planned, config, config.claim_split, config_id,
                                       provider, run_id, policy, price, should_stop, rng)
    request = _request(config, provider, planned, policy.timeout)
    record = CallRecord(
        run_id=run_id, config_id=config_id, item_id=planned.item.item_id,
        item_hash=planned.item_hash, repeat=planned.repeat, ordering=planned.order,
        status="failed", request=request.record(),
    )
    completion = await _send(provider, request, record, policy, should_stop, rng)
    if completion is None:
        return record
    return record_reply(record, config, completion, price)


def _check_request(
    config: JudgeConfig, split: ClaimSplit, provider: Provider, planned: PlannedCall,
    claim: str, timeout: float, neutralise: Neutraliser,
) -> CompletionRequest:
    prompt = render_check(config, planned.item, claim, planned.order, neutralise=neutralise)
    base = _request(config, provider, planned, timeout)
    return CompletionRequest(
        model=base.model, system=prompt.system, messages=prompt.messages,
        max_tokens=split.check_max_tokens, temperature=base.temperature, seed=base.seed,
        json_mode=False, timeout=timeout, top_logprobs=split.top_logprobs,
    )


async def _call_claim_split(
    planned: PlannedCall, config: JudgeConfig, split: ClaimSplit, config_id: str,
    provider: Provider, run_id: str, policy: CallPolicy, price: Price | None,
    should_stop: StopFlag | None, rng: random.Random,
) -> CallRecord:
    """Extract the claims, then one YES/NO check per claim: one judgement, one stored row.

    The row keeps every sub-call: ``request`` and ``raw_response`` hold ``{"strategy":
    "claim_split", "steps": [...]}`` (step 0 = the extraction), ``reply`` a transcript of all
    replies, ``detail`` each claim with its ``p_yes``. Tokens, cost and latency are totals. A
    sub-call that fails after its retries fails the judgement (the next run redoes it whole); a
    sub-reply without a usable answer makes it unscored, with the reason.
    """
    started = time.perf_counter()
    requests: list[dict[str, Any]] = []
    raws: list[Any] = []
    replies: list[str] = []
    record = CallRecord(
        run_id=run_id, config_id=config_id, item_id=planned.item.item_id,
        item_hash=planned.item_hash, repeat=planned.repeat, ordering=planned.order,
        status="failed", request={"strategy": "claim_split", "steps": requests},
        raw_response={"strategy": "claim_split", "steps": raws},
    )
    tokens_in: list[int | None] = []
    tokens_out: list[int | None] = []

    def take(completion: Completion, label: str) -> None:
        raws.append(dict(completion.raw))
        replies.append(f"[{label}]\n{completion.text}")
        tokens_in.append(completion.usage.input_tokens)
        tokens_out.append(completion.usage.output_tokens)
        record.reply = "\n\n".join(replies)
        record.input_tokens = sum(t or 0 for t in tokens_in)
        record.output_tokens = sum(t or 0 for t in tokens_out)

    def finish(result: Verdict | Unscored | None) -> CallRecord:
        record.latency_ms = (time.perf_counter() - started) * 1000
        if result is None:
            return record
        if (price is not None and None not in tokens_in and None not in tokens_out
                and record.input_tokens is not None and record.output_tokens is not None):
            record.cost = price.cost(record.input_tokens, record.output_tokens)
        if isinstance(result, Unscored):
            record.status = "unscored"
            record.unscored_reason = result.reason
            record.detail = result.detail or None
        else:
            record.status = "scored"
            record.verdict = result.value
            record.reply_label = result.label
            record.reasoning = result.reasoning
            record.detail = _claims_text(result) or None
        return record

    extract = _request(config, provider, planned, policy.timeout)
    requests.append(extract.record())
    completion = await _send(provider, extract, record, policy, should_stop, rng, step=0)
    if completion is None:
        return finish(None)
    take(completion, "claims")
    record.finish_reason = completion.finish_reason
    claims = parse_claim_lines(split, completion.text, finish_reason=completion.finish_reason,
                               refusal=completion.refusal)
    if isinstance(claims, Unscored):
        return finish(Unscored(claims.reason, f"claim extraction: {claims.detail}".rstrip(": ")))
    neutralise = Neutraliser(config)
    scores: list[ClaimScore] = []
    for step, claim in enumerate(claims, 1):
        check = _check_request(config, split, provider, planned, claim, policy.timeout,
                               neutralise)
        requests.append(check.record())
        reply = await _send(provider, check, record, policy, should_stop, rng, step=step)
        if reply is None:
            return finish(None)
        scored = score_check(split, claim, reply)
        shown = f"{scored.p_yes:.3f}" if isinstance(scored, ClaimScore) else "-"
        take(reply, f"check {step}: p_yes {shown}")
        if isinstance(scored, Unscored):
            return finish(Unscored(scored.reason, f"claim {step} ({claim!r}): {scored.detail}"))
        scores.append(scored)
    return finish(claim_verdict(config, scores))


def _give_up_reason(error: ProviderError, attempt: int, policy: CallPolicy) -> str | None:
    if not error.retryable:
        return "not retryable"
    if attempt >= policy.max_retries:
        return f"gave up after {attempt + 1} attempts"
    if error.retry_after is not None and error.retry_after > policy.max_retry_wait:
        return (
            f"the server asked to wait {error.retry_after:.0f} s, more than "
            f"max_retry_wait={policy.max_retry_wait:.0f} s"
        )
    return None


def _delay(error: ProviderError, attempt: int, policy: CallPolicy, rng: random.Random) -> float:
    if error.retry_after is not None:
        return error.retry_after
    return min(policy.backoff * 2.0**attempt, policy.max_backoff) * (1 - 0.25 * rng.random())


async def _execute(
    plan: RunPlan, provider: Provider, judge_store: JudgeStore, run_id: str, policy: CallPolicy,
    summary: RunSummary, concurrency: int, batch_size: int,
    on_progress: ProgressCallback | None, should_stop: StopFlag | None,
) -> None:
    pending = deque(plan.calls)
    price = plan.estimate.price
    config_id = plan.config.config_id  # hashing the config per call would be wasted work
    writer = _CallWriter(judge_store, batch_size)
    rng = random.Random()

    async def worker() -> None:
        while pending and not _stopped(should_stop):
            planned = pending.popleft()
            record = await _call(
                planned, plan.config, config_id, provider, run_id, policy, price, should_stop,
                rng,
            )
            writer.put(record)
            summary.add(record)
            if on_progress is not None:
                on_progress(summary.done, summary.planned, summary)

    if provider.max_concurrency is not None:
        concurrency = min(concurrency, provider.max_concurrency)
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, min(concurrency, len(pending)))):
                group.create_task(worker())
    except BaseExceptionGroup as group_error:
        # One worker's failure cancels the others; report the failure itself, not the group.
        raise group_error.exceptions[0] from None
    finally:
        summary.not_run = len(pending)
        try:
            await asyncio.to_thread(writer.close)
        finally:
            await provider.aclose()


def run_judge(
    config: JudgeConfig, dataset: str, *, store: LabelStore, provider: Provider | None = None,
    settings: Settings | None = None, repeats: int | None = None, swap: bool | None = None,
    item_ids: Iterable[str] | None = None, labelled_only: bool = False,
    limit: int | None = None, concurrency: int = 8, policy: CallPolicy | None = None,
    dry_run: bool = False, prices: Mapping[str, Price] | None = None,
    on_progress: ProgressCallback | None = None, should_stop: StopFlag | None = None,
    batch_size: int = 512,
) -> RunSummary:
    """Run ``config`` over ``dataset`` (see the module docstring).

    Args:
        config: the judge.
        dataset: the dataset name in ``store``.
        store: the label store; judge tables go in the same DuckDB file.
        provider: the provider to call (default: ``get_provider(config.model, settings)``).
        settings: keys and base URLs for the default provider.
        repeats: samples per item and order (default ``config.repeats``); each is its own call.
        swap: also run the swapped order (default ``config.swap``).
        item_ids: only these items (see :func:`select_items`).
        labelled_only: only items with a human label (see :func:`select_items`).
        limit: at most this many items (see :func:`select_items`).
        concurrency: calls in flight at once.
        policy: timeout and retries (:class:`CallPolicy`).
        dry_run: plan and estimate only; nothing is sent or written.
        prices: a price table (default :data:`DEFAULT_PRICES`).
        on_progress: ``(done, total, summary)`` after every call (and once at the start).
        should_stop: a :class:`threading.Event` (or any :class:`StopFlag`); once set, no new
            call starts, calls in flight finish and are stored, and the summary says
            ``cancelled``.
        batch_size: most rows per write transaction (see :data:`WRITE_INTERVAL`).

    Returns:
        The :class:`RunSummary` (also stored on the run row).
    """
    return asyncio.run(run_judge_async(
        config, dataset, store=store, provider=provider, settings=settings, repeats=repeats,
        swap=swap, item_ids=item_ids, labelled_only=labelled_only, limit=limit,
        concurrency=concurrency, policy=policy, dry_run=dry_run, prices=prices,
        on_progress=on_progress, should_stop=should_stop, batch_size=batch_size,
    ))


async def run_judge_async(
    config: JudgeConfig, dataset: str, *, store: LabelStore, provider: Provider | None = None,
    settings: Settings | None = None, repeats: int | None = None, swap: bool | None = None,
    item_ids: Iterable[str] | None = None, labelled_only: bool = False,
    limit: int | None = None, concurrency: int = 8, policy: CallPolicy | None = None,
    dry_run: bool = False, prices: Mapping[str, Price] | None = None,
    on_progress: ProgressCallback | None = None, should_stop: StopFlag | None = None,
    batch_size: int = 512,
) -> RunSummary:
    """:func:`run_judge` for callers that already run an event loop."""
    if concurrency < 1:
        raise CalibrateError("concurrency must be at least 1")
    policy = policy or CallPolicy()
    judge_store = JudgeStore(store.db)
    if provider is None and not dry_run:
        provider = get_provider(config.model, settings=settings)
    plan = plan_run(
        store, config, dataset, repeats=repeats, swap=swap, item_ids=item_ids,
        labelled_only=labelled_only, limit=limit, prices=prices, judge_store=judge_store,
        model=provider.spec if provider is not None else None,
    )
    summary = RunSummary(
        config_id=config.config_id, config_name=config.name, revision=config.revision,
        dataset=dataset, model=plan.estimate.model, planned=plan.planned, cached=plan.cached,
        estimate=plan.estimate,
    )
    if dry_run:
        summary.status = "dry_run"
        summary.not_run = len(plan.calls)
        return summary
    assert provider is not None  # built above unless dry_run
    judge_store.save_config(config)
    options = {
        "repeats": plan.repeats, "swap": len(plan.orders) == 2, "concurrency": concurrency,
        "limit": limit, "labelled_only": labelled_only, "items": len(plan.items),
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
    "DEFAULT_PRICES", "CallPolicy", "Estimate", "PlannedCall", "Price", "ProgressCallback",
    "RunPlan", "RunSummary", "StopFlag", "load_prices", "plan_run", "price_for", "record_reply",
    "run_judge", "run_judge_async", "select_items",
]
