"""Rows and a scripted judge + proposer for the alignment tests (on pytest's pythonpath).

The judge's replies follow a rule: the current revision passes everything; a revision whose
system prompt carries revised criteria checks that every number of the answer is in the
sources, except on "tricky" rows, which it still passes. The proposer lists the rows it was
shown. Served over real HTTP by :class:`fake_llm_server.FakeLLMServer` (``responder=``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from fake_llm_server import prompt_text

from judges.alignment.propose import CRITERIA_HEADING
from judges.providers.scripted import PROPOSER_OPENING

N = 48
DATASET = "bot"
_BLOCK = r"<{0}>\s*(.*?)\s*</{0}>"
_NUMBER = re.compile(r"\d+")


def truth(i: int) -> str:
    return "fail" if i % 3 == 0 else "pass"


def tricky(i: int) -> bool:
    return i % 9 == 0


def rows() -> list[dict[str, Any]]:
    out = []
    for i in range(N):
        seats = 10 + i if truth(i) == "pass" else 200 + i
        question = f"How many seats does plan {i} include{' (tricky)' if tricky(i) else ''}?"
        out.append({
            "id": f"row-{i:03d}", "question": question,
            "answer": f"Plan number {i} includes {seats} seats for the whole team.",
            "sources": [f"Plan number {i} includes {10 + i} seats for the whole team.",
                        f"Plan number {i} costs {5 + i} dollars per seat and month."],
            "segment": ("lookup", "multi")[i % 2],
        })
    return out


def _block(text: str, tag: str) -> str:
    match = re.search(_BLOCK.format(tag), text, flags=re.DOTALL)
    return match.group(1) if match else ""


class Scripted:
    """The fake server's responder: the judge rule above, and a proposer."""

    def __init__(self) -> None:
        self.proposer_prompts: list[str] = []
        self.proposal: dict[str, Any] | None = None

    def __call__(self, path: str, body: dict[str, Any]) -> str:
        text = prompt_text(body)
        if text.startswith(PROPOSER_OPENING):
            self.proposer_prompts.append(text)
            if self.proposal is not None:
                return json.dumps(self.proposal)
            ids = re.findall(r'<row id="([^"]+)">', text)
            return "Here is my revision:\n" + json.dumps({
                "criteria": "Fail an answer that states a number the sources do not have.",
                "examples": [{"item_id": ids[0], "explanation": "The seat count is wrong."}],
                "addresses": ids,
            })
        last = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        if CRITERIA_HEADING not in text or "(tricky)" in _block(last, "question"):
            return "Looks fine.\nVERDICT: PASS"
        sources = set(_NUMBER.findall(_block(last, "sources")))
        ok = set(_NUMBER.findall(_block(last, "answer"))) <= sources
        return f"Numbers checked.\nVERDICT: {'PASS' if ok else 'FAIL'}"
