"""What every coverage block shares: the counts per (cell, method), running cells, the verdict."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any


def run_cells(
    run: Callable[[Any], Any], cells: Sequence[Any], *, reps: int, seed: int, workers: int
) -> list[Any]:
    """``run((index, cell, reps, seed))`` for every cell on ``workers`` processes, in cell order."""
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(run, [(i, c, reps, seed) for i, c in enumerate(cells)]))


def verdict_lines(failures: Sequence[str], *, not_met: str, met: str) -> list[str]:
    """A block's closing lines: the ``not_met`` heading and each failure, or ``met``."""
    return [not_met, *(f"  - {f}" for f in failures)] if failures else [met]


def closed(lines: list[str], failures: list[str], *, not_met: str,
           met: str) -> tuple[list[str], list[str]]:
    """A block's result: its ``lines`` closed by :func:`verdict_lines`, and its failures."""
    return [*lines, *verdict_lines(failures, not_met=not_met, met=met)], failures


@dataclass
class Stat:
    """Running counts of one method in one cell of a coverage study.

    A replicate either makes no claim (refused or uninformative: ``lo``/``hi`` are ``None``) or
    claims an interval, which covers the truth or not.
    """

    reps: int = 0
    claims: int = 0
    covered: int = 0
    width: float = 0.0

    def add(self, lo: float | None, hi: float | None, truth: float, *,
            tolerance: float = 0.0) -> None:
        """Count one replicate; ``tolerance`` widens the bounds for floating-point ties."""
        self.reps += 1
        if lo is None or hi is None:
            return
        self.claims += 1
        self.covered += int(lo - tolerance <= truth <= hi + tolerance)
        self.width += hi - lo

    @property
    def coverage(self) -> float | None:
        return self.covered / self.claims if self.claims else None

    @property
    def mean_width(self) -> float | None:
        return self.width / self.claims if self.claims else None

    @property
    def no_claim(self) -> float:
        return (self.reps - self.claims) / self.reps if self.reps else 0.0

    @property
    def wrong(self) -> float:
        return (self.claims - self.covered) / self.reps if self.reps else 0.0
