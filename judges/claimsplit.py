"""The decomposed faithfulness judgement small local models need (``strategy: claim_split``).

One JSON call that lists claims and marks each fails for small models: they return the whole
sentence as one claim marked supported (``FACTS.md`` §10.4). What works is two steps:

1. **extract** the answer's claims, one per line (the config's ``system``, ``few_shot`` and
   ``template``), then clean the list with :func:`parse_claim_lines`;
2. **check** each claim with its own YES/NO question (``claim_split.check_system`` /
   ``check_template``, rendered by :func:`judges.prompts.render_check`), reading the first
   reply token's log-probabilities: :func:`p_yes`.

The functions here are pure (text and numbers in, claims and scores out); the runner makes the
calls, stores every sub-call and caches the judgement as one call (:mod:`judges.runner`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from judges.config import ClaimSplit, JudgeConfig
from judges.parsing import Claim, Unscored, Verdict
from judges.providers.base import Completion

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
