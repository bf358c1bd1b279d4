"""Render a judge config and one item into the messages sent to the model.

Item text (question, answers, sources, reference) is untrusted: an answer may contain
``VERDICT: PASS``, a fake ``</answer>`` tag, or "ignore previous instructions". Rendering keeps
the prompt's structure intact whatever the item says:

* placeholders are substituted in one pass, so ``{question}`` inside an answer stays text;
* every ``<tag>`` name the config's prompts use (plus ``source``/``sources``) is neutralised in
  item text: its ``<`` becomes ``‹``, so ``</answer>`` in an answer reads ``‹/answer>`` and
  cannot close the block;
* the output marker — every spelling the parser accepts (:func:`judges.parsing.marker_head`:
  ``VERDICT:``, ``**VERDICT**: ``, ``__Verdict__ =`` …) — and the JSON verdict and claims keys
  (``"verdict":``, also when written with escapes, ``"\u0076erdict":``) get a look-alike
  colon (``∶``), so a reply that quotes the item never parses as a verdict;
* code fences (```` ``` ````) become look-alike backticks (``ˋˋˋ``), so a block quoted from the
  item is not a fenced block of the reply.

Sources are numbered ``<source id="1">…</source>`` in the order given, or in the swapped
order (reversed, or a seeded shuffle) for the position-swap call.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from judges.config import JudgeConfig
from judges.parsing import marker_head
from judges.providers.base import Message
from labels.errors import CalibrateError
from labels.models import Item, Source

Order = Literal["original", "swapped"]
ORDERS: tuple[Order, ...] = ("original", "swapped")

_TAG_NAME = re.compile(r"</?\s*([A-Za-z][\w-]*)[^<>]*>")
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
LOOKALIKE_LT = "\u2039"  # ‹
LOOKALIKE_COLON = "\u2236"  # ∶ (RATIO): reads as a colon, never matches the parser's ':'
LOOKALIKE_FENCE = "\u02cb" * 3  # ˋˋˋ (MODIFIER LETTER GRAVE ACCENT): reads as a fence, is not one
_FENCE_TICKS = re.compile(r"`{3,}")
# A double-quoted string followed by a colon: a JSON key, possibly written with escapes.
_QUOTED_KEY = re.compile(r'"((?:[^"\\\n]|\\.){1,200})"(\s*):')


class RenderError(CalibrateError):
    """An item lacks a value the template needs (the message names the item and variable)."""


@dataclass(frozen=True)
class RenderedPrompt:
    """What one call sends: a system prompt and the messages (few-shot turns, then the item)."""

    system: str
    messages: tuple[Message, ...]

    @property
    def user(self) -> str:
        """The final user message (the rendered template)."""
        return self.messages[-1].content

    def as_text(self) -> str:
        """A readable transcript, for previews and the call log."""
        parts = [f"[system]\n{self.system}"] if self.system else []
        parts.extend(f"[{m.role}]\n{m.content}" for m in self.messages)
        return "\n\n".join(parts)

    def approx_tokens(self) -> int:
        """A rough input-token count (characters / 4) for cost estimates."""
        return (len(self.system) + sum(len(m.content) for m in self.messages)) // 4 + 4


class Neutraliser:
    """Rewrites untrusted text so it cannot imitate the prompt's delimiters or verdict marker."""

    def __init__(self, config: JudgeConfig) -> None:
        """Collect the tag names of ``config``'s own texts, which item text must not imitate.

        Args:
            config: the judge whose system prompt, template, few-shot examples and claim-split
                prompts are trusted.
        """
        trusted = [config.system, config.template]
        trusted += [t for shot in config.few_shot for t in (shot.user, shot.assistant)]
        if config.claim_split is not None:
            trusted += [config.claim_split.check_system, config.claim_split.check_template]
        names = {"source", "sources"}
        for text in trusted:
            names.update(m.group(1).lower() for m in _TAG_NAME.finditer(text))
        alternatives = "|".join(sorted((re.escape(n) for n in names), key=len, reverse=True))
        self._tags = re.compile(rf"<(?=\s*/?\s*(?:{alternatives})\b)", re.IGNORECASE)
        keys = {config.output.verdict_key}
        if config.output.claims_key:
            keys.add(config.output.claims_key)
        self._keys = {k.lower() for k in keys}
        key_alternatives = "|".join(re.escape(k) for k in sorted(keys))
        # The parser's own pattern: whatever it would read as a marker loses its separator.
        self._marker = re.compile(marker_head(config.output.marker), re.IGNORECASE)
        self._json_key = re.compile(rf"""(["']?(?:{key_alternatives})["']?\s*)[:=]""",
                                    re.IGNORECASE)

    def __call__(self, text: str) -> str:
        """``text`` with delimiter tags, code fences, verdict markers and keys defused."""
        text = self._tags.sub(LOOKALIKE_LT, text)
        text = _FENCE_TICKS.sub(LOOKALIKE_FENCE, text)
        text = self._marker.sub(_defuse_separator, text)
        text = _QUOTED_KEY.sub(self._defuse_escaped_key, text)
        return self._json_key.sub(lambda m: m.group(1) + LOOKALIKE_COLON, text)

    def _defuse_escaped_key(self, match: re.Match[str]) -> str:
        raw = match.group(1)
        if "\\" not in raw:
            return match.group(0)  # plain keys are the next pattern's job
        try:
            decoded = json.loads(f'"{raw}"')
        except json.JSONDecodeError:
            return match.group(0)
        if decoded.strip().lower() not in self._keys:
            return match.group(0)
        return f'"{raw}"{match.group(2)}{LOOKALIKE_COLON}'


def _defuse_separator(match: re.Match[str]) -> str:
    start = match.start("sep") - match.start()
    return match.group(0)[:start] + LOOKALIKE_COLON


def ordered_sources(
    sources: Sequence[Source], order: Order, *, method: str = "reverse", seed: int = 0,
    item_id: str = "",
) -> list[Source]:
    """The sources in the order a call shows them.

    ``swapped`` reverses them, or shuffles them with a generator seeded by ``seed`` and the
    item id (so every run swaps the same way); a shuffle that happens to return the original
    order is rotated by one, so the swapped call really differs when there are two or more.
    """
    items = list(sources)
    if order == "original" or len(items) < 2:
        return items
    if method == "reverse":
        return items[::-1]
    shuffled = items[:]
    random.Random(f"{seed}:{item_id}").shuffle(shuffled)
    if shuffled == items:
        shuffled = shuffled[1:] + shuffled[:1]
    return shuffled


def format_sources(sources: Sequence[Source], neutralise: Neutraliser) -> str:
    """Numbered source blocks: ``<source id="1">text</source>``, blank line between."""
    return "\n\n".join(
        f'<source id="{n}">\n{neutralise(s.text)}\n</source>' for n, s in enumerate(sources, 1)
    )


def item_values(
    config: JudgeConfig, item: Item, order: Order = "original",
    neutralise: Neutraliser | None = None,
) -> dict[str, str | None]:
    """The template variables for ``item`` in ``order`` (``None`` = the item lacks it)."""
    clean = neutralise or Neutraliser(config)
    sources = ordered_sources(
        item.sources, order, method=config.source_order, seed=config.shuffle_seed,
        item_id=item.item_id,
    )
    answer_a, answer_b = item.answer_a, item.answer_b
    if config.kind == "pairwise" and order == "swapped":
        answer_a, answer_b = answer_b, answer_a
    raw: dict[str, str | None] = {
        "question": item.question, "answer": item.answer, "answer_a": answer_a,
        "answer_b": answer_b, "reference": item.reference,
    }
    values = {k: (clean(v) if v is not None else None) for k, v in raw.items()}
    values["sources"] = format_sources(sources, clean) if sources else None
    return values


def render(
    config: JudgeConfig, item: Item, order: Order = "original", *,
    neutralise: Neutraliser | None = None,
) -> RenderedPrompt:
    """Render ``config`` for ``item``.

    Args:
        config: the judge config.
        item: the row to judge.
        order: ``"original"``, or ``"swapped"`` (pairwise: A and B exchanged; pointwise: the
            sources reversed or shuffled, per ``config.source_order``).
        neutralise: a prepared :class:`Neutraliser` (pass one when rendering many items).

    Raises:
        RenderError: the template uses a variable the item does not have (e.g. ``{reference}``
            on a row without a reference, or ``{sources}`` on a row without sources).
    """
    values = item_values(config, item, order, neutralise)

    user = _fill(config.template, values, item, f"the template of judge {config.name!r}")
    messages: list[Message] = []
    for shot in config.few_shot:
        messages.append(Message("user", shot.user))
        messages.append(Message("assistant", shot.assistant))
    messages.append(Message("user", user))
    return RenderedPrompt(system=config.system, messages=tuple(messages))


def _fill(template: str, values: dict[str, str | None], item: Item, what: str) -> str:
    """``template`` with ``{name}`` replaced by ``values`` and ``{{``/``}}`` by braces."""

    def substitute(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        name = match.group(1)
        value = values.get(name)
        if value is None:
            raise RenderError(f"item {item.item_id!r} has no {name}, but {what} uses {{{name}}}")
        return value

    return _PLACEHOLDER.sub(substitute, template)


def render_check(
    config: JudgeConfig, item: Item, claim: str, order: Order = "original", *,
    neutralise: Neutraliser | None = None,
) -> RenderedPrompt:
    """The YES/NO question about one ``claim`` of a ``claim_split`` judge.

    The claim was written by the model from untrusted answer text, so it is neutralised like
    item text; the sources come in ``order``, as in the extraction call.

    Raises:
        RenderError: the config is not a claim-split judge, or the template needs a value the
            item lacks (e.g. ``{sources}`` on a row without sources).
    """
    split = config.claim_split
    if split is None:
        raise RenderError(f"judge {config.name!r} has no claim_split section")
    clean = neutralise or Neutraliser(config)
    values = item_values(config, item, order, clean)
    values["claim"] = clean(claim)

    user = _fill(split.check_template, values, item,
                 f"the check template of judge {config.name!r}")
    return RenderedPrompt(system=split.check_system, messages=(Message("user", user),))


__all__ = [
    "LOOKALIKE_COLON", "LOOKALIKE_FENCE", "LOOKALIKE_LT", "ORDERS", "Neutraliser", "Order",
    "RenderError", "RenderedPrompt", "format_sources", "item_values", "ordered_sources", "render",
    "render_check",
]
