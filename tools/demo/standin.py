"""Write the demo's stand-in verdicts: simulated from the rows' truth at fixed error rates.

Not a judge (see ``judges/demo/data/verdicts/standin-simulated.yaml``). The scripted provider
answers each prompt with the row's true faithfulness (from the shipped rows' metadata), flipped
with the fixed sensitivity and specificity of ``content.yaml``'s ``standin`` by a seeded hash of
the row's question, answer and sources: the same row content always gets the same verdict, and
the error rates are the same on every dataset. The demo ships these verdicts so that the
production week and the week after the fix can be compared under one judge without a model,
and the comparison checked against the known true difference.

This script runs the config through the project's own runner (:func:`judges.runner.run_judge`)
on a scratch database holding the shipped rows, and writes
``judges/demo/data/verdicts/<dataset>/faithfulness/standin-simulated.jsonl`` (columns ``id,
verdict, repeat, order, reasoning, config_id``). Re-running it gives byte-identical files, which
a test checks on a sample of rows.

Usage: ``python -m tools.demo.standin [--out DIR]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from judges.config import JudgeConfig, load_config
from judges.demo.layout import (
    AFTER_FIX_DATASET,
    AFTER_FIX_FILE,
    DATA_DIR,
    LABELLED_DATASET,
    LABELLED_FILE,
    PRODUCTION_DATASET,
    PRODUCTION_FILE,
    STANDIN_CONFIG,
    VERDICTS_DIR,
)
from judges.providers.base import CompletionRequest
from judges.providers.scripted import ScriptedProvider
from judges.runner import run_judge
from judges.verdicts import judge_verdicts
from judges.workspace import Workspace
from labels.importing import import_rows
from labels.stores.label_store import LabelStore
from tools.demo.content import STANDIN

DATASETS = ((LABELLED_DATASET, LABELLED_FILE), (PRODUCTION_DATASET, PRODUCTION_FILE),
            (AFTER_FIX_DATASET, AFTER_FIX_FILE))
CRITERION = "faithfulness"


def _block(prompt: str, tag: str) -> str:
    match = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, flags=re.DOTALL)
    return match.group(1) if match else ""


class SimulatedJudge:
    """The scripted provider's responder: a row's truth, flipped at fixed error rates.

    Args:
        rows: the demo rows (import format, with ``metadata.true_faithfulness``).
        sensitivity: chance a truly passing row gets PASS.
        specificity: chance a truly failing row gets FAIL.
        seed: mixed into the hash that decides each row's flip.
    """

    def __init__(self, rows: Iterable[dict[str, Any]], *, sensitivity: float,
                 specificity: float, seed: int) -> None:
        """Index ``rows`` by question and answer."""
        self.sensitivity, self.specificity, self.seed = sensitivity, specificity, seed
        self._rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for row in rows:
            self._rows.setdefault((row["question"], row["answer"]), []).append(row)

    def _row(self, prompt: str) -> dict[str, Any]:
        question, answer = _block(prompt, "question"), _block(prompt, "answer")
        sources = _block(prompt, "sources")
        # Rows with the same question and answer differ in what was retrieved.
        candidates = [
            row for row in self._rows.get((question, answer), [])
            if all(s["text"].split("\n", 1)[-1] in sources for s in row["sources"])
        ]
        candidates.sort(key=lambda row: -len(row["sources"]))
        if not candidates:
            raise LookupError(f"no demo row has the answer {answer[:60]!r}")
        return candidates[0]

    def __call__(self, request: CompletionRequest) -> str:
        """``VERDICT: PASS`` or ``VERDICT: FAIL`` for the row the prompt shows."""
        row = self._row(request.messages[-1].content)
        content = json.dumps([self.seed, row["question"], row["answer"],
                              [s["source_id"] for s in row["sources"]]])
        draw = int(hashlib.sha256(content.encode()).hexdigest()[:12], 16) / 16**12
        truth = row["metadata"]["true_faithfulness"]
        right = draw < (self.sensitivity if truth == "pass" else self.specificity)
        verdict = truth if right else ("fail" if truth == "pass" else "pass")
        return (f"Simulated: true verdict {truth}, kept with the stand-in's fixed error "
                f"rates" if right else f"Simulated: true verdict {truth}, flipped at the "
                "stand-in's fixed error rates") + f".\nVERDICT: {verdict.upper()}"


def simulated_judge(data_dir: Path = DATA_DIR) -> SimulatedJudge:
    """The stand-in's responder over the shipped rows, with the rates of ``content.yaml``."""
    rows = [json.loads(line) for _, name in DATASETS
            for line in (data_dir / name).read_text(encoding="utf-8").splitlines()]
    return SimulatedJudge(rows, sensitivity=float(STANDIN["sensitivity"]),
                          specificity=float(STANDIN["specificity"]), seed=int(STANDIN["seed"]))


def standin_config() -> JudgeConfig:
    """The stand-in's config, as shipped."""
    return load_config(DATA_DIR / VERDICTS_DIR / STANDIN_CONFIG)


def load_rows(store: LabelStore, data_dir: Path = DATA_DIR) -> None:
    """Import the three demo datasets' rows (no labels, no verdicts) into ``store``."""
    for dataset, name in DATASETS:
        import_rows(store, data_dir / name, dataset)


def verdict_lines(workspace: Workspace, config: JudgeConfig, dataset: str,
                  ids: Iterable[str] | None = None) -> list[str]:
    """Run the stand-in on ``dataset`` (or only ``ids``) and return the file's JSONL lines."""
    wanted = None if ids is None else list(ids)
    provider = ScriptedProvider(config.model.split("/", 1)[1], responder=simulated_judge())
    run_judge(config, dataset, workspace=workspace, provider=provider, item_ids=wanted,
              concurrency=8)
    frame = judge_verdicts(workspace, dataset, config.config_id)
    if wanted is not None:
        frame = frame[frame["item_id"].isin(wanted)]
    return [
        json.dumps({"id": str(r["item_id"]), "verdict": r["verdict"], "repeat": int(r["repeat"]),
                    "order": str(r["order"]), "reasoning": r["reasoning"] or "",
                    "config_id": config.config_id}, ensure_ascii=False)
        for r in frame.to_dict("records")
    ]


def write_files(out_dir: Path = DATA_DIR / VERDICTS_DIR) -> list[Path]:
    """Run the stand-in over every demo row and write one file per dataset."""
    config = standin_config()
    written = []
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Workspace.open(Path(scratch) / "standin.duckdb")
        try:
            load_rows(workspace.labels)
            for dataset, _ in DATASETS:
                path = out_dir / dataset / CRITERION / f"{config.name}.jsonl"
                path.parent.mkdir(parents=True, exist_ok=True)
                lines = verdict_lines(workspace, config, dataset)
                path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
                written.append(path)
        finally:
            workspace.close()
    return written


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point: ``python -m tools.demo.standin [--out DIR]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=DATA_DIR / VERDICTS_DIR,
                        help="the verdicts folder (default: %(default)s)")
    for path in write_files(parser.parse_args(argv).out):
        print(path)


if __name__ == "__main__":
    main()
