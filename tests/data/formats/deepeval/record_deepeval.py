"""Record the DeepEval fixtures of tests/labels/formats (run once, outside the project venv).

    python -m venv /tmp/deepeval && /tmp/deepeval/bin/pip install deepeval==4.3.1
    cd tests/data/formats/deepeval && DEEPEVAL_TELEMETRY_OPT_OUT=YES \
        /tmp/deepeval/bin/python record_deepeval.py

Three ``LLMTestCase``s saved with ``EvaluationDataset.save_as("json", include_test_cases=True)``
(the test cases' JSON), and an ``evaluate()`` run with a metric that needs no model (a
``BaseMetric`` scoring word overlap with the expected output, threshold 0.5), whose test run
DeepEval writes to ``results_folder``: the JSON a ``deepeval test run`` leaves behind.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from deepeval import evaluate
from deepeval.dataset import EvaluationDataset
from deepeval.evaluate.configs import AsyncConfig, DisplayConfig
from deepeval.metrics import BaseMetric
from deepeval.test_case import LLMTestCase

CASES = [
    LLMTestCase(name="sso", input="Does the Pro plan include single sign-on?",
                actual_output="Yes, SSO is included on Pro at no extra cost.",
                expected_output="Yes, SSO is included on Pro.",
                retrieval_context=["The Pro plan includes single sign-on.",
                                   "Teams under 50 seats need the Security add-on."]),
    LLMTestCase(name="trash", input="How long are deleted pages kept?",
                actual_output="Deleted pages are kept for 30 days.",
                expected_output="Deleted pages are kept for 30 days.",
                retrieval_context=["Deleted pages stay in the trash for 30 days."]),
    LLMTestCase(name="sla", input="Is there an uptime SLA?",
                actual_output="There is no SLA.",
                expected_output="Enterprise plans carry a 99.9% uptime SLA.",
                retrieval_context=["Enterprise plans carry a 99.9% uptime SLA."]),
]


class Overlap(BaseMetric):
    """Share of the expected output's words in the answer (no model)."""

    def __init__(self, threshold: float = 0.5) -> None:
        self.threshold = threshold

    def measure(self, test_case: LLMTestCase, *args: object, **kwargs: object) -> float:
        expected = set(test_case.expected_output.lower().split())
        got = set(test_case.actual_output.lower().split())
        self.score = len(expected & got) / len(expected)
        self.success = self.score >= self.threshold
        self.reason = f"{len(expected & got)} of {len(expected)} expected words"
        return self.score

    async def a_measure(self, test_case: LLMTestCase, *args: object, **kwargs: object) -> float:
        return self.measure(test_case)

    def is_successful(self) -> bool:
        return bool(self.success)

    @property
    def __name__(self) -> str:
        return "Overlap"


def main() -> None:
    dataset = EvaluationDataset()
    for case in CASES:
        dataset.add_test_case(case)
    dataset.save_as("json", directory=".", file_name="test_cases", include_test_cases=True)
    evaluate(test_cases=list(CASES), metrics=[Overlap()],
             async_config=AsyncConfig(run_async=False),
             display_config=DisplayConfig(show_indicator=False, print_results=False,
                                          results_folder="run"))
    [written] = list(Path("run").rglob("*.json"))
    shutil.copy(written, "test_run.json")
    shutil.rmtree("run")


if __name__ == "__main__":
    main()
