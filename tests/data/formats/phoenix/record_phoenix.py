"""Record the Phoenix fixtures of tests/labels/test_tracing_formats.py (run once).

    python -m venv /tmp/px && /tmp/px/bin/pip install arize-phoenix-client==3.5.0 pandas pyarrow
    cd tests/data/formats/phoenix && /tmp/px/bin/python record_phoenix.py

The annotations are the real client's: ``Client.spans.get_span_annotations_dataframe`` asks a
small local stand-in for the Phoenix server (``GET /v1/projects/default/span_annotations``,
answering in the documented ``SpanAnnotationsResponseBody`` shape) and builds the dataframe
itself (it flattens ``result`` into ``result.label``/``result.score``/``result.explanation``,
renames ``name`` to ``annotation_name`` and indexes by ``span_id``); it is then written as a
user does, ``df.to_parquet`` and ``df.to_csv``. The spans dataframe is built by the Phoenix
server, which cannot run here, so ``spans.parquet`` follows the documented columns of
``get_spans_dataframe`` (README.md beside this file). The four RAG questions of the inspect
fixture, each a root chain span with a retriever span under it; annotations: an LLM
evaluator's ``hallucination`` label (factual / hallucinated) and two reviewers'.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pandas as pd
from phoenix.client import Client

SAMPLES = [
    ("Does the Pro plan include single sign-on?",
     ["The Pro plan includes single sign-on.", "Teams under 50 seats need the Security add-on."],
     "Yes, SSO is included on Pro at no extra cost."),
    ("How long are deleted pages kept?", ["Deleted pages stay in the trash for 30 days."],
     "Deleted pages are kept for 30 days."),
    ("Can I export a space to PDF?", ["Spaces can be exported as PDF or HTML."],
     "Yes, as PDF or HTML."),
    ("Is there an uptime SLA?", ["Enterprise plans carry a 99.9% uptime SLA."],
     "There is no SLA."),
]
JUDGE = ["hallucinated", "factual", "factual", "hallucinated"]
REVIEWERS = {"VXNlcjoy": ["hallucinated", "factual", "factual", "hallucinated"],
             "VXNlcjoz": ["factual", None, None, "hallucinated"]}
STAMP = "2026-11-20T09:00:00+00:00"


def span_id(i: int, child: bool = False) -> str:
    return f"{'c' if child else 'a'}{i:015x}"


def spans() -> pd.DataFrame:
    rows = []
    for i, (question, contexts, answer) in enumerate(SAMPLES):
        base = {"context.trace_id": f"{i:032x}", "start_time": pd.Timestamp(STAMP),
                "end_time": pd.Timestamp(STAMP), "status_code": "OK", "status_message": "",
                "events": []}
        rows.append({**base, "name": "rag-answer", "span_kind": "CHAIN", "parent_id": None,
                     "context.span_id": span_id(i), "attributes.input.value": question,
                     "attributes.output.value": answer,
                     "attributes.openinference.span.kind": "CHAIN",
                     "attributes.retrieval.documents": None})
        rows.append({**base, "name": "retrieve", "span_kind": "RETRIEVER",
                     "parent_id": span_id(i), "context.span_id": span_id(i, True),
                     "attributes.input.value": question, "attributes.output.value": None,
                     "attributes.openinference.span.kind": "RETRIEVER",
                     "attributes.retrieval.documents": [
                         {"document.id": f"d{i}-{n}", "document.content": text,
                          "document.score": 1.0 - n / 10} for n, text in enumerate(contexts)]})
    return pd.DataFrame(rows)


def annotations() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def add(i: int, name: str, kind: str, label: str, user: str | None,
            explanation: str | None = None) -> None:
        result: dict[str, Any] = {"label": label, "score": 1.0 if label == "factual" else 0.0}
        if explanation:
            result["explanation"] = explanation
        out.append({"id": f"U3BhbkFubm90YXRpb246{len(out) + 1}", "created_at": STAMP,
                    "updated_at": STAMP, "source": "APP" if user else "API", "user_id": user,
                    "name": name, "annotator_kind": kind, "span_id": span_id(i),
                    "result": result, "identifier": "",
                    "metadata": {"queue": "rag-review"} if user else {"model": "gpt-4o-mini"}})

    for i in range(len(SAMPLES)):
        add(i, "hallucination", "LLM", JUDGE[i], None,
            "The answer adds a claim the sources lack." if JUDGE[i] == "hallucinated" else
            "Every claim is in the sources.")
        for user, labels in REVIEWERS.items():
            if labels[i] is not None:
                add(i, "hallucination", "HUMAN", labels[i], user)
    return out


class FakePhoenix(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"data": annotations(), "next_cursor": None}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def main() -> None:
    frame = spans()
    frame.to_parquet("spans.parquet", index=False)
    server = HTTPServer(("127.0.0.1", 0), FakePhoenix)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = Client(base_url=f"http://127.0.0.1:{server.server_port}")
    df = client.spans.get_span_annotations_dataframe(spans_dataframe=frame,
                                                     project_identifier="default")
    server.shutdown()
    df.to_parquet("annotations.parquet")
    df.to_csv("annotations.csv")


if __name__ == "__main__":
    main()
