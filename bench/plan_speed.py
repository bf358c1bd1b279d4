"""Planning a large judge run: plan + cache check of 1,000,000 calls, wall time and peak RSS.

A dataset of ``--items`` rows (default 250,000; generated in one ``INSERT … SELECT``) is planned
with the built-in ``faithfulness-oneshot`` judge, swap on and 2 repeats (1,000,000 calls):

1. ``cold``: nothing stored yet, every call is to be made;
2. ``warm``: the first half of the calls are stored as replies first (one SQL insert), so the
   cache check has 500,000 stored keys to match.

Each planning runs in a fresh child process (:func:`judges.run_plan.plan_run`, exactly what
``calibrate judge run --dry-run`` does), which prints its wall time and its peak RSS
(``VmHWM``, the whole process: interpreter, DuckDB and the plan). The bar: ≤ 10 s and
≤ 1 GB for the warm plan. Run:

    .venv/bin/python bench/plan_speed.py [--items 250000] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from synthetic_items import seed_items

from judges.config import load_builtin
from judges.run_plan import plan_run
from judges.workspace import Workspace

DATASET = "bench"
CONFIG = "faithfulness-oneshot"


def peak_rss_mb() -> float:
    """This process's peak RSS (``VmHWM``; ``ru_maxrss`` would carry the forking parent's)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(db: str, repeats: int, store_half: bool) -> None:
    """Plan once (in this fresh process) and print one JSON line of figures."""
    workspace = Workspace.open(db)
    config = load_builtin(CONFIG)
    judges = workspace.judges
    if store_half:
        plan = plan_run(workspace, config, DATASET, repeats=repeats, swap=True,
                        judge_store=judges)
        keys = plan.calls.keys()  # (item_id, item_hash, repeat, ordering) columns
        half = keys.slice(0, keys.num_rows // 2)
        judges.save_config(config)
        with workspace.db.transaction() as cur:
            cur.register("stored_half", half)
            cur.execute(
                "INSERT INTO judge_calls (run_id, config_id, item_id, item_hash, repeat, ordering,"
                " status, reply, verdict) SELECT 'bench-run', ?, item_id, item_hash, repeat,"
                " ordering, 'scored', 'VERDICT: PASS', 'pass' FROM stored_half",
                [config.config_id],
            )
        del plan, keys, half
        workspace.close()
        return
    started = time.perf_counter()
    plan = plan_run(workspace, config, DATASET, repeats=repeats, swap=True,
                    judge_store=judges)
    elapsed = time.perf_counter() - started
    rss_mb = peak_rss_mb()
    print(json.dumps({
        "seconds": elapsed, "rss_mb": rss_mb, "planned": plan.planned, "cached": plan.cached,
        "to_make": len(plan.calls), "input_tokens": plan.estimate.input_tokens,
    }))
    workspace.close()


def run_child(db: Path, repeats: int, *, store_half: bool = False) -> dict[str, float]:
    command = [sys.executable, __file__, "--child", str(db), "--repeats", str(repeats)]
    if store_half:
        command.append("--store-half")
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1]) if out.strip() else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=250_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--store-half", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.repeats, args.store_half)
        return
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "plan.duckdb"
        seconds = seed_items(db, DATASET, args.items)
        calls = args.items * 2 * args.repeats
        print(f"dataset: {args.items:,} items seeded in {seconds:.1f} s; run: swap x "
              f"{args.repeats} repeats = {calls:,} calls; load average {os.getloadavg()[0]:.2f}")
        cold = run_child(db, args.repeats)
        print(f"cold plan  : {cold['seconds']:6.2f} s  peak RSS {cold['rss_mb']:7.0f} MB  "
              f"planned {cold['planned']:,}  cached {cold['cached']:,}  to make "
              f"{cold['to_make']:,}  ~{cold['input_tokens']:,} input tokens")
        run_child(db, args.repeats, store_half=True)
        warm = run_child(db, args.repeats)
        print(f"warm plan  : {warm['seconds']:6.2f} s  peak RSS {warm['rss_mb']:7.0f} MB  "
              f"planned {warm['planned']:,}  cached {warm['cached']:,}  to make "
              f"{warm['to_make']:,}  (bar: <= 10 s, <= 1024 MB)")
        print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
