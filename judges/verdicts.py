"""Judge verdicts as tables: query them for calibration, import external ones, export them.

:func:`judge_verdicts` is the contract with the calibration report. It returns one row per
(item, repeat, order) of one judge config on one dataset:

=================  ==========================================================================
column             meaning
=================  ==========================================================================
``item_id``        the dataset's item id (join key with the human labels)
``repeat``         0-based sample index (int); repeats are independent samples of one prompt
``order``          ``"original"`` or ``"swapped"`` (pairwise: A/B exchanged, verdict already
                   mapped back to the original A/B; pointwise: sources reversed/shuffled)
``verdict``        ``pass``/``fail``/``unsure`` (pointwise) or ``a``/``b``/``tie`` (pairwise),
                   or ``"unscored"`` when the judge gave no usable verdict
``reasoning``      the judge's reasoning text (``None`` when unscored)
``unscored_reason`` ``None`` for a verdict, else a key of
                   :data:`judges.parsing.UNSCORED_REASONS` (``empty_reply``, ``refusal``,
                   ``truncated``, ``no_verdict``, ``invalid_json``, ``off_list``, ...) or
                   ``failed:<kind>`` when every attempt of the call failed (``failed:timeout``)
``run_id``         the run that made the call (a cached call keeps its original run)
``config_id``      the judge config id (``b2:…``, or ``ext:…`` for imported verdicts)
=================  ==========================================================================

Rows are ordered by the dataset's item order, then repeat, then order (original first). Items
the judge has not seen yet have no row. Unscored rows are never dropped: count them and
exclude them from agreement statistics (``judges.calibration.normalize_verdicts`` maps
``"unscored"`` to ``UNSCORED``). For a key with several stored calls (a failed call retried
later), the latest reply wins; a key with only failed calls is one ``failed:<kind>`` row.

The judge is named by config id, or by name: a name resolves to the revision with the most
recent run on that dataset (imported external judges are found by name too).
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from judges.config import JudgeConfig
from judges.score_rules import ScoreRule, parse_score_rule, verdict_of
from judges.stores.judge_store import (
    CallRecord,
    JudgeStore,
    bound_key,
    external_config_id,
    item_hash,
    new_run_id,
)
from labels.cells import text_cell
from labels.errors import (
    CalibrateError,
    ConflictError,
    ImportFileError,
    NotFoundError,
    did_you_mean,
)
from labels.exporting import write_table
from labels.importing import row_ids
from labels.item_hashes import content_hashes
from labels.models import PAIRWISE_VERDICTS, POINTWISE_VERDICTS
from labels.reading import FileImportSummary, Table, read_table
from labels.record_paths import parse_pairs
from labels.tool_formats import TOOL_FORMATS, detect
from labels.validation import LookalikeIdError, LookalikeIds, check_name, shown
from labels.verdict_words import parse_optional_verdict

if TYPE_CHECKING:
    from judges.workspace import Workspace

VERDICT_COLUMNS = (
    "item_id", "repeat", "order", "verdict", "reasoning", "unscored_reason", "run_id",
    "config_id",
)
UNSCORED = "unscored"



def resolve_judge(
    judge_store: JudgeStore, judge: str, *, dataset: str | None = None
) -> str:
    """The config id ``judge`` names: an id as is, or a name's revision most recently run.

    Raises:
        NotFoundError: no config with that id or name (the message lists known names).
    """
    configs = judge_store.configs()
    if any(c.config_id == judge for c in configs):
        return judge
    named = [c for c in configs if c.name == judge]
    if not named:
        prefixed = [c for c in configs if c.config_id.startswith(judge) and len(judge) >= 7]
        if len(prefixed) == 1:
            return prefixed[0].config_id
        names = sorted({c.name for c in configs})
        known = ", ".join(names) or "none yet"
        raise NotFoundError(f"no judge named {judge!r} in this database"
                            f"{did_you_mean(judge, names)} (judges: {known})")
    runs = judge_store.runs(dataset=dataset, name=judge) or judge_store.runs(name=judge)
    if runs:
        return runs[0].config_id
    return named[0].config_id


def dataset_keys(workspace: Workspace, dataset: str, config_id: str | None = None) -> pa.Table:
    """Each item's ``item_id``, call key ``item_hash`` and ``position`` (0, 1, … in file order).

    The key is the content hash stored with the item at import (``items.item_hash``), read as
    Arrow (1 M ids never become Python strings); a dataset with rows written without one (by
    another tool) is hashed page by page instead. With ``config_id``, a row that has verdicts
    of its own under that config (imported ones) is keyed by them instead
    (:meth:`judges.stores.judge_store.JudgeStore.keys_for`).
    """
    store = workspace.labels
    keys = store.stored_hashes(dataset)
    if keys.column("item_hash").null_count:
        ids: list[str] = []
        hashes: list[str] = []
        for batch in store.content_batches(dataset):
            ids += [str(i) for i in batch.column("item_id").to_pylist()]
            hashes += content_hashes(batch)
        keys = pa.table({"item_id": pa.array(ids, pa.string()),
                         "item_hash": pa.array(hashes, pa.string())})
    keys = keys.append_column("position", pa.array(np.arange(keys.num_rows)))
    return keys if config_id is None else workspace.judges.keys_for(config_id, keys)


def dataset_hashes(workspace: Workspace, dataset: str,
                   config_id: str | None = None) -> pd.DataFrame:
    """:func:`dataset_keys` as a DataFrame."""
    return dataset_keys(workspace, dataset, config_id).to_pandas()


def judge_verdicts(
    workspace: Workspace, dataset: str, judge: str, *, item_ids: Collection[str] | None = None
) -> pd.DataFrame:
    """Verdicts of one judge on one dataset (see the module docstring for the columns).

    Args:
        workspace: the open database (its label and judge stores).
        dataset: the dataset name.
        judge: a judge name (latest run revision) or a config id.
        item_ids: only these items' calls (default: every item of the dataset).

    Returns:
        A DataFrame with columns :data:`VERDICT_COLUMNS`, one row per (item, repeat, order).
    """
    workspace.labels.dataset(dataset)
    judge_store = workspace.judges
    config_id = resolve_judge(judge_store, judge, dataset=dataset)
    keys = dataset_keys(workspace, dataset, config_id)
    if item_ids is not None:
        wanted = pa.array(list(item_ids), pa.string())
        keys = keys.filter(pc.is_in(keys.column("item_id"), value_set=wanted))
    frame = judge_store.latest_calls(config_id, keys.to_pandas())
    frame = frame.astype({"repeat": "int64"}) if len(frame) else frame
    return frame[list(VERDICT_COLUMNS)].reset_index(drop=True)


def calls_for_dataset(workspace: Workspace, dataset: str, judge: str) -> pd.DataFrame:
    """Every stored call of a judge on a dataset's items (all columns, for browsing)."""
    judge_store = workspace.judges
    config_id = resolve_judge(judge_store, judge, dataset=dataset)
    return judge_store.calls_on_items(config_id, dataset_hashes(workspace, dataset, config_id))


def swap_flips(frame: pd.DataFrame) -> pd.DataFrame:
    """Position-bias pairs: per (item, repeat) with both orders scored, did the verdict change?

    Returns:
        Columns ``item_id``, ``repeat``, ``original``, ``swapped``, ``flipped`` (bool). The flip
        rate is ``flipped.mean()``.
    """
    scored = frame[frame["verdict"] != UNSCORED]
    wide = scored.pivot_table(index=["item_id", "repeat"], columns="order", values="verdict",
                              aggfunc="first")
    if "original" not in wide or "swapped" not in wide:
        return pd.DataFrame(columns=["item_id", "repeat", "original", "swapped", "flipped"])
    wide = wide.dropna(subset=["original", "swapped"]).reset_index()
    wide["flipped"] = wide["original"] != wide["swapped"]
    return wide[["item_id", "repeat", "original", "swapped", "flipped"]].rename_axis(
        columns=None
    )


# -- import / export --------------------------------------------------------------------------


@dataclass(frozen=True)
class VerdictImportSummary(FileImportSummary):
    """What an import of external verdicts did."""

    judge: str
    config_id: str
    run_id: str | None
    unscored: int


MAX_REPEAT = 1000
"""The largest repeat index an imported verdict may carry (a judge config allows 50 repeats)."""


def _repeat_cell(value: Any) -> int | None:
    """A repeat index ``0 … MAX_REPEAT``; ``None`` for an empty cell; else ``ValueError``."""
    if value is None or value == "" or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, bool):
        raise ValueError(value)
    text = str(value).strip()
    if len(text) > 24:  # float() of a 5,000-digit string is slow and means nothing here
        raise ValueError(value)
    number = float(text)
    if not number.is_integer() or not 0 <= number <= MAX_REPEAT:
        raise ValueError(value)
    return int(number)


def _file_config(
    judge_store: JudgeStore, table: Table, path: str, judge: str, external_id: str,
    config: JudgeConfig | None = None,
) -> str:
    """The config id the file's verdicts belong to.

    ``config``'s id when one is given (a ``config_id`` column must then agree with it), else
    the column's id, else ``external_id``.
    """
    if "config_id" not in table.columns:
        return external_id if config is None else config.config_id
    found: dict[str, int] = {}
    for index in range(table.n_rows):
        value = table.record(index).get("config_id")
        text = "" if value is None else str(value).strip()
        if text and text not in found:
            found[text] = table.row_number(index)
            if len(found) > 1:
                first, first_row = next(iter(found.items()))
                raise ImportFileError(
                    f"{text!r} is a second judge config in one file (row {first_row} has "
                    f"{first!r}): import one judge's verdicts at a time",
                    path=path, row=table.row_number(index), column="config_id",
                )
    if config is not None:
        for file_id, row in found.items():
            if file_id != config.config_id:
                raise ImportFileError(
                    f"the verdicts come from judge config {file_id}, not from the config "
                    f"given ({config.config_id}): import them with the config that made them",
                    path=path, row=row, column="config_id",
                )
        return config.config_id
    if not found or external_id in found:
        return external_id
    file_id, row = next(iter(found.items()))
    known = {c.config_id: c for c in judge_store.configs()}
    if file_id not in known:
        raise ImportFileError(
            f"the verdicts come from judge config {file_id}, which is not in this database: "
            f"import them into the database that ran that judge, or drop the config_id column "
            f"to import them as an external judge named {judge!r}",
            path=path, row=row, column="config_id",
        )
    if known[file_id].name != judge:
        raise ImportFileError(
            f"the verdicts come from judge {known[file_id].name!r} ({file_id}), not {judge!r}: "
            f"import them with --judge {known[file_id].name}",
            path=path, row=row, column="config_id",
        )
    return file_id


VERDICT_FIELDS = ("id", "verdict", "score", "repeat", "order", "reasoning")
"""The fields of a verdicts file ``verdicts import --map FIELD=COLUMN`` can name."""


_ABSENT = "\x00absent"
"""The column of a field a tool's file does not have."""


class JudgeNotNamedError(CalibrateError):
    """Verdicts of a plain file need a judge name or config (a tool's file names its own)."""


def parse_verdict_mapping(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Turn ``["verdict=gradingResult.pass", "score=faithfulness"]`` into field → column.

    Raises:
        ImportFileError: a pair is not ``field=column`` or names an unknown field.
    """
    return parse_pairs(list(pairs), VERDICT_FIELDS)


def _score_cell(value: Any) -> float | None:
    """A score: a number, or text holding one; ``None`` (unscored) for empty or NaN."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(value)  # a pass/fail, not a score: map it as the verdict
    text = str(value).strip()
    if len(text) > 40:
        raise ValueError(value)
    number = float(text)
    if math.isinf(number):
        raise ValueError(value)
    return None if math.isnan(number) else number


def import_verdicts(
    workspace: Workspace, path: str | Path, *, dataset: str, judge: str | None = None,
    criterion: str | None = None, format: str | None = None, encoding: str = "utf-8",
    display_name: str | None = None, config: JudgeConfig | None = None,
    mapping: Mapping[str, str] | None = None, records: str | None = None,
    pass_if: str | None = None, unsure_if: str | None = None,
    source: Mapping[str, Any] | None = None, row_mapping: Mapping[str, str] | None = None,
    metric: str | None = None,
) -> VerdictImportSummary:
    """Import verdicts produced elsewhere as a judge run of an *external* judge named ``judge``.

    The file has columns ``id`` (or ``item_id``) and ``verdict``, and optionally ``repeat``
    (default 0), ``order`` (``original``/``swapped``, default original) and ``reasoning``.
    Verdicts: ``pass``/``fail``/``unsure`` (also ``1``/``0``/``true``/``false``) or
    ``a``/``b``/``tie`` for a pairwise dataset; an empty cell or ``unscored`` imports an
    unscored row. ``criterion`` is what the verdicts judge (default ``faithfulness``, or
    ``preference`` for a pairwise dataset). The judge's config row, the run and every verdict
    are written in one transaction, or nothing is; a re-import of the same file adds nothing,
    and a row that changes a stored verdict is a :class:`ConflictError`. Ids are normalised as
    for rows and labels (:func:`labels.validation.normalise_id`); ids that only look alike
    are refused naming both rows. ``display_name`` names the file in messages (default
    ``path``).

    A ``config_id`` column (``verdicts export`` writes one) names the judge config that made
    the verdicts: it must be ``judge``'s own (the external id of that name, or a config of that
    name stored in this database), and the verdicts are stored under it. Verdicts of another
    judge, or of a config this database does not know, are refused.

    ``config`` links the verdicts to the judge config that made them (``verdicts import
    --config FILE``): the config is stored with them, in the same transaction, and the
    verdicts are stored under its id, so a judge card carries its prompt and parameters.
    ``judge`` and ``criterion`` then default to the config's and must agree with it.

    ``mapping`` names the columns, or paths into nested records (:mod:`labels.record_paths`),
    of the fields :data:`VERDICT_FIELDS`; ``records`` the list of records inside a top-level
    JSON object. A file without an id column is matched to the dataset by content: each
    record gets the id its row got when it was imported without one (``row_mapping`` maps
    its row fields, as ``calibrate import --map`` did).

    Scores become verdicts by a rule the user chooses: with ``pass_if`` (``'>=0.5'``, see
    :mod:`judges.score_rules`) the ``score`` field is read instead of a verdict, a score that
    meets the rule passes and the rest fail; ``unsure_if`` marks a band unsure first. An
    empty or NaN score is an unscored row. The rules, with ``source`` (the tool and metric
    the verdicts came from, e.g. ``{"tool": "ragas", "metric": "faithfulness"}``), are
    stored in the external judge's config, and so are part of its id.

    A file another tool wrote (promptfoo, inspect, DeepEval, ragas, Langfuse, LangSmith,
    Phoenix: :mod:`labels.tool_formats`)
    is read by its shape, without a mapping: ``metric`` picks one of its metrics (needed when
    it has several), the judge is named ``<tool>-<metric>`` unless ``judge`` is given, and
    the tool and metric are stored with the external judge. ``format`` may name the tool.

    Raises:
        ImportFileError: a problem in the file, naming the file, row and column.
        ConflictError: a row would change a stored verdict.
        InvalidNameError: ``judge`` breaks :data:`labels.validation.NAME_RULE`.
        CalibrateError: ``config`` is for another judge name, criterion or kind of dataset.
    """
    name = display_name or str(path)
    store = workspace.labels
    info = store.dataset(dataset)
    if config is not None:
        _check_config_fits(config, judge=judge, criterion=criterion, kind=info.kind)
        judge, criterion = config.name, config.criterion
    mapping = dict(mapping or {})
    rules = _score_rules(mapping, pass_if, unsure_if, config)
    tool_name = format if format in TOOL_FORMATS else None
    table = read_table(path, format=None if tool_name else format, encoding=encoding,
                       display_name=name, records=records)
    words: dict[str, str] = {}
    by_content = tool_read = False
    tool = (detect(table, tool_name) if tool_name or not ({"verdict", "score"} & set(mapping))
            else None)
    if tool is not None and (tool_name or tool.metrics):
        chosen = tool.metric(metric, path=name)
        table = table.matching(chosen.where)
        if chosen.scores_only and not rules:
            raise CalibrateError(
                f"{name}: metric {chosen.name!r} of this {tool.tool} file holds scores: say "
                "which pass, e.g. --pass-if '>=0.5'"
            )
        taken = {k: v for k, v in chosen.mapping.items()
                 if k != ("verdict" if rules else "score")}
        # The rows' own ids, or none: then each verdict finds its row by content, as the
        # row import gave it its id (a stray ``id`` column of the tool's is not the row's).
        tool_id = {"id": tool.rows["id"]} if "id" in tool.rows else {}
        mapping = {**taken, **tool_id, **mapping}
        words = dict(chosen.words)
        row_mapping = row_mapping or tool.rows
        by_content, tool_read = "id" not in mapping, True
        source = {"tool": tool.tool, "metric": chosen.name, **chosen.source, **(source or {})}
        judge = judge or f"{tool.tool}-{chosen.name}"[:64]
    elif metric is not None:
        raise CalibrateError(f"{name}: --metric names a metric of a tool's file "
                             f"({', '.join(TOOL_FORMATS)}); this file is not one")
    if judge is None:
        raise JudgeNotNamedError("name the judge (--judge) or give its config (--config)")
    judge = check_name(judge, "judge")
    table = table.with_mapping(mapping, name=name)
    # A tool's file is read through its mapping only: DeepEval's own ``order`` (the test case's
    # position) is not our A/B order. (No column name holds a NUL: files with one are refused.)
    columns = {fld: mapping.get(fld, _ABSENT if tool_read else fld) for fld in VERDICT_FIELDS}
    if "id" not in mapping and "id" not in table.columns and "item_id" in table.columns:
        columns["id"] = "item_id"
    value_col = columns["score" if rules else "verdict"]
    content_ids: list[str] | None = None
    if by_content or columns["id"] not in table.columns:
        content_ids = _content_ids(table, name, row_mapping)
    if value_col not in table.columns:
        what = "score" if rules else "verdict"
        hint = "" if rules else " (or a score with --map score=COLUMN --pass-if '>=0.5')"
        raise ImportFileError(
            f"missing required column {what!r}{hint} (columns: {table.shown_paths()})",
            path=name,
        )
    if rules:
        source = {**(source or {}), "pass_if": str(rules[0])}
        source.setdefault("metric", value_col)
        if rules[1] is not None:
            source["unsure_if"] = str(rules[1])
    what_value = "score" if rules else "verdict"
    allowed = PAIRWISE_VERDICTS if info.kind == "pairwise" else POINTWISE_VERDICTS
    if rules and info.kind == "pairwise":
        raise CalibrateError(f"dataset {dataset!r} is pairwise: scores cannot become a/b/tie")
    items = {i.item_id: i for i in store.items(dataset)}
    judge_store = workspace.judges
    external_id = external_config_id(judge, info.kind, source)
    config_id = _file_config(judge_store, table, name, judge, external_id, config)
    stored = judge_store.stored_outcomes(config_id)
    run_id = new_run_id()
    calls: list[CallRecord] = []
    seen: dict[tuple[str, int, str], int] = {}
    ids = LookalikeIds()
    unchanged = unscored = 0
    for index in range(table.n_rows):
        row = table.record(index)
        where = table.where(index)
        def fail(message: str, column: str, row: int = table.row_number(index)) -> ImportFileError:
            return ImportFileError(message, path=name, row=row, column=column)

        id_col = columns["id"]
        if content_ids is not None:
            item_id = content_ids[index]
        else:
            raw_id = text_cell(table, index, id_col, row.get(id_col), required=True) or ""
            if not raw_id.strip():
                raise fail("is empty but is required", id_col)
            try:
                item_id = ids.add(raw_id, table.row_number(index))
            except LookalikeIdError as error:
                raise fail(str(error), id_col) from None
        item = items.get(item_id)
        if item is None:
            missing = (f"dataset {dataset!r} has no item with this row's content (id "
                       f"{item_id}): import the rows from the same file first"
                       if content_ids is not None else
                       f"dataset {dataset!r} has no item {shown(item_id, 24)}")
            raise fail(missing, id_col)
        raw = row.get(value_col)
        score: float | None = None
        if rules:
            try:
                score = _score_cell(raw)
            except (TypeError, ValueError, OverflowError):
                raise fail(f"{shown(raw)} is not a score (a number; empty for unscored)",
                           value_col) from None
            verdict = None if score is None else verdict_of(score, rules[0], rules[1])
        else:
            try:
                spelled = words.get(raw.strip(), raw) if isinstance(raw, str) else raw
                verdict = parse_optional_verdict(spelled, allowed)
            except ValueError:
                spellings = ", ".join(allowed) + (
                    ", 1, 0, true, false" if info.kind == "pointwise" else "")
                raise fail(
                    f"{shown(raw)} is not a verdict (use {spellings}, or leave it empty "
                    "for unscored)", value_col,
                ) from None
        try:
            repeat = _repeat_cell(row.get(columns["repeat"])) or 0
        except (TypeError, ValueError, OverflowError):
            raise fail(
                f"{shown(row.get(columns['repeat']))} is not a repeat index (a whole number "
                f"from 0 to {MAX_REPEAT})", columns["repeat"],
            ) from None
        order = str(row.get(columns["order"]) or "original").strip().lower()
        if order not in ("original", "swapped"):
            raise fail(f"{shown(row.get(columns['order']))} is not an order (original or "
                       "swapped)", columns["order"])
        reasoning = row.get(columns["reasoning"])
        reasoning = None if reasoning is None or reasoning == "" else str(reasoning)
        # The verdict belongs to this row, not to every row with the same content; the
        # config's own call on this content (a run of it) is what it is compared with too.
        content = item_hash(item)
        key = (bound_key(item_id, content), repeat, order)
        if key in seen:
            raise fail(
                f"duplicates row {seen[key] + 1} (same id {shown(item_id, 24)}, repeat {repeat}, "
                f"order {order})", columns["id"],
            )
        seen[key] = index
        status = "scored" if verdict is not None else "unscored"
        known = stored.get(key, stored.get((content, repeat, order)))
        if known is not None:
            if known == (status, verdict):
                unchanged += 1
                continue
            raise ConflictError(
                f"{name}: {where}: judge {judge!r} already has verdict "
                f"{known[1] or 'unscored'!r} for item {shown(item_id, 24)} (repeat {repeat}, "
                f"{order}); this file says {verdict or 'unscored'!r}. Nothing was imported. "
                "Import it under another --judge name."
            )
        unscored += status == "unscored"
        calls.append(CallRecord(
            run_id=run_id, config_id=config_id, item_id=item_id, item_hash=key[0],
            repeat=repeat, ordering=order, status=status,
            request={"imported_from": name, "row": table.row_number(index)},
            reply=json.dumps(row, default=str, ensure_ascii=False), verdict=verdict,
            reply_label=None if verdict is None else str(raw),
            reasoning=reasoning, unscored_reason=None if verdict else "external",
            detail=None if verdict else f"no {what_value} in the imported file",
        ))
    if calls:
        criterion = criterion or ("preference" if info.kind == "pairwise" else "faithfulness")
        judge_store.save_imported_run(
            judge=judge, kind=info.kind, criterion=criterion, dataset=dataset, run_id=run_id,
            config_id=config_id, config=config, source=source,
            register_external=config_id == external_id,
            options={"imported_from": name, "rows": table.n_rows}, calls=calls,
            summary={"planned": len(calls), "scored": len(calls) - unscored,
                     "unscored": unscored, "cached": 0, "failed": 0},
        )
    return VerdictImportSummary(
        path=name, dataset=dataset, judge=judge, config_id=config_id,
        run_id=run_id if calls else None, rows_read=table.n_rows, added=len(calls),
        unchanged=unchanged, unscored=unscored,
    )


def _score_rules(
    mapping: Mapping[str, str], pass_if: str | None, unsure_if: str | None,
    config: JudgeConfig | None,
) -> tuple[ScoreRule, ScoreRule | None] | None:
    """The ``--pass-if``/``--unsure-if`` rules, or ``None`` when the file holds verdicts."""
    if pass_if is None:
        if unsure_if is not None:
            raise CalibrateError("--unsure-if needs --pass-if: which scores pass?")
        if "score" in mapping:
            raise CalibrateError(
                f"--map score={mapping['score']}: scores need a rule that makes them verdicts, "
                "e.g. --pass-if '>=0.5'"
            )
        return None
    if config is not None:
        raise CalibrateError(
            "--pass-if makes an external judge of the scores (the rule is its config); it "
            "cannot be combined with --config"
        )
    if "verdict" in mapping:
        raise CalibrateError("--pass-if reads scores: map the score (--map score=COLUMN), "
                             "not a verdict")
    return parse_score_rule(pass_if), None if unsure_if is None else parse_score_rule(unsure_if)


def _content_ids(table: Table, name: str, row_mapping: Mapping[str, str] | None) -> list[str]:
    """Each record's item id from its content, for a file of verdicts without an id column."""
    try:
        return row_ids(table, row_mapping)
    except ImportFileError as error:
        if "missing required column" not in str(error):
            raise
        raise ImportFileError(
            "missing required column 'id' (or the rows themselves, so each verdict finds "
            f"its item by content) (columns: {table.shown_paths()})", path=name,
        ) from None


def _check_config_fits(config: JudgeConfig, *, judge: str | None, criterion: str | None,
                       kind: str) -> None:
    """Refuse a ``--config`` that names another judge, criterion or kind of dataset."""
    if judge is not None and judge != config.name:
        raise CalibrateError(
            f"the config is judge {config.name!r}, not {judge!r}: leave out --judge, or give "
            "the config of that judge"
        )
    if criterion is not None and criterion != config.criterion:
        raise CalibrateError(
            f"the config judges {config.criterion!r}, not {criterion!r}"
        )
    if config.kind != kind:
        raise CalibrateError(f"the config is a {config.kind} judge; the dataset is {kind}")


def export_frame(workspace: Workspace, dataset: str, judge: str) -> pd.DataFrame:
    """:func:`judge_verdicts` plus the items' ``segment`` and ``document_id`` (when set).

    What :func:`export_verdicts` writes, and what the app's comparison reads without a file.
    """
    frame = judge_verdicts(workspace, dataset, judge)
    # Segment and source document travel with the verdicts, so `calibrate compare` can break a
    # comparison down by segment and cluster it by document without the database.
    items = workspace.labels.items(dataset)
    for column in ("segment", "document_id"):
        values = {i.item_id: getattr(i, column) for i in items}
        if any(v is not None for v in values.values()):
            frame[column] = frame["item_id"].map(values)
    return frame


def export_verdicts(workspace: Workspace, dataset: str, judge: str, path: str | Path) -> Path:
    """Write :func:`export_frame` to CSV, Parquet or JSONL (by extension), atomically.

    Besides :data:`VERDICT_COLUMNS`, the file carries the items' ``segment`` and
    ``document_id`` when the dataset has them. The file re-imports with :func:`import_verdicts`
    (its ``item_id`` column is accepted as ``id``).
    """
    return write_table(export_frame(workspace, dataset, judge), path)


__all__ = [
    "UNSCORED", "VERDICT_COLUMNS", "VERDICT_FIELDS", "JudgeNotNamedError",
    "VerdictImportSummary",
    "calls_for_dataset", "dataset_hashes", "dataset_keys", "export_frame", "export_verdicts",
    "import_verdicts", "judge_verdicts", "parse_verdict_mapping", "resolve_judge", "swap_flips",
]
