"""The files other evaluation tools write, recognised without flags.

Each format is a mapping of paths (:mod:`labels.record_paths`) onto the item fields, plus the
judge verdicts or scores the file holds, found from the file's own shape.

- **promptfoo** (``promptfoo eval -o results.json``): the records are ``results.results[*]``
  with ``vars``, ``response.output`` and ``gradingResult``; verdicts ``gradingResult.pass``,
  scores ``gradingResult.score``.
- **inspect** (an inspect_ai eval log as JSON): ``samples[*]`` with ``input``, ``output``,
  ``target``; one metric per scorer, ``scores.<scorer>.value`` (C/I grades, or numbers).
- **deepeval**: test cases JSON (``input``, ``actual_output``, ``retrieval_context``,
  ``expected_output``), or a test run's ``testCases[*]`` whose ``metricsData[name=…]`` hold
  ``success`` and ``score``.
- **ragas**: ``user_input``, ``retrieved_contexts``, ``response``, ``reference``; every other
  numeric column of a results file is a metric's scores.

Only the shape is read; nothing a file says is run or trusted beyond being data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from labels.errors import ImportFileError


class Table(Protocol):
    """What detection reads of a :class:`labels.reading.Table` (which imports this module)."""

    path: str
    columns: list[str]
    data: Mapping[str, list[Any]]
    n_rows: int
    tool: str | None

    def shown_paths(self) -> str:
        """The paths a ``--map`` could name, for a message."""
        ...

TOOL_FORMATS = ("promptfoo", "inspect", "deepeval", "ragas")
"""The tools whose files are recognised (and can be named with ``--format``)."""

_RAGAS_COLUMNS = {"user_input", "retrieved_contexts", "reference_contexts", "response",
                  "reference", "multi_responses", "rubrics", "reference_tool_calls"}
# inspect's letter grades (CORRECT, INCORRECT, PARTIAL, NOANSWER); a partial answer is neither
# a pass nor a fail, and no answer fails, as inspect's own value_to_float scores it 0.
INSPECT_GRADES = {"C": "pass", "I": "fail", "P": "unsure", "N": "fail"}
_QUESTION_VARS = ("question", "query", "input", "user_input", "prompt")
_SOURCE_VARS = ("contexts", "context", "sources", "retrieved_contexts", "passages")
_REFERENCE_VARS = ("reference", "expected", "expected_output", "ground_truth", "answer")


@dataclass(frozen=True)
class Metric:
    """Verdicts or scores of one metric of a tool file, as a verdicts-file mapping.

    ``mapping`` maps verdict fields (``verdict``, ``score``, ``reasoning``) onto paths;
    ``words`` spells the tool's own verdict values as ours (inspect's ``C`` is ``pass``).
    A metric with only a ``score`` needs a rule (``--pass-if``) to give verdicts.
    """

    name: str
    mapping: dict[str, str]
    words: dict[str, str] = field(default_factory=dict)

    @property
    def scores_only(self) -> bool:
        """Whether the metric has scores but no verdicts of its own."""
        return "verdict" not in self.mapping


@dataclass(frozen=True)
class ToolFormat:
    """A recognised tool file: where its records are, its row mapping and its metrics."""

    tool: str
    rows: dict[str, str]
    metrics: tuple[Metric, ...] = ()
    records: str | None = None
    keep: tuple[str, ...] | None = None
    """The other columns kept as the rows' metadata (``None``: all). An inspect sample holds
    its whole transcript and every grader prompt; a row's metadata should not."""

    def metric(self, name: str | None, *, path: str) -> Metric:
        """The metric ``name``, or the file's only one.

        Raises:
            ImportFileError: the file has no metric, or several and none was chosen, or not
                ``name`` (the message lists the metrics it has).
        """
        names = ", ".join(m.name for m in self.metrics) or "none"
        if name is not None:
            for metric in self.metrics:
                if metric.name == name:
                    return metric
            raise ImportFileError(f"this {self.tool} file has no metric {name!r} "
                                  f"(metrics: {names})", path=path)
        if len(self.metrics) == 1:
            return self.metrics[0]
        if not self.metrics:
            raise ImportFileError(f"this {self.tool} file holds no verdicts or scores",
                                  path=path)
        raise ImportFileError(f"this {self.tool} file holds several metrics ({names}): "
                              "choose one with --metric NAME", path=path)


def records_path(value: Any) -> tuple[str, str] | None:
    """``(tool, path of its records)`` for a top-level JSON object a tool wrote, else ``None``."""
    if not isinstance(value, Mapping):
        return None
    results = value.get("results")
    if isinstance(results, Mapping) and _records(results.get("results"), "response"):
        return "promptfoo", "results.results"
    if isinstance(value.get("eval"), Mapping) and _records(value.get("samples"), "input"):
        return "inspect", "samples"
    if _records(value.get("testCases"), "input"):
        return "deepeval", "testCases"
    return None


def _records(value: Any, key: str) -> bool:
    return (isinstance(value, list) and bool(value) and isinstance(value[0], Mapping)
            and key in value[0])


def _first(table: Table) -> dict[str, Any]:
    return {name: table.data[name][0] for name in table.columns} if table.n_rows else {}


def _pick(keys: Mapping[str, Any], names: tuple[str, ...]) -> str | None:
    return next((n for n in names if n in keys), None)


def detect(table: Table, tool: str | None = None) -> ToolFormat | None:
    """The tool format of ``table`` (``tool`` forces one), or ``None`` for a plain file.

    Raises:
        ImportFileError: ``tool`` is named but the file does not have that tool's shape.
    """
    if tool is not None and tool not in TOOL_FORMATS:
        raise ImportFileError(f"unknown tool format {tool!r} (known: {', '.join(TOOL_FORMATS)})",
                              path=table.path)
    columns = set(table.columns)
    found = table.tool
    if found is None:
        if {"input", "actual_output"} <= columns:
            found = "deepeval"
        elif {"user_input", "response"} <= columns:
            found = "ragas"
    if tool is not None and found != tool:
        raise ImportFileError(
            f"--format {tool}: the file does not have {tool}'s shape (paths: "
            f"{table.shown_paths()})", path=table.path)
    first = _first(table)
    if found == "promptfoo":
        return _promptfoo(first)
    if found == "inspect":
        return _inspect(first)
    if found == "deepeval":
        return _deepeval(first, columns)
    if found == "ragas":
        return _ragas(table, columns)
    return None


def _promptfoo(first: Mapping[str, Any]) -> ToolFormat:
    variables = first.get("vars") if isinstance(first.get("vars"), Mapping) else {}
    assert isinstance(variables, Mapping)  # narrowed for mypy: a dict, or the empty one
    question = _pick(variables, _QUESTION_VARS)
    rows = {"question": f"vars.{question}" if question else "prompt.raw",
            "answer": "response.output"}
    if "id" in first:  # each result's own id (promptfoo 0.100 and later)
        rows["id"] = "id"
    for fld, names in (("sources", _SOURCE_VARS), ("reference", _REFERENCE_VARS)):
        var = _pick(variables, names)
        if var and var != question:
            rows[fld] = f"vars.{var}"
    metric = Metric("gradingResult", {"verdict": "gradingResult.pass",
                                      "score": "gradingResult.score",
                                      "reasoning": "gradingResult.reason"})
    return ToolFormat("promptfoo", rows, (metric,), "results.results",
                      keep=("provider", "promptIdx", "testIdx"))


def _inspect(first: Mapping[str, Any]) -> ToolFormat:
    question = "input" if isinstance(first.get("input"), str) else "input[-1].content"
    output = first.get("output") if isinstance(first.get("output"), Mapping) else {}
    assert isinstance(output, Mapping)
    answer = ("output.completion" if "completion" in output
              else "output.choices[0].message.content")
    rows = {"id": "id", "question": question, "answer": answer, "reference": "target"}
    metadata = first.get("metadata") if isinstance(first.get("metadata"), Mapping) else {}
    assert isinstance(metadata, Mapping)
    sources = _pick(metadata, _SOURCE_VARS)
    if sources:
        rows["sources"] = f"metadata.{sources}"
    scores = first.get("scores") if isinstance(first.get("scores"), Mapping) else {}
    assert isinstance(scores, Mapping)
    metrics = []
    for name, score in scores.items():
        value = score.get("value") if isinstance(score, Mapping) else None
        base = {"reasoning": f"scores.{name}.explanation"}
        if isinstance(value, (str, bool)):
            metrics.append(Metric(str(name), {**base, "verdict": f"scores.{name}.value"},
                                  dict(INSPECT_GRADES)))
        else:  # a number (or a dict of them, which the score path then refuses by row)
            metrics.append(Metric(str(name), {**base, "score": f"scores.{name}.value"}))
    return ToolFormat("inspect", rows, tuple(metrics), "samples", keep=("epoch",))


def _deepeval(first: Mapping[str, Any], columns: set[str]) -> ToolFormat:
    if "actual_output" in columns:  # the test cases JSON (snake case)
        rows = {"question": "input", "answer": "actual_output"}
        names = {"sources": "retrieval_context", "reference": "expected_output"}
    else:  # a test run's testCases (camel case)
        rows = {"question": "input", "answer": "actualOutput"}
        names = {"sources": "retrievalContext", "reference": "expectedOutput"}
    rows.update({fld: column for fld, column in names.items() if column in columns})
    metrics = []
    for data in first.get("metricsData") or ():
        if isinstance(data, Mapping) and isinstance(data.get("name"), str):
            at = f"metricsData[name={data['name']}]"
            metrics.append(Metric(data["name"], {"verdict": f"{at}.success",
                                                 "score": f"{at}.score",
                                                 "reasoning": f"{at}.reason"}))
    return ToolFormat("deepeval", rows, tuple(metrics), keep=("name",))


def _ragas(table: Table, columns: set[str]) -> ToolFormat:
    rows = {fld: column for fld, column in (
        ("question", "user_input"), ("answer", "response"), ("sources", "retrieved_contexts"),
        ("reference", "reference")) if column in columns}
    metrics = tuple(
        Metric(name, {"score": name}) for name in table.columns
        if name not in _RAGAS_COLUMNS and _numeric(table.data[name])
    )
    return ToolFormat("ragas", rows, metrics)


def _numeric(values: list[Any]) -> bool:
    """Whether a column holds scores: numbers, or text that reads as numbers (CSV)."""
    for value in values[:50]:
        if value is None or value == "":
            continue
        if isinstance(value, bool):
            return False
        if isinstance(value, (int, float)):
            continue
        try:
            float(str(value))
        except ValueError:
            return False
    return True


__all__ = ["INSPECT_GRADES", "TOOL_FORMATS", "Metric", "ToolFormat", "detect", "records_path"]
