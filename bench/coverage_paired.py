"""Coverage block for the paired corrected difference (``bench/coverage.py --block paired``).

Two versions of a system answer the same rows; one judge (sensitivity 0.85 / specificity 0.75)
scores both; the calibration rows come from another run (pass rate 0.85: label shift). Half of
the rows keep the baseline's answer (same verdict), the rest get a new answer. For every cell
it draws ``reps`` seeded data sets and reports, for the nominal-95 % interval of the corrected
difference ``candidate - baseline`` (:func:`judges.calibration.paired_difference`):

* ``cov``     coverage of the true difference over the intervals that make a claim;
* ``width``   their mean width;
* ``nc``      share with no claim (refused, or uninformative because J is not significant);
* ``rej``     share whose interval excludes 0 (the type I error in a null cell, power else);
* ``mcn``     share with exact McNemar p < 0.05;
* ``unp``     mean width of the naive unpaired interval (two Lee intervals combined as if
              independent), over ``width``: what the pairing saves;
* ``b``/``c`` coverage of the baseline / candidate corrected pass rates (Lee et al. 2025).

The document block spreads 1,000 rows over 100 documents with strongly varying pass rates and
also shows the coverage the same interval would have if the clustering were ignored.

Bars: ``cov >= 0.94`` wherever claimed, ``rej <= 0.05`` and ``mcn <= 0.05`` in null cells.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from coverage_stat import closed, run_cells

from judges.calibration import ConfusionMatrix, paired_difference, simulate_paired

SENS, SPEC = 0.85, 0.75
CALIBRATION_THETA = 0.85
UNCHANGED = 0.5


@dataclass(frozen=True)
class PairedCell:
    """One simulation setting."""

    block: str
    theta_b: float
    theta_c: float
    n: int
    m: int
    n_documents: int | None = None

    @property
    def delta(self) -> float:
        """True difference candidate - baseline."""
        return self.theta_c - self.theta_b


@dataclass
class PairedStat:
    """Accumulated outcomes of one cell."""

    reps: int = 0
    claims: int = 0
    covered: int = 0
    width: float = 0.0
    rejected: int = 0
    mcnemar: int = 0
    unpaired_width: float = 0.0
    unpaired_n: int = 0
    covered_b: int = 0
    covered_c: int = 0
    claims_b: int = 0
    claims_c: int = 0
    covered_ignoring_docs: int = 0
    claims_ignoring_docs: int = 0


def paired_cells() -> list[PairedCell]:
    """The grid: null and changed pairs of pass rates x rows x calibration labels, + documents."""
    cells = []
    for theta_b, theta_c in ((0.6, 0.6), (0.6, 0.7), (0.8, 0.72), (0.3, 0.45)):
        for n in (200, 1000):
            for m in (50, 200):
                cells.append(PairedCell("rows", theta_b, theta_c, n, m))
    for theta_b, theta_c in ((0.6, 0.6), (0.6, 0.7)):
        cells.append(PairedCell("documents", theta_b, theta_c, 1000, 200, n_documents=100))
    return cells


def _calibration(rng: np.random.Generator, m: int) -> ConfusionMatrix:
    t = CALIBRATION_THETA
    probs = [t * SENS, t * (1 - SENS), (1 - t) * (1 - SPEC), (1 - t) * SPEC]
    tp, fn, fp, tn = (int(v) for v in rng.multinomial(m, probs))
    return ConfusionMatrix(tp=tp, fn=fn, fp=fp, tn=tn)


def run_paired_cell(args: tuple[int, PairedCell, int, int]) -> tuple[PairedCell, PairedStat]:
    """Simulate one cell (a process-pool job)."""
    index, cell, reps, seed = args
    rng = np.random.default_rng([seed, 7919, index])
    s = PairedStat()
    for _ in range(reps):
        cm = _calibration(rng, cell.m)
        if cm.m0 == 0 or cm.m1 == 0:
            s.reps += 1  # no claim possible: a class without calibration rows
            continue
        b, c, docs = simulate_paired(
            rng, n_rows=cell.n, theta_baseline=cell.theta_b, theta_candidate=cell.theta_c,
            sensitivity=SENS, specificity=SPEC, unchanged=UNCHANGED,
            n_documents=cell.n_documents,
        )
        r = paired_difference(b, c, calibration=cm, documents=docs)
        s.reps += 1
        d = r.difference
        if d.claims and d.low is not None and d.high is not None:
            s.claims += 1
            s.covered += int(d.low <= cell.delta <= d.high)
            s.width += d.high - d.low
            s.rejected += int(d.low > 0.0 or d.high < 0.0)
        s.mcnemar += int(r.mcnemar_p is not None and r.mcnemar_p < 0.05)
        if r.baseline.claims and r.candidate.claims and d.claims:
            se_b, se_c = r.baseline.se or 0.0, r.candidate.se or 0.0
            s.unpaired_width += 2 * 1.959964 * (se_b**2 + se_c**2) ** 0.5
            s.unpaired_n += 1
        for rate, theta, attr in ((r.baseline, cell.theta_b, "b"), (r.candidate, cell.theta_c,
                                                                      "c")):
            if rate.claims:
                setattr(s, f"claims_{attr}", getattr(s, f"claims_{attr}") + 1)
                setattr(s, f"covered_{attr}",
                        getattr(s, f"covered_{attr}") + int(rate.covers(theta)))
        if docs is not None:
            flat = paired_difference(b, c, calibration=cm).difference
            if flat.claims and flat.low is not None and flat.high is not None:
                s.claims_ignoring_docs += 1
                s.covered_ignoring_docs += int(flat.low <= cell.delta <= flat.high)
    return cell, s


def _ratio(a: int, b: int) -> str:
    return "  -  " if b == 0 else f"{a / b:.3f}"


def paired_block(*, reps: int, seed: int, workers: int) -> tuple[list[str], list[str]]:
    """Run the block; return the printed lines and the bars not met."""
    t0 = time.perf_counter()
    cells = paired_cells()
    results = run_cells(run_paired_cell, cells, reps=reps, seed=seed, workers=workers)
    lines = [
        f"Paired corrected difference (candidate - baseline), nominal 95 %: seed {seed}, "
        f"{reps} replicates per cell",
        f"judge sensitivity {SENS} / specificity {SPEC}; calibration rows from another run at "
        f"pass rate {CALIBRATION_THETA} (label shift); {UNCHANGED:.0%} of answers unchanged",
        f"Monte Carlo SE of a 0.95 coverage: {(0.95 * 0.05 / reps) ** 0.5:.3f}; of a 0.05 "
        f"rejection rate: {(0.05 * 0.95 / reps) ** 0.5:.3f}",
    ]
    head = (f"{'block':9} {'theta_b':>7} {'theta_c':>7} {'delta':>6} {'n':>5} {'m':>4} | "
            f"{'cov':>5} {'width':>5} {'nc':>4} {'rej':>5} {'mcn':>5} {'unp':>5} | "
            f"{'b':>5} {'c':>5}")
    lines += ["", head, "-" * len(head)]
    failures: list[str] = []
    doc_lines: list[str] = []
    for cell, s in results:
        cov = s.covered / s.claims if s.claims else None
        rej = s.rejected / s.claims if s.claims else 0.0
        mcn = s.mcnemar / s.reps if s.reps else 0.0
        width = s.width / s.claims if s.claims else None
        unp = (s.unpaired_width / s.unpaired_n) / width if s.unpaired_n and width else None
        flag = ""
        if cov is not None and cov < 0.94:
            flag = "!"
            failures.append(f"{cell}: coverage {cov:.3f} < 0.94")
        if cell.delta == 0.0:
            if rej > 0.05:
                failures.append(f"{cell}: null rejected by the interval in {rej:.3f} > 0.05")
            if mcn > 0.05:
                failures.append(f"{cell}: null rejected by McNemar in {mcn:.3f} > 0.05")
        lines.append(
            f"{cell.block:9} {cell.theta_b:7.2f} {cell.theta_c:7.2f} {cell.delta:+6.2f} "
            f"{cell.n:5d} {cell.m:4d} | {_ratio(s.covered, s.claims)}{flag:1}"
            f"{'  -  ' if width is None else f'{width:.3f}'} "
            f"{100 * (s.reps - s.claims) / s.reps:3.0f}% {rej:5.3f} {mcn:5.3f} "
            f"{'  -  ' if unp is None else f'{unp:5.2f}'} | {_ratio(s.covered_b, s.claims_b)} "
            f"{_ratio(s.covered_c, s.claims_c)}"
        )
        if cell.n_documents:
            doc_lines.append(
                f"  documents delta={cell.delta:+.2f}: coverage {_ratio(s.covered, s.claims)} "
                f"with the design effect, {_ratio(s.covered_ignoring_docs, s.claims_ignoring_docs)}"
                " if the documents were ignored"
            )
    lines += ["", f"{cells[-1].n_documents} documents, Beta concentration 4 (rows of a document "
              "fail together):", *doc_lines]
    lines.append(f"block wall time: {time.perf_counter() - t0:.0f} s on {workers} workers")
    lines.append("")
    return closed(
        lines, failures, not_met="BARS NOT MET (paired):",
        met="paired bars met: coverage >= 0.94 wherever claimed; null rejected <= 0.05 by the "
        "interval and by McNemar",
    )  # fmt: skip
