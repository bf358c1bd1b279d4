"""A file's records as columns: :class:`Table`, what every reader of :mod:`labels.reading` returns.

Column names in file order and one value list per column (or the Arrow columns themselves), the
row each record came from, and the paths into nested records (``--map answer=response.text``)
read as columns of their own. Nothing here reads a file or knows what a column means.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from labels.errors import ImportFileError, closest_name
from labels.record_paths import (
    PathError,
    Step,
    is_path,
    leaf_paths,
    parse_path,
    resolve,
    shown_paths,
    split_column,
)
from labels.strict_json import strict_json_loads
from labels.tool_formats import text
from labels.validation import shown

if TYPE_CHECKING:
    import pyarrow as pa


__all__ = ["ArrowColumns", "Table"]


class ArrowColumns(Mapping[str, list[Any]]):
    """The columns of an Arrow table as value lists, each converted on first use.

    The importer's vectorised path reads the Arrow columns themselves; only the careful
    per-row path (and the callers that index cells) pays for Python lists.
    """

    def __init__(self, table: pa.Table, names: list[str]) -> None:
        """``names[i]`` is how column ``i`` of ``table`` is known (its header, stripped)."""
        self._table = table
        self._index = {name: i for i, name in enumerate(names)}
        self._lists: dict[str, list[Any]] = {}

    def __getitem__(self, name: str) -> list[Any]:
        """Column ``name``'s values (converted once)."""
        if name not in self._lists:
            self._lists[name] = self._table.column(self._index[name]).to_pylist()
        return self._lists[name]

    def __iter__(self) -> Iterator[str]:
        """The column names, in file order."""
        return iter(self._index)

    def __len__(self) -> int:
        """How many columns."""
        return len(self._index)

    def head(self, n: int) -> dict[str, list[Any]]:
        """The first ``n`` values of every column, converting only those."""
        part = self._table.slice(0, n)
        return {name: part.column(i).to_pylist() for name, i in self._index.items()}


@dataclass
class Table:
    """Records read from a file: column names in file order and one value list per column.

    ``data[column][i]`` is record ``i``'s value (``None`` where a JSON record lacks the key);
    ``lines[i]`` is where record ``i`` starts in the file when that is known (text formats read
    by the careful reader), used in error messages. ``arrow`` is the file as Arrow columns when
    a reader made them (CSV read by Arrow: every cell a string, never null), named as
    ``columns``.
    """

    path: str
    columns: list[str]
    data: Mapping[str, list[Any]]
    n_rows: int
    lines: list[int] | None = None
    arrow: pa.Table | None = None
    derived: dict[str, str] = field(default_factory=dict)
    """Columns read by a path (:meth:`with_paths`): path → the file column it starts from."""
    tool: str | None = None
    """The tool whose documented shape the reader recognised (``promptfoo``, ``inspect`` …)."""
    numbers: list[int] | None = None
    """Each record's row number in the file, when some records were left out (:meth:`take`)."""

    @classmethod
    def from_records(
        cls, path: str, records: list[dict[str, Any]], lines: list[int] | None = None
    ) -> Table:
        """Build a table from dict records (JSON, JSONL, Parquet)."""
        names: dict[str, None] = {}
        for record in records:
            names.update(dict.fromkeys(record))
        data = {name: [r.get(name) for r in records] for name in names}
        return cls(path, list(names), data, len(records), lines)

    def error(self, message: str, index: int, column: str | None = None) -> ImportFileError:
        """An :class:`ImportFileError` on record ``index`` (0-based): file, row and column."""
        return ImportFileError(message, path=self.path, row=self.row_number(index), column=column)

    def row_number(self, index: int) -> int:
        """Record ``index``'s row number in the file (1-based), as messages name it."""
        return self.numbers[index] if self.numbers is not None else index + 1

    def take(self, indices: list[int]) -> Table:
        """The records at ``indices`` only, each keeping its row number in the file.

        For files that hold more than one kind of record (a tracing tool's spans and their
        children, a scores file's human and judge scores): a message about a kept record
        still names the row a user finds in the file.
        """
        data = {name: [values[i] for i in indices] for name, values in self.data.items()}
        lines = [self.lines[i] for i in indices] if self.lines is not None else None
        return replace(self, data=data, n_rows=len(indices), lines=lines, arrow=None,
                       numbers=[self.row_number(i) for i in indices])

    def head(self, n: int) -> Table:
        """The first ``n`` records (all of them when fewer), as value lists without Arrow.

        Slicing ``data`` would convert every Arrow column whole before cutting it; a preview
        of a large CSV on every rerun must convert only the rows it shows.
        """
        count = min(n, self.n_rows)
        if isinstance(self.data, ArrowColumns):
            data = self.data.head(count)
        else:
            data = {name: values[:count] for name, values in self.data.items()}
        lines = self.lines[:count] if self.lines is not None else None
        return Table(self.path, self.columns, data, count, lines)

    def record(self, index: int) -> dict[str, Any]:
        """Record ``index`` as a dict."""
        return {name: values[index] for name, values in self.data.items()}

    def shown_columns(self, limit: int = 20) -> str:
        """The column names for a message, each cut short.

        A header line is file content too: a ``.env`` read as CSV has a key in its header.
        """
        names = [_shown_column(name) for name in self.columns[:limit]]
        more = f", … ({len(self.columns) - limit} more)" if len(self.columns) > limit else ""
        return ", ".join(names) + more

    def shown_paths(self) -> str:
        """What a ``--map`` could name, for a message: the first record's leaf paths.

        A flat file's columns; a record holding objects is listed down to its leaves
        (``response.output``, ``contexts[*].text``), so a user sees the paths to map.
        """
        if not self.n_rows or isinstance(self.data, ArrowColumns):
            return self.shown_columns()
        first = {name: self.data[name][0] for name in self.columns if name not in self.derived}
        if not any(isinstance(v, (dict, list)) for v in first.values()):
            return self.shown_columns()
        return shown_paths([_shown_column(p) for p in leaf_paths(first)])

    def closest(self, name: str) -> str | None:
        """The column or path closest to a mistyped ``name`` (:func:`labels.errors.closest_name`).

        The candidates are what :meth:`shown_paths` lists (columns, and a nested record's
        leaf paths); a name a message would cut short (long, or holding ``=``: a ``.env``
        line read as a header) is never suggested, so no suggestion shows more of the file
        than the column list does.
        """
        known = [c for c in self.columns if c not in self.derived]
        if self.n_rows and not isinstance(self.data, ArrowColumns):
            first = {c: self.data[c][0] for c in known}
            if any(isinstance(v, (dict, list)) for v in first.values()):
                known += leaf_paths(first)
        return closest_name(name, [k for k in known if _shown_column(k) == k])

    def did_you_mean(self, name: str) -> str:
        """``"; did you mean 'x'?"`` for :meth:`closest`, else ``""``."""
        close = self.closest(name)
        return "" if close is None else f"; did you mean {close!r}?"

    def with_mapping(self, mapping: Mapping[str, str], *, name: str) -> Table:
        """This table with every ``--map`` target present: a column, or a path read as one.

        Args:
            mapping: Field → the column or path (``response.output.text``) that feeds it.
            name: The file as messages name it.

        Raises:
            ImportFileError: a target that is neither a column nor a path (listing the paths
                the file has), or a path that does not fit a record (:meth:`with_paths`).
        """
        table = self
        for fld, column in mapping.items():
            if column in table.columns:
                continue
            if not is_path(column):
                raise ImportFileError(
                    f"--map {fld}={column}: the file has no column {shown(column)}"
                    f"{table.did_you_mean(column)} (columns: {table.shown_paths()})", path=name,
                )
            table = table.with_paths([column], option=f"--map {fld}=")
        return table

    def with_paths(self, paths: Iterable[str], *, option: str = "--map ") -> Table:
        """This table plus a column per path in ``paths`` that is not a column already.

        Each new column is named by its path and holds what the path reaches in each record
        (:func:`labels.record_paths.resolve`); a cell of text that holds JSON (a CSV column
        of objects) is read as JSON on the way down. A path the file does not have at all is
        refused listing the paths it does have; a path that does not fit one record's shape
        is refused naming that row. ``option`` starts the messages (``--map answer=``).

        Raises:
            ImportFileError: naming the file, and the row and path where one record fails.
        """
        wanted = [p for p in dict.fromkeys(paths) if p not in self.columns]
        if not wanted:
            return self
        data = dict(self.data.items()) if not isinstance(self.data, ArrowColumns) else {
            name: self.data[name] for name in self.data}
        derived = dict(self.derived)
        for path in wanted:
            try:
                split = split_column(path, data) if parse_path(path)[0].key not in data else None
                steps = (Step(key=split[0]), *parse_path(split[1])) if split else parse_path(path)
            except ImportFileError as error:
                raise ImportFileError(f"{option}{shown(path)}: {error}", path=self.path) from None
            root = steps[0].key
            if root is None or root not in data:
                raise ImportFileError(
                    f"{option}{_shown_column(path)}: no column or path {shown(root or path)} "
                    f"in the file{self.did_you_mean(path)} (paths: {self.shown_paths()})",
                    path=self.path,
                )
            values: list[Any] = []
            for index, cell in enumerate(data[root]):
                cell = _json_cell(cell) if len(steps) > 1 else cell
                try:
                    values.append(resolve(cell, steps[1:]))
                except PathError as error:
                    raise self.error(f"the path does not fit: {error}", index, path) from None
            if all(v is None for v in values):
                raise ImportFileError(
                    f"{option}{_shown_column(path)}: no record has this path "
                    f"(paths: {self.shown_paths()})", path=self.path,
                )
            data[path] = values
            derived[path] = root
        return replace(self, columns=[*self.columns, *wanted], data=data, arrow=None,
                       derived=derived)

    def matching(self, where: Mapping[str, tuple[str, ...]]) -> Table:
        """The records whose ``where`` paths each hold one of its values (``""``: empty).

        A tool's file of several kinds of record (:mod:`labels.tool_formats`) is read one
        kind at a time; each kept record keeps its row number (:meth:`take`).
        """
        if not where:
            return self
        table = self.with_paths(list(where), option="the file's ")
        keep = [i for i in range(table.n_rows)
                if all(text(table.data[key][i]) in values for key, values in where.items())]
        return table.take(keep)

    def gathered(self, key: str, path: str, name: str) -> Table:
        """This table plus column ``name``: the values at ``path`` of the records sharing a key.

        Per record, every value at ``path`` of the records whose ``key`` is its own (lists
        joined, in file order; ``None`` when none has one).

        Raises:
            ImportFileError: ``path`` does not fit a record (see :meth:`with_paths`).
        """
        table = self.with_paths([path], option="the file's ")
        found: dict[str, list[Any]] = {}
        for index in range(table.n_rows):
            value = table.data[path][index]
            if value is None:
                continue
            values = value if isinstance(value, list) else [value]
            found.setdefault(text(table.data[key][index]), []).extend(
                v for v in values if v is not None)
        column = [found.get(text(k)) or None for k in table.data[key]]
        return replace(table, columns=[*table.columns, name],
                       data={**table.data, name: column}, arrow=None)

    def where(self, index: int) -> str:
        """``row 3 (line 4)``: how a message points at record ``index``."""
        row = self.row_number(index)
        if self.lines is not None and self.lines[index] != row:
            return f"row {row} (line {self.lines[index]})"
        return f"row {row}"


def _json_cell(cell: Any) -> Any:
    """A text cell holding a JSON object or list, as that value (else the cell as it is)."""
    if isinstance(cell, str) and cell.lstrip().startswith(("{", "[")):
        try:
            return strict_json_loads(cell)
        except ValueError:  # not JSON after all: the path then says what the cell holds
            return cell
    return cell


def _shown_column(name: str) -> str:
    """A header name as a message shows it.

    A short name as is; else a 16-character prefix, never past an ``=`` (``KEY=value`` is a
    ``.env`` line, not a column name).
    """
    if len(name) <= 24 and "=" not in name:
        return name
    cut = name.index("=") + 1 if "=" in name else len(name)
    return shown(name, min(16, cut))
