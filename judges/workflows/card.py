"""The judge card and the exported files, once for ``calibrate card`` and the Export page.

:func:`preview` and :func:`export` are ``calibrate card export`` (``--preview`` and ``-o``);
:func:`for_report` is the card of a report the app already shows (the Export page, the
Calibration page's drift panel); :func:`verdicts_table` and :func:`table_bytes` are the Export
page's downloads. Reading a card file (:func:`load_card`, :func:`loads_card`) and showing one
(:func:`dumps_card`, :func:`card_counts`) are the library's, named here so a front end needs
only this module.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

from judges.outputs.card import (
    CardChoices,
    CardError,
    JudgeCard,
    build_card,
    card_counts,
    card_from_report,
    dumps_card,
    export_card,
    load_card,
    loads_card,
)
from judges.reporting import JudgeRef, calibration_report
from judges.verdicts import judge_verdicts
from labels.exporting import write_table

if TYPE_CHECKING:
    import pandas as pd

    from judges.reporting import JudgeReport
    from judges.workspace import Workspace


def preview(workspace: Workspace, dataset: str, judge: str,
            **choices: Unpack[CardChoices]) -> JudgeCard:
    """The card ``calibrate card export`` would write, built even where it would be refused.

    Its ``forced`` lists why it would be refused without ``--force``.
    """
    return build_card(workspace, dataset, judge, force=True, **choices)


def export(workspace: Workspace, dataset: str, judge: str, output: str | Path, *,
           force: bool = False, **choices: Unpack[CardChoices]) -> JudgeCard:
    """Calibrate ``judge`` on ``dataset`` and write its card to ``output`` (JSON or YAML).

    Raises:
        judges.outputs.card.CardRefusedError: the card would mislead and ``force`` is false.
    """
    return export_card(workspace, dataset, judge, output, force=force, **choices)


def for_report(workspace: Workspace, report: JudgeReport) -> JudgeCard:
    """The card of ``report`` (built even where an export would be refused: see ``forced``)."""
    return card_from_report(workspace, report, force=True)


def for_judge(workspace: Workspace, dataset: str, judge: JudgeRef) -> JudgeCard:
    """The card of ``judge`` calibrated on ``dataset`` with the report's defaults."""
    return card_from_report(workspace, calibration_report(workspace, dataset, judge),
                            force=True)


def verdicts_table(workspace: Workspace, dataset: str, config_id: str) -> pd.DataFrame:
    """Every logged call of judge config ``config_id`` on ``dataset`` (the verdicts export)."""
    return judge_verdicts(workspace, dataset, config_id)


def table_bytes(frame: pd.DataFrame, suffix: str) -> bytes:
    """``frame`` as the bytes of a ``.csv``, ``.parquet`` or ``.jsonl`` file.

    Written by :func:`labels.exporting.write_table`, which neutralises spreadsheet formulas
    in CSV cells.
    """
    with tempfile.TemporaryDirectory(prefix="calibrate-export-") as folder:
        path = write_table(frame, Path(folder) / f"export{suffix}")
        return Path(path).read_bytes()


__all__ = [
    "CardError",
    "JudgeCard",
    "card_counts",
    "dumps_card",
    "export",
    "for_judge",
    "for_report",
    "load_card",
    "loads_card",
    "preview",
    "table_bytes",
    "verdicts_table",
]
