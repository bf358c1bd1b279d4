"""The demo's hand-written content, loaded from data: the help centre and the answer templates.

The help centre is the shipped ``judges/demo/data/kb.jsonl`` (one page a line, its passages in
order); everything else (segments, failure modes, related pages, refusals, the question templates
with their reference answers and an answer per failure mode, how many rows of each the two
datasets get, and what the "fix" of the week after changes) is
``tools/demo/content.yaml``. Both are written once, by hand; :mod:`tools.demo.generate` turns
them into the shipped rows and labels.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from judges.demo.layout import DATA_DIR, KB_FILE

CONTENT_FILE = Path(__file__).resolve().parent / "content.yaml"


@dataclass(frozen=True)
class Page:
    """One help-centre article: an id, a title and a few short paragraphs (the passages)."""

    page_id: str
    title: str
    paragraphs: tuple[str, ...]


@dataclass(frozen=True)
class Spec:
    """A question template with its reference answer and answers for each failure mode.

    Variants with a note are ``(answer, note)`` pairs; the note is what an expert writes when
    failing that answer.
    """

    key: str
    segment: str
    doc: str
    questions: tuple[str, ...]
    reference: str
    topic: str
    needs: tuple[str, ...] = ()
    correct: tuple[str, ...] = ()
    unsupported: tuple[tuple[str, str], ...] = ()
    dropped: tuple[tuple[str, str], ...] = ()
    contradiction: tuple[tuple[str, str], ...] = ()
    also: tuple[str, ...] = ()
    near: tuple[str, ...] = ()


def load_pages(path: Path = DATA_DIR / KB_FILE) -> tuple[Page, ...]:
    """The help centre from ``kb.jsonl``."""
    pages = []
    for line in path.read_text(encoding="utf-8").splitlines():
        page = json.loads(line)
        pages.append(Page(page["page_id"], page["title"],
                          tuple(p["text"] for p in page["passages"])))
    return tuple(pages)


def _spec(data: dict[str, Any]) -> Spec:
    fields: dict[str, Any] = {}
    for name, value in data.items():
        if name in ("unsupported", "dropped", "contradiction"):
            fields[name] = tuple((v["answer"], v["note"]) for v in value)
        elif isinstance(value, list):
            fields[name] = tuple(value)
        else:
            fields[name] = value
    return Spec(**fields)


_CONTENT = yaml.safe_load(CONTENT_FILE.read_text(encoding="utf-8"))

PRODUCT: str = _CONTENT["product"]
SEGMENTS: tuple[str, ...] = tuple(_CONTENT["segments"])
FAILURE_MODES: tuple[str, ...] = tuple(_CONTENT["failure_modes"])
PAGES: tuple[Page, ...] = load_pages()
RELATED: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in _CONTENT["related"].items()}
"""Pages a retriever tends to return alongside (or instead of) a page: the distractor pools."""
REFUSALS: tuple[str, ...] = tuple(_CONTENT["refusals"])
SPECS: tuple[Spec, ...] = tuple(_spec(s) for s in _CONTENT["specs"])
LABELLED_ALLOCATION: dict[str, dict[str, int]] = _CONTENT["allocation"]["labelled"]
"""Rows per (segment, failure mode) of the labelled set (harder than production traffic)."""
PRODUCTION_ALLOCATION: dict[str, dict[str, int]] = _CONTENT["allocation"]["production"]
"""Rows per (segment, failure mode) of the production week."""
AFTER_FIX_ROWS: int = _CONTENT["after_fix"]["rows"]
"""Rows of the week after the fix: a seeded sample of the production week's questions."""
AFTER_FIX_CHANGES: dict[str, dict[str, float]] = _CONTENT["after_fix"]["changes"]
"""Failure kind before the fix -> {mode after the fix: probability}."""
STANDIN: dict[str, float] = _CONTENT["standin"]
"""The stand-in judge's fixed error rates and seed (``sensitivity``, ``specificity``, ``seed``)."""
