"""The decomposed faithfulness judgement small local models need (``strategy: claim_split``).

One JSON call that lists claims and marks each fails for small models: they return the whole
sentence as one claim marked supported (``FACTS.md`` §10.4). What works is two steps:

1. **extract** the answer's claims, one per line (the config's ``system``, ``few_shot`` and
   ``template``), then clean the list with :func:`parse_claim_lines`;
2. **check** each claim with its own YES/NO question (``claim_split.check_system`` /
   ``check_template``, rendered by :func:`judges.prompts.render_check`), reading the first
   reply token's log-probabilities: :func:`p_yes`.

The parsing and scoring functions are pure (text and numbers in, claims and scores out);
:func:`call_claim_split` makes the calls of one judgement through :mod:`judges.calls` and keeps
every sub-call on one stored row, which the runner caches as one call (:mod:`judges.runner`).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judges.calls import CallContext, record_outcome, request_for, send
from judges.config import ClaimSplit, JudgeConfig
from judges.parsing import Claim, Unscored, Verdict
from judges.prompts import Neutraliser, render_check
from judges.providers.base import Completion, CompletionRequest
from judges.run_plan import PlannedCall
from judges.stores.judge_store import CallRecord

_LIST_MARKER = re.compile(
    r"^\s*(?:[-*•·]+|\(?\d{1,2}[.):]|\(?[a-z][.)]|claim\s*\d*\s*[:.)-])\s*", re.IGNORECASE
)
_SPACE = re.compile(r"\s+")


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip().rstrip(".!").strip().lower()


def parse_claim_lines(
    split: ClaimSplit, text: str | None, *, finish_reason: str | None = "stop",
    refusal: str | None = None,
) -> list[str] | Unscored:
    """The claims of an extraction reply, or :class:`Unscored` when it has none to use.

    One claim per non-empty line; list markers (``-``, ``1.``, ``Claim 2:``) are stripped,
    repeats dropped (ignoring case, spaces and a final full stop) and at most
    ``split.max_claims`` kept. A reply that is only ``split.none_marker`` means "no claims"
    (an empty list). A reply cut off at ``max_tokens`` loses its last, possibly partial line:
    small models sometimes loop on a pair of claims until the limit, and the complete lines
    before the cut are still claims.
    """
    if refusal or finish_reason == "refusal":
        return Unscored("refusal", (refusal or text or "")[:500])
    if finish_reason == "content_filter":
        return Unscored("content_filter", (text or "")[:500])
    body = (text or "").strip()
    if not body:
        return Unscored("empty_reply")
    lines = body.splitlines()
    if finish_reason == "length":
        lines = lines[:-1]
        if not lines:
            return Unscored("truncated", f"{len(body)} characters, not one complete line")
    none = _normal(split.none_marker)
    claims: list[str] = []
    seen: set[str] = set()
    for line in lines:
        claim = _LIST_MARKER.sub("", line, count=1).strip().strip('"').strip()
        key = _normal(claim)
        if not key or key == none or key in seen:
            continue
        seen.add(key)
        claims.append(claim)
        if len(claims) == split.max_claims:
            break
    return claims


@dataclass(frozen=True)
class ClaimScore:
    """The YES/NO check of one claim.

    Attributes:
        claim: the claim text.
        p_yes: ``P(yes) / (P(yes) + P(no))`` over the first reply token's top tokens.
        supported: ``p_yes >= threshold``.
        source: ``logprobs``, or ``text`` when the provider returned no log-probabilities.
    """

    claim: str
    p_yes: float
    supported: bool
    source: str = "logprobs"


def _word(token: str) -> str:
    return token.strip().strip(".:,!\"'").upper()


def p_yes(
    split: ClaimSplit, top_logprobs: Sequence[Mapping[str, float]] | None, text: str | None
) -> tuple[float, str] | Unscored:
    """``(p_yes, source)`` of a check reply, or :class:`Unscored`.

    With log-probabilities: over the first position's top tokens, the probabilities of tokens
    reading ``split.yes_label`` (ignoring case, spaces and punctuation) and of those reading
    ``split.no_label`` are summed; ``p_yes = P(yes) / (P(yes) + P(no))``. Neither among them is
    unscored (``off_list``). Without: the reply's first word, ``1.0`` for yes, ``0.0`` for no.

    >>> from judges.config import ClaimSplit
    >>> split = ClaimSplit(check_system="s", check_template="{claim}")
    >>> p, how = p_yes(split, [{"NO": math.log(0.6), "YES": math.log(0.2), "To": -3.0}], "NO")
    >>> round(p, 2), how
    (0.25, 'logprobs')
    """
    yes, no = split.yes_label.strip().upper(), split.no_label.strip().upper()
    if top_logprobs:
        first = top_logprobs[0]
        p_y = sum(math.exp(v) for t, v in first.items() if _word(t) == yes)
        p_n = sum(math.exp(v) for t, v in first.items() if _word(t) == no)
        if p_y + p_n > 0:
            return p_y / (p_y + p_n), "logprobs"
        shown = ", ".join(repr(t) for t in list(first)[:8])
        return Unscored(
            "off_list", f"neither {split.yes_label} nor {split.no_label} among the first "
            f"token's most likely tokens ({shown})"
        )
    words = (text or "").split()
    word = _word(words[0]) if words else ""
    if word == yes:
        return 1.0, "text"
    if word == no:
        return 0.0, "text"
    if not word:
        return Unscored("empty_reply", "the check reply was empty")
    return Unscored("off_list", f"replied {word!r}; allowed: {split.yes_label}, {split.no_label}")


def score_check(split: ClaimSplit, claim: str, completion: Completion) -> ClaimScore | Unscored:
    """Score one check reply (see :func:`p_yes`); refused or filtered replies are unscored."""
    if completion.refusal or completion.finish_reason == "refusal":
        return Unscored("refusal", (completion.refusal or completion.text or "")[:500])
    if completion.finish_reason == "content_filter":
        return Unscored("content_filter", completion.text[:500])
    result = p_yes(split, completion.top_logprobs, completion.text)
    if isinstance(result, Unscored):
        return result
    value, source = result
    return ClaimScore(claim, value, value >= split.threshold, source)


def claim_verdict(config: JudgeConfig, scores: Sequence[ClaimScore]) -> Verdict:
    """The judgement: ``fail`` if any claim is unsupported, else ``pass``.

    No claims at all gives ``claim_split.no_claims_verdict``. The reasoning names the
    unsupported claims; :attr:`Verdict.claims` holds every claim with its ``p_yes``.
    """
    split = config.claim_split
    if split is None:
        raise ValueError(f"judge {config.name!r} has no claim_split section")
    if not scores:
        value = split.no_claims_verdict
        reasoning = "The extraction found no factual claim to check."
    else:
        value = "pass" if all(s.supported for s in scores) else "fail"
        bad = [s for s in scores if not s.supported]
        reasoning = f"{len(scores) - len(bad)} of {len(scores)} claims supported" + (
            "; not supported: " + "; ".join(f"{s.claim!r} (p_yes {s.p_yes:.2f})" for s in bad)
            if bad else "."
        )
    label = next((lbl for lbl, v in config.verdicts.items() if v == value), value.upper())
    claims = tuple(
        Claim(s.claim, f"{'SUPPORTED' if s.supported else 'UNSUPPORTED'} p_yes={s.p_yes:.3f}",
              s.supported)
        for s in scores
    )
    return Verdict(value, label, reasoning, claims)


__all__ = ["ClaimScore", "claim_verdict", "p_yes", "parse_claim_lines", "score_check"]


def _check_request(
    context: CallContext, split: ClaimSplit, planned: PlannedCall, claim: str,
    neutralise: Neutraliser,
) -> CompletionRequest:
    prompt = render_check(context.config, planned.item, claim, planned.order,
                          neutralise=neutralise)
    base = request_for(context, planned)
    return CompletionRequest(
        model=base.model, system=prompt.system, messages=prompt.messages,
        max_tokens=split.check_max_tokens, temperature=base.temperature, seed=base.seed,
        json_mode=False, timeout=base.timeout, top_logprobs=split.top_logprobs,
    )


async def call_claim_split(
    context: CallContext, planned: PlannedCall, split: ClaimSplit
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
    record = context.new_record(planned, {"strategy": "claim_split", "steps": requests})
    record.raw_response = {"strategy": "claim_split", "steps": raws}
    price = context.price
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
        return record_outcome(record, context.config, result)

    extract = request_for(context, planned)
    requests.append(extract.record())
    completion = await send(context, extract, record, step=0)
    if completion is None:
        return finish(None)
    take(completion, "claims")
    record.finish_reason = completion.finish_reason
    claims = parse_claim_lines(split, completion.text, finish_reason=completion.finish_reason,
                               refusal=completion.refusal)
    if isinstance(claims, Unscored):
        return finish(Unscored(claims.reason, f"claim extraction: {claims.detail}".rstrip(": ")))
    neutralise = Neutraliser(context.config)
    scores: list[ClaimScore] = []
    for step, claim in enumerate(claims, 1):
        check = _check_request(context, split, planned, claim, neutralise)
        requests.append(check.record())
        reply = await send(context, check, record, step=step)
        if reply is None:
            return finish(None)
        scored = score_check(split, claim, reply)
        shown = f"{scored.p_yes:.3f}" if isinstance(scored, ClaimScore) else "-"
        take(reply, f"check {step}: p_yes {shown}")
        if isinstance(scored, Unscored):
            return finish(Unscored(scored.reason, f"claim {step} ({claim!r}): {scored.detail}"))
        scores.append(scored)
    return finish(claim_verdict(context.config, scores))
