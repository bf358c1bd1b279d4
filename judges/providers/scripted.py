"""A scripted provider (``scripted/<name>``): registered like a real one, for tests and demos.

Without a script it plays a small deterministic *demo judge*: it reads the reply format off the
prompt (JSON with a ``"verdict"`` key, optionally a ``"claims"`` list, or a final
``VERDICT: X`` line) and decides by word overlap between the answer and the sources (pairwise:
the answer with more overlap wins). It follows two rules when its instructions state them
(:func:`_stated_rules`: stray numbers contradict; refusals only for uncovered questions); asked
by the alignment proposer
(:data:`PROPOSER_OPENING`) it assembles a proposal from the listed rows
(:func:`demo_proposal`). It is a plumbing stand-in, not a judge: the app says so wherever its
verdicts are shown.

With a script, it returns the scripted steps in order — a reply text, a :class:`Completion`,
or an exception to raise (e.g. ``ProviderError("slow down", kind="rate_limit",
retryable=True, retry_after=0.01)``) — and falls back to the demo judge when the script runs
out. :meth:`ScriptedProvider.script_for` targets requests whose prompt contains a string.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from judges.providers.base import Completion, CompletionRequest, Provider, Usage

Step = str | Completion | BaseException
Responder = Callable[[CompletionRequest], str | Completion]

_WORD = re.compile(r"[a-z0-9]+")
_BLOCK = r"<{tag}>\s*(.*?)\s*</{tag}>"
_STOPWORDS = frozenset({
    "the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "is", "are", "was", "were",
    "be", "it", "its", "this", "that", "with", "as", "by", "at", "from", "not", "no", "yes",
    "can", "you", "your", "our", "their", "they", "we",
})


def _block(text: str, tag: str) -> str:
    match = re.search(_BLOCK.format(tag=tag), text, flags=re.DOTALL)
    return match.group(1) if match else ""


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _STOPWORDS}


def _overlap(answer: str, evidence: str) -> float:
    words = _content_words(answer)
    if not words:
        return 1.0
    return len(words & _content_words(evidence)) / len(words)


PROPOSER_OPENING = "You revise the instructions of an LLM judge"
"""How the alignment proposer's system prompt starts (:mod:`judges.alignment.propose`)."""

_ROW = re.compile(r'<row id="([^"]*)">(.*?)</row>', flags=re.DOTALL)


def demo_proposal(prompt: str) -> str:
    """The stand-in proposer: criteria and examples assembled from the listed rows' fields.

    It rewrites nothing by understanding: fixed criteria plus the experts' failure tags, up to
    two rows of each expert verdict as examples, and every listed row as addressed.
    Deterministic, for tests and the offline demo.
    """
    rows = []
    for item_id, body in _ROW.findall(prompt):
        human = re.search(r"experts: (pass|fail)", body)
        tagged = re.search(r"failure tags: (.*)", body)
        rows.append((item_id, human.group(1) if human else "",
                     tagged.group(1) if tagged else ""))
    tags = sorted({t.strip() for _, _, found in rows for t in found.split(",") if t.strip()})
    missed = sum(1 for _, human, _ in rows if human == "fail")
    criteria = (
        "Judge only against the numbered sources. Fail the answer when any statement is not "
        "found in them, when it contradicts them, or when it drops a condition they attach; "
        "a refusal passes only when the sources really do not cover the question. "
        f"The experts disagreed with the judge on {len(rows)} rows, {missed} of them answers "
        "the judge passed and the experts failed"
        + (f"; their failure tags were: {', '.join(tags)}." if tags else ".")
    )
    examples = ([r for r in rows if r[1] == "fail"][:2] + [r for r in rows if r[1] == "pass"][:2])
    return json.dumps({
        "criteria": criteria,
        "examples": [{"item_id": i, "explanation": f"The experts judged this row {h}."}
                     for i, h, _ in examples],
        "addresses": [i for i, _, _ in rows],
    })


_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_REFUSAL = re.compile(r"couldn't find|could not find|don't cover|do not cover|can't answer|"
                      r"cannot answer|not covered", flags=re.IGNORECASE)


def _stated_rules(request: CompletionRequest, prompt: str, evidence: str) -> tuple[str, str] | None:
    """A verdict from rules the system prompt states, or ``None`` (the overlap rule decides).

    The stand-in follows two rules when its instructions spell them out (as the stand-in
    proposer's criteria do): an answer that *contradicts* the sources fails when it states a
    number the sources do not have; and when *a refusal passes only when* the sources do not
    cover the question, a refusal passes iff the question's words are mostly missing from them.
    """
    rules = request.system.lower()
    answer = _block(prompt, "answer")
    if "contradicts" in rules:
        sources = set(_NUMBER.findall(_block(prompt, "sources")))
        stray = [n for n in _NUMBER.findall(answer) if n not in sources]
        if stray:
            return "FAIL", f"The number {stray[0]} is not in the sources."
    if "a refusal passes only when" in rules and _REFUSAL.search(answer):
        covered = _overlap(_block(prompt, "question"), _block(prompt, "sources"))
        if covered >= 0.5:
            return "FAIL", f"A refusal, but {covered:.0%} of the question is in the sources."
        return "PASS", f"A refusal, and only {covered:.0%} of the question is in the sources."
    return None


def demo_reply(request: CompletionRequest) -> str:
    """The demo judge's reply to ``request`` (deterministic; see the module docstring)."""
    prompt = request.messages[-1].content if request.messages else ""
    if request.system.startswith(PROPOSER_OPENING):
        return demo_proposal(prompt)
    everything = request.system + "\n" + prompt
    evidence = _block(prompt, "sources") + " " + _block(prompt, "question") + " " + _block(
        prompt, "reference"
    )
    if "<answer_a>" in prompt:
        a = _overlap(_block(prompt, "answer_a"), evidence)
        b = _overlap(_block(prompt, "answer_b"), evidence)
        label = "TIE" if abs(a - b) < 0.05 else ("A" if a > b else "B")
        reasoning = f"Answer A overlaps the sources {a:.0%}, answer B {b:.0%}."
    else:
        share = _overlap(_block(prompt, "answer"), evidence)
        label = "PASS" if share >= 0.75 else "FAIL" if share < 0.5 else "UNSURE"
        reasoning = f"{share:.0%} of the answer's content words appear in the sources."
        ruled = _stated_rules(request, prompt, evidence)
        if ruled is not None:
            label, reasoning = ruled
    if '"verdict"' not in everything:
        return f"{reasoning}\nVERDICT: {label}"
    reply: dict[str, Any] = {"reasoning": reasoning, "verdict": label}
    if '"claims"' in everything:
        status = {"PASS": "SUPPORTED", "FAIL": "NOT_FOUND"}.get(label, "SUPPORTED")
        reply["claims"] = [{"claim": "(demo) the answer as a whole", "status": status}]
        if label == "UNSURE":
            reply["claims"].append({"claim": "(demo) an unclear detail", "status": "NOT_FOUND"})
    return json.dumps(reply)


class ScriptedProvider(Provider):
    """Replies from a script, then from ``responder`` (default: :func:`demo_reply`).

    Args:
        model: any name (``scripted/<model>``).
        steps: replies/exceptions to return, in order.
        responder: what to answer when the script is empty.
        latency: seconds each call takes (``asyncio.sleep``; the runner's timeout applies).
    """

    name = "scripted"
    supports_seed = True

    def __init__(
        self, model: str = "demo", steps: Iterable[Step] = (), *,
        responder: Responder = demo_reply, latency: float = 0.0,
    ) -> None:
        """Queue ``steps`` for the calls to come, in order; ``responder`` answers the rest."""
        super().__init__(model)
        self._steps: deque[Step] = deque(steps)
        self._targeted: list[tuple[str, deque[Step]]] = []
        self._lock = threading.Lock()
        self.responder = responder
        self.latency = latency
        self.requests: list[CompletionRequest] = []

    def script(self, *steps: Step) -> None:
        """Append steps for the next requests."""
        with self._lock:
            self._steps.extend(steps)

    def script_for(self, needle: str, *steps: Step) -> None:
        """Steps for the next requests whose final user message contains ``needle``."""
        with self._lock:
            self._targeted.append((needle, deque(steps)))

    def _next(self, request: CompletionRequest) -> Step | None:
        prompt = request.messages[-1].content if request.messages else ""
        with self._lock:
            self.requests.append(request)
            for needle, steps in self._targeted:
                if steps and needle in prompt:
                    return steps.popleft()
            return self._steps.popleft() if self._steps else None

    async def complete(self, request: CompletionRequest) -> Completion:
        """Play the next step (sleeping ``latency`` first)."""
        step = self._next(request)
        if self.latency:
            await asyncio.sleep(self.latency)
        if step is None:
            step = self.responder(request)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, Completion):
            return step
        prompt_chars = len(request.system) + sum(len(m.content) for m in request.messages)
        digest = hashlib.sha256(step.encode()).hexdigest()[:12]
        return Completion(
            text=step,
            usage=Usage(prompt_chars // 4 + 1, len(step) // 4 + 1),
            raw={"scripted": True, "model": self.model, "text": step},
            finish_reason="stop",
            model=self.model,
            response_id=f"scripted-{digest}",
        )


__all__ = ["PROPOSER_OPENING", "Responder", "ScriptedProvider", "Step", "demo_proposal",
           "demo_reply"]
