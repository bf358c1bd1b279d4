"""Segment breakdowns, clustered bootstrap and the full report (incl. the 1M-row time bar)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from judges.calibration import (
    CalibrationInputError,
    build_summary,
    calibration_counts,
    cluster_bootstrap,
    clustered_agreement,
    cohen_kappa,
    corrected_pass_rate,
    estimate_pass_rate,
    judge_rates,
    normalize_verdicts,
    percentile_interval,
    segment_breakdown,
    simulate_verdicts,
    verdict_names,
)


def _data(seed: int = 0, n_lab: int = 600, n_target: int = 5000) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    h, jl = simulate_verdicts(rng, n=n_lab, theta=0.6, sensitivity=0.85, specificity=0.75)
    _, jt = simulate_verdicts(rng, n=n_target, theta=0.6, sensitivity=0.85, specificity=0.75)
    return {
        "h": verdict_names(h), "jl": verdict_names(jl), "jt": verdict_names(jt),
        "seg_l": rng.choice(["de", "en", "fr"], size=n_lab),
        "seg_t": rng.choice(["de", "en", "fr", "it"], size=n_target),
    }


def test_segment_breakdown_equals_per_subset_computation() -> None:
    d = _data()
    d["h"][:7] = "unsure"
    d["jt"][:11] = "unscored"
    segs = segment_breakdown(d["h"], d["jl"], segments_labelled=d["seg_l"],
                             judge_target=d["jt"], segments_target=d["seg_t"],
                             design="separate_calibration")
    assert [s.segment for s in segs] == ["de", "en", "fr", "it"]
    for s in segs:
        ml, mt = d["seg_l"] == s.segment, d["seg_t"] == s.segment
        rates = judge_rates(d["h"][ml], d["jl"][ml])
        assert s.confusion == rates.confusion
        assert s.sensitivity == rates.sensitivity and s.fpr == rates.fpr
        assert s.kappa == cohen_kappa(d["h"][ml], d["jl"][ml])
        direct = corrected_pass_rate(d["h"][ml], d["jl"][ml], d["jt"][mt],
                                     design="separate_calibration")
        assert s.pass_rate == direct
        assert s.n_target == int(np.isin(d["jt"][mt], ["pass", "fail"]).sum())
    it = segs[3]
    assert it.n_labelled == 0 and it.sensitivity.refused and it.pass_rate.refused
    assert "m0=0" in (it.pass_rate.reason or "")


def test_segment_breakdown_labelled_only_and_mixed_label_types() -> None:
    segs = segment_breakdown([1, 1, 0, 0], [1, 0, 0, 0], segments_labelled=[2, 2, 1, 1])
    assert [(s.segment, s.n_labelled, s.pass_rate) for s in segs] == [("1", 2, None),
                                                                       ("2", 2, None)]
    mixed = segment_breakdown([1, 0], [1, 0], segments_labelled=np.array([1, 2]),
                              judge_target=[1, 0, 1], segments_target=np.array(["1", "2", "3"]))
    assert [s.segment for s in mixed] == ["1", "2", "3"]
    with pytest.raises(CalibrationInputError):
        segment_breakdown([1, 0], [1, 0], segments_labelled=["a"])
    with pytest.raises(CalibrationInputError):
        segment_breakdown([1, 0], [1, 0], segments_labelled=["a", "b"], judge_target=[1])


def test_cluster_bootstrap_with_singleton_clusters_is_a_row_bootstrap() -> None:
    x = np.random.default_rng(1).random(200)
    docs = np.arange(200)
    e = cluster_bootstrap(lambda v: float(v.mean()), x, groups=docs,
                          rng=np.random.default_rng(2), n_boot=2000)
    assert e.n == 200 and e.estimate == pytest.approx(x.mean())
    se = x.std(ddof=1) / np.sqrt(200)
    assert e.high - e.low == pytest.approx(2 * 1.96 * se, rel=0.1)
    again = cluster_bootstrap(lambda v: float(v.mean()), x, groups=docs,
                              rng=np.random.default_rng(2), n_boot=2000)
    assert again == e


def test_cluster_bootstrap_widens_when_rows_share_documents() -> None:
    rng = np.random.default_rng(3)
    docs = np.repeat(np.arange(40), 10)  # 40 documents x 10 rows, outcome shared per document
    doc_pass = rng.random(40) < 0.5
    x = doc_pass[docs].astype(float)
    clustered = cluster_bootstrap(lambda v: float(v.mean()), x, groups=docs,
                                  rng=np.random.default_rng(4), n_boot=1000)
    rows = cluster_bootstrap(lambda v: float(v.mean()), x, groups=np.arange(400),
                             rng=np.random.default_rng(4), n_boot=1000)
    assert clustered.width > 2.5 * rows.width  # design effect ~ sqrt(10)


def test_cluster_bootstrap_undefined_replicates_and_guards() -> None:
    x = np.array([1, 1, 1, 0])
    docs = np.array([0, 1, 2, 3])

    def share_of_zero_among_first(v: np.ndarray) -> float | None:
        return None if (v == 0).sum() == 0 else float((v == 0).mean())

    e = cluster_bootstrap(share_of_zero_among_first, x, groups=docs,
                          rng=np.random.default_rng(0), n_boot=400)
    assert not e.refused and e.warnings and "undefined" in e.warnings[0]
    all_bad = percentile_interval([np.nan] * 10, estimate=0.5, n=3, method="m")
    assert all_bad.refused
    with pytest.raises(CalibrationInputError):
        cluster_bootstrap(lambda v: 0.0, x, groups=docs[:3], rng=np.random.default_rng(0))
    with pytest.raises(CalibrationInputError):
        cluster_bootstrap(lambda v: 0.0, x, groups=docs, rng=0)  # type: ignore[arg-type]


def test_clustered_agreement_matches_generic_cluster_bootstrap() -> None:
    d = _data(seed=5, n_lab=300)
    docs = np.random.default_rng(0).integers(0, 60, size=300)
    h, j = normalize_verdicts(d["h"]), normalize_verdicts(d["jl"])
    fast = clustered_agreement(h, j, docs, rng=np.random.default_rng(9), n_boot=3000)
    def sensitivity(hh: np.ndarray, jj: np.ndarray) -> float:
        return float(((hh == 1) & (jj == 1)).sum() / (hh == 1).sum())

    slow = cluster_bootstrap(sensitivity, h, j, groups=docs, rng=np.random.default_rng(10),
                             n_boot=3000)
    assert fast["sensitivity"].estimate == pytest.approx(slow.estimate)
    assert fast["sensitivity"].low == pytest.approx(slow.low, abs=0.01)
    assert fast["sensitivity"].high == pytest.approx(slow.high, abs=0.01)
    assert fast["kappa"].estimate == pytest.approx(cohen_kappa(h, j).estimate)
    assert fast["fpr"].estimate == pytest.approx(judge_rates(h, j).fpr.estimate)


def test_build_summary_contents() -> None:
    d = _data(seed=2)
    d["h"][:5] = "unsure"
    d["jl"][5:8] = "unscored"
    d["jt"][:13] = "unscored"
    docs = np.arange(600) // 3
    r = build_summary(d["h"], d["jl"], d["jt"], design="same_run_random",
                     segments_labelled=d["seg_l"], segments_target=d["seg_t"], doc_ids=docs,
                     rng=np.random.default_rng(0), n_boot=500)
    counts = calibration_counts(d["h"], d["jl"], d["jt"])
    assert r.counts == counts
    assert r.rates == judge_rates(d["h"], d["jl"])
    assert r.kappa == cohen_kappa(d["h"], d["jl"])
    assert r.corrected.method == "stratified" and r.corrected.design == "same_run_random"
    assert r.estimators["lee"] == estimate_pass_rate(counts, method="lee")
    assert set(r.estimators) == {"lee", "ppi++", "stratified", "labels_only"}
    assert r.naive.estimate == pytest.approx(counts.k_target / counts.n_target)
    assert len(r.segments) == 4 and r.clustered is not None
    assert set(r.clustered) >= {"sensitivity", "fpr", "kappa", "pass_rate_lee"}
    assert any("5 labelled rows excluded (human" in w for w in r.warnings)
    assert any("3 labelled rows excluded (judge" in w for w in r.warnings)
    assert any("13 target rows excluded" in w for w in r.warnings)
    text = json.dumps(r.to_dict())
    assert "NaN" not in text and '"corrected"' in text


def test_build_summary_guards() -> None:
    with pytest.raises(CalibrationInputError, match="rng"):
        build_summary([1, 0], [1, 0], [1], doc_ids=[1, 2])
    with pytest.raises(CalibrationInputError, match="unknown design"):
        build_summary([1, 0], [1, 0], [1], design="random")
    with pytest.raises(CalibrationInputError):
        build_summary([1, 0], [1], [1])
    with pytest.raises(CalibrationInputError):
        build_summary([1, 0], [1, 0], [1], segments_target=["a"])
    r = build_summary(["unsure"] * 3, ["pass"] * 3, [])
    assert r.corrected.refused and r.naive.refused and r.kappa.refused
    assert any("refused" in w for w in r.warnings)


def test_full_report_on_a_million_verdicts() -> None:
    # Its speed is measured in bench/coverage.py, not here: shared machines make timed tests flaky.
    rng = np.random.default_rng(0)
    h, jl = simulate_verdicts(rng, n=10_000, theta=0.6, sensitivity=0.85, specificity=0.75)
    _, jt = simulate_verdicts(rng, n=1_000_000, theta=0.6, sensitivity=0.85, specificity=0.75)
    jt_str = verdict_names(jt)
    seg_l = rng.choice(["a", "b", "c"], size=10_000)
    seg_t = rng.choice(["a", "b", "c"], size=1_000_000)
    docs = rng.integers(0, 3000, size=10_000)
    r = build_summary(verdict_names(h), verdict_names(jl), jt_str, design="separate_calibration",
                     segments_labelled=seg_l, segments_target=seg_t, doc_ids=docs,
                     rng=np.random.default_rng(1))
    assert r.counts.n_target == 1_000_000 and abs(r.corrected.estimate - 0.6) < 0.03
