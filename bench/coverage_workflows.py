"""The workflow block of ``bench/coverage.py`` (``--block workflows``; run by default).

Usage::

    python bench/coverage.py --block workflows [--workflow-reps N] [--seed S] [--workers W]

Every way the app lets a user produce labels or a number that the other blocks do not cover,
each simulated at the row level and answered by the real path (``bench/coverage_answer.py``:
:func:`judges.calibration.answer_pass_rate`, and :func:`judges.calibration.answer_difference`
for two versions). The truth is the whole run's true pass rate (the difference of two runs'
for ``compare``). Beside ``auto``, ``old`` is what the previous release did in the cell: the
verdict-stratified estimate taking the labels as random within each judge-verdict stratum
(file order, flips first, unsure rows), the plain transfer (segment shift), Lee on the card's
raw confusion counts (compare); ``labels`` the labelled rows alone.

Cells (1,000-row runs, sensitivity 0.85 / specificity 0.75 unless said):

* ``file order, sorted`` / ``mildly sorted``: the first m rows of a file sorted by outcome
  (truth plus noise) are labelled in file order; ``shuffled`` is the control;
* ``flips first, majority``: 15 % of rows are hard (truth 0.3, the judge errs 35 % and flips
  across repeats); flipped rows are labelled first; the majority rule gives them pass/fail;
* ``segment shift``: the judge's sensitivity differs by segment (0.95/0.70/0.40), the target's
  segment mix shifts (20/30/50 % -> 60/30/10 %);
* ``unsure on hard rows``: 20 % of rows are hard (truth 0.2) and the annotators say unsure on
  them;
* ``all-unsure target`` / ``one unsure target row``: the judge abstains on every target row
  (never on the calibration set); ``auto`` must refuse;
* ``weak judge, same run``: sensitivity 0.55 / specificity 0.52 (kappa about 0.07), random
  labels: ``auto`` must not be wider than the labels alone;
* ``assigned, <order>, partly done``: an owner deals the queue (random, stratified or active
  order) in batches of 50 to three annotators, who finish 50, 25 and 10 of them, so the labels
  are not a prefix of the queue;
* ``compare, by-verdict card``: a calibration run (pass rate 0.85) labelled 50/50 by verdict;
  two versions on the
  same 1,000 rows, true pass rates 0.60 and 0.70; baseline, candidate and difference.

Bars: ``auto`` covers >= 0.94 where it claims; refuses every time in the refusal cells; its
mean width <= the labels-only width in the weak-judge cell.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from coverage_answer import Interval, answer, auto, claim, evidence
from coverage_stat import Stat, closed, run_cells

from judges.calibration import (
    CalibrationCounts,
    ConfusionMatrix,
    answer_difference,
    estimate_pass_rate,
    labels_only_pass_rate,
    stratified_run_pass_rate_from_counts,
    transported_pass_rate_from_counts,
)
from judges.calibration.strata import counts_of_strata
from labels.assignments import deal_rows
from labels.sampling import plan_queue

SENS, SPEC, N = 0.85, 0.75, 1000


@dataclass(frozen=True)
class Cell:
    name: str
    methods: tuple[str, ...]
    refuse: bool = False  # auto must make no claim


@dataclass
class Result:
    cell: Cell
    stats: dict[str, Stat] = field(default_factory=dict)


def _judge(rng: np.random.Generator, z: np.ndarray, sens: float = SENS,
           spec: float = SPEC) -> np.ndarray:
    u = rng.random(z.size)
    return np.where(z == 1, u < sens, u >= spec).astype(np.int8)


def _iv(r: object) -> Interval:
    low, high = getattr(r, "low", None), getattr(r, "high", None)
    if getattr(r, "refused", False) or getattr(r, "uninformative", False):
        return None, None
    return low, high


def _old_stratified(z: np.ndarray, lab: np.ndarray, j: np.ndarray) -> Interval:
    """Labels taken as random within the three judge-verdict strata (the previous release)."""
    s = np.where(j == 1, 0, np.where(j == 0, 1, 2))
    pop = np.bincount(s, minlength=3)
    counts = counts_of_strata(z[lab].astype(np.int8), s[lab], [int(v) for v in pop])
    return _iv(stratified_run_pass_rate_from_counts(counts))


def _file(rng: np.random.Generator, noise: float) -> tuple[float, dict[str, Interval]]:
    z = (rng.random(N) < 0.6).astype(np.int8)
    j = _judge(rng, z)
    order = np.argsort(z + rng.normal(0.0, noise, N), kind="stable") if noise < 99 else (
        rng.permutation(N))
    z, j = z[order], j[order]
    lab = np.arange(100)
    ev = evidence(z, lab, j, selection="file", file_order=True)
    return float(z.mean()), {"old": _old_stratified(z, lab, j), "auto": auto(ev)}


def _flips(rng: np.random.Generator) -> tuple[float, dict[str, Interval]]:
    z = (rng.random(N) < 0.7).astype(np.int8)
    hard = rng.random(N) < 0.15
    z[hard] = rng.random(int(hard.sum())) < 0.3
    j = _judge(rng, z)
    wrong = hard & (rng.random(N) < 0.35)
    j[hard] = np.where(wrong[hard], 1 - z[hard], z[hard])
    flipped = hard & (rng.random(N) < 0.9)  # the majority rule keeps a pass/fail verdict
    first = rng.permutation(np.flatnonzero(flipped))[:60]
    rest = rng.permutation(np.flatnonzero(~flipped))[:60]
    lab = np.concatenate([first, rest])
    ev = evidence(z, lab, j, selection="flips_first", flipped=flipped)
    return float(z.mean()), {"old": _old_stratified(z, lab, j), "auto": auto(ev)}


def _segments(rng: np.random.Generator) -> tuple[float, dict[str, Interval]]:
    sens, theta = np.array([0.95, 0.70, 0.40]), np.array([0.80, 0.60, 0.50])
    names = np.array(["easy", "medium", "hard"])

    def run(mix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        seg = rng.choice(3, 2000, p=mix)
        z = (rng.random(2000) < theta[seg]).astype(np.int8)
        u = rng.random(2000)
        return seg, z, np.where(z == 1, u < sens[seg], u >= 0.9).astype(np.int8)

    seg_c, z_c, j_c = run(np.array([0.2, 0.3, 0.5]))
    seg_t, z_t, j_t = run(np.array([0.6, 0.3, 0.1]))
    lab = rng.choice(2000, 800, replace=False)
    ev = evidence(z_c, lab, j_c, selection="random", segments=names[seg_c])
    a = answer(ev, j_t, target_segments=names[seg_t])
    return float(z_t.mean()), {"old": _iv(a.corrected), "auto": claim(a)}


def _unsure_hard(rng: np.random.Generator) -> tuple[float, dict[str, Interval]]:
    z = (rng.random(N) < 0.75).astype(np.int8)
    hard = rng.random(N) < 0.2
    z[hard] = rng.random(int(hard.sum())) < 0.2
    j = _judge(rng, z)
    lab = rng.choice(N, 150, replace=False)
    ev = evidence(z, lab, j, selection="random", human_unsure=hard[lab])
    a = answer(ev)
    return float(z.mean()), {"old": _iv(a.corrected), "auto": claim(a)}


def _unsure_target(rng: np.random.Generator, rows: int) -> tuple[float, dict[str, Interval]]:
    z = (rng.random(N) < 0.6).astype(np.int8)
    j = _judge(rng, z)
    lab = rng.choice(N, 100, replace=False)
    ev = evidence(z, lab, j, selection="by_verdict")
    z_t = (rng.random(rows) < 0.6).astype(np.int8)
    j_t = np.full(rows, -1, dtype=np.int8)
    counts = counts_of_strata(z[lab].astype(np.int8), np.where(j[lab] == 1, 0, 1),
                              [int((j == 1).sum()), int((j == 0).sum()), 0])
    old = _iv(transported_pass_rate_from_counts(counts, (0, 0, rows)))
    return float(z_t.mean()), {"old": old, "auto": auto(ev, j_t)}


def _weak(rng: np.random.Generator) -> tuple[float, dict[str, Interval]]:
    z = (rng.random(N) < 0.6).astype(np.int8)
    j = _judge(rng, z, 0.55, 0.52)
    lab = rng.choice(N, 100, replace=False)
    ev = evidence(z, lab, j, selection="random")
    return float(z.mean()), {"labels": _iv(labels_only_pass_rate(z[lab])),
                             "old": _old_stratified(z, lab, j), "auto": auto(ev)}


def _compare(rng: np.random.Generator) -> dict[str, tuple[float, Interval]]:
    # A calibration run the judge mostly passes, labelled 50/50 by verdict: the raw confusion
    # counts over-sample the judge's fails.
    z = (rng.random(N) < 0.85).astype(np.int8)
    j = _judge(rng, z)
    classes = [np.flatnonzero(j == c) for c in (1, 0)]
    lab = np.concatenate([rng.choice(c, 50, replace=False) for c in classes])
    ev = evidence(z, lab, j, selection="by_verdict")
    zb = (rng.random(N) < 0.6).astype(np.int8)
    zc = zb.copy()
    fails = np.flatnonzero(zb == 0)
    zc[rng.choice(fails, N // 10, replace=False)] = 1  # true difference +0.10
    jb, jc = _judge(rng, zb), _judge(rng, zc)
    a_b, a_c = answer(ev, jb), answer(ev, jc)
    words = np.array(["fail", "pass"], dtype=object)
    diff = answer_difference(ev, words[jb], words[jc], answers=(a_b, a_c))
    cm = ConfusionMatrix(tp=int(((z[lab] == 1) & (j[lab] == 1)).sum()),
                         fn=int(((z[lab] == 1) & (j[lab] == 0)).sum()),
                         fp=int(((z[lab] == 0) & (j[lab] == 1)).sum()),
                         tn=int(((z[lab] == 0) & (j[lab] == 0)).sum()))
    old_b = _iv(estimate_pass_rate(CalibrationCounts(cm, int(jb.sum()), N), method="lee"))
    d_iv = _iv(diff.difference)
    return {"baseline": (float(zb.mean()), claim(a_b)), "old baseline": (float(zb.mean()), old_b),
            "candidate": (float(zc.mean()), claim(a_c)),
            "difference": (float(zc.mean() - zb.mean()), d_iv)}


def _assigned(rng: np.random.Generator, order: str) -> tuple[float, dict[str, Interval]]:
    """An owner deals batches of the queue to three annotators, who finish 50, 25 and 10 rows.

    The real plan (:func:`labels.sampling.plan_queue`) and the real dealing
    (:func:`labels.assignments.deal_rows`); each label records the selection the plan gives it,
    as the Label page does.
    """
    z = (rng.random(N) < 0.65).astype(np.int8)
    j = _judge(rng, z)
    hard = rng.random(N) < 0.3
    ids = [str(k) for k in range(N)]
    words = {str(k): ("pass" if j[k] == 1 else "fail") for k in range(N)}
    doubt = {str(k): (0.6 if hard[k] else 0.05) for k in range(N)}
    plan = plan_queue(ids, order=order, seed=int(rng.integers(1 << 31)),  # type: ignore[arg-type]
                      verdicts=words, uncertainty=doubt, judge="j")
    people = ["a", "b", "c"]
    dealt = deal_rows(list(plan.item_ids), people, batch=50, overlap=1)
    done = {"a": 50, "b": 25, "c": 10}
    lab = np.array(sorted({int(r) for p in people for r in dealt[p][:done[p]]}))
    selection = {"random": "random", "stratified": "by_verdict", "active": "active"}[order]
    share = None
    if order == "active" and plan.shares is not None:
        share = np.array([plan.shares[str(k)] for k in lab])
    ev = evidence(z, lab, j, selection=selection, share=share)
    return float(z.mean()), {"labels": _iv(labels_only_pass_rate(z[lab])),
                             "old": _old_stratified(z, lab, j), "auto": auto(ev)}


_REPS: dict[str, Callable[[np.random.Generator], tuple[float, dict[str, Interval]]]] = {
    "file order, sorted": lambda rng: _file(rng, 0.0),
    "file order, mildly sorted": lambda rng: _file(rng, 0.8),
    "file order, shuffled file": lambda rng: _file(rng, 99.0),
    "flips first, majority": _flips,
    "segment shift": _segments,
    "unsure on hard rows": _unsure_hard,
    "all-unsure target": lambda rng: _unsure_target(rng, 300),
    "one unsure target row": lambda rng: _unsure_target(rng, 1),
    "weak judge, same run": _weak,
    "assigned, random, partly done": lambda rng: _assigned(rng, "random"),
    "assigned, stratified, partly": lambda rng: _assigned(rng, "stratified"),
    "assigned, active, partly done": lambda rng: _assigned(rng, "active"),
}


def _cells() -> list[Cell]:
    refusals = ("all-unsure target", "one unsure target row")
    cells = [Cell(name, ("auto",) if name in refusals else ("old", "auto"),
                  refuse=name in (*refusals, "file order, sorted")) for name in _REPS]
    cells = [Cell(c.name, ("labels", "old", "auto")) if c.name == "weak judge, same run"
             else c for c in cells]
    cells.append(Cell("compare, by-verdict card",
                      ("old baseline", "baseline", "candidate", "difference")))
    return cells


def _run_cell(args: tuple[int, Cell, int, int]) -> Result:
    index, cell, reps, seed = args
    rng = np.random.default_rng([seed, 7000 + index])
    res = Result(cell, {m: Stat() for m in cell.methods})
    for _ in range(reps):
        if cell.name.startswith("compare"):
            out = _compare(rng)
            for m, (truth, iv) in out.items():
                res.stats[m].add(*iv, truth, tolerance=1e-12)
            continue
        truth, ivs = _REPS[cell.name](rng)
        for m in cell.methods:
            res.stats[m].add(*ivs[m], truth, tolerance=1e-12)
    return res


def _fmt(s: Stat) -> str:
    cov = "  -  " if s.coverage is None else f"{s.coverage:.3f}"
    wid = "  -  " if s.mean_width is None else f"{s.mean_width:.3f}"
    return f"{cov} {wid} {100 * s.no_claim:3.0f}%"


def workflows_block(*, reps: int, seed: int, workers: int) -> tuple[list[str], list[str]]:
    """Run every workflow cell; return the printed lines and the bars not met."""
    t0 = time.perf_counter()
    results = run_cells(_run_cell, _cells(), reps=reps, seed=seed, workers=workers)
    lines = [
        f"Workflows the app offers, answered by the real path: seed {seed}, {reps} replicates "
        "per cell; each method: coverage of claimed intervals, mean width, share with no claim",
        f"Monte Carlo SE of a 0.95 coverage at {reps} claims: {(0.95 * 0.05 / reps) ** 0.5:.4f}",
        "",
    ]
    failures: list[str] = []
    for r in results:
        c = r.cell
        parts = " | ".join(f"{m}: {_fmt(r.stats[m])}" for m in c.methods)
        lines.append(f"{c.name:28} | {parts}")
        autos = [m for m in c.methods if m not in ("old", "labels", "old baseline")]
        for m in autos:
            s = r.stats[m]
            if c.refuse:
                if s.claims:
                    failures.append(f"{c.name}: {m} claimed in {s.claims} of {s.reps} data sets")
            elif s.claims and (s.coverage is None or s.coverage < 0.94):
                se = (s.coverage * (1 - s.coverage) / s.claims) ** 0.5 if s.coverage else 0.0
                failures.append(f"{c.name}: {m} coverage {s.coverage:.3f} (MC SE {se:.4f})")
        if "labels" in r.stats:
            lw, aw = r.stats["labels"].mean_width, r.stats["auto"].mean_width
            if lw is not None and aw is not None and aw > lw * (1 + 1e-9):
                failures.append(f"{c.name}: auto width {aw:.3f} > labels alone {lw:.3f}")
    lines += ["", f"workflow block wall time: {time.perf_counter() - t0:.0f} s on {workers} "
                  "workers"]
    return closed(
        lines, failures, not_met="WORKFLOW BARS NOT MET:",
        met="all workflow bars met (auto covers >= 0.94 where it claims, refuses where nothing "
            "can be said, never wider than the labels alone on a random sample)",
    )  # fmt: skip
