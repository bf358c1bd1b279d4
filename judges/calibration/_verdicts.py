"""Verdict normalisation: one helper turns strings, 1/0, bools or codes into small int codes.

Binary verdicts (pass / fail):

==========  =====  ===============================================================
code        value  accepted spellings (case- and whitespace-insensitive)
==========  =====  ===============================================================
``PASS``    1      ``"pass"``, ``1``, ``True``, ``1.0``
``FAIL``    0      ``"fail"``, ``0``, ``False``, ``0.0``
``UNSURE``  -1     ``"unsure"`` (a human who could not decide; a judge that hedged)
``UNSCORED``-2     ``"unscored"``, ``None``, ``NaN``, ``""`` (no usable verdict)
==========  =====  ===============================================================

Pairwise verdicts (which of two answers is better): ``"a"`` -> 0, ``"b"`` -> 1, ``"tie"`` -> 2,
plus ``UNSURE`` / ``UNSCORED`` as above.

Anything else raises :class:`~judges.calibration.CalibrationInputError` naming the offending
values: a typo must never become a silent "fail".

The helper is vectorised: exact lowercase matches are found with numpy string comparisons, and
only the rows that match none of them are lower-cased and stripped, so a million canonical
verdict strings normalise in a few tens of milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ._results import CalibrationInputError

__all__ = [
    "FAIL",
    "PASS",
    "TIE",
    "UNSCORED",
    "UNSURE",
    "A",
    "B",
    "Codes",
    "Flags",
    "Indices",
    "PerRow",
    "VerdictKind",
    "normalize_verdicts",
    "verdict_names",
]

PASS = 1
FAIL = 0
A = 0
B = 1
TIE = 2
UNSURE = -1
UNSCORED = -2

VerdictKind = Literal["binary", "pairwise"]

PerRow = npt.ArrayLike | Sequence[Any]
"""One value per row (a verdict, a segment, an id), as a caller may give them: a NumPy array, or
any sequence (strings, 1/0, bools; see :func:`normalize_verdicts`)."""

# The per-row columns of normalised evidence, by what they hold.
Codes = npt.NDArray[np.int8]
"""Small codes per row: verdicts, outcomes, selections."""
Flags = npt.NDArray[np.bool_]
"""A yes/no per row."""
Indices = npt.NDArray[np.int64]
"""An index per row into a list of names (segments, pairs, documents)."""

_BINARY: dict[str, int] = {"pass": PASS, "fail": FAIL, "unsure": UNSURE, "unscored": UNSCORED}
_PAIRWISE: dict[str, int] = {"a": A, "b": B, "tie": TIE, "unsure": UNSURE, "unscored": UNSCORED}
_BINARY_NAMES = np.array(["unscored", "unsure", "fail", "pass"])  # index = code + 2
_PAIRWISE_NAMES = np.array(["unscored", "unsure", "a", "b", "tie"])


def _table(kind: VerdictKind) -> dict[str, int]:
    if kind == "binary":
        return _BINARY
    if kind == "pairwise":
        return _PAIRWISE
    raise CalibrationInputError(f"kind must be 'binary' or 'pairwise', got {kind!r}")


def normalize_verdicts(
    values: PerRow, *, kind: VerdictKind = "binary"
) -> npt.NDArray[np.int8]:
    """Normalise verdicts to int8 codes (see the module docstring for the table).

    Args:
        values: 1-D array-like of verdict strings, of 1/0 or bools (binary only), or of
            already-normalised int codes. ``None``/``NaN``/``""`` mean "no verdict" (unscored).
        kind: ``"binary"`` for pass/fail verdicts, ``"pairwise"`` for a/b/tie verdicts.

    Returns:
        An ``int8`` array of codes with the same length as ``values``.

    Raises:
        CalibrationInputError: On an unknown verdict, a non-1-D input or an unknown ``kind``.

    Examples:
        >>> normalize_verdicts(["pass", "FAIL ", "unsure", None, 1, 0]).tolist()
        [1, 0, -1, -2, 1, 0]
        >>> normalize_verdicts(["a", "tie", "b"], kind="pairwise").tolist()
        [0, 2, 1]
    """
    table = _table(kind)
    arr = np.asarray(values)
    if arr.ndim == 0:
        raise CalibrationInputError("verdicts must be a 1-D array, got a scalar")
    if arr.ndim != 1:
        raise CalibrationInputError(f"verdicts must be 1-D, got shape {arr.shape}")
    allowed_codes = np.array(sorted(set(table.values())), dtype=np.int64)
    if arr.dtype == np.bool_:
        if kind != "binary":
            raise CalibrationInputError("boolean verdicts are only meaningful for kind='binary'")
        return arr.astype(np.int8)
    if np.issubdtype(arr.dtype, np.integer):
        bad = ~np.isin(arr, allowed_codes)
        if bad.any():
            raise CalibrationInputError(
                f"unknown {kind} verdict codes {sorted(set(arr[bad].tolist()))[:5]}; "
                f"allowed: {allowed_codes.tolist()} (or strings {sorted(table)})"
            )
        return arr.astype(np.int8)
    if np.issubdtype(arr.dtype, np.floating):
        out = np.full(arr.shape, UNSCORED, dtype=np.int8)
        finite = ~np.isnan(arr)
        vals = arr[finite]
        if not np.all(np.isin(vals, allowed_codes)):
            bad_vals = sorted(set(vals[~np.isin(vals, allowed_codes)].tolist()))[:5]
            raise CalibrationInputError(f"unknown {kind} verdict values {bad_vals}")
        out[finite] = vals.astype(np.int8)
        return out
    if arr.dtype.kind == "O":
        return _normalize_objects(arr, table, kind)
    if arr.dtype.kind in "US":
        return _normalize_strings(arr.astype(str), table, kind)
    raise CalibrationInputError(f"cannot interpret verdicts of dtype {arr.dtype}")


def _normalize_strings(
    arr: npt.NDArray[Any], table: dict[str, int], kind: str
) -> npt.NDArray[np.int8]:
    out = np.full(arr.shape, np.iinfo(np.int8).min, dtype=np.int8)
    for name, code in table.items():
        out[arr == name] = code
    todo = out == np.iinfo(np.int8).min
    if todo.any():
        rest = np.strings.lower(np.strings.strip(arr[todo]))
        sub = np.full(rest.shape, np.iinfo(np.int8).min, dtype=np.int8)
        for name, code in table.items():
            sub[rest == name] = code
        sub[rest == ""] = UNSCORED
        sub[rest == "nan"] = UNSCORED
        sub[rest == "none"] = UNSCORED
        if kind == "binary":
            sub[rest == "1"] = PASS
            sub[rest == "0"] = FAIL
            sub[rest == "true"] = PASS
            sub[rest == "false"] = FAIL
        bad = sub == np.iinfo(np.int8).min
        if bad.any():
            examples = sorted(set(arr[todo][bad].tolist()))[:5]
            raise CalibrationInputError(
                f"unknown {kind} verdicts {examples}; allowed: {sorted(table)}"
            )
        out[todo] = sub
    return out


def _normalize_objects(
    arr: npt.NDArray[Any], table: dict[str, int], kind: str
) -> npt.NDArray[np.int8]:
    words = _normalize_words(arr, table, kind)
    if words is not None:
        return words
    # Mixed Python objects (e.g. strings with None, or ints with None): map missing first.
    missing = np.fromiter(
        (v is None or (isinstance(v, float) and v != v) for v in arr), dtype=bool, count=arr.size
    )
    out = np.full(arr.shape, UNSCORED, dtype=np.int8)
    present = arr[~missing]
    if present.size:
        if all(isinstance(v, bool | np.bool_ | int | np.integer | float) for v in present):
            out[~missing] = normalize_verdicts(present.astype(float), kind=kind)  # type: ignore[arg-type]
        else:
            out[~missing] = _normalize_strings(present.astype(str), table, kind)
    return out


def _normalize_words(
    arr: npt.NDArray[Any], table: dict[str, int], kind: str
) -> npt.NDArray[np.int8] | None:
    """Codes of strings with None/NaN, each distinct word normalised once; ``None`` otherwise.

    A report's 1 M-row population holds a handful of words: per-row Python over it takes ~1 s,
    pandas' factorize finds the words in C. Anything else (numbers, pd.NA, NaT, a mix) is left
    to the per-row path, so every input gets the codes and errors it gets there.
    """
    import pandas as pd  # lazily: only verdicts held as objects need it

    codes, words = pd.factorize(arr, use_na_sentinel=True)
    if pd.api.types.infer_dtype(words, skipna=False) not in ("string", "empty"):
        return None
    missing = arr[codes < 0]
    not_none = missing[missing != None]  # noqa: E711  (elementwise, not an identity test)
    if not_none.size and pd.api.types.infer_dtype(not_none, skipna=False) != "floating":
        return None  # pd.NA, NaT, Decimal: the per-row path reads them as text
    word_codes = _normalize_strings(words.astype(str), table, kind)
    # factorize's code for a missing value is -1: the last entry, unscored.
    return np.append(word_codes, np.int8(UNSCORED)).astype(np.int8)[codes]


def verdict_names(codes: npt.ArrayLike, *, kind: VerdictKind = "binary") -> npt.NDArray[np.str_]:
    """Map int codes back to canonical verdict strings.

    Args:
        codes: Codes as returned by :func:`normalize_verdicts`.
        kind: ``"binary"`` or ``"pairwise"``.

    Returns:
        An array of strings such as ``"pass"``, ``"fail"``, ``"unsure"``, ``"unscored"``.

    Examples:
        >>> verdict_names([1, 0, -1, -2]).tolist()
        ['pass', 'fail', 'unsure', 'unscored']
    """
    _table(kind)
    names = _BINARY_NAMES if kind == "binary" else _PAIRWISE_NAMES
    c = np.asarray(codes, dtype=np.int64)
    return names[c + 2]


def labelled_codes(
    human: PerRow, judge_labelled: PerRow,
    *, judge_codes: Callable[[PerRow], npt.NDArray[np.int8]] | None = None,
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """Codes of the human and judge verdicts on the labelled rows, checked to be aligned.

    Args:
        human: Human verdicts on the labelled rows.
        judge_labelled: Judge verdicts on the same rows.
        judge_codes: How to code the judge's verdicts (default :func:`normalize_verdicts`;
            the stratified estimators pass their stratum codes).

    Raises:
        CalibrationInputError: the two arrays differ in length.
    """
    h = normalize_verdicts(human)
    jl = (judge_codes or normalize_verdicts)(judge_labelled)
    if h.shape != jl.shape:
        raise CalibrationInputError(
            f"human and judge_labelled must be aligned: {h.shape[0]} vs {jl.shape[0]} rows"
        )
    return h, jl
