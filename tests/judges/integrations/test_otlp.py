"""``report|score|gate --otlp``: OTLP/JSON logs that the OTLP protobuf schema parses.

Each file is parsed by ``google.protobuf.json_format.Parse`` into opentelemetry-proto's
``ExportLogsServiceRequest`` (unknown fields refused), and every record is checked against
the GenAI semantic conventions' ``gen_ai.evaluation.result`` event and against the command's
``--json`` output: the same numbers, the corrected one beside the raw one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from demo_card import DemoCard
from google.protobuf.json_format import MessageToDict, Parse
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from calibrate_app.cli import cli


def parsed(path: Path) -> list[dict[str, Any]]:
    """The records' attributes as plain values, after the schema parsed the file."""
    request = Parse(path.read_text(encoding="utf-8"), ExportLogsServiceRequest())
    (resource,) = request.resource_logs
    assert {a.key: a.value.string_value for a in resource.resource.attributes}[
        "service.name"] == "calibrate"
    (scope,) = resource.scope_logs
    assert scope.scope.name == "calibrate"
    records = []
    for record in scope.log_records:
        assert record.event_name == "gen_ai.evaluation.result"
        assert record.time_unix_nano > 0 and record.severity_number == 9
        values = {}
        for attribute in record.attributes:
            kind = attribute.value.WhichOneof("value")
            values[attribute.key] = MessageToDict(attribute.value)[
                {"string_value": "stringValue", "double_value": "doubleValue",
                 "int_value": "intValue", "bool_value": "boolValue"}[kind]]
            if kind == "int_value":
                values[attribute.key] = int(values[attribute.key])
        assert values["gen_ai.evaluation.name"], values  # the one required attribute
        records.append(values)
    return records


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def by_name(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["gen_ai.evaluation.name"]: r for r in records}


def test_gate_writes_the_decision_beside_the_corrected_and_raw_rates(
        demo_card: DemoCard, tmp_path: Path) -> None:
    for bar, code, label in (("0.6", 0, "pass"), ("0.7", 1, "fail")):
        out = tmp_path / f"gate-{bar}.json"
        exit_code, output = invoke("gate", "--card", str(demo_card.card),
                                   str(demo_card.calibration), "--min-pass-rate", bar,
                                   "--otlp", str(out), "--json")
        assert exit_code == code, output
        data = json.loads(output)
        events = by_name(parsed(out))
        assert set(events) == {"corrected_pass_rate", "observed_pass_rate", "gate"}
        corrected, c = events["corrected_pass_rate"], data["corrected_pass_rate"]
        assert corrected["gen_ai.evaluation.score.value"] == c["estimate"]
        assert corrected["calibrate.interval.low"] == c["low"] == 0.6400000000000001
        assert corrected["calibrate.interval.high"] == c["high"]
        assert corrected["calibrate.interval.confidence"] == 0.95
        assert corrected["calibrate.n"] == c["n"]
        assert corrected["calibrate.method"] == "verdict_stratified+unsure_bounds"
        assert corrected["calibrate.observed.value"] == data["observed_pass_rate"]["estimate"]
        assert corrected["gen_ai.evaluation.score.label"] == "estimate"
        assert corrected["gen_ai.evaluation.explanation"].startswith(
            "corrected pass rate 0.673 [0.640, 0.685] (95%), n = ")
        assert corrected["calibrate.judge.config_id"] == data["card"]["config_id"]
        gate = events["gate"]
        assert gate["gen_ai.evaluation.score.label"] == label
        assert gate["gen_ai.evaluation.score.value"] == data["gate"]["value"]
        assert gate["gen_ai.evaluation.explanation"] == data["gate"]["reason"]
        assert gate["calibrate.gate.min_pass_rate"] == float(bar)
        assert gate["calibrate.n"] == 91 and gate["calibrate.kind"] == "gate"


def test_report_and_score_write_one_event_per_number(demo_card: DemoCard,
                                                     tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    exit_code, output = invoke("--db", str(demo_card.db), "report", "--dataset",
                               "demo-labelled", "--judge", "qwen1.5b-claimsplit", "--target",
                               "demo-production-week", "--otlp", str(out), "--json")
    assert exit_code == 0, output
    data = json.loads(output)
    events = by_name(parsed(out))
    assert list(events) == ["corrected_pass_rate", "observed_pass_rate",
                            "labels_only_pass_rate", "sensitivity", "specificity", "fpr",
                            "kappa"]
    for name, event in events.items():
        interval = data[name]
        assert event.get("gen_ai.evaluation.score.value") == interval["estimate"], name
        assert event.get("calibrate.interval.low") == interval["low"], name
        assert event["calibrate.n"] == interval["n"], name
        assert event["calibrate.target"] == "demo-production-week"
    # Segment-aware and bounded by [0, 1] where not identified: the interval says it.
    corrected = events["corrected_pass_rate"]
    assert corrected["gen_ai.evaluation.explanation"].startswith(
        "corrected pass rate 0.520 [0.000, 1.000] (95%), n = ")
    assert corrected["calibrate.method"] == data["method"] == "lee_segment_reweighted"
    assert (corrected["calibrate.interval.low"], corrected["calibrate.interval.high"]) == (0, 1)

    scored = tmp_path / "score.json"
    exit_code, output = invoke("score", "--card", str(demo_card.card), str(demo_card.week),
                               "--otlp", str(scored), "--json")
    assert exit_code == 0, output
    events = by_name(parsed(scored))
    assert set(events) == {"corrected_pass_rate", "observed_pass_rate"}
    assert events["corrected_pass_rate"]["gen_ai.evaluation.score.value"] == json.loads(
        output)["corrected_pass_rate"]["estimate"]
    assert events["corrected_pass_rate"]["calibrate.kind"] == "score"


def test_a_refused_number_has_no_score_value_and_says_why(tmp_path: Path) -> None:
    from judges.integrations.otlp import rate_event, write_logs

    refused = {"estimate": None, "low": None, "high": None, "n": 12,
               "reason": "no failing calibration row"}
    out = write_logs(tmp_path / "refused.json", [rate_event(
        "corrected_pass_rate", refused, confidence=0.95, context={"calibrate.kind": "score"})])
    (event,) = parsed(out)
    assert "gen_ai.evaluation.score.value" not in event
    assert event["gen_ai.evaluation.score.label"] == "refused"
    assert event["error.type"] == "calibrate.refused"
    assert event["gen_ai.evaluation.explanation"] == (
        "corrected pass rate: refused: no failing calibration row")
