"""The judge package's stores: the only modules of ``judges`` that hold SQL or talk to DuckDB.

``judge_store`` (judge configs, runs and calls; ``judge_schema`` its tables, ``judge_aggregates``
its per-row aggregation SQL, ``judge_keys`` its SQL over key tables handed in: run planning's
uncached calls), ``alignment_store`` (proposals, test-split use, adoptions, stress results) and
``batch_store`` (provider batch jobs). Each queries only its own tables (its ``TABLES``);
:class:`judges.workspace.Workspace` hands them out.
"""
