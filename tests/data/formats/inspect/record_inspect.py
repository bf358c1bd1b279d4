"""Record the inspect_ai fixtures of tests/labels/formats (run once, outside the project venv).

    python -m venv /tmp/inspect && /tmp/inspect/bin/pip install inspect-ai==0.3.285
    cd tests/data/formats/inspect && /tmp/inspect/bin/python record_inspect.py

A RAG task of four samples answered and graded by inspect's ``mockllm`` model (scripted
replies, no network): ``model_graded_fact`` is the LLM judge, ``includes`` a second scorer;
then a reviewer ("dana") overrides one grade with ``edit_score`` (inspect's human review,
kept in the score's ``history`` with its provenance). Written as a ``.json`` log and as the
default ``.eval`` log. Offline, mockllm's token count (tiktoken, which downloads its encoding on
first use) is replaced by a count of characters / 4.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import inspect_ai.model._model as inspect_model
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import ProvenanceData, edit_score, read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.scorer import ScoreEdit, includes, model_graded_fact
from inspect_ai.solver import generate

SAMPLES = [
    ("q1", "Does the Pro plan include single sign-on?", "Yes, for teams under 50 seats.",
     ["The Pro plan includes single sign-on.", "Teams under 50 seats need the Security add-on."],
     "Yes, SSO is included on Pro at no extra cost."),
    ("q2", "How long are deleted pages kept?", "30 days.",
     ["Deleted pages stay in the trash for 30 days."], "Deleted pages are kept for 30 days."),
    ("q3", "Can I export a space to PDF?", "Yes.",
     ["Spaces can be exported as PDF or HTML."], "Yes, as PDF or HTML."),
    ("q4", "Is there an uptime SLA?", "99.9% on Enterprise.",
     ["Enterprise plans carry a 99.9% uptime SLA."], "There is no SLA."),
]
GRADES = ["GRADE: C", "GRADE: C", "GRADE: C", "GRADE: I"]


def main() -> None:
    inspect_model.count_text_tokens = lambda text: len(text) // 4  # type: ignore[assignment]
    dataset = [Sample(id=sid, input=q, target=t, metadata={"contexts": ctx})
               for sid, q, t, ctx, _ in SAMPLES]
    answerer = get_model("mockllm/model", custom_outputs=[
        ModelOutput.from_content("mockllm/model", a) for *_, a in SAMPLES])
    grader = get_model("mockllm/model", custom_outputs=[
        ModelOutput.from_content("mockllm/model", f"The answer is checked.\n{g}")
        for g in GRADES])
    task = Task(dataset=dataset, solver=generate(),
                scorer=[model_graded_fact(model=grader), includes()])
    out = Path("logs")
    [log] = eval(task, model=answerer, log_dir=str(out), log_format="json", display="none")
    log = read_eval_log(log.location)
    edit_score(log, "q1", "model_graded_fact", ScoreEdit(
        value="I", explanation="Says 'at no extra cost'; the sources say otherwise.",
        provenance=ProvenanceData(author="dana", reason="unsupported claim")))
    write_eval_log(log, "rag.json", format="json")
    write_eval_log(log, "rag.eval", format="eval")
    shutil.rmtree(out)


if __name__ == "__main__":
    main()
