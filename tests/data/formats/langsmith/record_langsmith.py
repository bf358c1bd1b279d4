"""Record the LangSmith fixtures of tests/labels/test_tracing_formats.py (run once).

    python -m venv /tmp/ls && /tmp/ls/bin/pip install langsmith==0.15.1
    cd tests/data/formats/langsmith && /tmp/ls/bin/python record_langsmith.py

LangSmith's server cannot run here, so the records are built as the SDK's own objects
(``langsmith.schemas.Example``, ``Run``, ``Feedback``: what ``Client.list_examples``,
``list_runs`` and ``list_feedback`` return) and written one per line with the SDK's own JSON
(``model_dump_json``), as an export script over those calls does. The four RAG questions of
the inspect fixture: a dataset, an experiment's runs (each root run with a retriever run under
it) and the feedback on the root runs: an evaluator's (``model``) and two reviewers' (``app``).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from langsmith.schemas import Example, FeedbackSourceBase, Run
from langsmith.schemas import Feedback as FeedbackRecord

SAMPLES = [
    ("Does the Pro plan include single sign-on?",
     ["The Pro plan includes single sign-on.", "Teams under 50 seats need the Security add-on."],
     "Yes, SSO is included on Pro at no extra cost.", "Yes, for teams under 50 seats."),
    ("How long are deleted pages kept?", ["Deleted pages stay in the trash for 30 days."],
     "Deleted pages are kept for 30 days.", "30 days."),
    ("Can I export a space to PDF?", ["Spaces can be exported as PDF or HTML."],
     "Yes, as PDF or HTML.", "Yes."),
    ("Is there an uptime SLA?", ["Enterprise plans carry a 99.9% uptime SLA."],
     "There is no SLA.", "99.9% on Enterprise."),
]
JUDGE = [0, 1, 1, 0]
REVIEWERS = {"dana@example.com": [0, 1, 1, 0], "lee@example.com": [1, None, None, 0]}
DATASET = uuid.UUID("5a1e0000-0000-4000-8000-000000000001")
PROJECT = uuid.UUID("5a1e0000-0000-4000-8000-000000000002")
T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def ids(kind: int, i: int) -> uuid.UUID:
    return uuid.UUID(f"5a1e{kind:04d}-0000-4000-8000-{i:012d}")


def main() -> None:
    examples, runs, feedback = [], [], []
    for i, (question, contexts, answer, reference) in enumerate(SAMPLES):
        examples.append(Example(id=ids(1, i), dataset_id=DATASET, created_at=T0,
                                inputs={"question": question, "contexts": contexts},
                                outputs={"answer": reference}, metadata={"topic": "plans"}))
        root = ids(2, i)
        runs.append(Run(id=root, name="rag-answer", run_type="chain", start_time=T0,
                        end_time=T0 + timedelta(seconds=2), trace_id=root, session_id=PROJECT,
                        inputs={"question": question},
                        outputs={"answer": answer, "contexts": contexts},
                        reference_example_id=ids(1, i), dotted_order=f"20261120T090000Z{root}"))
        runs.append(Run(id=ids(3, i), name="search", run_type="retriever", start_time=T0,
                        end_time=T0 + timedelta(seconds=1), trace_id=root, parent_run_id=root,
                        session_id=PROJECT, inputs={"query": question},
                        outputs={"documents": [{"page_content": c} for c in contexts]}))
        feedback.append(FeedbackRecord(
            id=ids(4, i), run_id=root, trace_id=root, key="correctness", score=JUDGE[i],
            comment="Every claim is in the sources." if JUDGE[i] else "A claim is unsupported.",
            created_at=T0, modified_at=T0, feedback_source=FeedbackSourceBase(
                type="model", metadata={"__run": {"run_id": str(ids(5, i))}})))
        for n, (who, scores) in enumerate(REVIEWERS.items()):
            if scores[i] is None:
                continue
            feedback.append(FeedbackRecord(
                id=ids(6 + n, i), run_id=root, trace_id=root, key="correctness",
                score=scores[i], created_at=T0, modified_at=T0, feedback_source=FeedbackSourceBase(
                    type="app", user_id=ids(8 + n, 0), user_name=who)))
    for name, records in (("examples", examples), ("runs", runs), ("feedback", feedback)):
        with open(f"{name}.jsonl", "w") as f:
            f.writelines(r.model_dump_json() + "\n" for r in records)


if __name__ == "__main__":
    main()
