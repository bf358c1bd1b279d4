"""Coverage block for the corrected pairwise win rate (``bench/coverage.py --block pairwise``).

A pairwise judge says a, b or tie; its errors are a 3 x 3 misclassification matrix ``M`` (rows:
the human verdict, columns: the judge's), set close to GPT-4's on the MT-Bench human votes. The
labelled rows come from a calibration set whose shares differ from the target's (label shift);
the judge's verdicts on ``n`` target rows are drawn from ``M^T pi``. For every cell it draws
``reps`` seeded data sets and reports, for the nominal-95 % interval of each share (a, b, tie) of
:func:`judges.calibration.corrected_win_rate_from_counts` with ``method="delta"`` and
``method="bootstrap"``:

* ``cov``   coverage of the true share over the intervals that make a claim (not refused);
* ``width`` their mean width;
* ``nc``    share of data sets refused (a human class without a labelled row, det M <= 0).

Bar: coverage >= 0.94 for every share wherever a claim is made, for ``delta`` (the method the
report uses). The parametric bootstrap is shown beside it for comparison: it is narrower, and
its coverage was 0.922-0.970 at 1,000 replicates (0.922 for B wins at shares 0.05 / 0.90 /
0.05 with 100 labelled rows), so the report does not use it by default.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from coverage_stat import run_cells, verdict_lines

from judges.calibration import corrected_win_rate_from_counts

# GPT-4 on MT-Bench (turn-matched subset), rounded: P(judge | human) for human a, b, tie.
JUDGE_M = np.array([[0.70, 0.12, 0.18], [0.06, 0.80, 0.14], [0.20, 0.35, 0.45]])
CALIBRATION_PI = np.array([0.25, 0.45, 0.30])
METHODS = ("delta", "bootstrap")
SHARES = ("a", "b", "tie")


@dataclass(frozen=True)
class WinCell:
    """One simulation cell: true target shares, labelled rows, target rows."""

    name: str
    pi: tuple[float, float, float]
    m: int
    n: int

    def __str__(self) -> str:
        return f"{self.name} pi={self.pi} m={self.m} n={self.n}"


def pairwise_cells() -> list[WinCell]:
    """The grid: balanced, MT-Bench-like and extreme shares; small and large label sets."""
    cells = []
    for name, pi in (("balanced", (0.35, 0.35, 0.30)), ("mtbench", (0.10, 0.65, 0.25)),
                     ("extreme", (0.05, 0.90, 0.05))):
        for m in (100, 300):
            cells.append(WinCell(name, pi, m, 1000))
    cells.append(WinCell("pair", (0.10, 0.65, 0.25), 300, 100))
    return cells


@dataclass
class _Tally:
    claims: int = 0
    covered: int = 0
    width: float = 0.0


def run_pairwise_cell(
    job: tuple[int, WinCell, int, int],
) -> tuple[WinCell, dict[tuple[str, str], _Tally], int]:
    """Simulate one cell; tallies per (method, share) and the number of replicates."""
    index, cell, reps, seed = job
    rng = np.random.default_rng([seed, 1501, index])
    pi = np.asarray(cell.pi)
    tallies = {(m, s): _Tally() for m in METHODS for s in SHARES}
    for _ in range(reps):
        humans = rng.multinomial(cell.m, CALIBRATION_PI)
        cal = np.stack([rng.multinomial(humans[i], JUDGE_M[i]) for i in range(3)])
        target = rng.multinomial(cell.n, JUDGE_M.T @ pi)
        for method in METHODS:
            r = corrected_win_rate_from_counts(cal, target, method=method, rng=rng, n_boot=1000)
            if r.refused:
                continue
            for k, est in enumerate((r.a, r.b, r.tie)):
                t = tallies[(method, SHARES[k])]
                assert est.low is not None and est.high is not None
                t.claims += 1
                t.covered += int(est.low <= pi[k] <= est.high)
                t.width += est.high - est.low
    return cell, tallies, reps


def pairwise_block(*, reps: int, seed: int, workers: int) -> tuple[list[str], list[str]]:
    """Run the block; return the printed lines and the bars not met."""
    t0 = time.perf_counter()
    results = run_cells(run_pairwise_cell, pairwise_cells(), reps=reps, seed=seed, workers=workers)
    lines = [
        f"Corrected pairwise win rate (a / b / tie), nominal 95 %: seed {seed}, {reps} "
        "replicates per cell",
        f"judge M (rows human a, b, tie) = {JUDGE_M.tolist()}; calibration shares "
        f"{CALIBRATION_PI.tolist()} (label shift)",
        f"Monte Carlo SE of a 0.95 coverage: {(0.95 * 0.05 / reps) ** 0.5:.3f}",
    ]
    head = (f"{'cell':9} {'pi (a, b, tie)':>18} {'m':>4} {'n':>5} | "
            + " | ".join(f"{m + ' ' + s:^18}" for m in METHODS for s in SHARES))
    lines += ["", head, "-" * len(head)]
    failures: list[str] = []
    for cell, tallies, n_reps in results:
        parts = []
        for method in METHODS:
            for share in SHARES:
                t = tallies[(method, share)]
                if not t.claims:
                    parts.append(f"{'no claim':^18}")
                    continue
                cov = t.covered / t.claims
                flag = "!" if cov < 0.94 else " "
                if cov < 0.94 and method == "delta":
                    failures.append(f"{cell}: {method} {share} coverage {cov:.3f} < 0.94")
                nc = 100 * (n_reps - t.claims) / n_reps
                parts.append(f"{cov:.3f}{flag}{t.width / t.claims:.3f} {nc:3.0f}%")
        pi = ", ".join(f"{x:.2f}" for x in cell.pi)
        lines.append(f"{cell.name:9} {pi:>18} {cell.m:4d} {cell.n:5d} | " + " | ".join(parts))
    lines.append("each entry: coverage, '!' if < 0.94, mean width, share refused; bar on delta")
    lines.append(f"pairwise block: {time.perf_counter() - t0:.1f} s")
    lines += verdict_lines(failures, not_met="BARS NOT MET:",
                           met="all bars met (delta coverage >= 0.94 for every share)")
    return lines, failures
