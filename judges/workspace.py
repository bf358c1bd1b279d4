"""One database file, opened once, and the stores that each own their share of its tables.

A :class:`Workspace` is what the workflows (:mod:`judges.workflows`) and the front ends hold:
it opens the DuckDB file once and hands out each store on first use. Each store owns the
tables its ``TABLES`` names and its SQL names no other (``tests/test_store_tables.py`` reads
the SQL to hold that); a store that needs another's data is handed that store here, and no
store makes another:

========================  ===============================================================
``workspace.labels``      datasets, items, annotators, criteria, labels and their provenance,
                          skips, queue settings (:class:`labels.stores.label_store.LabelStore`)
``workspace.splits``      the dev/test splits of a dataset (:mod:`labels.stores.split_store`;
                          reads the labelled rows through ``labels``)
``workspace.team``        members, roles, assignments, sessions, the audit trail (lists the
                          labels through ``labels``)
``workspace.judges``      judge configs, runs and their logged calls (run planning reads the
                          items through ``labels`` and the stored replies through this)
``workspace.alignment``   proposals, test-split use, adoptions, stress results
``workspace.batches``     provider batch jobs (stores collected calls through ``judges``)
========================  ===============================================================
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from judges.stores.alignment_store import AlignStore
    from judges.stores.batch_store import BatchStore
    from judges.stores.judge_store import JudgeStore
    from labels.stores.db import Database
    from labels.stores.label_store import LabelStore
    from labels.stores.split_store import SplitStore
    from labels.stores.team_store import TeamStore


class Workspace:
    """The stores of one open database, each made on first use and kept.

    Args:
        db: an open :class:`~labels.stores.db.Database`. Each store applies its own migrations the
            first time it is handed out.
    """

    def __init__(self, db: Database) -> None:
        """Hold ``db``; no store is made until it is asked for."""
        self.db = db

    @classmethod
    def open(cls, path: str | Path, *, read_only: bool = False,
             lock_timeout: float = 0.0) -> Workspace:
        """Open (creating and migrating if needed) the DuckDB file ``path``.

        ``read_only`` opens it without the right to change it (see
        :class:`labels.stores.db.Database`).
        """
        from labels.stores.db import Database

        return cls(Database(str(path), lock_timeout=lock_timeout, read_only=read_only))

    @staticmethod
    def held_by_another_process(path: str | Path) -> bool:
        """True when another process (an app, a judge run) holds the database file ``path``."""
        from labels.stores.db import held_by_another_process

        return held_by_another_process(path)

    @classmethod
    def of(cls, store: LabelStore) -> Workspace:
        """The workspace over the database ``store`` already has open, sharing that store."""
        workspace = cls(store.db)
        workspace.__dict__["labels"] = store
        return workspace

    @cached_property
    def labels(self) -> LabelStore:
        """Datasets, items, annotators, criteria and human labels."""
        from labels.stores.label_store import LabelStore

        return LabelStore(self.db)

    @cached_property
    def splits(self) -> SplitStore:
        """The dev/test splits of each dataset and criterion."""
        from labels.stores.split_store import SplitStore

        return SplitStore(self.db, self.labels)

    @cached_property
    def team(self) -> TeamStore:
        """Members, roles, assignments, sessions and the audit trail."""
        from labels.stores.team_store import TeamStore

        return TeamStore(self.db, self.labels)

    @cached_property
    def judges(self) -> JudgeStore:
        """Judge configs, runs and every logged call."""
        from judges.stores.judge_store import JudgeStore

        return JudgeStore(self.db)

    @cached_property
    def alignment(self) -> AlignStore:
        """Alignment proposals, test-split use, adoptions and stress results."""
        from judges.stores.alignment_store import AlignStore

        return AlignStore(self.db)

    @cached_property
    def batches(self) -> BatchStore:
        """Provider batch jobs."""
        from judges.stores.batch_store import BatchStore

        return BatchStore(self.db, self.judges)

    def close(self) -> None:
        """Release the database file."""
        self.db.close()
