"""Drift benchmark of ``calibrate drift`` (a script, not a test).

Usage::

    python bench/drift_alarms.py [--reps N] [--stream N] [--seed S]

Every replicate simulates a judge card and what happens after it, and runs the real test,
:func:`judges.calibration.drift.drift_test`, with alpha = 0.05 over every e-process:

* the card: a 1,000-row calibration run (true pass rate 0.70; the judge's sensitivity 0.85,
  specificity 0.80), three calls per row aggregated by majority; 15 % of the rows are *noisy*
  (each call an independent coin, so their verdict may differ when re-scored); 200 rows are
  labelled: the anchor rows, with the judge's recorded verdicts; the tolerance is the card's
  (the upper 95 % bound of the anchors' flip share, at least 0.02); the reference is the judge's
  pass count on the calibration rows;
* the anchor rows re-scored (in a random order) and a stream of new rows judged (``--stream``,
  default 5,000), tested after every row (anytime).

Scenarios: **drift-free** (same judge, same system; also with 200 expert labels on new rows, so
that every e-process runs); **judge version bump** (the new model is lenient: specificity 0.80
-> 0.55, it passes a quarter of the failing rows it failed); **rubric change** (a stricter
rubric behind the same name: sensitivity 0.85 -> 0.65); **system regression** (the true pass
rate of the new rows drops 0.70 -> 0.60; the judge is unchanged).

Reported per scenario: the share of replicates with any alarm (``alarm``; for drift-free
scenarios the false-alarm rate, bar <= 0.05 within 2 MC SE), the attribution (``judge`` /
``system`` / ``undetermined``) and the share correctly attributed, the median detection delay
(anchor rows re-scored for judge drift, new rows for system drift). The usual check beside it:
a **rolling z-test** of the new rows' pass rate against the calibration's, at level 0.05 after
every 100 rows (two-sided, plug-in reference): its false-alarm rate on drift-free streams and
its detection rate.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judges.calibration import wilson_interval
from judges.calibration.drift import drift_test

N_CAL, M_ANCHOR, THETA, SENS, SPEC, NOISY, ALPHA = 1000, 200, 0.70, 0.85, 0.80, 0.15, 0.05


@dataclass(frozen=True)
class Scenario:
    name: str
    truth: str  # who drifted: "none", "judge", "system"
    sens: float = SENS
    spec: float = SPEC
    theta: float = THETA
    labels: bool = False


SCENARIOS = (
    Scenario("drift-free", "none"),
    Scenario("drift-free, with labels", "none", labels=True),
    Scenario("judge version bump", "judge", spec=0.55),
    Scenario("rubric change", "judge", sens=0.65),
    Scenario("system regression", "system", theta=0.60),
)


def _judge(rng: np.random.Generator, y: np.ndarray, noisy: np.ndarray, base: np.ndarray,
           sens: float, spec: float) -> tuple[np.ndarray, np.ndarray]:
    """Majority of 3 calls, and whether they flipped. ``base`` is the row's own coin."""
    # A stable row's verdict is fixed by its coin ``base`` (the judge's error on it); a noisy
    # row's calls are each a fresh coin at the same rates.
    p_pass = np.where(y == 1, sens, 1 - spec)
    stable = base < p_pass
    calls = np.where(noisy[:, None], rng.uniform(size=(y.size, 3)) < p_pass[:, None],
                     stable[:, None])
    passes = calls.sum(axis=1)
    return (passes >= 2).astype(np.int8), (passes % 3 != 0)


def _rolling_z(x: np.ndarray, p_ref: float, every: int = 100) -> int | None:
    """The first look (rows) at which the cumulative pass rate differs from p_ref at 0.05."""
    z = norm.isf(ALPHA / 2)
    for n in range(every, x.size + 1, every):
        p = x[:n].mean()
        se = np.sqrt(p_ref * (1 - p_ref) / n)
        if abs(p - p_ref) > z * se:
            return n
    return None


@dataclass
class Tally:
    reps: int = 0
    alarms: int = 0
    right: int = 0
    which: dict[str, int] | None = None
    delays: list[int] | None = None
    z_alarms: int = 0

    def __post_init__(self) -> None:
        self.which = {"none": 0, "judge": 0, "system": 0, "undetermined": 0}
        self.delays = []


def _rep(rng: np.random.Generator, s: Scenario, stream: int, tally: Tally) -> None:
    y = (rng.uniform(size=N_CAL) < THETA).astype(np.int8)
    noisy = rng.uniform(size=N_CAL) < NOISY
    base = rng.uniform(size=N_CAL)
    recorded, flipped = _judge(rng, y, noisy, base, SENS, SPEC)
    anchors = rng.choice(N_CAL, M_ANCHOR, replace=False)
    bound = wilson_interval(int(flipped[anchors].sum()), M_ANCHOR).high or 1.0
    tolerance = max(0.02, float(bound))
    # Re-scored anchors: the same rows (same coins) under the judge after the change; a lenient
    # or stricter judge changes the verdict of the rows whose coin falls in between.
    now, _ = _judge(rng, y[anchors], noisy[anchors], base[anchors], s.sens, s.spec)
    order = rng.permutation(M_ANCHOR)
    ny = (rng.uniform(size=stream) < s.theta).astype(np.int8)
    new, _ = _judge(rng, ny, rng.uniform(size=stream) < NOISY, rng.uniform(size=stream),
                    s.sens, s.spec)
    reference = (int(recorded.sum()), N_CAL)
    options = {}
    if s.labels:
        lab = rng.choice(stream, 200, replace=False)
        h, v = ny[lab], new[lab]
        # The card's sensitivity and specificity (estimate, SE) from its 200 labelled rows.
        hs, vs = y[anchors], recorded[anchors]
        sens_hat = vs[hs == 1].mean()
        spec_hat = 1 - vs[hs == 0].mean()
        options = {
            "human_pass_judged_pass": v[h == 1] == 1, "human_fail_judged_fail": v[h == 0] == 0,
            "sensitivity": (sens_hat, np.sqrt(sens_hat * (1 - sens_hat) / (hs == 1).sum())),
            "specificity": (spec_hat, np.sqrt(spec_hat * (1 - spec_hat) / (hs == 0).sum())),
        }
    result = drift_test(alpha=ALPHA, anchor_recorded=recorded[anchors][order],
                        anchor_rescored=now[order], tolerance=tolerance, new_pass=new == 1,
                        reference=reference, **options)
    tally.reps += 1
    tally.alarms += int(result.drifted)
    tally.which[result.which] += 1  # type: ignore[index]
    tally.right += int(result.which == s.truth)
    crossed = [t.crossed_at for t in result.tests if t.rejected and t.crossed_at is not None
               and (t.name.startswith("anchor") == (s.truth == "judge"))]
    if crossed:
        tally.delays.append(min(crossed))  # type: ignore[union-attr]
    tally.z_alarms += int(_rolling_z(new.astype(float), reference[0] / reference[1]) is not None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--stream", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=20261201)
    ns = parser.parse_args()
    t0 = time.perf_counter()
    se = (ALPHA * (1 - ALPHA) / ns.reps) ** 0.5
    print(f"Drift: alpha {ALPHA} over every e-process, {ns.reps} replicates per scenario, "
          f"{ns.stream} new rows and {M_ANCHOR} anchor rows each, tested after every row "
          f"(Monte Carlo SE of a 0.05 rate: {se:.3f})")
    print(f"card: {N_CAL}-row calibration run, pass rate {THETA}, sensitivity {SENS}, "
          f"specificity {SPEC}, 3 calls a row (majority), {NOISY:.0%} noisy rows")
    head = (f"{'scenario':24} {'truth':>6} | {'alarm':>6} {'judge':>6} {'system':>6} "
            f"{'undet.':>6} | {'right':>6} {'delay (median, rows)':>21} | {'z-test alarm':>12}")
    print(head)
    print("-" * len(head))
    failures = []
    for k, s in enumerate(SCENARIOS):
        rng = np.random.default_rng([ns.seed, k])
        tally = Tally()
        for _ in range(ns.reps):
            _rep(rng, s, ns.stream, tally)
        n = tally.reps
        w = tally.which or {}
        delays = tally.delays or []
        unit = "anchor" if s.truth == "judge" else "new"
        delay = f"{np.median(delays):.0f} {unit}" if delays and s.truth != "none" else "-"
        print(f"{s.name:24} {s.truth:>6} | {tally.alarms / n:6.3f} {w['judge'] / n:6.3f} "
              f"{w['system'] / n:6.3f} {w['undetermined'] / n:6.3f} | {tally.right / n:6.3f} "
              f"{delay:>21} | {tally.z_alarms / n:12.3f}")
        if s.truth == "none" and tally.alarms / n > ALPHA + 2 * se:
            failures.append(f"{s.name}: false alarms {tally.alarms / n:.3f} > {ALPHA}")
        if s.truth != "none" and w["judge" if s.truth == "system" else "system"] / n > 0.05:
            wrong = w["judge" if s.truth == "system" else "system"] / n
            failures.append(f"{s.name}: misattributed in {wrong:.3f}")
    print(f"wall time {time.perf_counter() - t0:.0f} s")
    if failures:
        print("DRIFT BARS NOT MET:")
        for f in failures:
            print(f"  - {f}")
        return 1
    print("drift bars met (false alarms <= 0.05 within 2 MC SE on drift-free streams at any "
          "stopping time; misattribution <= 0.05)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
