"""Each item's cache hash, computed once when it is imported and stored in ``items.item_hash``.

The judge cache keys a reply on a hash of what a judge sees of an item (question, answers,
reference, passages; not its id or metadata): ``"i"`` + blake2b-96 of the item's canonical JSON,
as :func:`judges.stores.judge_store.item_hash` computes it from an :class:`~labels.models.Item`.
Reports and
run planning read the stored column instead of hashing every item again; this module writes the
same digest from the stored columns, without building an ``Item``:

* :func:`judged_hashes` for stored rows of text that lack one (an older file, or a tool that
  wrote ``items`` directly): :func:`labels.stores.item_store.fill_item_hashes` page by page, and
  run planning; their sources JSON is parsed and written canonically first;
* the importer writes the same JSON by whole columns
(:func:`labels.stores.item_store.hash_columns`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from json.encoder import encode_basestring as _encode
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

JUDGED_FIELDS = ("question", "answer", "answer_a", "answer_b", "reference", "sources")
"""The item columns a judge sees (``sources`` as stored JSON), in the order the hash reads them."""


def _json_text(value: str | None) -> str:
    return "null" if value is None else _encode(value)


def canonical_sources(stored: str) -> str:
    r"""The stored sources JSON in the hashed form (sorted keys, compact, real unicode).

    Always parsed and written again: these are rows stored without a hash, by an older
    version or another tool, whose JSON may start like the importer's canonical text and still
    differ (``", "`` separators, ``\u00e9`` escapes). The importer hashes its own canonical
    text by whole columns (:func:`labels.stores.item_store.hash_columns`).
    """
    if stored == "[]":
        return stored
    passages = [{"source_id": p.get("source_id"), "text": p["text"]} for p in json.loads(stored)]
    return json.dumps(passages, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def judged_text(
    question: str, answer: str | None, answer_a: str | None, answer_b: str | None,
    reference: str | None, sources: str,
) -> str:
    """The canonical JSON that is hashed: sorted keys, compact separators, real unicode."""
    return (f'{{"answer":{_json_text(answer)},"answer_a":{_json_text(answer_a)},'
            f'"answer_b":{_json_text(answer_b)},"question":{_json_text(question)},'
            f'"reference":{_json_text(reference)},"sources":{canonical_sources(sources)}}}')


def judged_hashes(columns: Sequence[Sequence[Any]]) -> list[str]:
    """The cache hash of each row, given the :data:`JUDGED_FIELDS` columns in that order.

    Equal to :func:`judges.stores.judge_store.item_hash` of the stored item (tests check it on
    tricky text).
    """
    blake = hashlib.blake2b
    return ["i" + blake(judged_text(*values).encode(), digest_size=12).hexdigest()
            for values in zip(*columns, strict=True)]


def table_hashes(table: pa.Table | pa.RecordBatch) -> list[str]:
    """:func:`judged_hashes` of an Arrow table or batch holding the :data:`JUDGED_FIELDS`."""
    return judged_hashes([table.column(name).to_pylist() for name in JUDGED_FIELDS])


__all__ = ["JUDGED_FIELDS", "canonical_sources", "judged_hashes",
           "judged_text", "table_hashes"]
