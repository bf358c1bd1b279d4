"""How a label's row was chosen: the queue order, stratum and probability it was served with."""

from __future__ import annotations

from dataclasses import dataclass

from labels.errors import CalibrateError
from labels.names import SELECTIONS


@dataclass(frozen=True)
class Provenance:
    """How a label's row was chosen, recorded with the label (table ``label_provenance``).

    Attributes:
        selection: ``random``, ``by_verdict``, ``flips_first``, ``active``, ``file``,
            ``imported``, ``all`` or ``unknown``.
        stratum: The judge verdict the row had when it was served (by-verdict/active orders).
        inclusion_probability: The row's chance of being served (active order), in (0, 1].
        selection_share: The row's share of the active order's selection weight, in (0, 1];
            the report turns it into the inclusion probability for the final number of labels.
        judge: The judge config the order was based on.
    """

    selection: str = "unknown"
    stratum: str | None = None
    inclusion_probability: float | None = None
    selection_share: float | None = None
    judge: str | None = None

    def __post_init__(self) -> None:
        """Validate the selection and probabilities."""
        if self.selection not in SELECTIONS:
            raise CalibrateError(
                f"unknown selection {self.selection!r} (selections: {', '.join(SELECTIONS)})"
            )
        for name in ("inclusion_probability", "selection_share"):
            value = getattr(self, name)
            if value is not None and not 0.0 < value <= 1.0:
                raise CalibrateError(f"{name} must be in (0, 1], got {value}")
