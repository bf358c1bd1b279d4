"""The one table of verdict spellings, shared by every reader of labels and verdicts.

Human labels (``calibrate labels import``), imported judge verdicts (``calibrate verdicts
import``) and the verdict files of ``calibrate score`` / ``gate`` accept the same words, case-
and whitespace-insensitive:

==============================  =========================================================
canonical verdict               accepted spellings
==============================  =========================================================
``pass``                        ``pass``, ``1``, ``true`` (and the booleans / numbers)
``fail``                        ``fail``, ``0``, ``false``
``unsure``                      ``unsure``
``a``, ``b``, ``tie``           themselves (pairwise)
no verdict (``None``)           empty, ``unscored``, ``none``, ``nan``, ``null`` (only where
                                the reader allows it: a judge may leave a row unscored, a
                                human label may not)
==============================  =========================================================

The pure statistics (:func:`judges.calibration.normalize_verdicts`) take the canonical words
only, so anything that reaches them has been through :func:`parse_verdict` first.
"""

from __future__ import annotations

from typing import Any

VERDICT_WORDS: dict[str, str] = {
    "pass": "pass",
    "fail": "fail",
    "unsure": "unsure",
    "1": "pass",
    "0": "fail",
    "true": "pass",
    "false": "fail",
    "a": "a",
    "b": "b",
    "tie": "tie",
}
"""Spelling (lower case) → canonical verdict."""

NO_VERDICT_WORDS = frozenset({"", "unscored", "none", "nan", "null"})
"""Spellings of "no verdict" (a judge's unscored row)."""


def verdict_key(value: Any) -> str:
    """The lookup key of a cell: booleans as ``true``/``false``, whole numbers as digits.

    ``None`` and NaN give ``""``; strings are stripped and lower-cased.
    """
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(int(value)) if float(value).is_integer() else str(value)
    return str(value).strip().lower()


def parse_verdict(value: Any, allowed: tuple[str, ...]) -> str:
    """The canonical verdict of a cell (a human label: "no verdict" is not allowed).

    Args:
        value: A cell: a string, a boolean, 1/0.
        allowed: The canonical verdicts this reader takes (e.g. ``("pass", "fail",
            "unsure")``).

    Raises:
        ValueError: the cell is not a spelling of an allowed verdict (the message is the key
            that was looked up); the caller names the file, row and column.
    """
    key = verdict_key(value)
    verdict = VERDICT_WORDS.get(key)
    if verdict is None or verdict not in allowed:
        raise ValueError(key)
    return verdict


def parse_optional_verdict(value: Any, allowed: tuple[str, ...]) -> str | None:
    """Like :func:`parse_verdict`, with ``None`` for the "no verdict" spellings (a judge's row)."""
    if verdict_key(value) in NO_VERDICT_WORDS:
        return None
    return parse_verdict(value, allowed)


def spellings(allowed: tuple[str, ...], *, missing_ok: bool = False) -> str:
    """The accepted spellings of ``allowed`` verdicts, for error messages."""
    words = [w for w, v in VERDICT_WORDS.items() if v in allowed]
    text = ", ".join(words)
    return text + ("; empty or unscored for no verdict" if missing_ok else "")


__all__ = [
    "NO_VERDICT_WORDS", "VERDICT_WORDS", "parse_optional_verdict", "parse_verdict", "spellings",
    "verdict_key",
]
