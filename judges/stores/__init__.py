"""The judge package's stores: the only modules of ``judges`` that hold SQL or talk to DuckDB.

``judge_store`` (judge configs, runs and calls; ``judge_schema`` its tables, ``judge_aggregates``
its per-row aggregation SQL), ``plan_store`` (what a run still has to judge),
``alignment_store`` (proposals, test-split use, adoptions, stress results) and ``batch_store``
(provider batch jobs). :class:`judges.workspace.Workspace` hands them out.
"""
