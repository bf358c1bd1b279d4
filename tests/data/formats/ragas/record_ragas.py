"""Record the ragas fixtures of tests/labels/formats (run once, outside the project venv).

    python -m venv /tmp/ragas && /tmp/ragas/bin/pip install ragas==0.4.3 \
        langchain-community==0.3.31 rapidfuzz
    # (ragas 0.4.3 imports a module that langchain-community 0.4 removed)
    cd tests/data/formats/ragas && RAGAS_DO_NOT_TRACK=true /tmp/ragas/bin/python record_ragas.py

A four-row ``EvaluationDataset`` written by ragas itself as CSV (list cells as Python lists,
``['…', '…']``) and JSONL, and an ``evaluate()`` run with metrics that need no model
(``NonLLMContextRecall``, ``NonLLMStringSimilarity``, ``ExactMatch``), its result written
with ``EvaluationResult.to_pandas().to_csv()``: what a ragas user's results CSV looks like.
"""

from __future__ import annotations

from ragas import EvaluationDataset, evaluate
from ragas.metrics import ExactMatch, NonLLMContextRecall, NonLLMStringSimilarity

ROWS = [
    {"user_input": "Does the Pro plan include single sign-on?",
     "retrieved_contexts": ["The Pro plan includes single sign-on.",
                            "Teams under 50 seats need the Security add-on."],
     "reference_contexts": ["The Pro plan includes single sign-on."],
     "response": "Yes, SSO is included on Pro at no extra cost.",
     "reference": "Yes, SSO is included on Pro."},
    {"user_input": "How long are deleted pages kept?",
     "retrieved_contexts": ["Deleted pages stay in the trash for 30 days."],
     "reference_contexts": ["Deleted pages stay in the trash for 30 days."],
     "response": "Deleted pages are kept for 30 days.",
     "reference": "Deleted pages are kept for 30 days."},
    {"user_input": "Can I export a space to PDF?",
     "retrieved_contexts": ["Spaces can be exported as PDF or HTML.", "Exports run nightly.",
                            "Admins can schedule exports, e.g. \"weekly\", in Settings."],
     "reference_contexts": ["Spaces can be exported as PDF or HTML."],
     "response": "Yes, as PDF or HTML.",
     "reference": "Yes, as PDF or HTML."},
    {"user_input": "Is there an uptime SLA?",
     "retrieved_contexts": ["Enterprise plans carry a 99.9% uptime SLA."],
     "reference_contexts": ["Enterprise plans carry a 99.9% uptime SLA."],
     "response": "There is no SLA.",
     "reference": "Enterprise plans carry a 99.9% uptime SLA."},
]


def main() -> None:
    dataset = EvaluationDataset.from_list(ROWS)
    dataset.to_csv("dataset.csv")
    dataset.to_jsonl("dataset.jsonl")
    result = evaluate(dataset, metrics=[NonLLMContextRecall(), NonLLMStringSimilarity(),
                                        ExactMatch()], show_progress=False)
    result.to_pandas().to_csv("results.csv", index=False)


if __name__ == "__main__":
    main()
