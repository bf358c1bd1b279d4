"""The label package's stores: the only modules that hold SQL or talk to DuckDB.

``db`` (the connection, its lock and the private-file checks), ``migrations`` (the ledger every
store applies), ``schema`` (the label tables), and one store per share of the tables:
``label_store`` (datasets, items, criteria, labels; with ``item_store``, ``item_reads``,
``label_reads``, ``queue_store`` and ``history_store`` for its rows import, item and label
reads, queue and history SQL), ``split_store`` and ``team_store``. Each store queries only its
own tables (its ``TABLES``). Importing this package loads none of them (nor DuckDB).
"""
