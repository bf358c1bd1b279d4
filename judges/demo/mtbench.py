"""MT-Bench human judgments (Zheng et al. 2023, CC BY 4.0) as calibrate's import files.

The source is the turn-matched subset described in ``data/mtbench/SOURCE.md``: ``votes.jsonl``
(one line per expert vote, with GPT-4's pairwise verdict on the same question, model pair and
turn) and ``conversations.jsonl`` (each model's two-turn conversation per question).
:func:`convert_mtbench` writes the three files the ordinary import commands read:

* ``rows.jsonl``: one pairwise item per (question, turn, model pair) holding what MT-Bench's
  judge saw: ``question`` (turn 2: both turns' questions), ``answer_a`` / ``answer_b`` (turn 2:
  each model's first- and second-turn answers), ``reference`` (MT-Bench's reference answer for
  maths, reasoning and coding), ``segment`` (the category) and, as metadata, ``model_a``,
  ``model_b``, ``question_id``, ``turn``;
* ``labels.csv``: one row per expert vote (``id``, ``annotator``, ``label`` = a / b / tie);
* ``gpt4.csv``: GPT-4's verdict per item (``id``, ``verdict``, ``order``, ``reasoning``).
  MT-Bench ran GPT-4 in both orders but published only the combined verdict: ``tie
  (inconsistent)`` marks a verdict that changed when the answers swapped places, which the
  MT-Bench rule counts as a tie. So one verdict per item is imported, the inconsistent ones as
  ``tie`` with that reason, and the report says position consistency was not measured. A file
  with the two orders' verdicts (``gpt4_winner_original`` / ``gpt4_winner_swapped``, the swapped
  one already naming the row's own A/B) imports as two calls per item instead.

An empty answer (a model that returned nothing) is imported as empty text, with a warning from
the row import: it is exactly what a judge must fail.

Then: ``calibrate import rows.jsonl --dataset mtbench``, ``calibrate labels import labels.csv
--dataset mtbench`` (the pairwise criterion ``preference`` is the default on a pairwise dataset)
and ``calibrate verdicts import gpt4.csv --dataset mtbench --judge gpt-4-mtbench``;
:func:`load_mtbench` does the same through the library (``docs/recipes/mtbench.md``).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judges.verdicts import import_verdicts
from labels.errors import ImportFileError
from labels.importing import OnChanged, import_labels, import_rows

if TYPE_CHECKING:
    from judges.workspace import Workspace

MTBENCH_JUDGE = "gpt-4-mtbench"
"""The name GPT-4's imported MT-Bench verdicts get."""
_WINNER = {"model_a": "a", "model_b": "b", "tie": "tie", "tie (inconsistent)": "tie"}
_INCONSISTENT = ("MT-Bench: GPT-4's verdict changed when the two answers swapped places "
                 "(published as 'tie (inconsistent)'; the MT-Bench rule counts it as a tie)")


@dataclass(frozen=True)
class MTBenchFiles:
    """What :func:`convert_mtbench` wrote.

    Attributes:
        rows: The pairwise items file.
        labels: One row per human vote.
        verdicts: GPT-4's verdicts.
        n_items: Items written.
        n_votes: Human votes written.
        n_verdicts: Verdict rows written.
        inconsistent: Items whose GPT-4 verdict was ``tie (inconsistent)``.
        empty_answers: Items with an empty answer (``id: which side``).
        conflicts: Items with the same text as an earlier item but another published verdict
            (the earlier verdict stands for both).
    """

    rows: Path
    labels: Path
    verdicts: Path
    n_items: int
    n_votes: int
    n_verdicts: int
    inconsistent: int
    empty_answers: tuple[str, ...]
    conflicts: tuple[str, ...] = ()


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    out = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except ValueError as error:
                raise ImportFileError(f"not JSON: {error}", path=str(path), row=number) from None
    return out


def item_id(question_id: Any, turn: Any, model_a: str, model_b: str) -> str:
    """The item id of one (question, turn, model pair): ``q81-t1-alpaca-13b-vs-gpt-3.5-turbo``."""
    return f"q{int(question_id)}-t{int(turn)}-{model_a}-vs-{model_b}"


def _turns(conversations: dict[tuple[int, str], list[dict[str, str]]], qid: int, model: str,
           source: Path) -> tuple[str, str, str, str]:
    """``(question 1, answer 1, question 2, answer 2)`` of one model's conversation."""
    conv = conversations.get((qid, model))
    if conv is None:
        raise ImportFileError(f"no conversation of model {model!r} for question {qid}",
                              path=str(source))
    texts = [str(m.get("content") or "") for m in conv[:4]] + [""] * (4 - min(4, len(conv)))
    return texts[0], texts[1], texts[2], texts[3]


def _content(conversations: dict[tuple[int, str], list[dict[str, str]]], qid: int, turn: int,
             model_a: str, model_b: str, source: Path) -> tuple[str, str, str]:
    """``(question, answer_a, answer_b)`` as MT-Bench's judge saw them for this turn.

    A second-turn judgement shows the whole conversation (MT-Bench's multi-turn prompt), so a
    turn-2 item quotes both questions and each answer carries its model's first-turn answer.
    """
    q1, a1, q2, a2 = _turns(conversations, qid, model_a, source)
    _, b1, _, b2 = _turns(conversations, qid, model_b, source)
    if turn == 1:
        return q1, a1, b1
    question = f"[First turn] {q1}\n\n[Second turn] {q2}"

    def both(first: str, second: str) -> str:
        # An empty second answer stays empty, so the row import flags it.
        return f"[First turn]\n{first}\n\n[Second turn]\n{second}" if second.strip() else ""

    return question, both(a1, a2), both(b1, b2)


def _references(source: Path) -> dict[int, list[str]]:
    path = source / "question.jsonl"
    if not path.exists():
        return {}
    return {int(q["question_id"]): [str(r) for r in q["reference"]]
            for q in _read_jsonl(path) if q.get("reference")}


def convert_mtbench(source_dir: str | Path, out_dir: str | Path) -> MTBenchFiles:
    """Write ``rows.jsonl``, ``labels.csv`` and ``gpt4.csv`` from the MT-Bench source files.

    Items whose text is identical (two models that gave the same answer) are still two rows, each
    with its own GPT-4 verdict (an imported verdict belongs to its row id); when GPT-4's
    published verdicts for the two differ, the item is listed in ``conflicts``.

    Args:
        source_dir: Folder with ``votes.jsonl``, ``conversations.jsonl`` and optionally
            ``question.jsonl`` (its ``reference`` answers become the items' ``reference``).
        out_dir: Folder to write to (created if needed).

    Returns:
        An :class:`MTBenchFiles`.

    Raises:
        ImportFileError: a source file is malformed or a vote names an unknown winner.
    """
    src, out = Path(source_dir), Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    votes_path, conv_path = src / "votes.jsonl", src / "conversations.jsonl"
    conversations = {(int(c["question_id"]), str(c["model"])): c["conversation"]
                     for c in _read_jsonl(conv_path)}
    references = _references(src)
    items: dict[str, dict[str, Any]] = {}
    verdicts: dict[str, list[tuple[str, str, str]]] = {}
    labels: list[tuple[str, str, str]] = []
    by_content: dict[tuple[str, str, str, str], str] = {}
    conflicts: list[str] = []
    for number, vote in enumerate(_read_jsonl(votes_path), start=1):
        qid, turn = int(vote["question_id"]), int(vote["turn"])
        model_a, model_b = str(vote["model_a"]), str(vote["model_b"])
        key = item_id(qid, turn, model_a, model_b)
        human = _WINNER.get(str(vote["human_winner"]))
        if human is None or vote["human_winner"] == "tie (inconsistent)":
            raise ImportFileError(f"unknown human_winner {vote['human_winner']!r}",
                                  path=str(votes_path), row=number, column="human_winner")
        labels.append((key, str(vote["human_judge"]), human))
        if key in items:
            continue
        question, answer_a, answer_b = _content(conversations, qid, turn, model_a, model_b,
                                                conv_path)
        reference = references.get(qid, [])
        ref = reference[turn - 1] if len(reference) >= turn else ""
        items[key] = {
            "id": key, "question": question, "answer_a": answer_a, "answer_b": answer_b,
            "segment": str(vote.get("category") or ""),
            "model_a": model_a, "model_b": model_b, "question_id": qid, "turn": turn,
        }
        if ref:
            items[key]["reference"] = ref
        calls = _judge_rows(vote, votes_path, number)
        same = by_content.setdefault((question, answer_a, answer_b, ref), key)
        if same != key and verdicts[same] != calls:
            conflicts.append(f"{key} (same text as {same})")
        verdicts[key] = calls
    rows_path, labels_path, verdicts_path = out / "rows.jsonl", out / "labels.csv", out / "gpt4.csv"
    with rows_path.open("w", encoding="utf-8") as handle:
        for row in items.values():
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    with labels_path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "annotator", "label"])
        writer.writerows(labels)
    n_verdicts = inconsistent = 0
    with verdicts_path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "verdict", "order", "reasoning"])
        for key, calls in verdicts.items():
            for verdict, order, reasoning in calls:
                writer.writerow([key, verdict, order, reasoning])
                n_verdicts += 1
            inconsistent += any(r == _INCONSISTENT for _, _, r in calls)
    empty = tuple(f"{k}: answer_{side}" for k, row in items.items() for side in ("a", "b")
                  if not str(row[f"answer_{side}"]).strip())
    return MTBenchFiles(rows_path, labels_path, verdicts_path, len(items), len(labels),
                        n_verdicts, inconsistent, empty, tuple(conflicts))


def _judge_rows(vote: dict[str, Any], path: Path, number: int) -> list[tuple[str, str, str]]:
    """GPT-4's calls for one item: both orders when the file has them, else the combined one."""
    both = ("gpt4_winner_original", "gpt4_winner_swapped")
    if all(vote.get(k) for k in both):
        out = []
        for column, order in zip(both, ("original", "swapped"), strict=True):
            verdict = _WINNER.get(str(vote[column]))
            if verdict is None:
                raise ImportFileError(f"unknown winner {vote[column]!r}", path=str(path),
                                      row=number, column=column)
            out.append((verdict, order, ""))
        return out
    winner = str(vote.get("gpt4_winner"))
    verdict = _WINNER.get(winner)
    if verdict is None:
        raise ImportFileError(f"unknown gpt4_winner {winner!r}", path=str(path), row=number,
                              column="gpt4_winner")
    return [(verdict, "original", _INCONSISTENT if winner == "tie (inconsistent)" else "")]


def load_mtbench(
    workspace: Workspace, source_dir: str | Path, work_dir: str | Path, *,
    dataset: str = "mtbench",
    judge: str = MTBENCH_JUDGE, on_changed: OnChanged = "error",
) -> tuple[MTBenchFiles, tuple[str, ...]]:
    """Convert and import MT-Bench into ``dataset``: rows, every vote, GPT-4's verdicts.

    Returns:
        The converted files and the row import's warnings (the empty answers).
    """
    files = convert_mtbench(source_dir, work_dir)
    summary = import_rows(workspace.labels, files.rows, dataset, on_changed=on_changed)
    import_labels(workspace.labels, files.labels, dataset, selection="all")
    import_verdicts(workspace, files.verdicts, dataset=dataset, judge=judge)
    return files, summary.warnings


__all__ = ["MTBENCH_JUDGE", "MTBenchFiles", "convert_mtbench", "item_id", "load_mtbench"]
