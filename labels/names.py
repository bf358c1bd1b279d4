"""Names offered before anything is read: row formats, the default criterion, selections.

This module imports nothing, so ``calibrate import --help`` can list the formats without
loading pyarrow; :mod:`labels.importing` and :mod:`labels.models` take them from here.
"""

from __future__ import annotations

ROW_FORMATS = ("csv", "jsonl", "json", "parquet", "ragas", "promptfoo", "inspect", "deepeval",
               "langfuse", "langsmith", "phoenix")
"""The formats ``calibrate import --format`` reads: file formats, and the tools whose files are
recognised without it (:mod:`labels.tool_formats`), named to insist on one."""

SELECTIONS = ("random", "by_verdict", "flips_first", "active", "file", "imported", "all", "unknown",
              "escalated")
"""How a label's row was chosen (the ``selection`` of ``label_provenance``; ``escalated``: a row
an acceptance rule abstained on, drawn from the escalated queue,
:data:`labels.stores.schema.M004_ESCALATED_SELECTION`). The engine keeps the same tuple as
:data:`judges.calibration.vocabulary.SELECTIONS` (the pure statistics may not import labels);
``tests/test_vocabulary.py`` holds the two together.
"""

DEFAULT_CRITERION = "faithfulness"
"""The criterion of pointwise datasets when none is named."""

__all__ = ["DEFAULT_CRITERION", "ROW_FORMATS", "SELECTIONS"]
