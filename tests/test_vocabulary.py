"""The words the label store and the engine both use are the same words.

Each is defined once on each side of a layer line the import contracts keep: the statistics
(:mod:`judges.calibration.vocabulary`) may import nothing of the project, and the label store
(:mod:`labels`) may not import the engine. Where both need a word, this test holds the two
definitions together, so a selection the store records is one the report knows and the other
way round.
"""

from __future__ import annotations

from typing import get_args

from judges.calibration import vocabulary
from labels import label_import, names, sampling


def test_the_store_records_the_selections_the_statistics_know_in_the_same_order() -> None:
    # Same order too: the statistics encode a selection as its index (an int8 column).
    assert names.SELECTIONS == vocabulary.SELECTIONS


def test_every_queue_order_records_a_known_selection() -> None:
    assert set(get_args(sampling.QueueOrder)) == set(sampling.QUEUE_ORDERS)
    assert set(sampling.ORDER_GUARANTEES) == set(sampling.QUEUE_ORDERS)
    recorded = {sampling.QueuePlan((), order).provenance("row")["selection"]  # type: ignore[arg-type]
                for order in sampling.QUEUE_ORDERS}
    assert recorded <= set(vocabulary.SELECTIONS)


def test_an_imported_label_file_names_a_known_selection() -> None:
    assert set(label_import.IMPORT_SELECTIONS) <= set(vocabulary.SELECTIONS)
