"""JSON as the importers accept it: standard JSON, and no more.

Python's :mod:`json` quietly accepts things that make an import ambiguous or crash it later:

* a key repeated in one object (``{"answer": "a", "answer": "b"}`` keeps the last one silently);
* ``NaN``, ``Infinity`` and ``-Infinity``, which are not JSON;
* nesting deep enough to exhaust the interpreter's stack (a ``RecursionError`` instead of a
  message);
* integers longer than Python will turn into text (4,300 digits);
* numbers too large for a float (``1e400`` would become infinity, then a null);
* text that is not text: the escape of a NUL (refused in CSV files too) and of a lone
  surrogate such as D800 (half a UTF-16 pair, which cannot be stored as UTF-8).

:func:`strict_json_loads` refuses each with a :class:`JsonValueError` that says which; the
readers add the file, row and — through :func:`locate_column` or the error's ``key`` — the
column.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from labels.validation import shown

MAX_JSON_DEPTH = 64
"""Nesting levels a record may have (a record holding a list of objects is 3)."""


class JsonValueError(ValueError):
    """Well-formed JSON that the importers refuse; ``str()`` says what, for a message.

    ``key`` is the record's top-level key that holds it, when that is known here.
    """

    def __init__(self, message: str, key: str | None = None) -> None:
        """Keep the message and the top-level key."""
        super().__init__(message)
        self.key = key


class _Marked(dict[str, Any]):
    """An object that held a duplicate key or a non-JSON number (lenient re-read only)."""


def _strict_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise JsonValueError(f"an object repeats the key {shown(key, 24)}")
            seen.add(key)
    return obj


def _strict_constant(name: str) -> Any:
    raise JsonValueError(f"holds {name}, which is not JSON (write a number, or null)")


def _strict_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JsonValueError(
            f"holds the number {text[:24]}, too large to be a number here (write it in quotes "
            "to keep it as text)"
        )
    return value


_STRICT = json.JSONDecoder(object_pairs_hook=_strict_pairs, parse_constant=_strict_constant,
                           parse_float=_strict_float)
_NOT_A_NUMBER = object()
# Escapes that may decode to what is no text: \u0000 and \uD800-\uDFFF (paired or not).
_SUSPECT_ESCAPE = re.compile(r"\\u(?:0000|[dD][89abcdefABCDEF])")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "holds a NUL character (\\u0000), which is not text"
    match = _SURROGATE.search(text)
    if match:
        return (f"holds a lone surrogate (\\u{ord(match.group()):04x}: half of a UTF-16 pair), "
                "which is not text")
    return None


def _check_text(value: Any) -> None:
    """Refuse a NUL or lone surrogate in any string (key or value) of ``value``."""
    stack: list[tuple[Any, str | None]] = [(value, None)]
    while stack:
        current, top = stack.pop()
        if isinstance(current, str):
            problem = _text_problem(current)
            if problem:
                raise JsonValueError(problem, top)
        elif isinstance(current, dict):
            for key, item in current.items():
                owner = key if top is None and current is value else top
                problem = _text_problem(key)
                if problem:
                    raise JsonValueError(f"has a key that {problem}", owner)
                stack.append((item, owner))
        elif isinstance(current, list):
            stack.extend((item, top) for item in current)


def _too_deep(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        children = current.values() if isinstance(current, dict) else current
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def decode_record(text: str, position: int = 0) -> tuple[Any, int]:
    """Decode one JSON value starting at ``text[position]`` (no leading whitespace).

    Returns:
        The value and the index just after it.

    Raises:
        json.JSONDecodeError: the text is not JSON.
        JsonValueError: it is JSON the importers refuse (see the module docstring).
    """
    try:
        value, end = _STRICT.raw_decode(text, position)
    except RecursionError:
        raise JsonValueError(
            f"is nested too deeply (more than {MAX_JSON_DEPTH} levels of lists and objects)"
        ) from None
    except json.JSONDecodeError:
        raise
    except JsonValueError:
        raise
    except ValueError:  # int() refuses more than 4,300 digits
        raise JsonValueError("holds an integer with more than 4,300 digits") from None
    if isinstance(value, (dict, list)) and _too_deep(value, MAX_JSON_DEPTH):
        raise JsonValueError(
            f"is nested too deeply (more than {MAX_JSON_DEPTH} levels of lists and objects)"
        )
    # Raw control characters are refused by the decoder; only an escape can make these.
    if _SUSPECT_ESCAPE.search(text, position, end):
        _check_text(value)
    return value, end


def strict_json_loads(text: str) -> Any:
    """:func:`json.loads` for a whole text, refusing what :mod:`labels.strict_json` describes."""
    start = len(text) - len(text.lstrip())
    value, end = decode_record(text, start)
    rest = text[end:]
    if rest.strip():
        raise json.JSONDecodeError("Extra data", text, end + len(rest) - len(rest.lstrip()))
    return value


def locate_column(text: str, position: int = 0) -> str | None:
    """The top-level key of the record at ``text[position]`` that holds what was refused.

    Only called after :func:`decode_record` failed with :class:`JsonValueError`: re-reads the
    record leniently and finds the key that is repeated at the top level, or else the first
    key whose value holds a repeated key or ``NaN`` (``None`` when that cannot be told, e.g.
    for too deep nesting).
    """
    repeated: list[str | None] = []  # one entry per object, innermost first, outermost last

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        duplicate = None
        for key, _ in items:
            if key in seen:
                duplicate = key
                break
            seen.add(key)
        repeated.append(duplicate)
        obj = dict(items)
        marked = duplicate is not None or any(v is _NOT_A_NUMBER for v in obj.values())
        return _Marked(obj) if marked else obj

    def number(text: str) -> Any:
        value = float(text)
        return _NOT_A_NUMBER if math.isinf(value) else value

    decoder = json.JSONDecoder(object_pairs_hook=pairs, parse_constant=lambda _n: _NOT_A_NUMBER,
                               parse_float=number)
    try:
        value, _ = decoder.raw_decode(text, position)
    except (RecursionError, ValueError):
        return None
    if not isinstance(value, dict):
        return None
    if repeated and repeated[-1] is not None:
        return repeated[-1]
    return next((str(k) for k, item in value.items() if _holds_mark(item)), None)


def _holds_mark(value: Any) -> bool:
    stack = [value]
    while stack:
        current = stack.pop()
        if current is _NOT_A_NUMBER or isinstance(current, _Marked):
            return True
        if isinstance(current, dict):
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return False


__all__ = ["MAX_JSON_DEPTH", "JsonValueError", "decode_record", "locate_column",
           "strict_json_loads"]
