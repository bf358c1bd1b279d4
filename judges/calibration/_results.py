"""Named, immutable result types shared by the calibration statistics.

Every statistic returns a small frozen dataclass rather than a bare tuple. Each has a
``to_dict()`` that produces JSON-safe values (``float``/``int``/``str``/``bool``/``None``,
never ``NaN``), so the CLI can print ``{"estimate", "low", "high"}`` objects straight from it.

Refusal pattern (used consistently across the package):

* **Invalid input** (wrong shapes, unknown verdict strings, a confidence level outside
  (0, 1), a negative count) raises :class:`CalibrationInputError`, a ``ValueError``.
* **A statistic that the data cannot support** (no rows, one class missing, a judge no better
  than chance, a kappa with no variation) returns a result with ``refused=True``,
  ``estimate``/``low``/``high`` set to ``None`` and a human-readable ``reason``. Such results
  are never silently ``NaN``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "CalibrationInputError",
    "Estimate",
    "PassRateEstimate",
    "collapsed",
    "describe_interval",
    "format_interval",
    "format_point",
    "interval_json",
    "json_safe",
]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class CalibrationInputError(ValueError):
    """Raised when the arrays or options passed to a calibration function are invalid."""


def json_safe(value: Any) -> Any:
    """Convert numpy scalars, arrays, tuples, dataclasses and non-finite floats to JSON types.

    Args:
        value: Any nested structure of results.

    Returns:
        The same structure with ``float('nan')``/``inf`` turned into ``None``, numpy scalars into
        Python scalars, tuples/arrays into lists, mappings into ``dict`` with ``str`` keys, and
        objects with a ``to_dict`` method into their dict.
    """
    if value is None or isinstance(value, bool | str):
        return value
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return value.to_dict()
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return [json_safe(v) for v in value.tolist()]
    if isinstance(value, tuple | list):
        return [json_safe(v) for v in value]
    return str(value)


def _finite(x: float | None) -> float | None:
    if x is None or not math.isfinite(float(x)):
        return None
    return float(x)


def format_interval(value: Mapping[str, Any], *, digits: int = 3, signed: bool = False) -> str:
    """``0.812 [0.771, 0.848]`` from an interval mapping (``{estimate, low, high, ...}``).

    The mapping is the JSON form of any interval (:meth:`Estimate.to_interval`, a report's or a
    card's interval); a refused value (``estimate`` ``None``) gives ``—``. ``signed`` writes
    every number with its sign (``+0.064 [+0.008, +0.128]``), for differences.
    """
    est = value.get("estimate")
    if est is None:
        return "—"
    spec = f"{'+' if signed else ''}.{digits}f"
    low, high = value.get("low"), value.get("high")
    if low is None or high is None:
        return f"{est:{spec}}"
    return f"{est:{spec}} [{low:{spec}}, {high:{spec}}]"


def collapsed(value: Mapping[str, Any], *, digits: int = 3) -> bool:
    """Whether an interval mapping's bounds print alike at ``digits`` (``[1.000, 1.000]``).

    A refused value, or one without bounds, has not collapsed.
    """
    low, high = value.get("low"), value.get("high")
    if value.get("estimate") is None or low is None or high is None:
        return False
    return f"{low:.{digits}f}" == f"{high:.{digits}f}"


def describe_interval(value: Mapping[str, Any], *, digits: int = 3, signed: bool = False,
                      agreement: bool = False) -> str:
    """An interval as text for people: :func:`format_interval`, or words where it collapsed.

    A zero-width interval (``1.000 [1.000, 1.000]``: a Wald kappa of a perfect table, a census
    of a small stratum) reads as a certainty that 14 rows do not give. It is said in words
    instead, with the rows behind it: a perfect ``agreement`` (Cohen's kappa, Krippendorff's
    alpha) as "all 14 agree", any other value as "0.633 on all 30 rows (no spread)". Every
    surface that prints an interval for people (the Calibration page, ``calibrate report``)
    says it through this function; the JSON keeps the numbers.

    Args:
        value: An interval mapping (``estimate``, ``low``, ``high``, ``n``, ``reason``).
        digits: Decimals shown.
        signed: Every number with its sign (differences).
        agreement: The value is an agreement coefficient, where 1 means every row agrees.

    Returns:
        The text (``—`` when refused).

    Examples:
        >>> describe_interval({"estimate": 0.8, "low": 0.7, "high": 0.9, "n": 40})
        '0.800 [0.700, 0.900]'
        >>> describe_interval({"estimate": 1.0, "low": 1.0, "high": 1.0, "n": 14}, agreement=True)
        'all 14 agree'
        >>> describe_interval({"estimate": 0.6333, "low": 0.6333, "high": 0.6333, "n": 30})
        '0.633 on all 30 rows (no spread)'
    """
    if not collapsed(value, digits=digits):
        return format_interval(value, digits=digits, signed=signed)
    n = int(value.get("n") or 0)
    point = format_point(value, digits=digits, signed=signed)
    if agreement and f"{value['estimate']:.{digits}f}" == f"{1:.{digits}f}":
        return f"all {n:,} agree"
    return f"{point} on all {n:,} rows (no spread)"


def format_point(value: Mapping[str, Any], *, digits: int = 3, signed: bool = False) -> str:
    """The point estimate of an interval mapping as text (``—`` when refused)."""
    est = value.get("estimate")
    return "—" if est is None else f"{est:{'+' if signed else ''}.{digits}f}"


def interval_json(value: Estimate | PassRateEstimate | None) -> dict[str, Any]:
    """``{estimate, low, high, n, reason}`` of an estimate, or of a statistic not computed.

    ``None`` (e.g. no flip rate without repeated calls) gives numbers ``None``, ``n`` 0 and the
    reason ``"not computed"``; otherwise :meth:`Estimate.to_interval` /
    :meth:`PassRateEstimate.to_interval`.
    """
    if value is None:
        return {"estimate": None, "low": None, "high": None, "n": 0, "reason": "not computed"}
    return value.to_interval()


@dataclass(frozen=True)
class _Interval:
    """Base of the interval results: the bounds, their ``{estimate, low, high, n, reason}`` form.

    The bounds are the first fields of every subclass, in this (positional) order.
    """

    estimate: float | None
    low: float | None
    high: float | None

    def _interval_n_reason(self) -> tuple[int, str | None]:
        raise NotImplementedError

    @property
    def width(self) -> float | None:
        """Interval width ``high - low`` (``None`` when refused)."""
        if self.low is None or self.high is None:
            return None
        return self.high - self.low

    def covers(self, value: float) -> bool:
        """Return whether ``low <= value <= high`` (``False`` when refused)."""
        if self.low is None or self.high is None:
            return False
        return self.low <= value <= self.high

    def to_interval(self) -> dict[str, Any]:
        """``{estimate, low, high, n, reason}``, JSON-safe (the report's and card's interval).

        ``reason`` is ``None`` for a usable number; for a refused statistic the numbers are
        ``None`` and ``reason`` says why.
        """
        n, reason = self._interval_n_reason()
        return {
            "estimate": _finite(self.estimate),
            "low": _finite(self.low),
            "high": _finite(self.high),
            "n": int(n),
            "reason": reason,
        }

    def format(self, *, digits: int = 3) -> str:
        """``0.812 [0.771, 0.848]``; ``—`` when refused."""
        return format_interval(self.to_interval(), digits=digits)

    def format_point(self, *, digits: int = 3) -> str:
        """The point estimate as text; ``—`` when refused."""
        return format_point(self.to_interval(), digits=digits)

    def describe(self, *, digits: int = 3, agreement: bool = False) -> str:
        """:func:`describe_interval` of this result: words where the interval collapsed."""
        return describe_interval(self.to_interval(), digits=digits, agreement=agreement)


class _Claims:
    """Mixin: whether a result that may be refused or uninformative makes a claim."""

    refused: bool
    uninformative: bool

    @property
    def claims(self) -> bool:
        """``True`` when the result makes a claim: neither refused nor uninformative."""
        return not (self.refused or self.uninformative)


class _ToDict:
    """Mixin: ``to_dict`` over dataclass fields, JSON-safe."""

    def to_dict(self) -> dict[str, Any]:
        """Return the result as a JSON-safe ``dict`` (non-finite floats become ``None``)."""
        return {f.name: json_safe(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]


_R = TypeVar("_R", bound=_Interval)


def _refused(result_type: type[_R], reason: str, **fields: Any) -> _R:
    """A refused ``result_type``: no numbers, ``refused`` set and ``reason`` (the refusal pattern).

    ``fields`` are the type's other fields (size, method, confidence, assumption, ...).
    """
    fields.update(refused=True, reason=reason)
    return result_type(estimate=None, low=None, high=None, **fields)


@dataclass(frozen=True)
class Estimate(_ToDict, _Interval):
    """A point estimate with its confidence interval.

    Attributes:
        estimate: Point estimate, or ``None`` when refused.
        low: Lower confidence bound, or ``None`` when refused.
        high: Upper confidence bound, or ``None`` when refused.
        n: Number of observations the estimate rests on (rows, items or pairs; see ``method``).
        method: Short identifier of the estimator and interval (e.g. ``"wilson"``).
        confidence: Nominal two-sided confidence level of ``[low, high]``.
        se: Standard error when the interval is built from one (``None`` otherwise).
        warnings: Named caveats (e.g. ``"zero standard error: ..."``).
        refused: ``True`` when the data cannot support the statistic; see ``reason``.
        reason: Why the statistic was refused (``None`` unless ``refused``).
    """

    n: int
    method: str
    confidence: float
    se: float | None = None
    warnings: tuple[str, ...] = ()
    refused: bool = False
    reason: str | None = None

    @classmethod
    def refusal(
        cls, reason: str, *, n: int, method: str, confidence: float, warnings: tuple[str, ...] = ()
    ) -> Estimate:
        """Build a refused estimate (no numbers, a reason)."""
        return _refused(cls, reason, n=n, method=method, confidence=confidence, warnings=warnings)

    def _interval_n_reason(self) -> tuple[int, str | None]:
        return self.n, self.reason


def clip01(x: float) -> float:
    """``x`` clipped to [0, 1]."""
    return min(1.0, max(0.0, x))


@dataclass(frozen=True)
class PassRateEstimate(_ToDict, _Interval, _Claims):
    """A (corrected or naive) pass rate with its interval and the assumption behind it.

    Attributes:
        estimate: Point estimate of the true pass rate ``theta`` (clipped to [0, 1]), or ``None``.
        low: Lower bound (clipped to [0, 1]), or ``None`` when refused.
        high: Upper bound (clipped to [0, 1]), or ``None`` when refused.
        method: ``"naive"``, ``"lee"``, ``"ppi++"``, ``"stratified"`` or ``"labels_only"``.
        confidence: Nominal two-sided confidence level.
        n_labelled: Human-labelled rows used (pass or fail; unsure/unscored excluded).
        n_target: Judge-scored target rows used.
        center: Centre of the interval when it differs from ``estimate`` (Lee's
            ``theta~ + dtheta~``; the smoothed stratified estimate), else equal to ``estimate``.
        se: Standard error behind the interval.
        clipped: ``True`` if the point estimate or a bound was clipped to [0, 1].
        uninformative: ``True`` when the judge's Youden index is not significantly above zero
            (Lee): the interval is then widened to [0, 1], the only honest interval, and the
            estimate must not be reported as a confident number.
        refused: ``True`` when the estimator cannot be applied; ``estimate``/``low``/``high`` are
            ``None`` and ``reason`` says why.
        reason: Why it was refused.
        assumption: The sampling assumption under which the interval is valid.
        design: The sampling design the estimator was chosen for (chooser only).
        warnings: Named caveats.
        params: Intermediate quantities (``q0``, ``q1``, ``youden``, ``lam``, ...) for display.
    """

    method: str
    confidence: float
    n_labelled: int
    n_target: int
    center: float | None = None
    se: float | None = None
    clipped: bool = False
    uninformative: bool = False
    refused: bool = False
    reason: str | None = None
    assumption: str = ""
    design: str | None = None
    warnings: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)

    @classmethod
    def clipped_to_unit(
        cls,
        method: str,
        confidence: float,
        estimate: float,
        raw: tuple[float, float],
        *,
        bounds: tuple[float, float] | None = None,
        point_counts: bool = False,
        warnings: Sequence[str] = (),
        params: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> PassRateEstimate:
        """A weighting estimator's result: its point and its interval ``raw`` clipped to [0, 1].

        ``bounds`` replaces the clipped interval where the estimator reports another one (an
        uninformative judge's [0, 1]); ``clipped`` is set when the reported bounds differ from
        ``raw`` (and, with ``point_counts``, when the point lay outside [0, 1]).
        """
        low, high = bounds if bounds is not None else (clip01(raw[0]), clip01(raw[1]))
        return cls(
            estimate=clip01(estimate), low=low, high=high, method=method, confidence=confidence,
            clipped=(low, high) != raw or (point_counts and not 0.0 <= estimate <= 1.0),
            warnings=tuple(warnings),
            params=_EMPTY if params is None else MappingProxyType(dict(params)), **fields,
        )  # fmt: skip

    def _interval_n_reason(self) -> tuple[int, str | None]:
        # An uninformative corrected pass rate keeps its numbers (interval widened to [0, 1]);
        # the reason says why it must not be read as a claim.
        n = self.n_target if self.method == "naive" else self.n_labelled
        reason = self.reason
        if reason is None and self.uninformative:
            reason = (
                "uninformative: the judge is not shown to be better than chance, so the true "
                "pass rate is not identified (interval widened to [0, 1])"
            )
        return n, reason
