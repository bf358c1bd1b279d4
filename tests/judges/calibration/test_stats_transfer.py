"""Transfer diagnostics: homogeneity tests against references, the segment-aware correction."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chi2_contingency, hypergeom
from stores import opened_workspace

from judges.calibration import (
    homogeneity_test,
    segment_aware_pass_rate,
    transfer_diagnostics,
    transported_pass_rate,
)

SENS = np.array([0.95, 0.70, 0.40])
THETA = np.array([0.80, 0.60, 0.50])
NAMES = np.array(["easy", "medium", "hard"])


def _run(rng: np.random.Generator, mix: list[float], n: int = 2000) -> tuple[np.ndarray, ...]:
    seg = rng.choice(3, n, p=mix)
    z = (rng.random(n) < THETA[seg]).astype(np.int8)
    u = rng.random(n)
    j = np.where(z == 1, u < SENS[seg], u >= 0.9).astype(np.int8)
    return NAMES[seg], z, j


def test_chi_square_matches_scipy_on_large_counts() -> None:
    table = np.array([[60, 250], [45, 120], [35, 100], [30, 70], [30, 60]])
    ref = chi2_contingency(table, correction=False)
    r = homogeneity_test(table)
    assert r.method == "chi-square"
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert (r.df, r.n) == (4, 800)


def test_small_counts_use_the_exact_conditional_p_value() -> None:
    """Monte Carlo p-value against full enumeration of the 2 x 2 tables with these margins."""
    table = np.array([[7, 1], [2, 6]])
    rows, cols, n = table.sum(axis=1), table.sum(axis=0), int(table.sum())
    observed = homogeneity_test(table, n_draws=1).statistic
    exact = 0.0
    for a in range(max(0, cols[0] - rows[1]), min(rows[0], cols[0]) + 1):
        t = np.array([[a, rows[0] - a], [cols[0] - a, rows[1] - cols[0] + a]])
        if homogeneity_test(t, n_draws=1).statistic >= observed - 1e-9:
            exact += hypergeom.pmf(a, n, rows[0], cols[0])
    r = homogeneity_test(table, rng=np.random.default_rng(0), n_draws=20000)
    assert r.method.startswith("Monte Carlo exact")
    assert r.p_value == pytest.approx(exact, abs=0.006)


def test_a_table_with_one_row_or_column_is_not_testable() -> None:
    r = homogeneity_test([[5, 0], [7, 0]])
    assert (r.p_value, r.method) == (1.0, "not testable")


def test_segment_aware_covers_where_the_plain_correction_misses_under_a_mix_shift() -> None:
    rng = np.random.default_rng(3)
    covered = {"plain": 0, "aware": 0}
    reps = 60
    for _ in range(reps):
        seg_c, z_c, j_c = _run(rng, [0.2, 0.3, 0.5])
        seg_t, z_t, j_t = _run(rng, [0.6, 0.3, 0.1])
        lab = rng.choice(z_c.size, 500, replace=False)
        truth = z_t.mean()
        plain = transported_pass_rate(z_c[lab], j_c[lab], j_c, j_t)
        aware = segment_aware_pass_rate(z_c[lab], j_c[lab], seg_c[lab], j_c, seg_c, j_t, seg_t)
        covered["plain"] += int(plain.low <= truth <= plain.high)  # type: ignore[operator]
        covered["aware"] += int(aware.low <= truth <= aware.high)  # type: ignore[operator]
    assert covered["plain"] <= 0.1 * reps
    assert covered["aware"] >= 0.9 * reps


def test_one_segment_gives_the_plain_correction() -> None:
    rng = np.random.default_rng(4)
    seg_c, z_c, j_c = _run(rng, [0.0, 1.0, 0.0])
    seg_t, _, j_t = _run(rng, [0.0, 1.0, 0.0])
    lab = rng.choice(z_c.size, 300, replace=False)
    plain = transported_pass_rate(z_c[lab], j_c[lab], j_c, j_t)
    aware = segment_aware_pass_rate(z_c[lab], j_c[lab], seg_c[lab], j_c, seg_c, j_t, seg_t)
    assert aware.estimate == pytest.approx(plain.estimate, rel=1e-12)
    assert (aware.low, aware.high) == pytest.approx((plain.low, plain.high), rel=1e-12)


def test_sparse_segments_pool_and_a_chance_judge_segment_is_bounded() -> None:
    rng = np.random.default_rng(5)
    seg_c, z_c, j_c = _run(rng, [0.45, 0.45, 0.10], n=1500)
    seg_t, _, j_t = _run(rng, [0.3, 0.3, 0.4], n=1500)
    lab = rng.choice(z_c.size, 200, replace=False)
    keep = ~((seg_c[lab] == "hard") & (z_c[lab] == 0))  # no human-fail label in "hard"
    lab = lab[keep]
    r = segment_aware_pass_rate(z_c[lab], j_c[lab], seg_c[lab], j_c, seg_c, j_t, seg_t,
                                min_per_class=5)
    assert not r.refused and r.low is not None and r.high is not None
    assert any(k.startswith("pooled: ") or k == "hard" for k in r.params["groups"])
    assert "hard" not in r.params["groups"]  # a segment without fail labels never stands alone
    # a judge that passes everything in one segment cannot be corrected there: merged
    j_c2, j_t2 = j_c.copy(), j_t.copy()
    j_c2[seg_c == "medium"] = 1
    j_t2[seg_t == "medium"] = 1
    lab2 = rng.choice(z_c.size, 900, replace=False)
    b = segment_aware_pass_rate(z_c[lab2], j_c2[lab2], seg_c[lab2], j_c2, seg_c, j_t2, seg_t)
    assert not b.refused and b.low is not None and not math.isnan(b.low)
    assert "medium" not in b.params["groups"]
    assert any("medium" in k for k in b.params["groups"])


def test_diagnostics_warn_only_when_both_differences_hold() -> None:
    rng = np.random.default_rng(6)
    seg_c, z_c, j_c = _run(rng, [0.2, 0.3, 0.5])
    lab = rng.choice(z_c.size, 500, replace=False)
    seg_s, _, j_s = _run(rng, [0.6, 0.3, 0.1])
    shifted = transfer_diagnostics(z_c[lab], j_c[lab], seg_c[lab], j_c, seg_c, j_s, seg_s)
    assert shifted.mix_differs and shifted.accuracy_differs
    assert shifted.warning is not None and "likely fails" in shifted.warning
    assert "'easy' is 60% of the target" in shifted.warning
    seg_n, _, j_n = _run(rng, [0.2, 0.3, 0.5])
    same = transfer_diagnostics(z_c[lab], j_c[lab], seg_c[lab], j_c, seg_c, j_n, seg_n)
    assert same.accuracy_differs and not same.mix_differs and same.warning is None
    by_name = {s.segment: s for s in same.segments}
    assert by_name["easy"].sensitivity.low < 0.95 < by_name["easy"].sensitivity.high  # type: ignore[operator]


def test_demo_production_week_warns_and_reports_both_corrections(
    db_path: Path, copy_demo: Callable[[Path], Path]
) -> None:
    from judges.demo import LABELLED_DATASET, PRODUCTION_DATASET
    from judges.reporting import calibration_report

    copy_demo(db_path)
    with opened_workspace(db_path) as workspace:
        report = calibration_report(workspace, LABELLED_DATASET, "qwen1.5b-claimsplit",
                                    target=PRODUCTION_DATASET)
        t = report.to_json()["transfer"]
    from calibrate_app.cli._report import render_report

    text = render_report(report)
    aware_line = ("  segment-aware corrected pass rate "
                  f"{t['segment_aware_pass_rate']['estimate']:.3f} [")
    assert "Transfer check (does the correction carry over to the target?):" in text
    assert aware_line in text
    assert f"p = {t['mix_test']['p_value']:.3g} (chi-square" in text
    assert "  - transfer: the correction assumes" in text
    # The report's first lines say what the Calibration page's first screen says.
    summary = report.answer.summary()
    assert f"True pass rate of {PRODUCTION_DATASET!r}: {summary.sentence()}" in text
    assert summary.sentence().startswith(
        "can't say, because the judge's accuracy differs by segment and the target's mix of "
        "segments differs from the calibration set's, and in identifier, lookup, multi_page, "
        "negation (90% of the target rows) the judge is not shown to tell pass from fail")
    assert summary.sentence().endswith(
        "; 0.520 [0.000, 1.000] (the segment-aware correction, n = 95 labelled rows)")
    assert t["mix_differs"] and t["accuracy_differs"]
    assert t["sensitivity_test"]["p_value"] < 0.01
    assert t["warning"].startswith("the correction assumes")
    aware = t["segment_aware_pass_rate"]
    assert aware["low"] <= 0.815 <= aware["high"]
    assert {s["segment"] for s in t["segments"]} == {
        "identifier", "lookup", "multi_page", "negation", "unanswerable"}
