r"""Record the demo's judge verdicts with a real local model, through the project's own runner.

Not part of the product and not run by the tests: it needs the optional ``local`` extra
(``xllamacpp``) and a GGUF file, and takes about an hour on two CPU cores. It

1. builds a scratch database from the shipped demo rows and labels (without any recorded
   verdicts) — or reuses it, so an interrupted recording resumes where it stopped;
2. runs the demo judge configs in ``judges/demo/data/judges/`` (a one-shot prompt sampled at
   temperature 0.8 with repeats, and the claim-split judge at temperature 0), both with the
   sources also in reverse order, over a seeded subset of the labelled rows stratified by
   segment, with :func:`judges.runner.run_judge` and the ``local`` provider (one call at a time,
   repeats of a prompt adjacent so llama.cpp's prompt cache serves them);
3. picks the config with the higher Cohen's kappa on the labelled rows and runs it over a
   seeded, segment-stratified subset of the production week;
4. exports the verdicts to ``judges/demo/data/verdicts/<dataset>/faithfulness/<judge>.jsonl``
   (columns ``id, verdict, repeat, order, reasoning``), the files :func:`judges.demo.build_demo`
   imports, and prints a JSON summary (config ids, rows, calls, timings, headline numbers) for
   ``RECORDING.md``.

Usage (the shipped files: two steps on one scratch database, the second resuming the first;
see ``judges/demo/data/verdicts/RECORDING.md``)::

    python -m tools.demo.record \\
        --model-path ~/.cache/calibrate/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf \\
        --rows 50 --production-rows 80 --threads 2 --db /tmp/calibrate-demo-record.duckdb
    python -m tools.demo.record \\
        --model-path ~/.cache/calibrate/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf \\
        --rows 50 --add-rows 50 --production-rows 80 --add-production-rows 20 --threads 2 \\
        --db /tmp/calibrate-demo-record.duckdb
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judges.calls import CallPolicy
from judges.config import JudgeConfig, load_config
from judges.demo import build_demo
from judges.demo.layout import (
    DATA_DIR,
    LABELLED_DATASET,
    LABELLED_FILE,
    LABELS_DIR,
    PRODUCTION_DATASET,
    PRODUCTION_FILE,
    VERDICTS_DIR,
)
from judges.providers import get_provider
from judges.reporting import calibration_report
from judges.runner import RunSummary, run_judge
from judges.settings import Settings
from judges.verdicts import calls_for_dataset, judge_verdicts
from judges.workspace import Workspace
from labels.errors import CalibrateError
from labels.stores.label_store import LabelStore

JUDGES_DIR = DATA_DIR / "judges"
ONESHOT = "qwen1.5b-oneshot"
CLAIMSPLIT = "qwen1.5b-claimsplit"
CRITERION = "faithfulness"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
"""The Qwen2.5-Coder-1.5B-Instruct Q4_K_M file the shipped verdicts were recorded with."""


def demo_judges() -> dict[str, JudgeConfig]:
    """The demo judge configs, by name (``judges/demo/data/judges/*.yaml``)."""
    configs = [load_config(p) for p in sorted(JUDGES_DIR.glob("*.yaml"))]
    return {c.name: c for c in configs}


def stratified_ids(store: LabelStore, dataset: str, n: int, *, seed: int,
                   only: set[str] | None = None) -> list[str]:
    """``n`` item ids drawn per segment in proportion to its size (largest remainder), seeded.

    The ids come back in the dataset's order, so a run visits them as a full run would.
    """
    items = [i for i in store.items(dataset) if only is None or i.item_id in only]
    if n >= len(items):
        return [i.item_id for i in items]
    by_segment: dict[str, list[str]] = defaultdict(list)
    for item in items:
        by_segment[item.segment or ""].append(item.item_id)
    quotas = {s: n * len(ids) / len(items) for s, ids in by_segment.items()}
    counts = {s: math.floor(q) for s, q in quotas.items()}
    for s in sorted(quotas, key=lambda s: (counts[s] - quotas[s], s))[: n - sum(counts.values())]:
        counts[s] += 1
    rng = random.Random(f"{seed}:{dataset}")
    chosen: set[str] = set()
    for segment in sorted(by_segment):
        chosen.update(rng.sample(by_segment[segment], counts[segment]))
    return [i.item_id for i in items if i.item_id in chosen]


def grown_ids(store: LabelStore, dataset: str, n: int, add: int, *, seed: int,
              only: set[str] | None = None) -> list[str]:
    """``n`` stratified ids (seed), plus ``add`` more drawn (seed + 1) from the rest.

    Growing a recorded subset this way keeps every row already judged: a fresh draw of
    ``n + add`` rows would share only part of them.
    """
    base = stratified_ids(store, dataset, n, seed=seed, only=only)
    if add <= 0:
        return base
    pool = {i.item_id for i in store.items(dataset)} if only is None else set(only)
    extra = stratified_ids(store, dataset, add, seed=seed + 1, only=pool - set(base))
    chosen = set(base) | set(extra)
    return [i.item_id for i in store.items(dataset) if i.item_id in chosen]


def scratch_workspace(db_path: Path) -> Workspace:
    """The recording database: the shipped rows and labels, never any recorded verdicts."""
    if not db_path.exists():
        with tempfile.TemporaryDirectory() as folder:
            data = Path(folder)
            for name in (LABELLED_FILE, PRODUCTION_FILE, LABELS_DIR):
                (data / name).symlink_to(DATA_DIR / name)
            build_demo(db_path, data_dir=data)
    return Workspace.open(db_path)


def file_sha256(path: Path) -> str:
    """The sha256 of a (large) file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(8 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _log(message: str) -> None:
    print(f"[{datetime.now(UTC):%H:%M:%S}] {message}", flush=True)


def judge(workspace: Workspace, config: JudgeConfig, dataset: str, ids: list[str],
          settings: Settings) -> RunSummary:
    """One run of ``config`` over ``ids`` through the runner, one call at a time."""
    provider = get_provider(config.model, settings=settings)
    started = time.perf_counter()

    def progress(done: int, total: int, summary: RunSummary) -> None:
        new = done - summary.cached
        if new and (new % 20 == 0 or done == total):
            elapsed = time.perf_counter() - started
            _log(f"{config.name} on {dataset}: {done}/{total} ({summary.cached} cached), "
                 f"{elapsed:.0f} s, {elapsed / new:.1f} s per judgement")

    _log(f"{config.name} ({config.config_id}) on {dataset}: {len(ids)} rows")
    summary = run_judge(
        config, dataset, workspace=workspace, provider=provider, item_ids=ids,
        concurrency=1,
        policy=CallPolicy(timeout=900, max_retries=2), on_progress=progress,
    )
    _log(summary.describe())
    return summary


def headline(workspace: Workspace, config: JudgeConfig,
             target: str | None = None) -> dict[str, Any]:
    """The numbers the demo shows for ``config`` (kappa, FPR, flip rates, pass rates)."""
    report = calibration_report(workspace, LABELLED_DATASET, config.config_id, criterion=CRITERION,
                                target=target)
    data = report.to_json()
    keys = ("n", "kappa", "fpr", "sensitivity", "specificity", "swap_flip_rate",
            "repeat_flip_rate", "observed_pass_rate", "corrected_pass_rate", "human_pass_rate",
            "n_target", "unsure", "unscored")
    return {k: data.get(k) for k in keys}


def export(workspace: Workspace, config: JudgeConfig, dataset: str, out_dir: Path) -> Path:
    """Write the verdict file the demo imports: ``id, verdict, repeat, order, reasoning``."""
    frame = judge_verdicts(workspace, dataset, config.config_id)
    calls = calls_for_dataset(workspace, dataset, config.config_id)
    calls = calls[calls["status"] != "failed"]
    detail = {
        (str(item), int(repeat), str(order)): text
        for item, repeat, order, text in zip(
            calls["item_id"], calls["repeat"], calls["ordering"], calls["detail"], strict=True)
        if isinstance(text, str)
    }
    path = out_dir / dataset / CRITERION / f"{config.name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for record in frame.to_dict("records"):
        key = (str(record["item_id"]), int(record["repeat"]), str(record["order"]))
        scored = record["verdict"] != "unscored"
        reasoning = record["reasoning"] if scored and isinstance(record["reasoning"], str) else ""
        extra = detail.get(key)
        if scored and extra and config.claim_split is not None:
            # The summary sentence, then every claim with its p_yes (the reasoning's list of
            # unsupported claims would only repeat the detail lines).
            reasoning = f"{reasoning.split(';')[0].rstrip('.')}.\n{extra}"
        lines.append(json.dumps({
            "id": key[0], "verdict": record["verdict"] if scored else "",
            "repeat": key[1], "order": key[2], "reasoning": reasoning,
        }, ensure_ascii=False))
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def main(argv: list[str] | None = None) -> int:
    """Record, export and print the summary (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-path", required=True, type=Path, help="the GGUF file")
    parser.add_argument("--db", type=Path, default=Path("/tmp/calibrate-demo-record.duckdb"),
                        help="scratch database (reused, so a stopped recording resumes)")
    parser.add_argument("--rows", type=int, default=200, help="labelled rows to judge")
    parser.add_argument("--production-rows", type=int, default=600,
                        help="production-week rows the better judge covers")
    parser.add_argument("--add-rows", type=int, default=0,
                        help="labelled rows to add to --rows, drawn (seed + 1) from the rest")
    parser.add_argument("--add-production-rows", type=int, default=0,
                        help="production-week rows to add, drawn (seed + 1) from the rest")
    parser.add_argument("--seed", type=int, default=2026, help="seed of the row subsets")
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp CPU threads")
    parser.add_argument("--judges", default=f"{ONESHOT},{CLAIMSPLIT}",
                        help="demo judge names to run on the labelled rows")
    parser.add_argument("--better", default=None,
                        help="skip the kappa comparison and use this judge on the production week")
    parser.add_argument("--out", type=Path, default=DATA_DIR / VERDICTS_DIR,
                        help="where the verdict files go")
    parser.add_argument("--no-export", action="store_true", help="measure only; write no files")
    parser.add_argument("--skip-production", action="store_true")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    digest = file_sha256(args.model_path)
    if digest != MODEL_SHA256:
        _log(f"note: {args.model_path} has sha256 {digest}, not the file the shipped verdicts "
             f"were recorded with ({MODEL_SHA256})")
    settings = Settings(local_model_path=args.model_path, local_threads=args.threads)
    configs = demo_judges()
    names = [n.strip() for n in args.judges.split(",") if n.strip()]
    unknown = [n for n in names if n not in configs]
    if unknown:
        raise CalibrateError(f"no demo judge {unknown[0]!r} (demo judges: {', '.join(configs)})")
    workspace = scratch_workspace(args.db)
    store = workspace.labels
    labelled = set(store.label_counts(LABELLED_DATASET, CRITERION))
    rows = grown_ids(store, LABELLED_DATASET, args.rows, args.add_rows, seed=args.seed,
                     only=labelled)
    summary: dict[str, Any] = {
        "model_path": str(args.model_path), "model_sha256": digest, "threads": args.threads,
        "seed": args.seed, "labelled_rows": len(rows), "runs": [],
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    runs: list[RunSummary] = []
    for name in names:
        runs.append(judge(workspace, configs[name], LABELLED_DATASET, rows, settings))
    scores = {n: headline(workspace, configs[n]) for n in names}
    for name, numbers in scores.items():
        _log(f"{name}: kappa {numbers['kappa']}, FPR {numbers['fpr']}")
    better = args.better or max(names, key=lambda n: scores[n]["kappa"]["estimate"] or -1.0)
    summary["better"] = better
    production: list[str] = []
    if not args.skip_production:
        production = grown_ids(store, PRODUCTION_DATASET, args.production_rows,
                               args.add_production_rows, seed=args.seed)
        runs.append(judge(workspace, configs[better], PRODUCTION_DATASET, production, settings))
        scores[better] = headline(workspace, configs[better], target=PRODUCTION_DATASET)
    summary["production_rows"] = len(production)
    summary["headline"] = scores
    summary["configs"] = {n: configs[n].config_id for n in names}
    summary["runs"] = [
        {k: r.to_dict()[k] for k in ("config_name", "config_id", "dataset", "planned", "cached",
                                     "scored", "unscored", "failed", "wall_seconds",
                                     "input_tokens", "output_tokens", "verdicts",
                                     "unscored_reasons")}
        for r in runs
    ]
    if not args.no_export:
        written = [export(workspace, configs[n], LABELLED_DATASET, args.out) for n in names]
        if production:
            written.append(export(workspace, configs[better], PRODUCTION_DATASET, args.out))
        summary["files"] = [str(p) for p in written]
    summary["judge_calls"] = workspace.judges.calls_frame(
        columns=["config_id", "status"]).groupby(["config_id", "status"]).size().to_dict()
    summary["judge_calls"] = {f"{k[0]}/{k[1]}": int(v) for k, v in summary["judge_calls"].items()}
    summary["wall_seconds"] = round(time.perf_counter() - started, 1)
    summary["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    workspace.close()
    print(json.dumps(summary, indent=2, default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
