"""Verdict-stratified, transported and active estimators: properties, references, refusals."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import hypergeom

from judges.calibration import (
    STRATA,
    CalibrationInputError,
    StratumCounts,
    active_inclusion_probabilities,
    active_pass_rate,
    judge_uncertainty,
    lee_pass_rate,
    population_rates,
    stratified_run_pass_rate,
    transported_pass_rate,
    verdict_strata,
)
from judges.calibration.strata import _run_estimate

VERDICTS = ["pass", "fail", "unsure", "unscored"]


def _run(
    rng: np.random.Generator, n: int, *, unsure: float = 0.0, theta: float = 0.6
) -> tuple[np.ndarray, np.ndarray]:
    """A run: human truth (1/0) and judge codes (1/0/-1), unsure rows harder than the rest."""
    z = (rng.random(n) < theta).astype(np.int8)
    u = rng.random(n)
    j = np.where(z == 1, u < 0.85, u >= 0.75).astype(np.int8)
    hard = rng.random(n) < unsure
    z[hard] = rng.random(int(hard.sum())) < 0.3
    j[hard] = -1
    return z, j


# --------------------------------------------------------------------------- same run


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.tuples(*(st.integers(0, 25) for _ in range(3))),
    passes=st.tuples(*(st.floats(0, 1) for _ in range(3))),
    alloc=st.tuples(*(st.floats(0, 1) for _ in range(3))),
)
def test_unbiased_under_any_between_strata_allocation(
    sizes: tuple[int, int, int], passes: tuple[float, float, float], alloc: tuple[float, ...]
) -> None:
    """Exact expectation over the hypergeometric draws in each stratum equals the run's truth."""
    big_n = [s + 1 for s in sizes]  # every stratum has rows
    big_k = [round(p * n) for p, n in zip(passes, big_n, strict=True)]
    m = [max(1, round(a * n)) for a, n in zip(alloc, big_n, strict=True)]  # every stratum labelled
    truth = sum(big_k) / sum(big_n)
    expectation = 0.0
    supports = [range(max(0, mm - (nn - kk)), min(kk, mm) + 1) for nn, kk, mm in
                zip(big_n, big_k, m, strict=True)]  # fmt: skip
    for ks in itertools.product(*supports):
        prob = math.prod(
            hypergeom.pmf(k, nn, kk, mm) for k, nn, kk, mm in zip(ks, big_n, big_k, m, strict=True)
        )
        counts = StratumCounts(tuple(big_n), tuple(m), tuple(ks), (0, 0, 0))  # type: ignore[arg-type]
        r = _run_estimate(counts, 0.95)
        assert r.estimate is not None
        expectation += prob * r.estimate
    assert expectation == pytest.approx(truth, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(5, 60))
def test_whole_run_estimand_equals_truth_when_fully_labelled(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    z, j = _run(rng, n, unsure=0.2)
    r = stratified_run_pass_rate(z, j, j)
    assert r.estimate == pytest.approx(z.mean())
    assert r.low == pytest.approx(z.mean()) and r.high == pytest.approx(z.mean())
    a = active_pass_rate(z, j, np.ones(n), j)
    if not a.refused:
        assert a.estimate == pytest.approx(z.mean())
    if 0 < z.sum() < n and (j >= 0).any():
        t = transported_pass_rate(z, j, j, j)
        if not t.refused:
            assert t.estimate == pytest.approx(z.mean())


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_invariant_to_row_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    z, j = _run(rng, 300, unsure=0.1)
    lab = rng.choice(300, size=60, replace=False)
    docs = lab // 10
    pi = rng.uniform(0.05, 1.0, size=60)
    p_lab, p_pop = rng.permutation(60), rng.permutation(300)
    before = stratified_run_pass_rate(z[lab], j[lab], j, doc_ids=docs).to_dict()
    after = stratified_run_pass_rate(
        z[lab][p_lab], j[lab][p_lab], j[p_pop], doc_ids=docs[p_lab]
    ).to_dict()
    assert _close(after, before)
    assert _close(
        active_pass_rate(z[lab], j[lab], pi, j).to_dict(),
        active_pass_rate(z[lab][p_lab], j[lab][p_lab], pi[p_lab], j[p_pop]).to_dict(),
    )
    assert _close(
        transported_pass_rate(z[lab], j[lab], j, j[:100]).to_dict(),
        transported_pass_rate(z[lab][p_lab], j[lab][p_lab], j[p_pop], j[:100][::-1]).to_dict(),
    )


def _close(a: object, b: object) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


verdict_lists = st.lists(st.sampled_from(VERDICTS), min_size=0, max_size=12)


@settings(max_examples=150, deadline=None)
@given(human=verdict_lists, judge=verdict_lists, pop_extra=verdict_lists)
def test_refusals_and_results_are_never_nan(
    human: list[str], judge: list[str], pop_extra: list[str]
) -> None:
    n = min(len(human), len(judge))
    h, jl = human[:n], judge[:n]
    pop = jl + pop_extra
    results = [
        stratified_run_pass_rate(h, jl, pop),
        transported_pass_rate(h, jl, pop, pop_extra or ["pass"]),
        active_pass_rate(h, jl, [0.5] * n, pop),
    ]
    rates = population_rates(h, jl, pop)
    for r in results:
        if r.refused:
            assert r.estimate is None and r.low is None and r.high is None
            assert isinstance(r.reason, str) and r.reason
        else:
            for v in (r.estimate, r.low, r.high):
                assert v is not None and math.isfinite(v) and 0.0 <= v <= 1.0
            assert r.low <= r.high  # type: ignore[operator]
    for e in (rates.sensitivity, rates.specificity, rates.fpr, rates.kappa):
        if e.refused:
            assert e.estimate is None and e.reason
        else:
            assert all(v is not None and math.isfinite(v) for v in (e.estimate, e.low, e.high))


def test_stratum_without_labels_gives_explicit_bounds() -> None:
    judge = ["pass"] * 50 + ["fail"] * 30 + ["unsure"] * 20
    h = ["pass"] * 18 + ["fail"] * 2 + ["fail"] * 15 + ["pass"] * 5
    r = stratified_run_pass_rate(h, judge[:20] + judge[50:70], judge)
    assert r.params["identified"] is False
    assert any("not identified" in w and "not judged" in w for w in r.warnings)
    # the unsure stratum (20 % of the run) could be all pass or all fail: >= 0.2 wide
    assert r.width is not None and r.width > 0.2


def test_labels_from_another_run_are_refused_by_the_same_run_estimator() -> None:
    r = stratified_run_pass_rate(["pass"] * 30, ["pass"] * 30, ["pass"] * 10 + ["fail"] * 90)
    assert r.refused and "not rows of this run" in (r.reason or "")


def test_human_unsure_rows_are_bounded() -> None:
    judge = ["pass"] * 60 + ["fail"] * 40
    h = ["pass"] * 8 + ["unsure"] * 2 + ["fail"] * 8 + ["unsure"] * 2
    r = stratified_run_pass_rate(h, ["pass"] * 10 + ["fail"] * 10, judge)
    b = r.params["human_unsure_bounds"]
    assert b["if_all_fail"] < r.estimate < b["if_all_pass"]  # type: ignore[operator]
    assert b["low"] <= r.low and b["high"] >= r.high


def test_document_clustering_reaches_the_headline() -> None:
    rng = np.random.default_rng(5)
    n_docs, per = 100, 10
    doc_effect = rng.normal(0, 1.5, n_docs).repeat(per)
    z = (rng.random(n_docs * per) < 1 / (1 + np.exp(-(0.4 + doc_effect)))).astype(np.int8)
    wrong = rng.random(n_docs * per) < 1 / (1 + np.exp(-(-1.5 + doc_effect)))
    j = np.where(wrong, 1 - z, z)
    lab_docs = rng.choice(n_docs, 10, replace=False)
    lab = np.flatnonzero(np.isin(np.arange(n_docs * per) // per, lab_docs))
    plain = stratified_run_pass_rate(z[lab], j[lab], j)
    clustered = stratified_run_pass_rate(z[lab], j[lab], j, doc_ids=lab // per)
    assert clustered.params["design_effect"] > 1.1
    assert clustered.method == "verdict_stratified_clustered"
    assert clustered.width > plain.width  # type: ignore[operator]


def test_seeded_coverage_same_run_by_verdict_with_unsure_rows() -> None:
    rng = np.random.default_rng(11)
    covered = 0
    for _ in range(300):
        z, j = _run(rng, 800, unsure=0.2)
        lab = np.concatenate(
            [rng.choice(np.flatnonzero(j == c), 25, replace=False) for c in (1, 0, -1)]
        )
        covered += stratified_run_pass_rate(z[lab], j[lab], j).covers(float(z.mean()))
    assert covered / 300 >= 0.93


# --------------------------------------------------------------------------- population rates


def test_population_rates_reweight_an_oversampled_stratum() -> None:
    # Dataset: 800 judge-pass (PPV 0.9), 200 judge-fail (FOR 0.2); labels 20 + 20 (by verdict).
    judge_pop = ["pass"] * 800 + ["fail"] * 200
    h = ["pass"] * 18 + ["fail"] * 2 + ["pass"] * 4 + ["fail"] * 16
    jl = ["pass"] * 20 + ["fail"] * 20
    rates = population_rates(h, jl, judge_pop)
    w, ppv, fomr = 0.8, 0.9, 0.2
    sens = w * ppv / (w * ppv + (1 - w) * fomr)
    spec = (1 - w) * (1 - fomr) / ((1 - w) * (1 - fomr) + w * (1 - ppv))
    assert rates.sensitivity.estimate == pytest.approx(sens)
    assert rates.specificity.estimate == pytest.approx(spec)
    assert rates.fpr.estimate == pytest.approx(1 - spec)
    raw_sens = 18 / 22  # the sample rate, biased toward the over-sampled judge-fail stratum
    assert abs(rates.sensitivity.estimate - raw_sens) > 0.1  # type: ignore[operator]
    for e in (rates.sensitivity, rates.specificity, rates.fpr, rates.kappa):
        assert e.low <= e.estimate <= e.high  # type: ignore[operator]


@settings(max_examples=150, deadline=None)
@given(
    pass_in_pass=st.integers(0, 12),
    n_pass=st.integers(1, 12),
    pass_in_fail=st.integers(0, 12),
    n_fail=st.integers(1, 12),
    population_pass=st.integers(1, 500),
)
def test_population_rates_intervals_contain_their_estimates(
    pass_in_pass: int, n_pass: int, pass_in_fail: int, n_fail: int, population_pass: int
) -> None:
    # Small strata with a zero cell (e.g. no human-pass row among the judge's fails: raw
    # sensitivity 1.000) once printed "1.000 [0.715, 0.996]" on the demo.
    k_pass, k_fail = min(pass_in_pass, n_pass), min(pass_in_fail, n_fail)
    h = (
        ["pass"] * k_pass
        + ["fail"] * (n_pass - k_pass)
        + ["pass"] * k_fail
        + ["fail"] * (n_fail - k_fail)
    )
    jl = ["pass"] * n_pass + ["fail"] * n_fail
    rates = population_rates(h, jl, ["pass"] * population_pass + ["fail"] * 100)
    for e in (rates.sensitivity, rates.specificity, rates.fpr, rates.kappa):
        if not e.refused:
            assert e.low <= e.estimate <= e.high  # type: ignore[operator]


def test_population_rates_interval_reaches_a_raw_rate_of_one() -> None:
    h = ["pass"] * 8 + ["fail"] * 2 + ["fail"] * 10  # no human pass among the judge's fails
    jl = ["pass"] * 10 + ["fail"] * 10
    rates = population_rates(h, jl, ["pass"] * 300 + ["fail"] * 100)
    assert rates.sensitivity.estimate == 1.0
    assert rates.sensitivity.high == 1.0
    assert 0.7 < rates.sensitivity.low < 0.9  # type: ignore[operator]


# --------------------------------------------------------------------------- transport


def test_transport_with_a_random_calibration_set_is_lee_point_estimate() -> None:
    h = ["pass"] * 40 + ["fail"] * 40
    j = ["pass"] * 36 + ["fail"] * 4 + ["pass"] * 8 + ["fail"] * 32
    target = ["pass"] * 500 + ["fail"] * 500
    lee = lee_pass_rate(h, j, target)
    ours = transported_pass_rate(h, j, j, target)
    assert ours.estimate == pytest.approx(lee.estimate)
    assert ours.width == pytest.approx(lee.width, rel=0.15)  # type: ignore[arg-type]


def test_transport_covers_under_label_shift_with_by_verdict_calibration() -> None:
    rng = np.random.default_rng(3)
    covered = 0
    for _ in range(300):
        zc, jc = _run(rng, 1000, theta=0.75)  # calibration run: label shift 0.75 -> 0.4
        lab = np.concatenate(
            [rng.choice(np.flatnonzero(jc == c), 40, replace=False) for c in (1, 0)]
        )
        zt, jt = _run(rng, 1000, unsure=0.1, theta=0.4)
        r = transported_pass_rate(zc[lab], jc[lab], jc, jt)
        covered += r.claims and r.covers(float(zt.mean()))
    assert covered / 300 >= 0.93


def test_transport_refuses_a_judge_no_better_than_chance() -> None:
    r = transported_pass_rate(["pass", "fail"] * 10, ["pass"] * 20, ["pass"] * 20, ["pass"] * 5)
    assert r.refused


# --------------------------------------------------------------------------- active


def test_active_probabilities_have_a_floor_and_sum_to_the_budget() -> None:
    u = judge_uncertainty(n_rows=6, flip_share=[0, 0, 0, 0.5, np.nan, 0.1],
                          pass_probability=[0.99, 0.5, np.nan, 0.9, 0.9, 0.9])  # fmt: skip
    assert u.tolist() == pytest.approx([0.02, 1.0, 0.0, 1.0, 0.2, 0.2])
    pi = active_inclusion_probabilities(u, budget=3)
    assert pi.sum() == pytest.approx(3.0) and pi.min() > 0 and pi.max() <= 1
    with pytest.raises(CalibrationInputError):
        active_inclusion_probabilities(u, budget=7)


def test_active_estimate_covers_and_is_unbiased() -> None:
    rng = np.random.default_rng(8)
    covered, errors = 0, []
    for _ in range(300):
        z, j = _run(rng, 1500)
        hard = rng.random(1500) < 0.3
        z = np.where(hard & (rng.random(1500) < 0.3), 1 - j, z)  # hard rows: more judge errors
        pi = active_inclusion_probabilities(np.where(hard, 0.6, 0.05), budget=120)
        take = rng.random(1500) < pi
        r = active_pass_rate(z[take], j[take], pi[take], j)
        covered += r.covers(float(z.mean()))
        errors.append(r.estimate - z.mean())  # type: ignore[operator]
    assert covered / 300 >= 0.93
    assert abs(np.mean(errors)) < 3 * np.std(errors) / math.sqrt(300)


def test_strata_names_and_codes() -> None:
    assert verdict_strata(["pass", "fail", "unsure", "unscored"]).tolist() == [0, 1, 2, 2]
    assert STRATA == ("judge pass", "judge fail", "not judged")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cr2_variance_and_bell_mccaffrey_df_match_the_matrix_formulas(seed: int) -> None:
    """The closed-form CR2 SE and degrees of freedom equal the n x n matrix definitions.

    Reference: the regression of the human pass indicator on stratum indicators, CR2
    ``(I - H_gg)^{-1/2}`` per document (Bell & McCaffrey 2002) and the degrees of freedom
    ``(sum lambda)^2 / sum lambda^2`` of ``G'G`` (Imbens & Kolesar 2016, eq. 11).
    """
    from scipy.linalg import sqrtm

    from judges.calibration._verdicts import FAIL, PASS
    from judges.calibration.clustered import document_counts

    rng = np.random.default_rng(seed)
    n = 70
    h = np.where(rng.random(n) < 0.6, PASS, FAIL).astype(np.int8)
    s = rng.integers(0, 3, n).astype(np.int8)
    docs = rng.integers(0, 9, n)
    weights = np.array([0.5, 0.3, 0.2])
    low, high, se, df = document_counts(h, s, docs, weights).cr2_interval(confidence=0.95)

    y = (h == PASS).astype(float)
    x = np.stack([s == c for c in range(3)], axis=1).astype(float)
    xtx_inv = np.linalg.inv(x.T @ x)
    hat = x @ xtx_inv @ x.T
    resid = y - hat @ y
    _, g = np.unique(docs, return_inverse=True)
    big_g = np.zeros((n, g.max() + 1))
    var = 0.0
    for c in range(g.max() + 1):
        rows = np.flatnonzero(g == c)
        adjust = np.real(sqrtm(np.linalg.pinv(np.eye(rows.size) - hat[np.ix_(rows, rows)])))
        var += float(weights @ xtx_inv @ x[rows].T @ adjust @ resid[rows]) ** 2
        big_g[:, c] = (np.eye(n) - hat)[:, rows] @ adjust @ x[rows] @ xtx_inv @ weights
    lam = np.linalg.eigvalsh(big_g.T @ big_g)
    assert se == pytest.approx(math.sqrt(var), rel=1e-9)
    assert df == pytest.approx(lam.sum() ** 2 / (lam**2).sum(), rel=1e-9)
    assert 1.0 < df < g.max() + 1
    assert (low + high) / 2 == pytest.approx(float(weights @ xtx_inv @ x.T @ y), rel=1e-12)
