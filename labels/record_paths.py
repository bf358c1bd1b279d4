"""Paths into nested records: ``response.output.text``, ``contexts[*].text``, ``data.items``.

The importers map a field onto a *path* as well as onto a column, so files whose records nest
their fields (promptfoo results, inspect logs, exports of tracing tools) import without a
converter. A path is dot-separated keys, each optionally followed by selectors:

=====================  ===================================================================
``a.b.c``              key ``b`` of the object under ``a``, then its key ``c``
``a[0]``               the first element of the list under ``a`` (``[-1]``: the last)
``a[*].text``          the ``text`` of every element of the list under ``a`` (a list)
``a[name=Overlap]``    the first element of the list under ``a`` whose ``name`` is ``Overlap``
=====================  ===================================================================

A column whose own name holds a dot is read as that column: a name the file has always wins
over the path it spells. Nothing here is evaluated: a path is parsed into keys and selectors,
and a file's text is only ever read as data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from labels.errors import ImportFileError, did_you_mean

_SELECTOR = re.compile(r"\[([^\]]*)\]")
_INDEX = re.compile(r"^-?\d+$")
_FILTER = re.compile(r"^([^=\s]+)=(.*)$")
MAX_SHOWN_PATHS = 25
"""How many paths an error message lists before it says how many more there are."""


@dataclass(frozen=True)
class Step:
    """One step of a path: a key, an index, every element (``*``) or a filter ``key=value``."""

    key: str | None = None
    index: int | None = None
    every: bool = False
    where: tuple[str, str] | None = None


class PathError(ValueError):
    """A record does not hold what a path asks for (the message says what it holds instead)."""


def is_path(text: str) -> bool:
    """Whether ``text`` reaches into a record (holds a ``.`` or a ``[…]`` selector)."""
    return "." in text or "[" in text


def parse_path(text: str) -> tuple[Step, ...]:
    """The steps of path ``text``.

    Raises:
        ImportFileError: the path is malformed (an empty key, an unclosed bracket, …).
    """
    steps: list[Step] = []
    if not text.strip():
        raise ImportFileError("an empty path")
    for part in text.split("."):
        head, _, rest = part.partition("[")
        rest = "[" + rest if rest or part.endswith("[") else ""
        if head:
            steps.append(Step(key=head))
        elif not rest:
            raise ImportFileError(f"path {text!r} has an empty key (two dots, or a leading dot)")
        position = 0
        for match in _SELECTOR.finditer(rest):
            if match.start() != position:
                break
            steps.append(_selector(text, match.group(1)))
            position = match.end()
        if position != len(rest):
            raise ImportFileError(
                f"path {text!r}: {rest[position:]!r} is not a selector ([0], [*] or [key=value])"
            )
    return tuple(steps)


def _selector(path: str, inner: str) -> Step:
    inner = inner.strip()
    if inner == "*":
        return Step(every=True)
    if _INDEX.match(inner):
        return Step(index=int(inner))
    match = _FILTER.match(inner)
    if match:
        return Step(where=(match.group(1), match.group(2).strip().strip("'\"")))
    raise ImportFileError(f"path {path!r}: [{inner}] is not a selector ([0], [*] or [key=value])")


def _kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    return "text" if isinstance(value, str) else f"a {type(value).__name__}"


def resolve(value: Any, steps: tuple[Step, ...], *, strict: bool = False) -> Any:
    """What ``steps`` reach in ``value``; ``None`` where a key or element is absent.

    A missing key or an index past the end gives ``None`` (the importers then say the cell is
    empty, or leave an optional field out), as a JSON record without a key does. A step that
    cannot apply (a key of a list, an index into text) raises :class:`PathError`, since
    then the path does not fit the file's shape. ``strict`` makes a missing key an error too.
    """
    position = 0
    while position < len(steps):
        step = steps[position]
        position += 1
        if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
            value = value.tolist()  # numpy arrays of a Parquet list column
        if value is None:
            if strict:
                raise PathError("is missing")
            return None
        if step.key is not None:
            if not isinstance(value, Mapping):
                raise PathError(f"{step.key!r} is a key, but here the record holds {_kind(value)}")
            if step.key not in value:
                # A key whose own name holds dots (OpenInference's "document.content"): the
                # longest run of the path's next keys that the object has as one key.
                dotted = _dotted_key(value, step.key, steps[position:])
                if dotted is not None:
                    key, used = dotted
                    value, position = value[key], position + used
                    continue
            if step.key not in value and strict:
                raise PathError(f"has no key {step.key!r} (keys: {', '.join(map(str, value))})")
            value = value.get(step.key)
            continue
        if not isinstance(value, list):
            raise PathError(f"a list selector, but here the record holds {_kind(value)}")
        if step.every:
            rest = steps[position:]
            return [resolve(element, rest, strict=strict) for element in value]
        if step.index is not None:
            value = value[step.index] if -len(value) <= step.index < len(value) else None
            continue
        assert step.where is not None  # one of the four kinds, by construction
        key, wanted = step.where
        value = next(
            (e for e in value if isinstance(e, Mapping) and str(e.get(key)) == wanted), None
        )
    return value


def _dotted_key(
    value: Mapping[str, Any], first: str, rest: tuple[Step, ...]
) -> tuple[str, int] | None:
    """``(key, steps it takes after the first)`` for the longest dotted key ``value`` has."""
    keys = [first]
    for step in rest:
        if step.key is None:
            break
        keys.append(step.key)
    for count in range(len(keys), 1, -1):
        joined = ".".join(keys[:count])
        if joined in value:
            return joined, count - 1
    return None


def split_column(path: str, columns: Any) -> tuple[str, str] | None:
    """``(column, rest of the path)`` for the longest column ``path`` starts with.

    Exports that flatten nested attributes name their columns with dots
    (``attributes.retrieval.documents``); a path may start from such a column.
    """
    best = None
    for column in columns:
        if (len(path) > len(column) and path.startswith(column)
                and path[len(column)] in ".[" and (best is None or len(column) > len(best))):
            best = column
    if best is None:
        return None
    return best, path[len(best):].removeprefix(".")


def leaf_paths(value: Any, prefix: str = "", *, limit: int = 200) -> list[str]:
    """The paths to the leaves of ``value`` (a record), in the record's order.

    A list of objects is shown as ``key[*].sub`` from its first element; a list of texts or
    numbers is a leaf itself. For error messages: the paths a ``--map`` could name.
    """
    out: list[str] = []

    def walk(node: Any, path: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(node, Mapping) and node:
            for key, child in node.items():
                walk(child, f"{path}.{key}" if path else str(key))
            return
        if isinstance(node, list) and node and isinstance(node[0], Mapping):
            walk(node[0], f"{path}[*]")
            return
        if path:
            out.append(path)

    walk(value, prefix)
    return out


def record_lists(value: Any, prefix: str = "", *, depth: int = 4) -> list[tuple[str, int]]:
    """``(path, length)`` of every list of objects inside ``value``, outermost first.

    What ``--records`` could name in a top-level JSON object.
    """
    found: list[tuple[str, int]] = []
    if depth == 0 or not isinstance(value, Mapping):
        return found
    for key, child in value.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(child, list) and child and all(isinstance(e, Mapping) for e in child):
            found.append((path, len(child)))
        elif isinstance(child, Mapping):
            found.extend(record_lists(child, path, depth=depth - 1))
    return found


def parse_pairs(pairs: list[str], fields: tuple[str, ...]) -> dict[str, str]:
    """``["label=feedback.value"]`` as ``{"label": "feedback.value"}`` (``--map`` options).

    Raises:
        ImportFileError: a pair is not ``field=column`` or names a field not in ``fields``.
    """
    mapping: dict[str, str] = {}
    for pair in pairs:
        target, sep, column = (part.strip() for part in pair.partition("="))
        if not sep or not target or not column:
            raise ImportFileError(f"--map {pair!r} is not of the form field=column")
        if target not in fields:
            raise ImportFileError(
                f"--map {pair!r}: unknown field {target!r}{did_you_mean(target, fields)} "
                f"(fields: {', '.join(fields)})"
            )
        mapping[target] = column
    return mapping


def shown_paths(paths: list[str]) -> str:
    """The paths for a message: the first :data:`MAX_SHOWN_PATHS`, then how many more."""
    more = len(paths) - MAX_SHOWN_PATHS
    return ", ".join(paths[:MAX_SHOWN_PATHS]) + (f", … ({more} more)" if more > 0 else "")


__all__ = [
    "PathError", "Step", "is_path", "leaf_paths", "parse_pairs", "parse_path", "record_lists",
    "resolve", "shown_paths", "split_column",
]
