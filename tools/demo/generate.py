"""Write the demo data files from the hand-written content (:mod:`tools.demo.content`).

Run ``python -m tools.demo.generate`` to rewrite ``judges/demo/data/`` (or ``--out DIR`` to
write elsewhere). The output depends only on the templates and the seeds below: re-running it
produces byte-identical files, which a test checks.

What it writes:

* ``labelled.jsonl``: the rows the experts labelled, in the tool's import format;
* ``production_week.jsonl``: a larger, unlabelled week of traffic with a higher pass rate;
* ``week_after_fix.jsonl``: a seeded sample of that week's questions answered again after a
  "fix" (same row ids, so the weeks pair up), with the true difference known per row;
* ``labels/<criterion>-<annotator>.csv``: the expert labels (``id,label,note``);
* ``README.md``: what the data is, how it was made, and its counts.

Every row keeps its ground truth in ``metadata`` (``failure_mode``, ``true_faithfulness``,
``true_correctness``, ``retrieval``, ``needed_sources``, ``template``), so tests and the demo's
story can compare judges and humans with the truth. The labels are *constructed*: each
annotator's verdict is the truth, except on a seeded handful of mostly borderline rows where
an annotator deviates, so human-human disagreement looks like the real thing.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from judges.demo.layout import (
    AFTER_FIX_DATASET,
    AFTER_FIX_FILE,
    ANNOTATORS,
    CRITERIA,
    DATA_DIR,
    KB_FILE,
    LABELLED_DATASET,
    LABELLED_FILE,
    LABELS_DIR,
    PRODUCTION_DATASET,
    PRODUCTION_FILE,
    README_FILE,
)
from tools.demo.content import (
    AFTER_FIX_CHANGES,
    AFTER_FIX_ROWS,
    FAILURE_MODES,
    LABELLED_ALLOCATION,
    PAGES,
    PRODUCT,
    PRODUCTION_ALLOCATION,
    REFUSALS,
    RELATED,
    SEGMENTS,
    SPECS,
    Spec,
)

SEED = 20261116

# Who labelled what: a shared overlap for agreement, the rest split between the two experts.
OVERLAP_ROWS = 70
OVERLAP_DISAGREEMENTS = {"faithfulness": 9, "correctness": 4}
SOLO_DEVIATIONS = {"faithfulness": 3, "correctness": 2}
# How likely an expert is to see a row differently from the truth: borderline modes first.
# "missed_refusal" is a correct refusal after the retriever missed the page (faithful but
# not correct); "correct_refusal" here means a refusal of an unanswerable question, and
# "hallucination" an invented answer to one. Kinds not listed never deviate.
DEVIATION_WEIGHT: dict[str, dict[str, float]] = {
    "faithfulness": {"wrong_refusal": 5, "answered_without_source": 4, "dropped_condition": 4,
                     "unsupported_claim": 2, "missed_refusal": 1, "correct_refusal": 0.5,
                     "correct": 0.5},
    "correctness": {"missed_refusal": 4, "answered_without_source": 3, "unsupported_claim": 1,
                    "correct": 0.3},
}
PRODUCTION_WEEK_START = datetime(2026, 11, 16, tzinfo=UTC)

_PASSAGES: dict[str, tuple[str, str]] = {
    f"{page.page_id}#{n}": (page.title, text)
    for page in PAGES
    for n, text in enumerate(page.paragraphs, start=1)
}
_TITLES = {page.page_id: page.title for page in PAGES}


@dataclass(frozen=True)
class Row:
    """One generated row plus what the experts would write about it."""

    record: dict[str, Any]
    note: str
    mode: str
    segment: str

    @property
    def item_id(self) -> str:
        """The row's id."""
        return str(self.record["id"])

    @property
    def kind(self) -> str:
        """The failure mode, with refusals after a missed retrieval told apart."""
        if self.mode == "correct_refusal" and self.segment != "unanswerable":
            return "missed_refusal"
        if self.mode == "unsupported_claim" and self.segment == "unanswerable":
            return "hallucination"
        return self.mode

    def truth(self, criterion: str) -> str:
        """The ground-truth verdict for ``criterion``."""
        return str(self.record["metadata"][f"true_{criterion}"])


def _page_of(source_id: str) -> str:
    return source_id.split("#", 1)[0]


def _passages_of(page_ids: Iterable[str]) -> list[str]:
    wanted = list(page_ids)
    return [sid for page in wanted for sid in _PASSAGES if _page_of(sid) == page]


def _source(source_id: str) -> dict[str, str]:
    title, text = _PASSAGES[source_id]
    return {"text": f"{title}\n{text}", "source_id": source_id}


def _eligible(spec: Spec, mode: str) -> bool:
    if spec.segment == "unanswerable":
        return mode in ("correct_refusal", "unsupported_claim")
    variants = {
        "correct": spec.correct, "answered_without_source": spec.correct,
        "unsupported_claim": spec.unsupported, "dropped_condition": spec.dropped,
        "contradiction": spec.contradiction,
    }
    return bool(variants.get(mode, spec.needs))


def _retrieve(spec: Spec, mode: str, rng: random.Random) -> tuple[list[str], str]:
    """The passage ids the answerer was given, and how complete that retrieval was."""
    if spec.segment == "unanswerable":
        chosen = rng.sample(list(spec.near), rng.randint(1, len(spec.near)))
        pool = [p for p in _passages_of((spec.doc, *RELATED[spec.doc])) if p not in chosen]
        if len(chosen) < 4 and rng.random() < 0.35:
            chosen.append(rng.choice(pool))
        rng.shuffle(chosen)
        return chosen, "none_needed"
    needs = list(spec.needs)
    if mode in ("answered_without_source", "correct_refusal"):
        keep: list[str] = []
        if mode == "answered_without_source" and len(needs) > 1 and rng.random() < 0.5:
            keep = rng.sample(needs, len(needs) - 1)
        # A retriever that missed the page returns neighbouring pages, never another passage
        # that would answer the question.
        need_pages = {_page_of(n) for n in needs}
        pool = [
            p for p in _passages_of(RELATED[spec.doc])
            if _page_of(p) not in need_pages and p not in spec.also
        ]
        total = min(4, max(len(keep) + 1, rng.choice((1, 2, 2, 3, 3, 4))))
        chosen = keep + rng.sample(pool, total - len(keep))
        rng.shuffle(chosen)
        return chosen, "partial" if keep else "missing"
    pool = [p for p in _passages_of((spec.doc, *RELATED[spec.doc])) if p not in needs]
    total = min(4, max(len(needs), rng.choice((1, 2, 2, 3, 3, 3, 4, 4))))
    chosen = needs + rng.sample(pool, total - len(needs))
    rng.shuffle(chosen)
    return chosen, "complete"


def _answer(spec: Spec, mode: str, retrieval: str, rng: random.Random) -> tuple[str, str, str, str]:
    """Answer text, expert note, true faithfulness and true correctness for one row."""
    refusal = rng.choice(REFUSALS).format(topic=spec.topic)
    if mode == "correct":
        return rng.choice(spec.correct), "", "pass", "pass"
    if mode == "correct_refusal":
        if spec.segment == "unanswerable":
            return refusal, "", "pass", "pass"
        return refusal, "the retrieved pages don't answer it, so declining is right", "pass", "fail"
    if mode == "wrong_refusal":
        return refusal, "refuses although the sources answer it", "fail", "fail"
    if mode == "answered_without_source":
        missing = ", ".join(sorted({_TITLES[_page_of(n)] for n in spec.needs}))
        what = "part of the needed text" if retrieval == "partial" else "the needed page"
        note = f"true per the help centre ({missing}), but {what} was not retrieved"
        return rng.choice(spec.correct), note, "fail", "pass"
    variants = {
        "unsupported_claim": spec.unsupported, "dropped_condition": spec.dropped,
        "contradiction": spec.contradiction,
    }[mode]
    text, note = rng.choice(variants)
    return text, note, "fail", "fail"


def _allocate(allocation: dict[str, dict[str, int]], rng: random.Random) -> list[tuple[Spec, str]]:
    """One (template, failure mode) per row, spreading the rows evenly over the templates."""
    used: Counter[str] = Counter()
    slots: list[tuple[Spec, str]] = []
    for segment in SEGMENTS:
        for mode, count in allocation.get(segment, {}).items():
            candidates = [s for s in SPECS if s.segment == segment and _eligible(s, mode)]
            if not candidates:
                raise ValueError(f"no template in segment {segment!r} has a {mode!r} answer")
            for _ in range(count):
                low = min(used[s.key] for s in candidates)
                spec = rng.choice([s for s in candidates if used[s.key] == low])
                used[spec.key] += 1
                slots.append((spec, mode))
    rng.shuffle(slots)
    return slots


def _rows(
    allocation: dict[str, dict[str, int]], prefix: str, width: int, rng: random.Random,
    seen: set[tuple[str, str, tuple[str, ...]]],
) -> list[Row]:
    rows: list[Row] = []
    for number, (spec, mode) in enumerate(_allocate(allocation, rng), start=1):
        for _attempt in range(200):
            question = rng.choice(spec.questions)
            passages, retrieval = _retrieve(spec, mode, rng)
            answer, note, faithful, correct = _answer(spec, mode, retrieval, rng)
            key = (question, answer, tuple(passages))
            if key not in seen:
                seen.add(key)
                break
        else:  # pragma: no cover - the templates give far more combinations than rows
            raise RuntimeError(f"could not make a distinct row from template {spec.key!r}")
        record = {
            "id": f"{prefix}-{number:0{width}d}",
            "question": question,
            "answer": answer,
            "sources": [_source(p) for p in passages],
            "reference": spec.reference,
            "segment": spec.segment,
            "document_id": spec.doc,
            "metadata": {
                "failure_mode": mode,
                "true_faithfulness": faithful,
                "true_correctness": correct,
                "retrieval": retrieval,
                "needed_sources": list(spec.needs),
                "template": spec.key,
            },
        }
        rows.append(Row(record=record, note=note, mode=mode, segment=spec.segment))
    return rows


def _stamp_week(rows: list[Row], rng: random.Random) -> None:
    """Give production rows a logged_at inside one week, in id order."""
    seconds = sorted(rng.randrange(7 * 24 * 3600) for _ in rows)
    for row, offset in zip(rows, seconds, strict=True):
        stamp = PRODUCTION_WEEK_START + timedelta(seconds=offset)
        row.record["metadata"]["logged_at"] = stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def _after_fix(
    production: list[Row], rng: random.Random, seen: set[tuple[str, str, tuple[str, ...]]],
) -> list[Row]:
    """The week after the fix: a sample of the production week's questions answered again.

    Ids, questions, segments and documents are the production rows' own. A row whose failure
    kind the fix changes (``after_fix.changes`` in ``content.yaml``) gets a new retrieval and
    answer; the others keep theirs. ``metadata.before_fix`` keeps the old failure mode and
    truths, so the true difference is known row by row.
    """
    specs = {spec.key: spec for spec in SPECS}
    picked = sorted(rng.sample(production, AFTER_FIX_ROWS), key=lambda r: r.item_id)
    rows: list[Row] = []
    for old in picked:
        spec = specs[str(old.record["metadata"]["template"])]
        mode, draw = old.mode, rng.random()
        for candidate, probability in AFTER_FIX_CHANGES.get(old.kind, {}).items():
            if draw < probability and _eligible(spec, candidate):
                mode = candidate
                break
            draw -= probability
        record = json.loads(json.dumps(old.record))  # a deep copy of plain JSON
        meta = record["metadata"]
        logged = datetime.strptime(meta["logged_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        meta["logged_at"] = (logged + timedelta(days=7)).strftime("%Y-%m-%dT%H:%M:%SZ")
        meta["before_fix"] = {"failure_mode": old.mode,
                              "true_faithfulness": old.truth("faithfulness"),
                              "true_correctness": old.truth("correctness")}
        if mode == old.mode:
            rows.append(Row(record=record, note=old.note, mode=mode, segment=old.segment))
            continue
        for _attempt in range(200):
            passages, retrieval = _retrieve(spec, mode, rng)
            answer, note, faithful, correct = _answer(spec, mode, retrieval, rng)
            key = (str(record["question"]), answer, tuple(passages))
            if key not in seen:
                seen.add(key)
                break
        else:  # pragma: no cover - the templates give far more combinations than rows
            raise RuntimeError(f"could not make a distinct row from template {spec.key!r}")
        record["answer"] = answer
        record["sources"] = [_source(p) for p in passages]
        meta.update(failure_mode=mode, true_faithfulness=faithful, true_correctness=correct,
                    retrieval=retrieval)
        rows.append(Row(record=record, note=note, mode=mode, segment=old.segment))
    return rows


def _weighted_sample(rows: Sequence[Row], weights: dict[str, float], k: int,
                     rng: random.Random) -> list[Row]:
    """``k`` rows without replacement, each drawn with probability proportional to its weight."""
    keyed = []
    for row in rows:
        weight = weights.get(row.kind, 0.0)
        draw = rng.random()
        if weight > 0:
            keyed.append((math.log(draw or 1e-300) / weight, row.item_id, row))
    keyed.sort(key=lambda t: (t[0], t[1]), reverse=True)
    return [row for _, _, row in keyed[:k]]


_EMEKA_PREFIX = {
    "unsupported_claim": "Unsupported", "dropped_condition": "Missing condition",
    "contradiction": "Contradicts the sources", "wrong_refusal": "Wrong refusal",
    "answered_without_source": "Not grounded in the given sources",
    "correct_refusal": "Incomplete",
}
_DEVIATION_NOTES: dict[tuple[str, str], tuple[str, str]] = {
    # (criterion, mode) -> (dana, emeka) when the expert passes a row the truth fails
    ("faithfulness", "wrong_refusal"): (
        "refusal, no false claims", "Declines to answer; nothing unsupported is claimed."),
    ("faithfulness", "answered_without_source"): (
        "matches the help centre", "Correct per the help centre, I checked the article."),
    ("faithfulness", "dropped_condition"): (
        "each claim is in the sources",
        "Everything it says is in the sources; the omission is a completeness problem."),
    ("faithfulness", "unsupported_claim"): (
        "extra bit looks harmless", "The extra sentence is harmless."),
    ("correctness", "correct_refusal"): (
        "fair given what it had", "Reasonable to decline with these sources."),
    ("correctness", "unsupported_claim"): (
        "main fact right", "The core answer matches the reference."),
}
_STRICT_NOTES: dict[tuple[str, str], tuple[str, str]] = {
    # (criterion, mode) -> (dana, emeka) when the expert fails a row the truth passes
    ("faithfulness", "correct"): (
        "reads like more than the source says",
        "Borderline: the wording goes slightly beyond the source."),
    ("faithfulness", "correct_refusal"): (
        "should point to the closest article",
        "A refusal, but it could have said what the sources do cover."),
    ("correctness", "answered_without_source"): (
        "can't verify from the sources", "Not verifiable from the retrieved sources."),
    ("correctness", "correct"): (
        "a bit thin", "Misses context the reference gives."),
}
_UNSURE_NOTES: dict[str, tuple[str, str]] = {
    "dropped_condition": (
        "omission: fail or not?", "Unsure whether an omission counts against faithfulness."),
    "wrong_refusal": ("refusal, unsure", "Unsure how to grade a refusal here."),
    "answered_without_source": (
        "true, but where does it say so?", "Unsure: true, but I can't find it in the sources."),
}
_UNSURE_DEFAULT = ("not sure", "Unsure whether the sources cover this.")


def _fail_note(row: Row, criterion: str, annotator: str) -> str:
    if criterion == "correctness":
        if row.mode == "wrong_refusal":
            base = "doesn't answer; the reference has it"
        elif row.mode == "correct_refusal":
            base = "doesn't answer; the reference has the answer"
        elif row.segment == "unanswerable":
            base = f"invents an answer: {row.note}"
        elif row.mode == "dropped_condition":
            base = f"incomplete: {row.note}"
        elif row.mode == "contradiction":
            base = f"wrong: {row.note}"
        else:
            base = row.note
        return base if annotator == "dana" else base[0].upper() + base[1:] + "."
    if annotator == "dana":
        return row.note
    return f"{_EMEKA_PREFIX.get(row.mode, 'Fail')}: {row.note}."


def _label(
    row: Row, criterion: str, annotator: str, deviate: bool, unsure: bool
) -> tuple[str, str]:
    truth = row.truth(criterion)
    who = ANNOTATORS.index(annotator)
    if not deviate:
        return truth, (_fail_note(row, criterion, annotator) if truth == "fail" else "")
    if unsure:
        return "unsure", _UNSURE_NOTES.get(row.mode, _UNSURE_DEFAULT)[who]
    if truth == "fail":
        return "pass", _DEVIATION_NOTES.get((criterion, row.mode), ("ok", "Looks fine."))[who]
    strict = _STRICT_NOTES.get((criterion, row.mode), ("not convinced", "Not convinced."))
    return "fail", strict[who]


LabelRows = dict[tuple[str, str], list[tuple[str, str, str]]]


def _labels(rows: list[Row], rng: random.Random) -> LabelRows:
    """``(criterion, annotator) -> [(id, label, note)]``, sorted by id."""
    order = list(rows)
    rng.shuffle(order)
    overlap = order[:OVERLAP_ROWS]
    rest = order[OVERLAP_ROWS:]
    solo = {"dana": rest[: len(rest) // 2], "emeka": rest[len(rest) // 2:]}
    out: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for criterion in CRITERIA:
        weights = DEVIATION_WEIGHT[criterion]
        deviations: dict[str, dict[str, bool]] = {a: {} for a in ANNOTATORS}  # id -> unsure?
        disagree = _weighted_sample(overlap, weights, OVERLAP_DISAGREEMENTS[criterion], rng)
        for n, row in enumerate(disagree):
            who = ANNOTATORS[(n + rng.randrange(2)) % 2]
            deviations[who][row.item_id] = criterion == "faithfulness" and n == 2
        for annotator in ANNOTATORS:
            picked = _weighted_sample(solo[annotator], weights, SOLO_DEVIATIONS[criterion], rng)
            for n, row in enumerate(picked):
                deviations[annotator][row.item_id] = (
                    criterion == "faithfulness" and annotator == "emeka" and n == 0
                )
        for annotator in ANNOTATORS:
            # Correctness matters where an answer can be faithful yet wrong: Dana graded it on
            # all her rows, Emeka only on the shared ones.
            mine = overlap + solo[annotator]
            if criterion == "correctness" and annotator == "emeka":
                mine = list(overlap)
            labels = []
            for row in sorted(mine, key=lambda r: r.item_id):
                dev = row.item_id in deviations[annotator]
                verdict, note = _label(
                    row, criterion, annotator, dev, deviations[annotator].get(row.item_id, False)
                )
                labels.append((row.item_id, verdict, note))
            out[(criterion, annotator)] = labels
    return out


def _jsonl(records: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def _csv(rows: Iterable[tuple[str, str, str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["id", "label", "note"])
    writer.writerows(rows)
    return buffer.getvalue()


def _rate(rows: Sequence[Row], criterion: str) -> float:
    return sum(r.truth(criterion) == "pass" for r in rows) / len(rows)


def _table(header: Sequence[str], body: Iterable[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in body]
    return lines


def _before_rate(rows: Sequence[Row], criterion: str) -> float:
    return sum(r.record["metadata"]["before_fix"][f"true_{criterion}"] == "pass"
               for r in rows) / len(rows)


def _after_fix_section(after: list[Row]) -> list[str]:
    """The README's account of the week after the fix, with its true difference."""
    changes = Counter(
        (r.record["metadata"]["before_fix"]["failure_mode"], r.mode) for r in after
        if r.record["metadata"]["before_fix"]["failure_mode"] != r.mode
    )
    rates = []
    for criterion in CRITERIA:
        before, now = _before_rate(after, criterion), _rate(after, criterion)
        rates.append((criterion, f"{before:.3f}", f"{now:.3f}", f"{now - before:+.3f}"))
    return [
        "## The week after the fix",
        "",
        f"`{AFTER_FIX_FILE}` (dataset `{AFTER_FIX_DATASET}`) holds {len(after)} of the "
        "production week's questions, picked at random (seeded), answered again a week later "
        "by a fixed system: the retriever also searches page titles, so it finds pages it "
        "missed, and the prompt says to state only what the sources say. The side effect is "
        "shorter answers that sometimes drop a condition. Row ids are the production week's, "
        "so `calibrate compare` pairs the two weeks row by row (the production week's other "
        "rows are only in the baseline). A row the fix does not touch keeps its answer; "
        "`metadata.before_fix` keeps each row's earlier failure mode and truths "
        "(`tools/demo/content.yaml`, `after_fix`, gives the change probabilities).",
        "",
        *_table(("before the fix", "after the fix", "rows"),
                [(a, b, n) for (a, b), n in sorted(changes.items())]),
        "",
        "True pass rates on these rows, so the true difference the comparison should find:",
        "",
        *_table(("", "production week (same rows)", "after the fix", "difference"), rates),
        "",
    ]


def _readme(labelled: list[Row], production: list[Row], after: list[Row],
            labels: dict[tuple[str, str], list[tuple[str, str, str]]]) -> str:
    counts = {name: Counter((r.segment, r.mode) for r in rows)
              for name, rows in (("labelled", labelled), ("production", production))}
    mode_rows = [
        (mode, sum(v for (_, m), v in counts["labelled"].items() if m == mode),
         sum(v for (_, m), v in counts["production"].items() if m == mode))
        for mode in FAILURE_MODES
    ]
    seg_rows = [
        (seg, sum(v for (s, _), v in counts["labelled"].items() if s == seg),
         sum(v for (s, _), v in counts["production"].items() if s == seg))
        for seg in SEGMENTS
    ]
    label_rows = []
    for (criterion, annotator), rows in sorted(labels.items()):
        verdicts = Counter(v for _, v, _ in rows)
        label_rows.append((criterion, annotator, len(rows), verdicts["pass"], verdicts["fail"],
                           verdicts["unsure"]))
    agreement = []
    for criterion in CRITERIA:
        a = {i: v for i, v, _ in labels[(criterion, "dana")]}
        b = {i: v for i, v, _ in labels[(criterion, "emeka")]}
        shared = sorted(set(a) & set(b))
        differ = sum(a[i] != b[i] for i in shared)
        agreement.append((criterion, len(shared), differ, f"{differ / len(shared):.1%}"))
    text = [
        "# The calibrate demo data",
        "",
        f"**Everything here was written for this project by its developers.** {PRODUCT} is a "
        "fictional team-wiki product; its help centre, the questions, the answers and the "
        "reference answers were written by hand (the help centre in `kb.jsonl`, the answer "
        "templates in the repository's `tools/demo/content.yaml`) and assembled into rows by "
        "a seeded script (`tools/demo/generate.py`). Re-running the "
        "script gives byte-identical files.",
        "",
        "**The expert labels are constructed, not collected.** \"dana\" and \"emeka\" are not "
        "real people. Each label is the row's known ground truth (from the failure mode the "
        "answer was written to have), except on a seeded handful of rows, mostly borderline "
        "failure modes (wrong refusals, dropped conditions, answers that are true but not in "
        "the retrieved sources), where one annotator deviates, so that human-human agreement "
        "looks like real expert work rather than a perfect oracle. Notes on failed rows "
        "are the template's own explanation of the failure.",
        "",
        "## Files",
        "",
        f"- `{KB_FILE}`: the help centre, {len(PAGES)} pages, "
        f"{len(_PASSAGES)} passages (ids `page#paragraph`).",
        f"- `{LABELLED_FILE}`: {len(labelled)} rows (dataset `{LABELLED_DATASET}`), all "
        "labelled by at least one expert.",
        f"- `{PRODUCTION_FILE}`: {len(production)} unlabelled rows of one production week "
        f"(dataset `{PRODUCTION_DATASET}`), with `metadata.logged_at`.",
        f"- `{AFTER_FIX_FILE}`: {len(after)} of the production week's questions answered "
        f"again after a fix (dataset `{AFTER_FIX_DATASET}`, same row ids; see below).",
        "- `labels/<criterion>-<annotator>.csv`: `id,label,note`, imported with "
        "`calibrate labels import` / `labels.importing.import_labels`.",
        "- `verdicts/<dataset>/<criterion>/<judge>.jsonl` (when present): recorded judge "
        "verdicts (`id, verdict, repeat, order, reasoning`), imported under the judge config "
        "that recorded them, `judges/<judge>.yaml`, through the judge engine's ordinary "
        "verdict import (`judges.verdicts.import_verdicts`, as `calibrate verdicts import "
        "--config judges/<judge>.yaml` does); a file without a config is imported as the "
        "external judge `<judge>`.",
        "",
        "Rows use the import format: `id, question, answer, sources` (a list of "
        "`{text, source_id}`, the passages the answerer was actually given, in order), "
        "`reference, segment, document_id` (the page the question is about; use it for "
        "clustered statistics) and `metadata` with the ground truth: `failure_mode`, "
        "`true_faithfulness`, `true_correctness`, `retrieval` (`complete`, `partial`, "
        "`missing`, `none_needed`), `needed_sources`, `template`.",
        "",
        "## Failure modes",
        "",
        "- `correct`: every claim is in the sources.",
        "- `correct_refusal`: declines, and rightly so: the help centre does not cover it "
        "(unanswerable), or the retriever missed the page (faithful, but not correct).",
        "- `unsupported_claim`: adds a claim no source makes (\"at no extra cost\").",
        "- `dropped_condition`: states a fact without its condition (\"SSO on Pro\" without "
        "\"under 50 seats needs the Security add-on\").",
        "- `contradiction`: says what a source says is not so.",
        "- `wrong_refusal`: declines although the sources answer the question.",
        "- `answered_without_source`: true per the help centre, but the needed page was not "
        "retrieved (unfaithful, yet correct).",
        "",
        "## Counts",
        "",
        *_table(("failure mode", "labelled", "production week"), mode_rows),
        "",
        *_table(("segment", "labelled", "production week"), seg_rows),
        "",
        "True pass rates (from the metadata):",
        "",
        *_table(("", "labelled", "production week"), [
            ("faithfulness", f"{_rate(labelled, 'faithfulness'):.3f}",
             f"{_rate(production, 'faithfulness'):.3f}"),
            ("correctness", f"{_rate(labelled, 'correctness'):.3f}",
             f"{_rate(production, 'correctness'):.3f}"),
        ]),
        "",
        "Labels:",
        "",
        *_table(("criterion", "annotator", "rows", "pass", "fail", "unsure"), label_rows),
        "",
        "Agreement on the shared rows:",
        "",
        *_table(("criterion", "rows both labelled", "disagreements", "rate"), agreement),
        "",
        *_after_fix_section(after),
        "Regenerate with `python -m tools.demo.generate`; load into a database with "
        "`calibrate --db demo.duckdb demo --no-app`.",
        "",
    ]
    return "\n".join(text)


def build_files() -> dict[str, str]:
    """Every data file as ``relative path -> text``."""
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    labelled = _rows(LABELLED_ALLOCATION, "lab", 3, random.Random(SEED), seen)
    production = _rows(PRODUCTION_ALLOCATION, "week", 4, random.Random(SEED + 1), seen)
    _stamp_week(production, random.Random(SEED + 2))
    labels = _labels(labelled, random.Random(SEED + 3))
    after = _after_fix(production, random.Random(SEED + 4), seen)
    files = {
        LABELLED_FILE: _jsonl(r.record for r in labelled),
        PRODUCTION_FILE: _jsonl(r.record for r in production),
        AFTER_FIX_FILE: _jsonl(r.record for r in after),
        README_FILE: _readme(labelled, production, after, labels),
    }
    for (criterion, annotator), rows in labels.items():
        files[f"{LABELS_DIR}/{criterion}-{annotator}.csv"] = _csv(rows)
    return files


def generate(out_dir: str | Path = DATA_DIR) -> list[Path]:
    """Write the data files into ``out_dir`` and return their paths (sorted)."""
    out = Path(out_dir)
    written = []
    for relative, text in sorted(build_files().items()):
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point: ``python -m tools.demo.generate [--out DIR]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", default=str(DATA_DIR), help="output folder (default: %(default)s)")
    args = parser.parse_args(argv)
    for path in generate(args.out):
        print(path)


if __name__ == "__main__":
    main()
