"""The calibration report at scale: 1,000,000 items × 10 judge calls + 10,000 human labels.

The database is generated in SQL: ``--items`` rows, one judge config with ``--repeats`` repeats
in both orders (10 calls per item by default, 10,000,000 ``judge_calls`` rows, verdicts drawn
at 80 % pass with 5 % disagreement between calls) and ``--labels`` human labels on the first
rows. The report (:func:`judges.reporting.calibration_report`, what ``calibrate report``
prints) then runs in a fresh child process, which prints its wall time and peak RSS
(``VmHWM``). The bar: ≤ 10 s and ≤ 4 GB. Run:

    .venv/bin/python bench/report_scale.py [--items 1000000] [--labels 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from judges.config import load_builtin
from judges.stores.judge_store import JudgeStore
from labels import open_store
from labels.item_hashes import content_hashes
from labels.stores.item_store import fill_item_hashes

DATASET = "bench"
CONFIG = "faithfulness-oneshot"


def seed(db_path: Path, n_items: int, repeats: int, n_labels: int) -> float:
    """Items, their judge calls and the labels, in a few SQL statements; returns seconds."""
    started = time.perf_counter()
    store = open_store(str(db_path))
    store.create_dataset(DATASET, source_file="bench (generated)")
    config = load_builtin(CONFIG)
    judges = JudgeStore(store.db)
    judges.save_config(config)
    run_id = judges.create_run(config.config_id, DATASET, options={"bench": True},
                               planned=n_items * repeats * 2)
    with store.db.transaction() as cur:
        cur.execute(
            """
            INSERT INTO items (dataset, item_id, position, question, answer, sources, reference,
                               metadata, content_hash)
            SELECT ?, 'b' || i, i + 1, 'Question ' || i || '?', 'Answer ' || i || '.',
                   '[{"source_id":null,"text":"Passage ' || i || '."}]', NULL, '{}',
                   md5('bench' || i)
            FROM range(?) t(i)
            """,
            [DATASET, n_items],
        )
        fill_item_hashes(cur)  # the judge-cache hash the importer stores with each item
    ids: list[str] = []
    hashes: list[str] = []
    for batch in store.content_batches(DATASET, batch_rows=50_000):
        ids += batch.column("item_id").to_pylist()
        hashes += content_hashes(batch)
    import pyarrow as pa  # the bench only; the library keeps it lazy

    with store.db.transaction() as cur:
        cur.register("hashes", pa.table({"item_id": ids, "item_hash": hashes}))
        cur.execute(
            """
            INSERT INTO judge_calls (run_id, config_id, item_id, item_hash, repeat, ordering,
                                     status, reply, verdict, reasoning, input_tokens,
                                     output_tokens, latency_ms)
            SELECT $run, $config, h.item_id, h.item_hash, r.repeat, o.ordering, 'scored',
                   'Reasoning. VERDICT: ' || v.verdict, v.verdict, 'Reasoning.', 900, 120, 800
            FROM hashes h CROSS JOIN range($repeats) r(repeat)
                 CROSS JOIN (VALUES ('original'), ('swapped')) o(ordering)
                 CROSS JOIN LATERAL (SELECT CASE
                     WHEN hash(h.item_id) % 100 < 80 THEN
                         CASE WHEN hash(h.item_id || r.repeat || o.ordering) % 100 < 5
                              THEN 'fail' ELSE 'pass' END
                     ELSE 'fail' END AS verdict) v
            """,
            {"run": run_id, "config": config.config_id, "repeats": repeats},
        )
        cur.execute(
            """
            INSERT INTO labels (dataset, item_id, annotator, criterion, verdict, labelled_at,
                                origin)
            SELECT $dataset, 'b' || i, 'alice', 'faithfulness',
                   CASE WHEN hash('b' || i) % 100 < 78 THEN 'pass' ELSE 'fail' END,
                   now(), 'import'
            FROM range($labels) t(i)
            """,
            {"dataset": DATASET, "labels": n_labels},
        )
        cur.execute(
            "INSERT INTO label_provenance (label_id, selection) SELECT label_id, 'random' "
            "FROM labels"
        )
    judges.finish_run(run_id, "completed", {})
    store.db.close()
    return time.perf_counter() - started


def peak_rss_mb() -> float:
    """This process's peak RSS (``VmHWM``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(db: str) -> None:
    """One report in this fresh process; prints one JSON line."""
    from judges.reporting import calibration_report
    from judges.workspace import Workspace

    workspace = Workspace.open(db)
    started = time.perf_counter()
    report = calibration_report(workspace, DATASET, CONFIG)
    elapsed = time.perf_counter() - started
    print(json.dumps({"seconds": elapsed, "rss_mb": peak_rss_mb(),
                      "judged_items": len(report.judge_items.items)}))
    workspace.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5, help="per order (x2 orders)")
    parser.add_argument("--labels", type=int, default=10_000)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "report.duckdb"
        seconds = seed(db, args.items, args.repeats, args.labels)
        calls = args.items * args.repeats * 2
        print(f"database: {args.items:,} items, {calls:,} judge calls, {args.labels:,} labels "
              f"(seeded in {seconds:.0f} s); load average {os.getloadavg()[0]:.2f}")
        out = subprocess.run([sys.executable, __file__, "--child", str(db)], check=True,
                             capture_output=True, text=True).stdout
        result = json.loads(out.strip().splitlines()[-1])
        print(f"report     : {result['seconds']:6.2f} s  peak RSS {result['rss_mb']:7.0f} MB  "
              f"({result['judged_items']:,} judged items; bar: <= 10 s, <= 4096 MB)")
        print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
