"""One judge call: its request, its retries, and its stored row.

A call ends exactly one way: ``scored`` (a verdict), ``unscored`` (a reply without a usable
verdict: empty, refused, truncated, unparseable, off the label list — with its reason) or
``failed`` (no reply after the retries, with the error). Each attempt gets a timeout; retryable
errors back off exponentially with jitter, honouring ``retry-after``; every failed attempt is
recorded on the row. :class:`CallContext` holds what every call of one run shares.
The claim-split judgement (several requests per judgement) is in :mod:`judges.claimsplit`.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import Any, Protocol

from judges.config import JudgeConfig
from judges.parsing import Unscored, Verdict, map_back, parse_reply
from judges.pricing import Price
from judges.providers import Provider
from judges.providers.base import Completion, CompletionRequest, ProviderError
from judges.run_plan import PlannedCall
from judges.stores.judge_store import CallRecord


class StopFlag(Protocol):
    """Anything with ``is_set()``: a :class:`threading.Event`, or an app job's cancel flag."""

    def is_set(self) -> bool:
        """True once the run should stop dispatching calls."""
        ...


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


@dataclass(frozen=True)
class CallContext:
    """What every call of one run shares: the judge, where replies go, and how to retry.

    Attributes:
        config: The judge config.
        config_id: Its content hash, computed once per run (hashing per call is wasted work).
        provider: The provider the calls go to.
        run_id: The run the call rows belong to.
        policy: Timeout and retries.
        price: Price of the model (``None``: the cost is unknown).
        should_stop: Set once the run should stop (no new attempt or retry starts).
        rng: Jitter of the retry backoff.
    """

    config: JudgeConfig
    config_id: str
    provider: Provider
    run_id: str
    policy: CallPolicy
    price: Price | None
    should_stop: StopFlag | None
    rng: random.Random

    def new_record(self, planned: PlannedCall, request: dict[str, Any]) -> CallRecord:
        """A ``failed`` call row for ``planned`` (filled in as the call proceeds)."""
        return CallRecord(
            run_id=self.run_id, config_id=self.config_id, item_id=planned.item.item_id,
            item_hash=planned.item_hash, repeat=planned.repeat, ordering=planned.order,
            status="failed", request=request,
        )


def stopped(should_stop: StopFlag | None) -> bool:
    """True once ``should_stop`` is set (``None`` never stops)."""
    return should_stop is not None and should_stop.is_set()


async def _sleep(seconds: float, should_stop: StopFlag | None) -> bool:
    """Sleep unless asked to stop; False when stopped early."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        if stopped(should_stop):
            return False
        await asyncio.sleep(min(left, 0.05))
    return True


def request_for(context: CallContext, planned: PlannedCall) -> CompletionRequest:
    """The provider request of one planned call under the config's generation parameters."""
    params = context.config.generation
    # Repeat r samples with seed + r: with one fixed seed every repeat would be the same sample.
    seed = None
    if params.seed is not None and context.provider.supports_seed:
        seed = params.seed + planned.repeat
    return CompletionRequest(
        model=context.provider.model, system=planned.prompt.system,
        messages=planned.prompt.messages, max_tokens=params.max_tokens,
        temperature=params.temperature, seed=seed, json_mode=params.json_mode,
        timeout=context.policy.timeout,
    )


MAX_REPLY_CHARS = 200_000
"""Characters of a reply (and of any string in its raw response) stored; the rest is cut."""
MAX_REASONING_CHARS = 50_000
"""Characters of a verdict's reasoning stored (a judge writes a few hundred)."""


def capped(text: str | None, limit: int) -> str | None:
    r"""``text`` cut to ``limit`` characters, ending in a marker that says how much was cut.

    A hostile or broken server can send megabytes; the reply is parsed whole, then stored cut.

    >>> capped("abcdef", 3)
    'abc\n[cut by calibrate: 3 more characters]'
    """
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}\n[cut by calibrate: {len(text) - limit:,} more characters]"


def capped_strings(value: Any, limit: int = MAX_REPLY_CHARS) -> Any:
    """``value`` (a raw response: dicts, lists, strings) with every string :func:`capped`."""
    if isinstance(value, str):
        return capped(value, limit)
    if isinstance(value, dict):
        return {key: capped_strings(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [capped_strings(item, limit) for item in value]
    return value


def claims_text(verdict: Verdict) -> str:
    """The claims of a verdict as numbered ``status: text`` lines, then its note."""
    lines = [f"{n}. {c.status}: {c.text}" for n, c in enumerate(verdict.claims, 1)]
    if verdict.note:
        lines.append(verdict.note)
    return "\n".join(lines)


def record_reply(
    record: CallRecord, config: JudgeConfig, completion: Completion, price: Price | None
) -> CallRecord:
    """Fill ``record`` from a reply: raw text and response first, then the parsed verdict.

    The reply is parsed whole and stored :func:`capped` (as is every string of the raw
    response): a 40 MB reply is not kept.
    """
    record.reply = capped(completion.text, MAX_REPLY_CHARS)
    record.raw_response = capped_strings(dict(completion.raw))
    record.finish_reason = completion.finish_reason
    record.input_tokens = completion.usage.input_tokens
    record.output_tokens = completion.usage.output_tokens
    if price is not None and record.input_tokens is not None and record.output_tokens is not None:
        record.cost = price.cost(record.input_tokens, record.output_tokens)
    parsed = parse_reply(
        config, completion.text, finish_reason=completion.finish_reason,
        refusal=completion.refusal,
    )
    return record_outcome(record, config, parsed)


def record_outcome(
    record: CallRecord, config: JudgeConfig, result: Verdict | Unscored
) -> CallRecord:
    """Write a judgement onto its row: ``scored`` with the verdict, or ``unscored`` and why.

    A swapped pairwise verdict is stored in the original order's terms (:func:`map_back`).
    """
    if isinstance(result, Unscored):
        record.status = "unscored"
        record.unscored_reason = result.reason
        record.detail = capped(result.detail, MAX_REPLY_CHARS) or None
    else:
        record.status = "scored"
        record.verdict = map_back(config, result.value, record.ordering)
        record.reply_label = result.label
        record.reasoning = capped(result.reasoning, MAX_REASONING_CHARS)
        record.detail = capped(claims_text(result), MAX_REPLY_CHARS) or None
    return record


async def send(
    context: CallContext, request: CompletionRequest, record: CallRecord,
    step: int | None = None,
) -> Completion | None:
    """One request with the run's retries; every failed attempt is appended to ``record``.

    Returns the reply, or ``None`` after giving up (``record`` then says ``failed`` and why).
    ``step`` tags the attempts of a multi-call judgement (0 = the first call).
    """
    provider, policy, rng = context.provider, context.policy, context.rng
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
                if await _sleep(delay, context.should_stop):
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


async def call_single(context: CallContext, planned: PlannedCall) -> CallRecord:
    """One judgement of ``strategy: single``: one request (with retries), parsed and priced."""
    request = request_for(context, planned)
    record = context.new_record(planned, request.record())
    completion = await send(context, request, record)
    if completion is None:
        return record
    return record_reply(record, context.config, completion, context.price)


__all__ = [
    "CallContext",
    "CallPolicy",
    "StopFlag",
    "call_single",
    "claims_text",
    "record_outcome",
    "record_reply",
    "request_for",
    "send",
    "stopped",
]
