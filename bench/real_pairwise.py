"""Real-data check of the pairwise answer: subsampled labels against the full human answer.

Usage::

    python bench/real_pairwise.py [--reps N] [--seed S] [--workers W] [--reports]

Third-party pairwise sets whose licence lets the project use them, read in place from
``../shared/data/external`` (a set that is absent is skipped; nothing is copied):

* ``mtbench`` — MT-Bench expert votes vs GPT-4 (CC BY 4.0): 1,232 (question, turn, model pair)
  rows, the human consensus of their votes (most frequent vote, a split is a tie), GPT-4's
  published verdict (``tie (inconsistent)`` counts as tie);
* ``ragchecker`` — RAGChecker meta-evaluation (Apache-2.0): 280 pairs of RAG answers, two
  annotators' ``overall_label`` (sign: which answer is better, 0 a tie), and RAGChecker's own
  ``overall`` scores turned into a verdict (the answer with the higher score wins, equal
  scores tie);
* ``llmbar`` — LLMBar's Natural and Adversarial sets (MIT, 419 rows, objective gold a / b) with
  GPT-4 (Vanilla, no rules) judged in both orders, combined under ``all_agree`` (orders that
  disagree are a tie).

Every row of a set has its human answer, so the truth is known: the human a / b / tie shares of
the whole set. Each cell draws ``reps`` label subsamples of ``m`` rows — at ``random`` or
``stratified`` by the judge's verdict (the Label page's queue) — builds the pairwise evidence
and asks the real path (:func:`judges.calibration.answer_win_rate`, same run) for the shares,
and counts how often each share's interval covers the truth. ``separate`` cells split the set
at random into a calibration half (labels drawn by verdict) and a target half, whose human
shares are the truth. ``raw`` is the previous release's raw 3 x 3 matrix, for comparison.

``--reports`` also runs two cases through the real report on a temporary database:
RAGChecker labelled by verdict (one seeded subsample) and JudgeBench (its answer key, read in
place, with the 13 rows one of whose two judge games gave no decision: judged in one order
only).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# The project root, and this folder for the sibling coverage_* modules: a test loads this file
# by its path, where the script's own folder is not on sys.path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from coverage_pairwise import _stratified, evidence
from coverage_stat import run_cells

from judges.calibration import (
    PairwiseRunCounts,
    PairwiseTarget,
    answer_win_rate,
    corrected_win_rate_from_counts,
    vote_consensus,
)

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "external"
SIDES = ("a", "b", "tie")
_CODE = {"a": 0, "b": 1, "tie": 2}
TIE_BAND = 0.0


@dataclass(frozen=True)
class RealSet:
    """One real pairwise set: per row the human consensus and the judge's verdict (0/1/2)."""

    name: str
    human: np.ndarray
    judge: np.ndarray
    one_order: np.ndarray

    @property
    def truth(self) -> np.ndarray:
        """The human a / b / tie shares of every row."""
        return np.bincount(self.human, minlength=3) / self.human.size


def load_mtbench(root: Path = EXTERNAL) -> RealSet | None:
    """MT-Bench votes (``mtbench_human_vs_gpt4/votes.jsonl``), one row per item."""
    path = root / "mtbench_human_vs_gpt4" / "votes.jsonl"
    if not path.is_file():
        return None
    votes = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    winner = {"model_a": "a", "model_b": "b", "tie": "tie", "tie (inconsistent)": "tie"}
    keys = [f"{v['question_id']}|{v['turn']}|{v['model_a']}|{v['model_b']}" for v in votes]
    ids, consensus = vote_consensus(keys, [winner[v["human_winner"]] for v in votes])
    judge = {k: winner[v["gpt4_winner"]] for k, v in zip(keys, votes, strict=True)}
    human = np.array([_CODE[c] for c in consensus])
    return RealSet("mtbench", human, np.array([_CODE[judge[i]] for i in ids]),
                   np.zeros(human.size, dtype=bool))


def _side(delta: float, band: float = 0.0) -> str:
    return "b" if delta > band else "a" if delta < -band else "tie"


def load_ragchecker(root: Path = EXTERNAL) -> RealSet | None:
    """RAGChecker meta-eval: two annotators' overall preference vs RAGChecker's scores."""
    folder = root / "ragchecker_meta_eval"
    if not (folder / "human_labeled_data.json").is_file():
        return None
    labels = json.loads((folder / "human_labeled_data.json").read_text())
    scores = json.loads((folder / "baseline_ragchecker.json").read_text())
    ids, consensus = vote_consensus([str(r["instance_id"]) for r in labels],
                                    [_side(float(r["overall_label"])) for r in labels])
    verdict = {str(r["instance_id"]): _side(
        float(r["model2"]["ragchecker"]["overall_label"])
        - float(r["model1"]["ragchecker"]["overall_label"]), TIE_BAND) for r in scores}
    human = np.array([_CODE[c] for c in consensus])
    return RealSet("ragchecker", human, np.array([_CODE[verdict[i]] for i in ids]),
                   np.zeros(human.size, dtype=bool))


LLMBAR_SETS = ("Natural", "Adversarial/Neighbor", "Adversarial/GPTInst", "Adversarial/GPTOut",
               "Adversarial/Manual")


def load_llmbar(root: Path = EXTERNAL, evaluator: str = "GPT-4",
                strategy: str = "Vanilla_NoRules") -> RealSet | None:
    """LLMBar's curated sets with one evaluator's verdicts in both orders (``all_agree``)."""
    base = root / "llmbar" / "Dataset" / "LLMBar"
    if not base.is_dir():
        return None
    human, judge, one = [], [], []
    for subset in LLMBAR_SETS:
        path = base / subset / "evaluators" / evaluator / strategy / "result.json"
        for row in json.loads(path.read_text()):
            human.append(int(row["label"]) - 1)
            games = row["results"][-1] if isinstance(row["results"], list) else row["results"]
            winners = [games.get(k, {}).get("winner") for k in ("swap = False", "swap = True")]
            sides = {int(w) - 1 for w in winners if w in ("1", "2")}
            judge.append(sides.pop() if len(sides) == 1 else 2)
            one.append(sum(w in ("1", "2") for w in winners) == 1)
    return RealSet("llmbar", np.array(human), np.array(judge), np.array(one, dtype=bool))


def real_sets(root: Path = EXTERNAL) -> list[RealSet]:
    """Every set that is present."""
    return [s for s in (load_mtbench(root), load_ragchecker(root), load_llmbar(root))
            if s is not None]


# --------------------------------------------------------------------------- one subsample


def draw(rng: np.random.Generator, data: RealSet, m: int, queue: str) -> np.ndarray:
    """Row indices of ``m`` labels drawn at random or by the judge's verdict."""
    if queue == "random":
        return rng.choice(data.human.size, m, replace=False)
    return _stratified(rng, data.judge, m)


def same_run_answer(data: RealSet, labelled: np.ndarray, queue: str) -> object:
    """The real path's same-run answer for one subsample of labels."""
    ev = evidence(data.human, data.judge, labelled, "random" if queue == "random" else
                  "by_verdict", one_order=data.one_order)
    return answer_win_rate(ev, PairwiseTarget(ev.population, same_run=True), pairs=False)


def _raw(data: RealSet, lab: np.ndarray, target: np.ndarray
         ) -> list[tuple[float | None, float | None]]:
    table = np.zeros((3, 3))
    np.add.at(table, (data.human[lab], data.judge[lab]), 1)
    r = corrected_win_rate_from_counts(table, np.bincount(target, minlength=3))
    return [(None, None)] * 3 if r.refused else [(e.low, e.high) for e in (r.a, r.b, r.tie)]


@dataclass(frozen=True)
class RealCell:
    data: RealSet
    queue: str  # random, stratified, separate
    m: int


def run_real_cell(job: tuple[int, RealCell, int, int]) -> tuple[RealCell, dict[str, list[int]],
                                                                  int]:
    """Per method (auto, raw) and share: [claims, covered], over ``reps`` subsamples."""
    index, cell, reps, seed = job
    rng = np.random.default_rng([seed, 2407, index])
    data = cell.data
    tally = {f"{m} {s}": [0, 0] for m in ("auto", "raw") for s in SIDES}
    for _ in range(reps):
        if cell.queue == "separate":
            half = rng.permutation(data.human.size)
            cal, tgt = np.sort(half[: half.size // 2]), np.sort(half[half.size // 2:])
            sub = RealSet(data.name, data.human[cal], data.judge[cal], data.one_order[cal])
            lab = draw(rng, sub, cell.m, "stratified")
            ev = evidence(sub.human, sub.judge, lab, "by_verdict", one_order=sub.one_order)
            decided = tgt[~data.one_order[tgt]]
            truth = np.bincount(data.human[decided], minlength=3) / decided.size
            target = PairwiseRunCounts.from_rows(data.judge[tgt], one_order=data.one_order[tgt])
            h = answer_win_rate(ev, PairwiseTarget(target), pairs=False).headline
            raw = _raw(sub, lab, data.judge[decided])
        else:
            lab = draw(rng, data, cell.m, cell.queue)
            truth = data.truth
            h = same_run_answer(data, lab, cell.queue).headline  # type: ignore[attr-defined]
            raw = _raw(data, lab, data.judge[~data.one_order])
        auto = ([(e.low, e.high) for e in (h.a, h.b, h.tie)] if h.claims
                else [(None, None)] * 3)
        for method, bounds in (("auto", auto), ("raw", raw)):
            for k, (low, high) in enumerate(bounds):
                if low is None or high is None:
                    continue
                t = tally[f"{method} {SIDES[k]}"]
                t[0] += 1
                t[1] += int(low - 1e-12 <= truth[k] <= high + 1e-12)
    return cell, tally, reps


def coverage_table(*, reps: int, seed: int, workers: int, root: Path = EXTERNAL
                   ) -> tuple[list[str], list[str]]:
    """The coverage lines and the bars not met (auto >= 0.94 in every cell and share)."""
    t0 = time.perf_counter()
    sets = real_sets(root)
    if not sets:
        return [f"no real pairwise data under {root}: skipped"], []
    cells = [RealCell(d, q, m) for d in sets for q in ("random", "stratified")
             for m in (60, 120)]
    cells += [RealCell(d, "separate", 60) for d in sets]
    results = run_cells(run_real_cell, cells, reps=reps, seed=seed, workers=workers)
    lines = [f"Real pairwise data, {reps} label subsamples per cell, seed {seed}; Monte Carlo "
             f"SE of a 0.95 coverage: {(0.95 * 0.05 / reps) ** 0.5:.3f}", ""]
    for d in sets:
        lines.append(f"{d.name}: {d.human.size} rows, human shares a/b/tie "
                     f"{' / '.join(f'{x:.3f}' for x in d.truth)}, judge "
                     f"{' / '.join(f'{x:.3f}' for x in np.bincount(d.judge, minlength=3) / d.judge.size)}"  # noqa: E501
                     f", one order only {int(d.one_order.sum())}")
    head = (f"{'set':11} {'labels':10} {'m':>4} | "
            + " | ".join(f"{k:^11}" for k in (f"{m} {s}" for m in ("auto", "raw")
                                               for s in SIDES)))
    lines += ["", head, "-" * len(head)]
    failures = []
    for cell, tally, n in results:
        parts = []
        for key, (claims, covered) in tally.items():
            if not claims:
                parts.append(f"{'no claim':^11}")
                continue
            cov = covered / claims
            flag = "!" if cov < 0.94 else " "
            if cov < 0.94 and key.startswith("auto"):
                failures.append(f"{cell.data.name} {cell.queue} m={cell.m}: {key} {cov:.3f}")
            parts.append(f"{cov:.3f}{flag}{100 * (n - claims) / n:3.0f}%")
        queue = "by verdict" if cell.queue == "stratified" else (
            "separate" if cell.queue == "separate" else "random")
        lines.append(f"{cell.data.name:11} {queue:10} {cell.m:4d} | " + " | ".join(parts))
    lines.append("each entry: coverage of the full human share ('!' < 0.94), share of subsamples "
                 "with no claim; separate: calibration half labelled by verdict, target half")
    lines.append(f"real pairwise block: {time.perf_counter() - t0:.1f} s")
    lines += (["BARS NOT MET:", *(f"  - {f}" for f in failures)] if failures
              else ["all bars met (auto coverage >= 0.94 for every share)"])
    return lines, failures


# --------------------------------------------------------------------------- real reports


def _judgebench(root: Path) -> tuple[list[dict[str, object]], list[str], list[str]] | None:
    name = ("outputs/dataset=judgebench,response_model=claude-3-5-sonnet-20240620,"
            "judge_name=arena_hard,judge_model=claude-3-haiku-20240307.jsonl")
    path = root / "judgebench" / name
    if not path.is_file():
        return None
    rows, labels, verdicts = [], ["id,annotator,label"], ["id,verdict,order"]
    swapped = {"A>B": "b", "B>A": "a", "A=B": "tie"}
    original = {"A>B": "a", "B>A": "b", "A=B": "tie"}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        rows.append({"id": r["pair_id"], "question": r["question"],
                     "answer_a": r["response_A"], "answer_b": r["response_B"]})
        labels.append(f"{r['pair_id']},answer-key,{original[r['label']]}")
        for game, (order, words) in zip(r["judgments"], (("original", original),
                                                          ("swapped", swapped)), strict=True):
            if game and game.get("decision") in words:
                verdicts.append(f"{r['pair_id']},{words[game['decision']]},{order}")
    return rows, labels, verdicts


def reports(root: Path = EXTERNAL, seed: int = 0) -> list[str]:
    """The RAGChecker-by-verdict and JudgeBench one-order cases through the real report."""
    from judges.reporting import pairwise_report
    from judges.verdicts import import_verdicts
    from judges.workspace import Workspace
    from labels import import_labels, import_rows

    out: list[str] = []
    work = Path(tempfile.mkdtemp(prefix="real-pairwise-"))
    workspace = Workspace.open(work / "real.duckdb")
    store = workspace.labels

    def load(name: str, rows: list[dict[str, object]], labels: list[str],
             verdicts: list[str], selection: str) -> None:
        (work / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (work / f"{name}-l.csv").write_text("\n".join(labels) + "\n")
        (work / f"{name}-v.csv").write_text("\n".join(verdicts) + "\n")
        import_rows(store, work / f"{name}.jsonl", name)
        import_labels(store, work / f"{name}-l.csv", name, selection=selection)
        import_verdicts(workspace, work / f"{name}-v.csv", dataset=name, judge="judge")

    def shares(d: dict[str, object]) -> str:
        return "  ".join(f"{k} {v['estimate']:.3f} [{v['low']:.3f}, {v['high']:.3f}]"
                         for k, v in d.items())  # type: ignore[index]

    try:
        rag = load_ragchecker(root)
        if rag is not None:
            rng = np.random.default_rng(seed)
            lab = draw(rng, rag, 90, "stratified")
            rows = [{"id": f"r{i}", "question": f"instance {i}", "answer_a": "1",
                     "answer_b": "2"} for i in range(rag.human.size)]
            load("ragchecker", rows,
                 ["id,annotator,label", *(f"r{i},consensus,{SIDES[rag.human[i]]}" for i in lab)],
                 ["id,verdict", *(f"r{i},{SIDES[j]}" for i, j in enumerate(rag.judge))],
                 "by_verdict")
            data = pairwise_report(workspace, "ragchecker", "judge").to_json()
            table = np.zeros((3, 3))
            np.add.at(table, (rag.human[lab], rag.judge[lab]), 1)
            raw = corrected_win_rate_from_counts(table, np.bincount(rag.judge, minlength=3))
            out += [
                f"RAGChecker, 90 of {rag.human.size} rows labelled by verdict (seed {seed}):",
                f"  full human answer   {'  '.join(f'{s} {x:.3f}' for s, x in zip(SIDES, rag.truth, strict=True))}",  # noqa: E501
                f"  report design       {data['design']} ({data['win_rate']['method']})",
                f"  report shares       {shares(data['win_rate']['corrected'])}",
                f"  raw 3x3 (before)    {shares({s: e.to_interval() for s, e in raw.shares().items()})}",  # noqa: E501
                f"  population          {data['population']}",
            ]
        bench = _judgebench(root)
        if bench is not None:
            load("judgebench", *bench, "all")
            for rule in ("all_agree", "majority"):
                data = pairwise_report(workspace, "judgebench", "judge", rule=rule).to_json()
                out += [
                    f"JudgeBench (claude-3-haiku on claude-3.5-sonnet pairs), {rule}:",
                    f"  votes compared      {data['n_votes']} on {data['n_rows']} rows, "
                    f"{data['agreement']['excluded']} excluded; one order only: "
                    f"{data['position_consistency']['one_order_rows']} rows",
                    f"  shares              {shares(data['win_rate']['corrected'])} "
                    f"({data['win_rate']['method']})",
                    *(f"  warning             {w}" for w in data["warnings"]
                      if "one order" in w),
                ]
    finally:
        workspace.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20251121)
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--reports", action="store_true",
                        help="also run the RAGChecker and JudgeBench cases through the report")
    ns = parser.parse_args()
    lines, failed = coverage_table(reps=ns.reps, seed=ns.seed, workers=ns.workers)
    print("\n".join(lines))
    if ns.reports:
        print("\n" + "\n".join(reports(seed=ns.seed)))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
