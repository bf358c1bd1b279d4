"""Import throughput: `import_rows` on a 100,000-row CSV against DuckDB's own read_csv.

All sides read the same file into a fresh DuckDB database in the same run, so the printed
ratios are meaningful on a shared, noisy machine even when the absolute rows/s are not. Run:

    .venv/bin/python bench/import_speed.py [--rows 100000] [--multiline]

Each side is timed twice: until its COMMIT returns, and until its database file is closed.
The second is the same work on every side: DuckDB's ``CREATE TABLE AS`` of 100,000 rows
(less than one row group) commits them to its write-ahead log and compresses and writes them
into the file at close, where the import's COMMIT into the keyed ``items`` table does that
inside. Printed beside it: DuckDB loading the file into calibrate's ``items`` table itself,
and DuckDB inserting the import's own prepared rows (no reading, checks or hashes: the
engine's floor for this table).

``--multiline``: answers and references of several lines (newlines, some CRLF, a tab), as
real answers are: their JSON escapes are written by Arrow, not row by row.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from labels import import_rows, open_store
from labels.importing import normalise
from labels.reading import read_table
from labels.stores.item_store import with_hashes


def write_csv(path: Path, rows: int, seed: int = 7, *, multiline: bool = False) -> None:
    """A realistic RAG export: id, question, answer, sources (JSON list), reference, segment.

    ``multiline``: each answer is three lines (every fourth with CRLF ends, a tab in one line).
    """
    rng = random.Random(seed)
    words = [
        "plan",
        "seats",
        "billing",
        "invoice",
        "SSO",
        "add-on",
        "retention",
        "export",
        "audit",
        "error",
        "limit",
        "API",
    ]
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "question", "answer", "sources", "reference", "segment", "doc_id"])
        for i in range(rows):
            q = " ".join(rng.choices(words, k=8)) + "?"
            a = " ".join(rng.choices(words, k=25)) + "."
            if multiline:
                end = "\r\n" if i % 4 == 0 else "\n"
                a = end.join([a, "- " + "\t".join(rng.choices(words, k=4)),
                              " ".join(rng.choices(words, k=6)) + "."])
            sources = [" ".join(rng.choices(words, k=40)) for _ in range(rng.randint(1, 3))]
            writer.writerow(
                [f"row-{i}", q, a, json.dumps(sources), a, rng.choice(words), f"doc-{i % 500}"]
            )


@dataclass
class Timing:
    """The fastest of several runs: until COMMIT returned, and until the file was closed."""

    committed: float = float("inf")
    closed: float = float("inf")

    def add(self, committed: float, closed: float) -> None:
        self.committed = min(self.committed, committed)
        self.closed = min(self.closed, closed)


def timed(db: Path, load: Callable[[duckdb.DuckDBPyConnection], object]) -> tuple[float, float]:
    """``load`` on a fresh DuckDB file: seconds until it returned, and until the file closed."""
    con = duckdb.connect(str(db))
    start = time.perf_counter()
    load(con)
    committed = time.perf_counter() - start
    con.close()
    return committed, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--multiline", action="store_true",
                        help="answers of several lines (newlines, CRLF, tabs)")
    args = parser.parse_args()
    ctas, into_items, floor, ours = Timing(), Timing(), Timing(), Timing()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rows.csv"
        write_csv(path, args.rows, multiline=args.multiline)
        size_mb = path.stat().st_size / 1e6
        prepared = with_hashes(normalise(read_table(path), {})[0])

        def fresh(name: str) -> Path:
            return Path(tmp) / f"{name}-{time.monotonic_ns()}.duckdb"

        def empty_store() -> Path:
            db = fresh("store")
            open_store(str(db)).db.close()  # the schema, migrated, outside the timing
            return db

        for _ in range(args.repeats):
            ctas.add(*timed(fresh("ctas"), lambda con: con.execute(
                f"CREATE TABLE t AS SELECT * FROM read_csv('{path}', all_varchar=true)")))
            into_items.add(*timed(empty_store(), lambda con: con.execute(
                "INSERT INTO items (dataset, item_id, position, question, answer, sources, "
                "reference, segment, document_id, metadata, content_hash) SELECT 'bench', id, "
                "row_number() OVER (), question, answer, sources, reference, segment, doc_id, "
                f"'{{}}', '' FROM read_csv('{path}', all_varchar=true)")))

            def insert_prepared(con: duckdb.DuckDBPyConnection) -> None:
                con.register("prepared", prepared)
                con.execute(
                    "INSERT INTO items (dataset, item_id, position, question, answer, answer_a, "
                    "answer_b, sources, reference, segment, document_id, metadata, "
                    "content_hash, item_hash) SELECT 'bench', id, row, question, answer, "
                    "answer_a, answer_b, sources, reference, segment, document_id, metadata, "
                    "content_hash, item_hash FROM prepared")

            floor.add(*timed(empty_store(), insert_prepared))
            db = empty_store()
            store = open_store(str(db))
            start = time.perf_counter()
            summary = import_rows(store, path, "bench")
            committed = time.perf_counter() - start
            store.db.close()
            ours.add(committed, time.perf_counter() - start)
            assert summary.added == args.rows
    shape = "multi-line answers" if args.multiline else "one-line answers"
    print(f"file: {args.rows:,} rows ({shape}), {size_mb:.1f} MB CSV (best of {args.repeats}); "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'':52s} to COMMIT  to a closed file")
    for name, timing in [
        ("duckdb: read_csv -> a new table (CREATE TABLE AS)", ctas),
        ("duckdb: read_csv -> INSERT into calibrate's items", into_items),
        ("duckdb: INSERT of the import's prepared rows", floor),
        ("calibrate import_rows", ours),
    ]:
        print(f"{name:52s} {timing.committed:7.2f} s  {timing.closed:7.2f} s "
              f"({args.rows / timing.closed:,.0f} rows/s)")
    print(f"ratio (duckdb CREATE TABLE AS / ours), to a closed file: "
          f"{ctas.closed / ours.closed:.2f}  (aim >= 0.5)")
    print(f"ratio to COMMIT: {ctas.committed / ours.committed:.2f} (the engine alone, "
          f"inserting the import's prepared rows: {ctas.committed / floor.committed:.2f}); "
          f"against read_csv into the items table: {into_items.closed / ours.closed:.2f}")


if __name__ == "__main__":
    main()
