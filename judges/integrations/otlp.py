"""OpenTelemetry export: reports, scores and gates as ``gen_ai.evaluation.result`` events.

``calibrate report|score|gate --otlp FILE`` writes an OTLP/JSON logs payload (the JSON form of
``opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest``: ``resourceLogs`` →
``scopeLogs`` → ``logRecords``) that a collector's ``otlpjsonfile`` receiver, or a ``curl -X
POST --data @FILE http://collector:4318/v1/logs``, takes as it is. Each number is one log
record with ``eventName`` ``gen_ai.evaluation.result`` and the attributes of the OpenTelemetry
GenAI semantic conventions (stability: development):

- ``gen_ai.evaluation.name`` (required): the statistic, e.g. ``corrected_pass_rate``,
  ``observed_pass_rate``, ``sensitivity``, ``gate``;
- ``gen_ai.evaluation.score.value``: the point estimate (absent when the number is refused);
- ``gen_ai.evaluation.score.label``: ``estimate``, ``uninformative`` or ``refused`` (a gate:
  ``pass`` / ``fail``);
- ``gen_ai.evaluation.explanation``: the number in words, with its interval and n, or why it
  is refused;
- ``error.type`` ``calibrate.refused`` on a refused number,

plus calibrate's own attributes under ``calibrate.``: the interval (``calibrate.interval.low``,
``.high``, ``.confidence``), ``calibrate.n``, ``calibrate.method``, the judge
(``calibrate.judge.name``, ``.config_id``), the criterion and datasets, and on the corrected
pass rate the judge's raw rate beside it (``calibrate.observed.value``, ``.low``, ``.high``),
so a dashboard shows the corrected number next to the raw one from one record.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from labels.private_files import write_text_atomic

EVENT_NAME = "gen_ai.evaluation.result"
SCOPE_NAME = "calibrate"
SEVERITY_INFO = 9  # SeverityNumber.SEVERITY_NUMBER_INFO
REPORT_RATES = ("corrected_pass_rate", "observed_pass_rate", "labels_only_pass_rate",
                "sensitivity", "specificity", "fpr", "kappa")
SCORE_RATES = ("corrected_pass_rate", "observed_pass_rate")


def _any_value(value: Any) -> dict[str, Any]:
    """An OTLP ``AnyValue`` in the JSON encoding (64-bit integers as decimal strings)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def _attributes(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``KeyValue`` list; ``None`` values are left out (an absent attribute, not a null)."""
    return [{"key": k, "value": _any_value(v)} for k, v in values.items() if v is not None]


def _interval_text(name: str, interval: Mapping[str, Any], confidence: float) -> str:
    est, low, high = interval.get("estimate"), interval.get("low"), interval.get("high")
    words = name.replace("_", " ")
    if est is None:
        return f"{words}: refused: {interval.get('reason')}"
    text = f"{words} {est:.3f}"
    if low is not None and high is not None:
        text += f" [{low:.3f}, {high:.3f}] ({confidence:.0%})"
    text += f", n = {interval.get('n')}"
    if interval.get("reason"):
        text += f"; {interval['reason']}"
    return text


def rate_event(name: str, interval: Mapping[str, Any], *, confidence: float,
               context: Mapping[str, Any], extra: Mapping[str, Any] | None = None
               ) -> dict[str, Any]:
    """One ``gen_ai.evaluation.result`` attribute set for an interval of the stable JSON.

    Args:
        name: The statistic (``gen_ai.evaluation.name``).
        interval: ``{estimate, low, high, n, reason}`` (docs/report-json.md, "Intervals").
        confidence: The interval's level.
        context: ``calibrate.*`` attributes shared by every event of the export.
        extra: More attributes for this event.
    """
    est = interval.get("estimate")
    refused = est is None
    label = "refused" if refused else "uninformative" if interval.get("reason") else "estimate"
    return {
        "gen_ai.evaluation.name": name,
        "gen_ai.evaluation.score.value": None if refused else float(est),  # type: ignore[arg-type]
        "gen_ai.evaluation.score.label": label,
        "gen_ai.evaluation.explanation": _interval_text(name, interval, confidence),
        "error.type": "calibrate.refused" if refused else None,
        "calibrate.interval.low": _float(interval.get("low")),
        "calibrate.interval.high": _float(interval.get("high")),
        "calibrate.interval.confidence": float(confidence),
        "calibrate.n": None if interval.get("n") is None else int(interval["n"]),
        **context,
        **(extra or {}),
    }


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _observed(data: Mapping[str, Any]) -> dict[str, Any]:
    o = data.get("observed_pass_rate") or {}
    return {"calibrate.observed.value": _float(o.get("estimate")),
            "calibrate.observed.low": _float(o.get("low")),
            "calibrate.observed.high": _float(o.get("high")),
            "calibrate.observed.n": None if o.get("n") is None else int(o["n"])}


def report_events(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The events of a pass/fail ``calibrate report --json`` (one per headline number).

    Raises:
        ValueError: a pairwise report (its shares are not pass rates).
    """
    if data.get("kind") == "pairwise":
        raise ValueError("--otlp exports pass/fail reports; a pairwise report's shares are not "
                         "pass rates")
    judge = data["judge"]
    context = {
        "calibrate.kind": "report",
        "calibrate.judge.name": judge["name"],
        "calibrate.judge.config_id": judge["config_id"],
        "calibrate.judge.stand_in": bool(judge.get("stand_in")),
        "calibrate.criterion": data["criterion"],
        "calibrate.dataset": data["dataset"],
        "calibrate.target": data["target"],
        "calibrate.design": data.get("design"),
    }
    events = _rate_events(REPORT_RATES, data, context)
    return events


def _rate_events(names: tuple[str, ...], data: Mapping[str, Any],
                 context: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One event per rate of ``names`` in ``data``; the corrected rate carries the observed."""
    events = []
    for name in names:
        extra: dict[str, Any] = {}
        if name == "corrected_pass_rate":
            extra = {"calibrate.method": data["method"],
                     "calibrate.answer_kind": data.get("answer_kind"), **_observed(data)}
        events.append(rate_event(name, data[name], confidence=data["confidence"],
                                 context=context, extra=extra))
    return events


def score_events(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The events of ``calibrate score --json`` or ``gate --json``.

    The corrected and the observed pass rate and, for a gate, the decision.
    """
    card = data["card"]
    context = {
        "calibrate.kind": "gate" if "gate" in data else "score",
        "calibrate.judge.name": card["judge"],
        "calibrate.judge.config_id": card["config_id"],
        "calibrate.dataset": card["dataset"],
        "calibrate.card.created_at": card["created_at"],
        "calibrate.verdicts_file": data["verdicts_file"],
        "calibrate.verified": bool(data["verified"]),
    }
    events = _rate_events(SCORE_RATES, data, context)
    decision = data.get("gate")
    if decision is not None:
        c = data["corrected_pass_rate"]
        events.append({
            "gen_ai.evaluation.name": "gate",
            "gen_ai.evaluation.score.value": _float(decision.get("value")),
            "gen_ai.evaluation.score.label": "pass" if decision["passed"] else "fail",
            "gen_ai.evaluation.explanation": decision["reason"],
            "calibrate.gate.on": decision.get("on"),
            "calibrate.gate.min_pass_rate": _float(decision.get("min_pass_rate")),
            "calibrate.gate.max_drop": _float(decision.get("max_drop")),
            "calibrate.gate.difference_low": _float(decision.get("difference_low")),
            "calibrate.interval.low": _float(c.get("low")),
            "calibrate.interval.high": _float(c.get("high")),
            "calibrate.interval.confidence": float(data["confidence"]),
            "calibrate.n": int(data["n"]),
            "calibrate.method": data["method"],
            **context,
        })
    return events


def logs_request(events: Sequence[Mapping[str, Any]], *, time_unix_nano: int | None = None
                 ) -> dict[str, Any]:
    """An ``ExportLogsServiceRequest`` in OTLP/JSON holding ``events``, one record each."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        calibrate_version = version("calibrate")
    except PackageNotFoundError:  # run from a source tree that was never installed
        calibrate_version = "0"
    now = str(time.time_ns() if time_unix_nano is None else time_unix_nano)
    records = [{
        "timeUnixNano": now,
        "observedTimeUnixNano": now,
        "severityNumber": SEVERITY_INFO,
        "severityText": "INFO",
        "eventName": EVENT_NAME,
        "attributes": _attributes(event),
    } for event in events]
    return {"resourceLogs": [{
        "resource": {"attributes": _attributes({"service.name": "calibrate",
                                                "service.version": calibrate_version})},
        "scopeLogs": [{"scope": {"name": SCOPE_NAME, "version": calibrate_version},
                       "logRecords": records}],
    }]}


def write_logs(path: str | Path, events: Sequence[Mapping[str, Any]]) -> Path:
    """Write :func:`logs_request` of ``events`` to ``path``.

    Atomically (temporary file, then rename): a collector never reads half a file.
    """
    target = Path(path)
    text = json.dumps(logs_request(events), indent=2, sort_keys=True, allow_nan=False) + "\n"
    return write_text_atomic(target, text)


__all__ = ["EVENT_NAME", "logs_request", "rate_event", "report_events", "score_events",
           "write_logs"]
