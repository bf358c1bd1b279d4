"""Turn a judge's reply into a :class:`Verdict` or :class:`Unscored` (never an exception).

A reply that carries no usable verdict — empty, refused, cut off, unparseable, or a label the
config does not allow — is *unscored* with a reason. That is a protocol failure, not evidence
about the answer, so it is never counted as ``fail``; it is counted and shown beside every
metric instead.

Binding rules:

* ``marker`` contract: the **last** ``<MARKER>: <LABEL>`` in the reply wins, so a marker the
  model quotes from the item (or mentions while reasoning) does not decide the verdict. The
  marker may carry markdown emphasis (``**VERDICT**: PASS``, ``__VERDICT__:``, ``*Verdict:*``,
  `` `VERDICT` = ``); :func:`marker_regex` is the one pattern for it, and
  :mod:`judges.prompts` defuses exactly what it matches in item text.
* ``json`` contract: the reply as a whole if it is JSON; else, of the fenced ```` ```json ````
  blocks and the top-level ``{…}`` objects outside them, the **last in the reply** that has
  the verdict key (or the claims key). A fenced block never outranks the judge's own later
  object: a block quoted from the answer comes before the judge's verdict.
* a truncated reply (``finish_reason == "length"``) is unscored even if it contains a marker:
  the marker found might not be the one the model meant to end with (except under the
  ``label`` contract, where the first word decides and a short ``max_tokens`` is the point).
* ``label`` contract: the reply's first word is the label (a ``VERDICT: X`` reply is read as
  the marker contract).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from judges.config import JudgeConfig

UNSCORED_REASONS = {
    "empty_reply": "the reply was empty",
    "refusal": "the model refused to judge",
    "truncated": "the reply was cut off (max tokens)",
    "content_filter": "the provider filtered the reply",
    "no_verdict": "the reply has no verdict marker / key",
    "invalid_json": "the reply is not the JSON object the contract asks for",
    "off_list": "the verdict is not one of the allowed labels",
    "invalid_claims": "the claims list is malformed or uses an unknown status",
    "parse_error": "the parser failed (a bug; the raw reply is stored)",
    "external": "the imported file gives no verdict for this row",
}
"""Every reason an unscored row can carry, with a sentence for people."""


@dataclass(frozen=True)
class Claim:
    """One claim of a claim-split reply, with its status as replied and as mapped."""

    text: str
    status: str
    supported: bool


@dataclass(frozen=True)
class Verdict:
    """A usable verdict.

    Attributes:
        value: the canonical verdict (``pass``/``fail``/``unsure`` or ``a``/``b``/``tie``), in
            the terms of the reply (before mapping a swapped pairwise order back).
        label: the label as the reply wrote it (``PASS``).
        reasoning: the judge's reasoning (the text before the marker, or the JSON field).
        claims: the claims of a claim-split reply.
        note: a remark, e.g. that the model's own verdict disagreed with its claims.
    """

    value: str
    label: str
    reasoning: str = ""
    claims: tuple[Claim, ...] = field(default_factory=tuple)
    note: str = ""


@dataclass(frozen=True)
class Unscored:
    """No usable verdict: ``reason`` is a key of :data:`UNSCORED_REASONS`, ``detail`` says more."""

    reason: str
    detail: str = ""

    def __post_init__(self) -> None:
        """Reject a reason that is not one of :data:`UNSCORED_REASONS`."""
        if self.reason not in UNSCORED_REASONS:
            raise ValueError(f"unknown unscored reason {self.reason!r}")


ParseResult = Verdict | Unscored


def parse_reply(
    config: JudgeConfig, text: str | None, *, finish_reason: str | None = "stop",
    refusal: str | None = None,
) -> ParseResult:
    """Parse one reply under ``config``'s output contract; never raises.

    Args:
        config: the judge config (output contract and allowed labels).
        text: the reply text.
        finish_reason: the provider's normalised finish reason (``length`` = truncated).
        refusal: the provider's refusal message, if it flagged one.
    """
    try:
        return _parse(config, text or "", finish_reason, refusal)
    except Exception as error:  # a parser bug must not lose the stored reply
        return Unscored("parse_error", f"{type(error).__name__}: {error}")


def _parse(
    config: JudgeConfig, text: str, finish_reason: str | None, refusal: str | None
) -> ParseResult:
    if refusal or finish_reason == "refusal":
        return Unscored("refusal", (refusal or text or "")[:500])
    if finish_reason == "content_filter":
        return Unscored("content_filter", text[:500])
    # A verdict-only reply is decided by its first word, which a cut after it cannot change.
    if finish_reason == "length" and config.output.format != "label":
        return Unscored("truncated", f"{len(text)} characters before the cut")
    if not text.strip():
        return Unscored("empty_reply")
    if config.output.format == "marker":
        return _parse_marker(config, text)
    if config.output.format == "label":
        return _parse_label(config, text)
    return _parse_json(config, text)


def _label_result(config: JudgeConfig, label: str, reasoning: str) -> ParseResult:
    verdict = config.verdict_for_label(label)
    if verdict is None:
        return Unscored(
            "off_list", f"replied {label!r}; allowed: {', '.join(config.reply_labels())}"
        )
    return Verdict(verdict, label, reasoning)


MARKER_SEPARATORS = ":=\uff1a\ufe55"
"""What may follow a marker: colon, equals sign, fullwidth and small colons."""


def marker_head(marker: str) -> str:
    """The regex text of ``marker`` as a reply may write it, up to and including its separator.

    Emphasis and code marks may wrap the marker or its words (``**VERDICT**``,
    ``__VERDICT__``, ``*Verdict:*``, `` `VERDICT` ``); letters or digits may not touch it
    (``PREVERDICT`` is not a marker). Group ``sep`` is the separator, which
    :class:`judges.prompts.Neutraliser` replaces in item text.
    """
    words = r"[\s*_`~]+".join(re.escape(w) for w in marker.split())
    return rf"(?<![A-Za-z0-9]){words}(?![A-Za-z0-9])[\s*_`~]*(?P<sep>[{MARKER_SEPARATORS}])"


@functools.lru_cache(maxsize=64)
def marker_regex(marker: str) -> re.Pattern[str]:
    r"""``<MARKER>: <LABEL>`` with the label in group ``label`` (see :func:`marker_head`).

    The label may be wrapped in emphasis, quotes or brackets (``**PASS**``, ``"PASS"``,
    ``[PASS]``); trailing ``_``/``-`` of emphasis are not part of it. The label is never the
    marker itself: in ``Final verdict:\nVERDICT: FAIL`` the first ``verdict:`` has no label,
    and the judge's own ``VERDICT: FAIL`` is found (it used to be read as the label
    ``VERDICT`` of the first, and the reply scored ``off_list``).
    """
    head = marker_head(marker)
    return re.compile(
        head
        + r"[\s*_`\"'\[(]*(?!" + head.replace("(?P<sep>", "(?:") + r")"
        + r"(?P<label>[A-Za-z](?:[A-Za-z0-9_-]*[A-Za-z0-9])?)",
        re.IGNORECASE,
    )


def _marker_pattern(config: JudgeConfig) -> re.Pattern[str]:
    return marker_regex(config.output.marker)


def _parse_marker(config: JudgeConfig, text: str) -> ParseResult:
    matches = list(_marker_pattern(config).finditer(text))
    if not matches:
        return Unscored("no_verdict", f"no '{config.output.marker}: <label>' line in the reply")
    last = matches[-1]
    reasoning = text[: last.start()].strip()
    return _label_result(config, last.group("label"), reasoning)


_FIRST_WORD = re.compile(r"^[\s*_`\"'\[(]*([A-Za-z][A-Za-z0-9_-]*)")


def _parse_label(config: JudgeConfig, text: str) -> ParseResult:
    if _marker_pattern(config).search(text):
        return _parse_marker(config, text)
    match = _FIRST_WORD.match(text)
    if not match:
        return Unscored("no_verdict", f"the reply does not start with a label: {text[:80]!r}")
    return _label_result(config, match.group(1), text[match.end():].strip(" .*_`\"'])\n"))


_FENCE = re.compile(r"```(?:json)?\s*\n?(.*?)```", re.DOTALL | re.IGNORECASE)


def _json_objects(text: str) -> list[Any]:
    """Every JSON value in the reply, in the order it appears (fenced or not)."""
    stripped = text.strip()
    try:
        return [json.loads(stripped)]
    except json.JSONDecodeError:
        pass
    found: list[tuple[int, Any]] = []
    fences: list[tuple[int, int]] = []
    for match in _FENCE.finditer(text):
        try:
            found.append((match.start(), json.loads(match.group(1))))
        except json.JSONDecodeError:
            continue  # not JSON: objects inside it are found by the scan below
        fences.append((match.start(), match.end()))
    decoder = json.JSONDecoder()
    position = text.find("{")
    while position != -1:
        fence = next((f for f in fences if f[0] <= position < f[1]), None)
        if fence is not None:
            position = text.find("{", fence[1])
            continue
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            position = text.find("{", position + 1)
            continue
        found.append((position, value))
        position = text.find("{", end)
    found.sort(key=lambda pair: pair[0])
    return [value for _, value in found]


def _parse_json(config: JudgeConfig, text: str) -> ParseResult:
    contract = config.output
    objects = [o for o in _json_objects(text) if isinstance(o, dict)]
    if not objects:
        return Unscored("invalid_json", f"no JSON object in the reply ({len(text)} characters)")
    keys = {contract.verdict_key}
    if contract.verdict_from_claims and contract.claims_key:
        keys.add(contract.claims_key)
    relevant = [o for o in objects if keys & set(o)]
    if not relevant:
        return Unscored(
            "no_verdict", f"the JSON has no {' or '.join(repr(k) for k in sorted(keys))} key"
        )
    obj = relevant[-1]
    reasoning = obj.get(contract.reasoning_key, "")
    reasoning = reasoning if isinstance(reasoning, str) else json.dumps(reasoning)
    stated = obj.get(contract.verdict_key)
    if stated is not None and not isinstance(stated, str):
        return Unscored("off_list", f"verdict {stated!r} is not a label")
    if contract.verdict_from_claims and contract.claims_key in obj:
        return _from_claims(config, obj[contract.claims_key], stated, reasoning)
    if stated is None:
        return Unscored("no_verdict", f"the JSON has no {contract.verdict_key!r} key")
    return _label_result(config, stated, reasoning)


def _from_claims(
    config: JudgeConfig, raw_claims: Any, stated: str | None, reasoning: str
) -> ParseResult:
    statuses = {k.upper(): v for k, v in config.output.claim_statuses.items()}
    if not isinstance(raw_claims, list):
        return Unscored("invalid_claims", "the claims value is not a list")
    claims: list[Claim] = []
    for n, entry in enumerate(raw_claims, 1):
        if not isinstance(entry, dict):
            return Unscored("invalid_claims", f"claim {n} is not an object")
        status = entry.get("status")
        if not isinstance(status, str) or status.strip().upper() not in statuses:
            return Unscored(
                "invalid_claims",
                f"claim {n} has status {status!r}; allowed: {', '.join(statuses)}",
            )
        text = entry.get("claim", entry.get("text", ""))
        claims.append(Claim(str(text), status.strip().upper(),
                            statuses[status.strip().upper()] == "supported"))
    if not claims:
        if stated is None:
            return Unscored("no_verdict", "no claims and no verdict")
        result = _label_result(config, stated, reasoning)
        return result
    derived = "pass" if all(c.supported for c in claims) else "fail"
    label = next(
        (lbl for lbl, v in config.verdicts.items() if v == derived), derived.upper()
    )
    note = ""
    if stated is not None and config.verdict_for_label(stated) not in (derived, None):
        note = f"the model's own verdict was {stated!r}; the claims decide ({derived})"
    return Verdict(derived, label, reasoning, tuple(claims), note)


def map_back(config: JudgeConfig, verdict: str, order: str) -> str:
    """A swapped pairwise verdict in the original terms (``a`` ↔ ``b``); others unchanged."""
    if config.kind == "pairwise" and order == "swapped":
        return {"a": "b", "b": "a"}.get(verdict, verdict)
    return verdict


__all__ = [
    "MARKER_SEPARATORS", "UNSCORED_REASONS", "Claim", "ParseResult", "Unscored", "Verdict",
    "map_back", "marker_head", "marker_regex", "parse_reply",
]
