"""Read-only facts about judge runs, for the Data page counts and the labelling queue orders.

The judge engine keeps its tables (migration set ``judges``) in the same database file; they may
not exist yet. Everything here first looks the tables up in ``information_schema`` and returns
"nothing" when they are missing, so the app works on a database no judge has touched. Nothing
here is ever shown to an annotator: it only orders their queue (the labelling page stays blind).
"""

from __future__ import annotations

from dataclasses import dataclass

from labels import LabelStore

RUNS_TABLE = "judge_runs"
# Where a per-item verdict may live, in order of preference.
VERDICT_TABLES = ("judge_verdicts", "verdicts", "judge_calls")


@dataclass(frozen=True)
class _VerdictSource:
    """How to select (dataset, item_id, verdict) rows from the judge tables."""

    select: str  # a SELECT yielding dataset, item_id, verdict, seq (later = newer)


def _columns(store: LabelStore) -> dict[str, set[str]]:
    with store.db.cursor() as cur:
        rows = cur.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'main' AND (table_name = ? OR list_contains(?, table_name))",
            [RUNS_TABLE, list(VERDICT_TABLES)],
        ).fetchall()
    out: dict[str, set[str]] = {}
    for table, column in rows:
        out.setdefault(table, set()).add(column)
    return out


def _verdict_source(store: LabelStore) -> _VerdictSource | None:
    columns = _columns(store)
    runs = columns.get(RUNS_TABLE, set())
    for table in VERDICT_TABLES:
        have = columns.get(table, set())
        if not {"item_id", "verdict"} <= have:
            continue
        if "dataset" in have:
            return _VerdictSource(
                f"SELECT dataset, item_id, verdict, rowid AS seq FROM {table}"
            )
        if "run_id" in have and {"run_id", "dataset"} <= runs:
            return _VerdictSource(
                f"SELECT r.dataset, v.item_id, v.verdict, v.rowid AS seq FROM {table} v "
                f"JOIN {RUNS_TABLE} r USING (run_id)"
            )
    return None


def judge_run_counts(store: LabelStore) -> dict[str, int]:
    """Dataset name → number of judge runs on it (empty when no judge has ever run)."""
    runs = _columns(store).get(RUNS_TABLE, set())
    if "dataset" not in runs:
        return {}
    with store.db.cursor() as cur:
        rows = cur.execute(
            f"SELECT dataset, count(*) FROM {RUNS_TABLE} GROUP BY dataset"
        ).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


def fingerprint(store: LabelStore, dataset: str) -> str:
    """Changes whenever the dataset's judge verdicts change (cheap: one aggregate)."""
    source = _verdict_source(store)
    if source is None:
        return "none"
    with store.db.cursor() as cur:
        row = cur.execute(
            f"SELECT count(*), max(seq) FROM ({source.select}) WHERE dataset = ?", [dataset]
        ).fetchall()
    return f"{row[0][0]}:{row[0][1]}"


def latest_verdicts(store: LabelStore, dataset: str) -> dict[str, str]:
    """Item id → the judge's latest non-empty verdict on it (empty when none)."""
    source = _verdict_source(store)
    if source is None:
        return {}
    with store.db.cursor() as cur:
        rows = cur.execute(
            f"SELECT item_id, arg_max(verdict, seq) FROM ({source.select}) "
            "WHERE dataset = ? AND verdict IS NOT NULL GROUP BY item_id",
            [dataset],
        ).fetchall()
    return {str(r[0]): str(r[1]) for r in rows}


def flips(store: LabelStore, dataset: str) -> frozenset[str] | None:
    """Items whose judge verdict differs between runs; None when no judge verdict exists."""
    source = _verdict_source(store)
    if source is None:
        return None
    with store.db.cursor() as cur:
        rows = cur.execute(
            f"SELECT item_id, count(DISTINCT verdict) FROM ({source.select}) "
            "WHERE dataset = ? AND verdict IS NOT NULL GROUP BY item_id",
            [dataset],
        ).fetchall()
    if not rows:
        return None
    return frozenset(str(r[0]) for r in rows if r[1] > 1)


def uncertainty(store: LabelStore, dataset: str) -> dict[str, float] | None:
    """Item id → the judge's uncertainty in [0, 1] for the active queue order.

    Twice the share of the item's verdicts (over runs, repeats and orders) that differ from its
    most common verdict (0 = always the same, 1 = an even split), and 1 for an item with no
    usable verdict. None when no judge verdict exists.
    """
    source = _verdict_source(store)
    if source is None:
        return None
    with store.db.cursor() as cur:
        rows = cur.execute(
            f"SELECT item_id, count(verdict), max(n) FROM (SELECT item_id, verdict, "
            f"count(*) OVER (PARTITION BY item_id, verdict) AS n FROM ({source.select}) "
            "WHERE dataset = ?) GROUP BY item_id",
            [dataset],
        ).fetchall()
    if not rows:
        return None
    return {
        str(item): (1.0 if not total else min(1.0, 2.0 * (1.0 - (top or 0) / total)))
        for item, total, top in rows
    }


def latest_config(store: LabelStore, dataset: str) -> str | None:
    """The judge config of the dataset's latest run (what a queue order is based on)."""
    runs = _columns(store).get(RUNS_TABLE, set())
    if not {"dataset", "config_id", "started_at"} <= runs:
        return None
    with store.db.cursor() as cur:
        row = cur.execute(
            f"SELECT config_id FROM {RUNS_TABLE} WHERE dataset = ? "
            "ORDER BY started_at DESC LIMIT 1",
            [dataset],
        ).fetchone()
    return None if row is None else str(row[0])
