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
- **langfuse** (blob storage export, JSON/JSONL/CSV/Parquet): a ``traces/`` file (one row per
  trace) or an ``observations_v2/`` (or legacy ``observations/``) file (the root observation
  of each trace), and the ``scores/`` file: ``EVAL`` and ``API`` scores are a judge's verdicts
  (one metric per score name), ``ANNOTATION`` scores human labels by ``author_user_id``.
- **langsmith**: a dataset's examples (``inputs``, ``outputs``), runs (root runs), and the
  feedback on them: ``feedback_source.type`` ``model`` is a judge's, ``api``/``app`` a person's.
- **phoenix**: a spans dataframe (root spans; ``context.span_id``, ``attributes.input.value``
  …) and a span annotations dataframe: ``annotator_kind`` ``LLM``/``CODE`` verdicts,
  ``HUMAN`` labels.

Files of tracing tools hold several kinds of record (child spans, a person's and a judge's
scores in one file): a format's ``where`` says which records are rows, and each metric's which
records are its verdicts or labels; the others are left out, each kept record keeping its row
number for messages.

Only the shape is read; nothing a file says is run or trusted beyond being data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from labels.errors import ImportFileError
from labels.strict_json import JsonValueError, strict_json_loads


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

TOOL_FORMATS = ("promptfoo", "inspect", "deepeval", "ragas", "langfuse", "langsmith", "phoenix")
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
    where: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Which records are this metric's: path → the values it may have (``""`` for empty)."""
    source: dict[str, str] = field(default_factory=dict)
    """Provenance stored with the external judge besides the tool and metric (evaluator ids)."""

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
    where: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Which records are rows (a trace's root span, not its children): as :attr:`Metric.where`."""
    feedback: tuple[Metric, ...] = ()
    """Human labels the file holds, one per metric: mappings of ``id``, ``label``, ``annotator``
    and ``note`` (``labels import`` reads them)."""
    kind: str = "rows"
    """What the file is: ``rows``, or ``scores`` (verdicts and labels only, no rows)."""
    gather: tuple[str, str, str] | None = None
    """``(trace column, path, new column)``: every record's values at ``path``, gathered per
    trace into ``new column`` before the rows are chosen (a root span's sources are its
    retriever span's documents)."""

    def label_metric(self, name: str | None, *, path: str) -> Metric:
        """The human labels of metric ``name``, or of the file's only one.

        Raises:
            ImportFileError: the file has no human labels, several metrics and none chosen,
                or not ``name`` (the message lists the metrics it has).
        """
        tool = self.tool
        return _choose(
            self.feedback, name, path=path, none=f"this {tool} file holds no human labels",
            missing=lambda names: f"this {tool} file has no human labels of {name!r} "
                                  f"(labelled metrics: {names})",
            several=lambda names: f"this {tool} file holds human labels of several metrics "
                                  f"({names}): choose one with --metric NAME")

    def metric(self, name: str | None, *, path: str) -> Metric:
        """The metric ``name``, or the file's only one.

        Raises:
            ImportFileError: the file has no metric, or several and none was chosen, or not
                ``name`` (the message lists the metrics it has).
        """
        tool = self.tool
        return _choose(
            self.metrics, name, path=path, none=f"this {tool} file holds no verdicts or scores",
            missing=lambda names: f"this {tool} file has no metric {name!r} (metrics: {names})",
            several=lambda names: f"this {tool} file holds several metrics ({names}): "
                                  "choose one with --metric NAME")


def _choose(metrics: Sequence[Metric], name: str | None, *, path: str,
            missing: Callable[[str], str], none: str, several: Callable[[str], str]) -> Metric:
    """``name`` among ``metrics``, or the only one; the messages are given the names found."""
    names = ", ".join(m.name for m in metrics) or "none"
    if name is not None:
        for metric in metrics:
            if metric.name == name:
                return metric
        raise ImportFileError(missing(names), path=path)
    if len(metrics) == 1:
        return metrics[0]
    if not metrics:
        raise ImportFileError(none, path=path)
    raise ImportFileError(several(names), path=path)


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
        elif columns >= _LANGFUSE_SCORES or columns >= _LANGFUSE_TRACES or (
                columns >= _LANGFUSE_OBSERVATIONS):
            found = "langfuse"
        elif columns >= _LANGSMITH_FEEDBACK or "inputs" in columns:
            found = "langsmith"
        elif columns >= _PHOENIX_SPANS or columns >= _PHOENIX_ANNOTATIONS:
            found = "phoenix"
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
    if found == "langfuse":
        return _langfuse(table, columns)
    if found == "langsmith":
        return _langsmith(table, columns)
    if found == "phoenix":
        return _phoenix(table, columns)
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


# The column sets that tell the tracing tools' exports apart (each its documented schema;
# tests/data/formats/*/README.md name the documents and versions).
_LANGFUSE_SCORES = {"trace_id", "name", "value", "source", "data_type"}
_LANGFUSE_TRACES = {"id", "input", "output", "project_id", "bookmarked", "public"}
_LANGFUSE_OBSERVATIONS = {"id", "trace_id", "parent_observation_id", "type", "input", "output"}
_LANGSMITH_FEEDBACK = {"run_id", "key", "feedback_source"}
_PHOENIX_SPANS = {"context.span_id", "span_kind", "attributes.input.value"}
_PHOENIX_ANNOTATIONS = {"span_id", "annotation_name", "annotator_kind"}
_ROOT = ("",)
"""An empty parent: a trace's root span (``None`` and ``""`` both read as empty)."""
_JUDGE_SCORE_SOURCES = ("EVAL", "API")
"""Langfuse score sources that are a judge's: LLM-as-a-judge evaluators and SDK scores."""
PHOENIX_LABELS = {"correct": "pass", "incorrect": "fail", "factual": "pass",
                  "hallucinated": "fail", "relevant": "pass", "unrelated": "fail"}
"""The labels of Phoenix's own evaluators (QA correctness, hallucination, relevance)."""
_BOOLEAN_WORDS = {"1.0": "pass", "0.0": "fail"}
"""A BOOLEAN score's value as a CSV export writes it (a JSON export's 1.0 is a number)."""
PHOENIX_DOCUMENTS = "retrieved documents of the trace"
"""The column of each root span's sources: its trace's retriever spans' documents."""
_ANSWER_VARS = ("answer", "response", "output", "actual_output", "completion", "text")


def text(value: Any) -> str:
    """A cell as the text :attr:`Metric.where` compares: ``None`` and NaN as ``""``."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _value(value: Any) -> Any:
    """A cell, or the object or list its JSON text holds (CSV exports encode them so)."""
    if isinstance(value, str) and value.lstrip().startswith(("{", "[")):
        try:
            return strict_json_loads(value)
        except (ValueError, JsonValueError):
            return value
    return value


def _records_where(table: Table, where: Mapping[str, tuple[str, ...]]) -> list[dict[str, Any]]:
    """The records (first 2,000) whose flat columns in ``where`` have one of its values."""
    out = []
    for index in range(min(table.n_rows, 2000)):
        record = {name: table.data[name][index] for name in table.columns}
        if all(text(record.get(key)) in values for key, values in where.items()):
            out.append(record)
    return out


def _field_path(column: str, value: Any, names: tuple[str, ...]) -> str | None:
    """``column`` if it holds text, else ``column.KEY`` for its first key among ``names``."""
    value = _value(value)
    if isinstance(value, Mapping):
        key = _pick(value, names)
        if key is None and len(value) == 1:
            key = next(iter(value))  # {"output": …} under another name: its only value
        return f"{column}.{key}" if key is not None else None
    return column if value is not None else None


def _io_rows(first: Mapping[str, Any], inputs: str, outputs: str,
             extra: tuple[str, ...] = ()) -> dict[str, str]:
    """Question, answer, sources and reference paths from a record's input and output."""
    rows: dict[str, str] = {}
    question = _field_path(inputs, first.get(inputs), _QUESTION_VARS)
    answer = _field_path(outputs, first.get(outputs), _ANSWER_VARS)
    if question:
        rows["question"] = question
    if answer:
        rows["answer"] = answer
    for fld, names in (("sources", _SOURCE_VARS), ("reference", _REFERENCE_VARS)):
        for column in (inputs, outputs, *extra):
            value = _value(first.get(column))
            key = _pick(value, names) if isinstance(value, Mapping) else None
            path = f"{column}.{key}" if key else None
            if path and path not in rows.values():
                rows[fld] = path
                break
    return rows


def _langfuse(table: Table, columns: set[str]) -> ToolFormat:
    if columns >= _LANGFUSE_SCORES:
        return _langfuse_scores(table)
    if columns >= _LANGFUSE_OBSERVATIONS:  # one row per trace: its root observation
        where = {"parent_observation_id": _ROOT}
        first = next(iter(_records_where(table, where)), {})
        rows = {"id": "trace_id", **_io_rows(first, "input", "output", ("metadata",))}
        return ToolFormat("langfuse", rows, where=where,
                          keep=("name", "trace_name", "session_id", "user_id"))
    rows = {"id": "id", **_io_rows(_first(table), "input", "output", ("metadata",))}
    return ToolFormat("langfuse", rows, keep=("name", "session_id", "user_id"))


def _langfuse_scores(table: Table) -> ToolFormat:
    """Metrics of a scores file: one per score name, a judge's and a person's apart."""
    verdicts: dict[str, list[dict[str, Any]]] = {}
    labels: dict[str, list[dict[str, Any]]] = {}
    for index in range(table.n_rows):
        record = {name: table.data[name][index] for name in table.columns}
        by = labels if text(record.get("source")) == "ANNOTATION" else (
            verdicts if text(record.get("source")) in _JUDGE_SCORE_SOURCES else None)
        if by is not None:
            by.setdefault(text(record.get("name")), []).append(record)
    metrics = []
    for name, records in verdicts.items():
        kind = text(records[0].get("data_type"))
        value = {"verdict": "string_value"} if kind == "CATEGORICAL" else (
            {"verdict": "value"} if kind == "BOOLEAN" else {"score": "value"})
        provenance = {"score_source": ",".join(sorted({text(r.get("source")) for r in records}))}
        for key, column in (("evaluator", "evaluator_id"),
                            ("evaluation_rule", "evaluation_rule_id")):
            ids = sorted({text(r.get(column)) for r in records} - {""})
            if ids:
                provenance[key] = ",".join(ids)
        metrics.append(Metric(
            name, {"id": "trace_id", **value, "reasoning": "comment"}, dict(_BOOLEAN_WORDS),
            where={"name": (name,), "source": _JUDGE_SCORE_SOURCES},
            source=provenance))
    feedback = []
    for name, records in labels.items():
        label = ("string_value" if text(records[0].get("data_type")) == "CATEGORICAL"
                 else "value")
        feedback.append(Metric(
            name, {"id": "trace_id", "label": label, "annotator": "author_user_id",
                   "note": "comment"}, dict(_BOOLEAN_WORDS),
            where={"name": (name,), "source": ("ANNOTATION",)}))
    return ToolFormat("langfuse", {}, tuple(metrics), feedback=tuple(feedback), kind="scores")


def _binary(values: list[Any]) -> bool:
    """Whether every score is a pass/fail (a boolean, 0 or 1, or empty)."""
    return all(text(v) in {"", "0", "1", "0.0", "1.0", "true", "false"} for v in values)


def _langsmith(table: Table, columns: set[str]) -> ToolFormat:
    if columns >= _LANGSMITH_FEEDBACK:
        return _langsmith_feedback(table)
    first = _first(table)
    if "run_type" in columns:  # runs: the root run of each trace is the row
        where = {"parent_run_id": _ROOT} if "parent_run_id" in columns else {}
        first = next(iter(_records_where(table, where)), first)
        rows = {"id": "id", **_io_rows(first, "inputs", "outputs")}
        return ToolFormat("langsmith", rows, where=where, keep=("name", "run_type"))
    rows = {**({"id": "id"} if "id" in columns else {}),
            **_io_rows(first, "inputs", "outputs", ("metadata",))}
    return ToolFormat("langsmith", rows, keep=("metadata", "split"))


def _langsmith_feedback(table: Table) -> ToolFormat:
    by_key: dict[tuple[str, bool], list[dict[str, Any]]] = {}
    for index in range(table.n_rows):
        record = {name: table.data[name][index] for name in table.columns}
        source = _value(record.get("feedback_source"))
        kind = text(source.get("type")) if isinstance(source, Mapping) else ""
        by_key.setdefault((text(record.get("key")), kind == "model"), []).append(record)
    metrics, feedback = [], []
    for (key, model), records in by_key.items():
        scores = [r.get("score") for r in records]
        values = [r.get("value") for r in records]
        if any(isinstance(v, str) and v for v in values):
            value = "value"
        elif _binary(scores):
            value = "score"
        else:
            value = ""
        where = {"key": (key,), "feedback_source.type": ("model",) if model else ("api", "app")}
        if model:
            mapping = ({"verdict": value} if value else {"score": "score"})
            metrics.append(Metric(key, {"id": "run_id", **mapping, "reasoning": "comment"},
                                  where=where, source={"feedback_source": "model"}))
        else:
            sources = [_value(r.get("feedback_source")) for r in records]
            named = any(isinstance(s, Mapping) and s.get("user_name") for s in sources)
            feedback.append(Metric(key, {
                "id": "run_id", "label": value or "score", "note": "comment",
                "annotator": "feedback_source.user_name" if named
                else "feedback_source.user_id"}, where=where))
    return ToolFormat("langsmith", {}, tuple(metrics), feedback=tuple(feedback), kind="scores")


def _phoenix(table: Table, columns: set[str]) -> ToolFormat:
    if columns >= _PHOENIX_ANNOTATIONS:
        return _phoenix_annotations(table)
    rows = {"id": "context.span_id", "question": "attributes.input.value",
            "answer": "attributes.output.value"}
    gather = None
    if "attributes.retrieval.documents" in columns and "context.trace_id" in columns:
        gather = ("context.trace_id", "attributes.retrieval.documents[*].document.content",
                  PHOENIX_DOCUMENTS)
        rows["sources"] = PHOENIX_DOCUMENTS
    where = {"parent_id": _ROOT} if "parent_id" in columns else {}
    return ToolFormat("phoenix", rows, where=where, gather=gather,
                      keep=("name", "span_kind", "context.trace_id"))


def _phoenix_annotations(table: Table) -> ToolFormat:
    by_name: dict[tuple[str, bool], list[dict[str, Any]]] = {}
    for index in range(table.n_rows):
        record = {name: table.data[name][index] for name in table.columns}
        human = text(record.get("annotator_kind")) == "HUMAN"
        by_name.setdefault((text(record.get("annotation_name")), human), []).append(record)
    metrics, feedback = [], []
    for (name, human), records in by_name.items():
        labelled = any(text(r.get("result.label")) for r in records)
        where = {"annotation_name": (name,),
                 "annotator_kind": ("HUMAN",) if human else ("LLM", "CODE")}
        if human:
            named = any(text(r.get("user_id")) for r in records)
            feedback.append(Metric(name, {
                "id": "span_id", "label": "result.label" if labelled else "result.score",
                "note": "result.explanation",
                "annotator": "user_id" if named else "identifier"},
                dict(PHOENIX_LABELS), where=where))
        else:
            kinds = sorted({text(r.get("annotator_kind")) for r in records})
            value = {"verdict": "result.label"} if labelled else {"score": "result.score"}
            metrics.append(Metric(name, {"id": "span_id", **value,
                                         "reasoning": "result.explanation"},
                                  dict(PHOENIX_LABELS), where=where,
                                  source={"annotator_kind": ",".join(kinds)}))
    return ToolFormat("phoenix", {}, tuple(metrics), feedback=tuple(feedback), kind="scores")


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


__all__ = ["INSPECT_GRADES", "PHOENIX_LABELS", "TOOL_FORMATS", "Metric", "ToolFormat", "detect",
           "records_path", "text"]
