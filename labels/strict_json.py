"""JSON as the importers accept it: standard JSON, and no more.

Python's :mod:`json` quietly accepts things that make an import ambiguous or crash it later:

* a key repeated in one object (``{"answer": "a", "answer": "b"}`` keeps the last one silently);
* ``NaN``, ``Infinity`` and ``-Infinity``, which are not JSON;
* nesting deep enough to exhaust the interpreter's stack (a ``RecursionError`` instead of a
  message);
* integers longer than Python will turn into text (4,300 digits).

:func:`strict_json_loads` refuses each with a :class:`JsonValueError` that says which; the
readers add the file, row and — through :func:`locate_column` — the column.
"""

from __future__ import annotations

import json
from typing import Any

from labels.validation import shown

MAX_JSON_DEPTH = 64
"""Nesting levels a record may have (a record holding a list of objects is 3)."""


class JsonValueError(ValueError):
    """Well-formed JSON that the importers refuse; ``str()`` says what, for a message."""


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


_STRICT = json.JSONDecoder(object_pairs_hook=_strict_pairs, parse_constant=_strict_constant)
_NOT_A_NUMBER = object()


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

    decoder = json.JSONDecoder(object_pairs_hook=pairs, parse_constant=lambda _n: _NOT_A_NUMBER)
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
