"""The records the label store keeps: datasets, items, criteria and labels."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from labels.names import DEFAULT_CRITERION as DEFAULT_CRITERION  # re-exported: named from here

POINTWISE_VERDICTS = ("pass", "fail", "unsure")
PAIRWISE_VERDICTS = ("a", "b", "tie")
PAIRWISE_CRITERION = "preference"
"""The built-in criterion of pairwise (a / b / tie) datasets."""

Verdict = Literal["pass", "fail", "unsure", "a", "b", "tie"]
Kind = Literal["pointwise", "pairwise"]


class Source(BaseModel):
    """One retrieved passage given to the answerer, in the order it was given."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    source_id: str | None = None


class Item(BaseModel):
    """One row to grade: a question with its answer (or two answers) and the sources.

    ``item_id`` is the user's own id when the file had one, else a stable content hash
    (:func:`content_id`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    item_id: str
    question: str
    answer: str | None = None
    answer_a: str | None = None
    answer_b: str | None = None
    sources: tuple[Source, ...] = ()
    reference: str | None = None
    segment: str | None = None
    document_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def kind(self) -> Kind:
        """``pairwise`` when the row carries two answers, else ``pointwise``."""
        return "pairwise" if self.answer_a is not None or self.answer_b is not None else "pointwise"


class Dataset(BaseModel):
    """A named collection of items, with its counts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: Kind
    created_at: datetime
    source_file: str | None = None
    items: int = 0
    labels: int = 0
    annotators: int = 0


class Criterion(BaseModel):
    """What annotators judge (``faithfulness``, ``correctness``, ...) and how the app shows it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: Kind = "pointwise"
    guidelines: str = ""
    show_reference: bool = False
    failure_tags: tuple[str, ...] = ()


class Label(BaseModel):
    """One human verdict. Labels are append-only: an edit is a newer label."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label_id: int
    dataset: str
    item_id: str
    annotator: str
    criterion: str
    verdict: Verdict
    note: str = ""
    failure_tags: tuple[str, ...] = ()
    labelled_at: datetime
    seconds_spent: float | None = None
    origin: str = "app"


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sources_json(sources: tuple[Source, ...] | list[Source]) -> str:
    """The canonical JSON text of a source list, as stored and hashed."""
    return _canonical([{"text": s.text, "source_id": s.source_id} for s in sources])


ID_SEPARATOR = "\x1f"


def content_id(
    question: str,
    answer: str | None,
    answer_a: str | None,
    answer_b: str | None,
    sources_canonical: str,
    reference: str | None,
) -> str:
    """The stable id of a row that came without one: a hash of what is being graded.

    The same text gives the same id in every file format, so re-importing is idempotent.
    Mirrors the SQL expression used by the bulk importer (:mod:`labels.importing`).
    """
    parts = [
        question,
        answer or "",
        answer_a or "",
        answer_b or "",
        sources_canonical,
        reference or "",
    ]
    return "h" + hashlib.sha256(ID_SEPARATOR.join(parts).encode()).hexdigest()[:16]


# -- an annotator's own history ("My labels") --------------------------------------------

Status = Literal["labelled", "skipped"]
SKIPPED: Literal["skipped"] = "skipped"
"""The verdict filter that selects the rows skipped and not labelled since."""


@dataclass(frozen=True)
class OwnRow:
    """One row of an annotator's own history.

    Attributes:
        item_id: The row.
        status: ``labelled`` (it has a label of theirs) or ``skipped`` (skipped, no label yet).
        verdict: Their current verdict (None for a skipped row).
        failure_tags: The current label's failure tags.
        note: The current label's note.
        at: When the current label was saved, or when the row was last skipped (UTC).
        versions: How many labels they gave this row (an edit adds one; 0 when skipped).
        question: The row's question, so the list says which row it is.
    """

    item_id: str
    status: Status
    verdict: str | None
    failure_tags: tuple[str, ...]
    note: str
    at: datetime
    versions: int
    question: str


@dataclass(frozen=True)
class OwnHistory:
    """A page of an annotator's own history, newest first.

    Attributes:
        rows: The rows of this page.
        matching: How many rows match the search and filter (over all pages).
        labelled: How many rows the annotator labelled here (whatever the filter).
        skipped: How many rows they skipped and have not labelled since.
    """

    rows: tuple[OwnRow, ...]
    matching: int
    labelled: int
    skipped: int
