"""Helpers shared by the judge tests: rows, a dummy key, config edits (on pytest's pythonpath)."""

from __future__ import annotations

from typing import Any

from judges.config import JudgeConfig, load_builtin, parse_config

DUMMY_KEY = "sk-test-do-not-store-0123456789"
"""A recognisable dummy key: tests grep the database for it."""


def faithfulness_rows(n: int, *, sources: int = 2) -> list[dict[str, Any]]:
    """``n`` pointwise rows, each with ``sources`` passages (>= 2 so the swapped order differs)."""
    return [
        {
            "id": f"row-{i:03d}",
            "question": f"Question {i}: what does plan {i} include?",
            "answer": f"Plan {i} includes feature {i} and support.",
            "sources": [f"Source {s} of row {i}: plan {i} includes feature {i}."
                        for s in range(sources)],
            "reference": f"Feature {i}.",
        }
        for i in range(n)
    ]


def pairwise_rows(n: int) -> list[dict[str, Any]]:
    """``n`` pairwise rows."""
    return [
        {
            "id": f"pair-{i:03d}",
            "question": f"Question {i}?",
            "answer_a": f"Answer A{i}.",
            "answer_b": f"Answer B{i}, longer.",
            "sources": [f"Source one {i}.", f"Source two {i}."],
        }
        for i in range(n)
    ]


def with_changes(config: JudgeConfig, **changes: Any) -> JudgeConfig:
    """``config`` with some fields replaced (validated again)."""
    return parse_config({**config.model_dump(mode="json"), **changes})


def oneshot_judge(model: str, *, max_tokens: int = 300, seed: int = 1) -> JudgeConfig:
    """The built-in one-shot faithfulness judge (marker contract) on ``model``, temperature 0."""
    return with_changes(
        load_builtin("faithfulness-oneshot"), model=model,
        generation={"temperature": 0.0, "max_tokens": max_tokens, "seed": seed,
                    "json_mode": False},
    )
