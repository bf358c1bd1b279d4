"""The offline demo: a fictional help centre's RAG rows, expert labels and recorded verdicts.

:func:`build_demo` loads the files shipped in ``judges/demo/data/`` into a DuckDB file through
the same functions a user's own import goes through (:func:`labels.importing.import_rows`,
:func:`labels.importing.import_labels`, and the judge engine's verdict import), so the demo
exercises the real paths. See ``judges/demo/data/README.md`` for what the data is and how it
was made (the authoring tools in the repository's ``tools/demo/``).
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from judges.config import load_config
from judges.demo.layout import (
    AFTER_FIX_DATASET,
    AFTER_FIX_FILE,
    ANNOTATORS,
    CRITERIA,
    DATA_DIR,
    JUDGES_DIR,
    LABELLED_DATASET,
    LABELLED_FILE,
    LABELS_DIR,
    MTBENCH_DATASET,
    MTBENCH_DIR,
    PRODUCTION_DATASET,
    PRODUCTION_FILE,
    VERDICTS_DIR,
)
from judges.verdicts import import_verdicts
from judges.workspace import Workspace
from labels.errors import CalibrateError, ConflictError, DatabaseOpenError
from labels.importing import OnChanged, import_labels, import_rows
from labels.splits import DERIVED_SUFFIX
from labels.stores.db import Database
from labels.stores.label_store import stored_dataset_names

BRAMBLEPOST_DATASETS = (LABELLED_DATASET, PRODUCTION_DATASET, AFTER_FIX_DATASET)
"""The first story's datasets (the fictional help centre); the second story is MT-Bench."""
DEMO_DATASETS = (*BRAMBLEPOST_DATASETS, MTBENCH_DATASET)
DATASET_FILES = ((LABELLED_DATASET, LABELLED_FILE), (PRODUCTION_DATASET, PRODUCTION_FILE),
                 (AFTER_FIX_DATASET, AFTER_FIX_FILE))
VERDICT_SUFFIXES = (".jsonl", ".csv", ".parquet")

__all__ = [
    "AFTER_FIX_DATASET", "ANNOTATORS", "BRAMBLEPOST_DATASETS", "CRITERIA", "DATA_DIR",
    "DEMO_DATASETS",
    "LABELLED_DATASET",
    "PRODUCTION_DATASET", "DemoSummary", "build_demo",
]


@dataclass(frozen=True)
class DemoSummary:
    """What :func:`build_demo` did.

    Attributes:
        db_path: the database file.
        rebuilt: True when the file was built from scratch, False when an existing demo
            database was kept and only completed.
        items: rows per dataset.
        labels: current labels per ``"criterion/annotator"``.
        verdict_files: verdict files imported.
        standin_files: of those, the scripted stand-in's (simulated, not a model's).
        notes: anything skipped, in plain words.
        seconds: wall time.
    """

    db_path: str
    rebuilt: bool
    items: dict[str, int]
    labels: dict[str, int]
    verdict_files: int = 0
    standin_files: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)
    seconds: float = 0.0

    def lines(self) -> list[str]:
        """A short human-readable report."""
        how = "built" if self.rebuilt else "kept and completed"
        out = [f"Demo database {self.db_path} {how} in {self.seconds:.1f} s:"]
        out += [f"  dataset {name}: {count} rows" for name, count in self.items.items()]
        out += [f"  labels {key}: {count}" for key, count in self.labels.items()]
        out.append(f"  recorded verdict files imported: {self.verdict_files}"
                   + (f" ({self.standin_files} of them a scripted stand-in's, simulated, not a "
                      "model's: verdicts/RECORDING.md)" if self.standin_files else ""))
        if self.items.get(MTBENCH_DATASET):
            out.append(f"  {MTBENCH_DATASET}: MT-Bench expert votes and GPT-4's verdicts "
                       "(Zheng et al. 2023, CC BY 4.0; judges/demo/data/mtbench/LICENSE.md)")
        out += [f"  note: {note}" for note in self.notes]
        return out


def build_demo(
    db_path: str | Path,
    *,
    refresh: bool = True,
    lock_timeout: float = 0.0,
    data_dir: str | Path = DATA_DIR,
) -> DemoSummary:
    """Create or refresh the demo database at ``db_path`` from the shipped data files.

    With ``refresh`` (the default) the demo is rebuilt from scratch in a temporary file that
    then replaces ``db_path``, so a failure leaves the old file as it was. An existing file is
    only replaced when it holds nothing but the demo datasets: the demo never wipes someone's
    own work. With ``refresh=False`` an existing database is kept (including labels made in
    the app) and only what is missing is added.

    Args:
        db_path: the DuckDB file.
        refresh: rebuild from scratch (True) or keep and complete an existing file (False).
        lock_timeout: seconds to wait while another process (e.g. the app) holds the file.
        data_dir: the folder with the data files (tests point it elsewhere).

    Raises:
        ConflictError: ``db_path`` holds other data, or is not a calibrate database.
        DatabaseLockedError: another process holds the file.
    """
    started = time.perf_counter()
    target = Path(db_path)
    data = Path(data_dir)
    notes: list[str] = []
    if refresh or not target.exists():
        if target.exists():
            _check_replaceable(target, lock_timeout)
        building = target.with_name(f".{target.name}.building-{os.getpid()}")
        _remove_database_files(building)
        try:
            workspace = Workspace.open(building)
            try:
                verdict_files = _load(workspace, data, keep=False, notes=notes)
                items, labels = _counts(workspace)
            finally:
                workspace.close()
            # A WAL left by a crashed process would be replayed onto the new file.
            _remove_wal(target)
            os.replace(building, target)
        finally:
            _remove_database_files(building)
        rebuilt = True
    else:
        workspace = Workspace.open(target, lock_timeout=lock_timeout)
        try:
            verdict_files = _load(workspace, data, keep=True, notes=notes)
            items, labels = _counts(workspace)
        finally:
            workspace.close()
        rebuilt = False
    return DemoSummary(
        db_path=str(target), rebuilt=rebuilt, items=items, labels=labels,
        verdict_files=verdict_files, notes=tuple(notes),
        standin_files=sum(judge in _standin_configs(data) for _, _, judge, _ in
                          _verdict_files(data)),
        seconds=time.perf_counter() - started,
    )


def _wal(path: Path) -> Path:
    return path.with_name(path.name + ".wal")


def _remove_wal(path: Path) -> None:
    _wal(path).unlink(missing_ok=True)


def _remove_database_files(path: Path) -> None:
    path.unlink(missing_ok=True)
    _remove_wal(path)


def _check_replaceable(path: Path, lock_timeout: float) -> None:
    """Refuse to replace a file that holds anything but the demo's own datasets."""
    advice = (
        "Give the demo its own file (calibrate --db demo.duckdb demo), or pass --keep to add "
        "the demo datasets to this database without replacing it."
    )
    try:
        db = Database(path, lock_timeout=lock_timeout)
    except DatabaseOpenError as error:
        raise ConflictError(f"{error}; refusing to replace it with the demo. {advice}") from None
    try:
        names = stored_dataset_names(db)
    finally:
        db.close()
    if names is None:
        raise ConflictError(
            f"{path} is a DuckDB database but not a calibrate one; refusing to replace "
            f"it with the demo. {advice}"
        )
    # Perturbed copies of the demo's rows (calibrate judge stress) are the demo's too.
    own = {*DEMO_DATASETS, *(d + DERIVED_SUFFIX for d in DEMO_DATASETS)}
    foreign = [n for n in names if n not in own]
    if foreign:
        more = f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""
        shown = ", ".join(foreign[:5]) + more
        raise ConflictError(
            f"{path} holds datasets that are not part of the demo ({shown}); refusing to "
            f"replace it. {advice}"
        )


def _label_files(data: Path) -> list[tuple[str, str, Path]]:
    """``(criterion, annotator, path)`` for every ``labels/<criterion>-<annotator>.csv``."""
    found = []
    for path in sorted((data / LABELS_DIR).glob("*.csv")):
        criterion, sep, annotator = path.stem.partition("-")
        if not sep or not annotator:
            raise CalibrateError(f"{path}: label files are named <criterion>-<annotator>.csv")
        found.append((criterion, annotator, path))
    return found


def _load(workspace: Workspace, data: Path, *, keep: bool, notes: list[str]) -> int:
    """Import rows, labels and any recorded verdicts; returns the verdict files imported."""
    store = workspace.labels
    on_changed: OnChanged = "skip" if keep else "error"
    for dataset, name in DATASET_FILES:
        summary = import_rows(store, data / name, dataset, on_changed=on_changed)
        if summary.changed:
            notes.append(
                f"{summary.changed} rows of {dataset} differ from the shipped file and were kept "
                "as stored (run without --keep to rebuild the demo)"
            )
    for criterion, annotator, path in _label_files(data):
        store.add_annotator(annotator)
        # Never stack the shipped labels on top of labels someone changed in the app.
        if keep and store.labelled_item_ids(LABELLED_DATASET, annotator, criterion):
            continue
        import_labels(store, path, LABELLED_DATASET, annotator=annotator, criterion=criterion)
    _load_mtbench(workspace, data, on_changed=on_changed)
    return _load_verdicts(workspace, data, keep=keep, notes=notes)


def _load_mtbench(workspace: Workspace, data: Path, *, on_changed: OnChanged) -> None:
    """The second story: MT-Bench's votes and GPT-4's verdicts, through the same imports."""
    source = data / MTBENCH_DIR
    if not (source / "votes.jsonl").is_file():
        return
    from judges.demo.mtbench import load_mtbench

    with tempfile.TemporaryDirectory(prefix="calibrate-mtbench-") as work:
        load_mtbench(workspace, source, work, dataset=MTBENCH_DATASET, on_changed=on_changed)


def _verdict_files(data: Path) -> list[tuple[str, str, str, Path]]:
    """``(dataset, criterion, judge, path)`` of ``verdicts/<dataset>/<criterion>/<judge>.*``."""
    root = data / VERDICTS_DIR
    if not root.is_dir():
        return []
    return [
        (path.parent.parent.name, path.parent.name, path.stem, path)
        for path in sorted(root.glob("*/*/*"))
        if path.suffix in VERDICT_SUFFIXES
    ]


def _standin_configs(data: Path) -> dict[str, Path]:
    """Judge name -> config file of the judges shipped with their config (the stand-in)."""
    return {path.stem: path for path in sorted((data / VERDICTS_DIR).glob("*.yaml"))}


def _load_verdicts(workspace: Workspace, data: Path, *, keep: bool, notes: list[str]) -> int:
    files = _verdict_files(data)
    if not files:
        return 0
    for dataset, criterion, judge, path in files:
        # The judge config that made the verdicts goes in with them (as `verdicts import
        # --config` does), so the Calibration page and a judge card show its prompt and the
        # app knows its provider: judges/<judge>.yaml for the recorded ones, the scripted
        # stand-in's beside its verdicts.
        found = [f for f in (data / JUDGES_DIR / f"{judge}.yaml",
                             data / VERDICTS_DIR / f"{judge}.yaml") if f.is_file()]
        config = load_config(found[0]) if found else None
        # A re-import of an unchanged file adds nothing, so --keep can run this every time.
        import_verdicts(workspace, path, dataset=dataset, judge=judge, criterion=criterion,
                        config=config)
    return len(files)


def _counts(workspace: Workspace) -> tuple[dict[str, int], dict[str, int]]:
    store = workspace.labels
    items = {name: store.count_items(name) for name in DEMO_DATASETS}
    labels: dict[str, int] = {}
    for criterion in CRITERIA:
        frame = store.current_labels(LABELLED_DATASET, criterion=criterion)
        for annotator, count in sorted(frame.groupby("annotator").size().items()):
            labels[f"{criterion}/{annotator}"] = int(count)
    if items.get(MTBENCH_DATASET):
        votes = store.current_labels(MTBENCH_DATASET, criterion="preference")
        labels[f"preference/{votes['annotator'].nunique()} MT-Bench experts"] = len(votes)
    return items, labels
