"""The segment-mix transfer block of ``bench/coverage.py`` (``--block transfer``; run by default).

Usage::

    python bench/coverage.py --block transfer [--transfer-reps N] [--seed S] [--workers W]

Three segments where the judge's sensitivity differs (0.95 / 0.70 / 0.40, specificity 0.90
everywhere) and the true pass rate differs (0.80 / 0.60 / 0.50). A calibration run of 2,000 rows
with segment mix 20/30/50 % gives ``m`` randomly labelled rows; the target run of 2,000 rows has
mix 60/30/10 % ("shift") or the calibration's own mix ("no shift"). Methods, nominal 95 %:

* ``lee``  the plain verdict-reweighted Lee correction (one set of error rates for all rows);
* ``seg``  :func:`judges.calibration.segment_aware_pass_rate` (per-segment rates weighted by the
  target's segment shares);
* ``warn`` share of data sets where :func:`judges.calibration.transfer_diagnostics` warns.

Bar: ``seg`` covers >= 0.94 in every cell; under shift the plain correction is expected to miss
(its pooled error rates are the calibration mix's average, not the target's).
"""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from judges.calibration import (
    segment_aware_pass_rate,
    transfer_diagnostics,
    transported_pass_rate,
)

SENS = np.array([0.95, 0.70, 0.40])
SPEC = np.array([0.90, 0.90, 0.90])
THETA = np.array([0.80, 0.60, 0.50])
CAL_MIX = np.array([0.2, 0.3, 0.5])
SHIFT_MIX = np.array([0.6, 0.3, 0.1])
N_ROWS = 2000
NAMES = np.array(["easy", "medium", "hard"])


def _run(rng: np.random.Generator, mix: np.ndarray) -> tuple[np.ndarray, ...]:
    seg = rng.choice(3, N_ROWS, p=mix)
    z = (rng.random(N_ROWS) < THETA[seg]).astype(np.int8)
    u = rng.random(N_ROWS)
    j = np.where(z == 1, u < SENS[seg], u >= SPEC[seg]).astype(np.int8)
    return seg, z, j


def _cell(args: tuple[int, str, int, int, int]) -> tuple[str, int, dict[str, list[float]]]:
    index, shift, m, reps, seed = args
    rng = np.random.default_rng([seed, 900 + index])
    stats: dict[str, list[float]] = {"lee": [0, 0, 0.0], "seg": [0, 0, 0.0], "warn": [0, 0, 0]}
    for _ in range(reps):
        seg_c, z_c, j_c = _run(rng, CAL_MIX)
        seg_t, z_t, j_t = _run(rng, SHIFT_MIX if shift == "shift" else CAL_MIX)
        lab = rng.choice(N_ROWS, m, replace=False)
        truth = float(z_t.mean())
        plain = transported_pass_rate(z_c[lab], j_c[lab], j_c, j_t)
        aware = segment_aware_pass_rate(z_c[lab], j_c[lab], NAMES[seg_c[lab]], j_c,
                                        NAMES[seg_c], j_t, NAMES[seg_t])  # fmt: skip
        for name, r in (("lee", plain), ("seg", aware)):
            if r.low is None or r.high is None:
                continue
            s = stats[name]
            s[0] += 1
            s[1] += int(r.low <= truth <= r.high)
            s[2] += r.high - r.low
        diag = transfer_diagnostics(z_c[lab], j_c[lab], NAMES[seg_c[lab]], j_c, NAMES[seg_c],
                                    j_t, NAMES[seg_t], rng=rng, )  # fmt: skip
        stats["warn"][0] += 1
        stats["warn"][1] += int(diag.warning is not None)
    return shift, m, stats


def transfer_block(*, reps: int, seed: int, workers: int) -> tuple[list[str], list[str]]:
    """Run the block; return the printed lines and the bars not met."""
    t0 = time.perf_counter()
    cells = [(shift, m) for shift in ("shift", "no shift") for m in (300, 800)]
    jobs = [(i, shift, m, reps, seed) for i, (shift, m) in enumerate(cells)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(_cell, jobs))
    lines = [
        f"Segment-mix transfer: coverage of nominal-95% intervals, seed {seed}, {reps} replicates "
        "per cell; judge sensitivity 0.95/0.70/0.40 by segment, specificity 0.90; calibration mix "
        "20/30/50 %, target mix 60/30/10 % (shift) or the same (no shift); 2,000-row runs",
        f"Monte Carlo SE of a 0.95 coverage: {(0.95 * 0.05 / reps) ** 0.5:.4f}",
        "",
        f"{'cell':18} | {'lee (plain)':^20} | {'seg (segment-aware)':^20} | warns | seg MC SE",
    ]
    lines.append("-" * len(lines[-1]))
    failures: list[str] = []
    for shift, m, s in results:
        parts = []
        for name in ("lee", "seg"):
            claims, covered, width = s[name]
            cov = covered / claims if claims else None
            parts.append("       -" if cov is None
                         else f"{cov:.3f} {width / claims:.3f} {100 * (1 - claims / reps):3.0f}%")
            if name == "seg" and (cov is None or cov < 0.94):
                failures.append(f"transfer {shift} m={m}: segment-aware coverage {cov}")
        claims, covered, _ = s["seg"]
        cov = covered / claims if claims else 0.0
        se = (cov * (1 - cov) / claims) ** 0.5 if claims else float("nan")
        warns = s["warn"][1] / s["warn"][0]
        lines.append(f"{shift + ' m ' + str(m):18} | {parts[0]:^20} | {parts[1]:^20} | "
                     f"{100 * warns:4.0f}% | {se:.4f}")  # fmt: skip
    lines += ["(each method: coverage, mean width, share with no claim)", "",
              f"transfer block wall time: {time.perf_counter() - t0:.0f} s on {workers} workers"]
    if failures:
        lines.append("TRANSFER BARS NOT MET:")
        lines += [f"  - {f}" for f in failures]
    else:
        lines.append("transfer bar met: the segment-aware correction covers >= 0.94 in every cell")
    return lines, failures
