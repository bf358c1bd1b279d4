"""Write the Langfuse fixtures of tests/labels/test_tracing_formats.py (run once).

    cd tests/data/formats/langfuse
    PYTHONPATH=../../../.. /work/main/.venv/bin/python record_langfuse.py

Langfuse's blob storage export is written by the Langfuse server, which cannot run here; these
files follow its documented schema (see README.md beside this file): the same four RAG traces
as the inspect fixture, each a root span with a retriever and a generation under it, and their
scores: an LLM-as-a-judge evaluator's and two reviewers' (one of an annotation queue).
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

SAMPLES = [
    ("q1", "Does the Pro plan include single sign-on?",
     ["The Pro plan includes single sign-on.", "Teams under 50 seats need the Security add-on."],
     "Yes, SSO is included on Pro at no extra cost."),
    ("q2", "How long are deleted pages kept?", ["Deleted pages stay in the trash for 30 days."],
     "Deleted pages are kept for 30 days."),
    ("q3", "Can I export a space to PDF?", ["Spaces can be exported as PDF or HTML."],
     "Yes, as PDF or HTML."),
    ("q4", "Is there an uptime SLA?", ["Enterprise plans carry a 99.9% uptime SLA."],
     "There is no SLA."),
]
PROJECT = "cm0proj0000demo"
JUDGE = [0, 1, 1, 0]  # the evaluator's faithfulness (BOOLEAN)
DANA = [0, 1, 1, 0]
LEE = {"q1": 1, "q4": 0}  # a second reviewer, through the annotation queue, on two traces
HELPFUL = [0.62, 0.91, 0.7000001, 0.15]  # a NUMERIC evaluator score


def stamp(minute: int) -> str:
    return f"2026-11-20 09:{minute:02d}:00.000000"


def traces() -> list[dict[str, Any]]:
    return [{
        "id": f"t-{sid}", "timestamp": stamp(i), "name": "rag-answer", "environment": "default",
        "project_id": PROJECT, "metadata": {"app": "helpdesk"}, "user_id": "end-user-7",
        "session_id": None, "release": "2026.11", "version": None, "public": False,
        "bookmarked": False, "tags": ["rag"],
        "input": json.dumps({"question": question, "contexts": contexts}),
        "output": json.dumps({"answer": answer}),
        "created_at": stamp(i), "updated_at": stamp(i),
    } for i, (sid, question, contexts, answer) in enumerate(SAMPLES)]


def observations() -> list[dict[str, Any]]:
    out = []
    for i, (sid, question, contexts, answer) in enumerate(SAMPLES):
        base = {"trace_id": f"t-{sid}", "project_id": PROJECT, "environment": "default",
                "start_time": stamp(i), "end_time": stamp(i), "metadata": {}, "level": "DEFAULT",
                "status_message": "", "version": "", "trace_name": "rag-answer",
                "user_id": "end-user-7", "session_id": "", "tags": ["rag"]}
        out.append({**base, "id": f"o-{sid}-root", "type": "SPAN", "parent_observation_id": "",
                    "name": "rag-answer", "provided_model_name": "",
                    "input": json.dumps({"question": question, "contexts": contexts}),
                    "output": json.dumps({"answer": answer})})
        out.append({**base, "id": f"o-{sid}-ret", "type": "RETRIEVER",
                    "parent_observation_id": f"o-{sid}-root", "name": "search",
                    "provided_model_name": "", "input": question,
                    "output": json.dumps(contexts)})
        out.append({**base, "id": f"o-{sid}-gen", "type": "GENERATION",
                    "parent_observation_id": f"o-{sid}-root", "name": "answer",
                    "provided_model_name": "gpt-4o-mini", "input": question, "output": answer})
    return out


def scores() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def add(sid: str, name: str, source: str, kind: str, value: float, minute: int,
            **more: Any) -> None:
        out.append({
            "id": f"s-{len(out) + 1}", "timestamp": stamp(minute), "project_id": PROJECT,
            "environment": "default", "trace_id": f"t-{sid}", "observation_id": None,
            "session_id": None, "dataset_run_id": None, "name": name, "value": value,
            "source": source, "comment": more.pop("comment", None), "data_type": kind,
            "string_value": more.pop("string_value", None), "created_at": stamp(minute),
            "updated_at": stamp(minute),
            # the score_provenance field group (2026-10-22)
            "author_user_id": more.pop("author", None), "config_id": None,
            "queue_id": more.pop("queue", None), "evaluator_id": more.pop("evaluator", None),
            "evaluation_rule_id": more.pop("rule", None),
            "execution_trace_id": more.pop("execution", None),
        })

    for i, (sid, *_rest) in enumerate(SAMPLES):
        add(sid, "faithfulness", "EVAL", "BOOLEAN", JUDGE[i], 30 + i,
            string_value=str(bool(JUDGE[i])), evaluator="ev-faithfulness",
            rule="rule-faith-1", execution=f"t-eval-{sid}",
            comment="Every claim is in the sources." if JUDGE[i] else "A claim is unsupported.")
        add(sid, "helpfulness", "EVAL", "NUMERIC", HELPFUL[i], 30 + i,
            evaluator="ev-helpfulness", rule="rule-help-1", execution=f"t-help-{sid}")
        add(sid, "faithfulness", "ANNOTATION", "BOOLEAN", DANA[i], 40 + i,
            string_value=str(bool(DANA[i])), author="dana",
            comment="at no extra cost: not in the sources" if sid == "q1" else None)
        if sid in LEE:
            add(sid, "faithfulness", "ANNOTATION", "BOOLEAN", LEE[sid], 50 + i,
                string_value=str(bool(LEE[sid])), author="lee", queue="q-rag-review")
    return out


def main() -> None:
    with open("traces.json", "w") as f:
        json.dump(traces(), f, indent=1)
    pd.DataFrame(observations()).to_json("observations.jsonl", orient="records", lines=True)
    frame = pd.DataFrame(scores())
    frame.to_json("scores.jsonl", orient="records", lines=True)
    frame.to_csv("scores.csv", index=False)
    frame.to_parquet("scores.parquet", index=False)


if __name__ == "__main__":
    main()
