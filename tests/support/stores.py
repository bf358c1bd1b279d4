"""Label stores and workspaces on real DuckDB files for fixtures: opened, and always closed."""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from repo_paths import TESTS

from judges.workspace import Workspace
from labels import LabelStore, open_store

RELEASE = TESTS / "data" / "releases" / "a39e63f.duckdb.gz"


def release_file(tmp_path: Path) -> Path:
    """The database file written by the release at commit a39e63f (gzip -9 of the file).

    Made with that commit's code (``git worktree add /tmp/old a39e63f``, then with
    ``sys.path[0] = "/tmp/old"``): ``open_store(path)``, ``import_rows`` of six rows r0..r5 into
    dataset ``old``, labels by ``ann``: r0 pass, r1 fail then r1 unsure, and queue settings
    ``stratified`` seed 3 overlap 2 for ``faithfulness``.
    """
    path = tmp_path / "release.duckdb"
    with gzip.open(RELEASE, "rb") as src, path.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return path


@contextmanager
def opened_store(path: Path | str) -> Iterator[LabelStore]:
    """The label store on ``path`` (created and migrated if new), its file released afterwards."""
    store = open_store(str(path))
    try:
        yield store
    finally:
        store.db.close()


@contextmanager
def opened_workspace(path: Path | str) -> Iterator[Workspace]:
    """The workspace on ``path`` (created and migrated if new), its file released afterwards."""
    workspace = Workspace.open(path)
    try:
        yield workspace
    finally:
        workspace.close()
