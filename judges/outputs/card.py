"""Judge cards: one file that carries a judge's calibration from the workbench into CI.

A card records *which* judge was measured (the full config and its content hash, provider,
model and generation parameters, the repeat/swap policy and how calls were aggregated), *how
well* it agreed with people (confusion counts, sensitivity and specificity with intervals, m1/m0,
kappa, flip rates), and *on what* (the calibration dataset's content hash and row count,
annotators, UTC dates), plus the package versions that computed it. It never holds an API key:
keys live only in :class:`judges.settings.Settings`, which a card never reads.

A card also carries the calibration *evidence* (:class:`judges.calibration.CalibrationEvidence`:
the labelled rows' human verdicts, judge outcomes, flips, segments, documents and recorded
selection, and the judge's outcomes on every calibration row, as counts; no text, no ids) and
the estimation options. ``calibrate score`` / ``calibrate gate`` (:mod:`judges.outputs.gate`) answer
from them through the one estimation path (:func:`judges.calibration.answer_pass_rate`), so a
card scored on the verdicts of a report's target gives that report's number.

Format: JSON (``.json``) or YAML (``.yaml``/``.yml``), chosen by the file extension; both load
back to an equal :class:`JudgeCard` (:func:`load_card`), and loading checks the config hash.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, TypedDict, Unpack

import yaml
from pydantic import ValidationError

from judges.calibration import CalibrationEvidence
from judges.calibration.trust import SMALL_SAMPLE
from judges.calibration.vocabulary import describe_used
from judges.card_model import (
    CARD_KIND,
    CARD_SCHEMA_VERSION,
    CARD_SUFFIXES,
    CardAnchor,
    CardCalibration,
    CardError,
    CardEstimation,
    CardInterval,
    CardJudge,
    CardMetrics,
    CardRefusedError,
    CardSelection,
    CardStress,
    Confusion,
    JudgeCard,
    PairwiseCardMetrics,
    Policy,
    _interval,
    _policy,
    _stress,
    anchor_hash,
    card_identity,
    judge_identity,
    package_versions,
)
from judges.providers import STAND_IN_NOTE
from judges.reporting import JudgeReport, calibration_report
from judges.reporting.evidence import verdicts_fingerprint
from judges.workspace import Workspace
from labels.private_files import write_text_atomic


def card_problems(workspace: Workspace, report: JudgeReport) -> list[str]:
    """Why a card of this report would mislead; empty when it may be exported.

    A card is refused (unless forced) when the judge is no better than chance (population
    Youden index or kappa at most 0), when the verdicts come from a stand-in provider, when
    the latest run of the judge on the calibration dataset is cancelled, failed, interrupted
    or still running, or partial (some of its calls failed or were never sent), or when a
    human class has fewer than :data:`~judges.calibration.trust.SMALL_SAMPLE` rows used: a
    gate would then correct pass rates with error rates nobody can trust. (A judge run on a
    subset of the labelled rows on purpose is not partial: the report says how many it used.)
    """
    problems = []
    if report.stand_in:
        problems.append(f"the verdicts come from {', '.join(report.stand_in)}, a {STAND_IN_NOTE}")
    runs = workspace.judges.runs(dataset=report.dataset, config_id=report.judge.config_id)
    if runs:
        latest = runs[0]
        summary = latest.summary or {}
        failed, not_run = int(summary.get("failed") or 0), int(summary.get("not_run") or 0)
        if latest.status != "completed":
            detail = f" ({not_run} of {latest.planned} calls not run)" if not_run else ""
            problems.append(f"the latest run ({latest.run_id}) is {latest.status}{detail}")
        elif failed or not_run:
            problems.append(
                f"the latest run ({latest.run_id}) is partial: {failed} of {latest.planned} "
                f"calls failed and {not_run} were not run"
            )
    if report.answer.worse_than_chance:
        problems.append(f"the judge is worse than chance: {report.answer.worse_than_chance}")
    data = report.to_json()
    if min(data["m0"], data["m1"]) < SMALL_SAMPLE:
        problems.append(
            f"too few labels: {data['m0']} human-fail and {data['m1']} human-pass rows used "
            f"(at least {SMALL_SAMPLE} of each are needed for rates worth a gate)"
        )
    return problems


def card_from_report(workspace: Workspace, report: JudgeReport, *,
                     now: datetime | None = None, force: bool = False,
                     selection: CardSelection | None = None) -> JudgeCard:
    """Build the card of a judge from its calibration report.

    Args:
        workspace: The database the report came from (for the dataset hash and the runs).
        report: A :func:`~judges.reporting.calibration_report` on the calibration dataset.
        now: Creation time (default: now, UTC).
        force: Build it even when :func:`card_problems` finds a reason not to; the reasons
            go into the card's ``forced`` list and its warnings.
        selection: The judge's certified acceptance rule on the report's dataset
            (:func:`judges.selective.card_selection`), recorded in the card.

    Returns:
        A verified :class:`JudgeCard`.

    Raises:
        CardRefusedError: :func:`card_problems` found a reason and ``force`` is false.
    """
    problems = card_problems(workspace, report)
    ref = report.judge
    provider, model, params, config_data = card_identity(workspace, ref, problems, force=force)
    data = report.to_json()
    human = report.human
    agreement = data["human_agreement"]
    counts = data["counts"]
    card = JudgeCard(
        created_at=(now or datetime.now(UTC)),
        judge=CardJudge(
            name=ref.name, revision=ref.revision, origin=ref.origin,  # type: ignore[arg-type]
            kind=ref.kind, criterion=ref.criterion,  # type: ignore[arg-type]
            config_id=ref.config_id, provider=provider, model=model, params=params,
            policy=_policy(workspace, report), config=config_data,
            stand_in=bool(report.stand_in),
        ),
        calibration=CardCalibration(
            dataset=report.dataset,
            criterion=report.criterion,
            content_hash=workspace.labels.dataset_content_hash(report.dataset),
            rows=workspace.labels.count_items(report.dataset),
            labelled_rows=counts["labelled"]["rows"],
            design=report.design or "refused",
            design_reason=report.design_reason,
            annotators=list(human.annotators),
            n_annotators=len(human.annotators),
            labels_from=human.first_labelled_at,
            labels_to=human.last_labelled_at,
        ),
        metrics=CardMetrics(
            confidence=data["confidence"],
            n=data["n"],
            m0=data["m0"],
            m1=data["m1"],
            confusion=Confusion(**data["confusion"]),
            sensitivity=_interval(data["sensitivity"]),
            specificity=_interval(data["specificity"]),
            fpr=_interval(data["fpr"]),
            kappa=_interval(data["kappa"]),
            swap_flip_rate=_interval(data["swap_flip_rate"]),
            repeat_flip_rate=_interval(data["repeat_flip_rate"]),
            human_kappa=_interval(agreement["kappa"]) if agreement else None,
            strata=data.get("calibration_strata"),
            unscored=counts["labelled"]["unscored"],
            unsure=counts["labelled"]["unsure"],
            counts={"labelled": dict(counts["labelled"]), "human": dict(counts["human"]),
                    "used": {"rows": data["n"]}},
        ),
        software=package_versions(),
        stress=_stress(workspace, ref.config_id),
        warnings=[*(f"FORCED: {p}" for p in problems), *report.warnings],
        forced=problems,
        estimation=CardEstimation(**report.options),
        evidence=_evidence_with_fingerprint(report).to_json(),
        selection=selection,
        anchor=_anchor(report),
    )
    card.verify()
    return card


def _anchor(report: JudgeReport) -> CardAnchor:
    """The labelled rows as anchors: id hashes, the judge's and the humans' verdicts."""
    from judges.calibration import wilson_interval

    rows = report.rows
    flipped = rows["flipped"].astype(object).fillna(False).astype(bool)
    bound = wilson_interval(int(flipped.sum()), len(rows), confidence=0.95).high \
        if len(rows) else 1.0
    population = report.evidence.population.by_outcome()
    return CardAnchor(
        rows=[(anchor_hash(i), str(j), str(h)) for i, j, h in zip(
            rows["item_id"], rows["judge"], rows["human"], strict=True)],
        tolerance=float(min(1.0, max(0.02, bound if bound is not None else 1.0))),
        reference={"pass": int(population[0]), "judged": int(population[0] + population[1])},
    )


def _evidence_with_fingerprint(report: JudgeReport) -> CalibrationEvidence:
    """The report's evidence, with the fingerprint of the calibration run's verdicts."""
    items = report.judge_items.items
    fingerprint = verdicts_fingerprint(items["item_id"].to_numpy(dtype=object),
                                       items["verdict"].to_numpy(dtype=object))
    return dataclasses.replace(report.evidence, fingerprint=fingerprint)


class CardChoices(TypedDict, total=False):
    """Which report a card is built from (the options :func:`build_card` forwards).

    They go to :func:`calibration_report` for a pass/fail judge, and ``criterion``, ``design``
    and ``rule`` to :func:`judges.reporting.pairwise_report` for a pairwise one. ``alpha`` (and
    ``delta``, default 0.1) certify an acceptance rule (:func:`judges.selective.card_selection`)
    that the card records (pass/fail cards).
    """

    criterion: str | None
    design: str | None
    rule: str | None
    alpha: float | None
    delta: float | None


def export_card(
    workspace: Workspace,
    dataset: str,
    judge: str,
    path: str | Path,
    *,
    force: bool = False,
    **choices: Unpack[CardChoices],
) -> JudgeCard:
    """Calibrate ``judge`` on ``dataset`` and write its card to ``path`` (JSON or YAML).

    Returns:
        The card written.

    Raises:
        CardRefusedError: the card would mislead and ``force`` is false (nothing is written).
    """
    card = build_card(workspace, dataset, judge, force=force, **choices)
    write_card(card, path)
    return card


def build_card(
    workspace: Workspace,
    dataset: str,
    judge: str,
    *,
    force: bool = False,
    **choices: Unpack[CardChoices],
) -> JudgeCard:
    """Calibrate ``judge`` on ``dataset`` and return its card without writing it (a preview).

    Raises:
        CardRefusedError: the card would mislead and ``force`` is false.
    """
    if workspace.labels.dataset(dataset).kind == "pairwise":
        from judges.outputs.pairwise_card import card_from_pairwise_report
        from judges.reporting import pairwise_report

        # Pairwise cards carry their own metrics and rules (judges.outputs.pairwise_card).
        return card_from_pairwise_report(workspace, pairwise_report(
            workspace, dataset, judge, criterion=choices.get("criterion"),
            design=choices.get("design"), rule=choices.get("rule")), force=force)
    alpha, delta = choices.get("alpha"), choices.get("delta")
    report = calibration_report(workspace, dataset, judge, criterion=choices.get("criterion"),
                                design=choices.get("design"), rule=choices.get("rule"))
    selection = None
    if alpha is not None:
        from judges.selective import card_selection

        selection = card_selection(workspace, report, alpha=alpha,
                                   delta=0.1 if delta is None else delta)
    return card_from_report(workspace, report, force=force, selection=selection)


def card_counts(card: JudgeCard) -> str:
    """The card's row counts in one sentence, in the one vocabulary; the parts add up.

    Example: "86 of 200 labelled rows used (human pass 54, fail 32): the 91 the judge judged,
    less 5 the humans were unsure on; 109 not judged (0 unscored, 9 unsure, 100 not run)".
    """
    m = card.metrics
    if m.counts is None:  # a card written before the counts were recorded
        return (f"{m.n} of {card.calibration.labelled_rows} labelled rows used (human pass "
                f"{m.m1}, fail {m.m0})")
    return describe_used(used=m.n, m1=m.m1, m0=m.m0, labelled=m.counts["labelled"])


def dumps_card(card: JudgeCard, *, format: Literal["json", "yaml"] = "json") -> str:
    """The card as JSON (indented, sorted keys) or YAML text."""
    data = card.to_json()
    if format == "yaml":
        return yaml.safe_dump(data, sort_keys=True, allow_unicode=True, width=100)
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _format_for(path: Path) -> Literal["json", "yaml"]:
    suffix = path.suffix.lower()
    if suffix not in CARD_SUFFIXES:
        raise CardError(f"a card file must end in {', '.join(CARD_SUFFIXES)}", path=str(path))
    return "json" if suffix == ".json" else "yaml"


def write_card(card: JudgeCard, path: str | Path) -> Path:
    """Write ``card`` atomically (temp file + rename), format by extension."""
    target = Path(path)
    text = dumps_card(card, format=_format_for(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(target, text)


def loads_card(text: str, *, source: str = "<card>",
               format: Literal["json", "yaml"] = "json") -> JudgeCard:
    """Parse and verify card text.

    Raises:
        CardError: not JSON/YAML, wrong schema, or a config hash mismatch.
    """
    try:
        data = json.loads(text) if format == "json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as error:
        raise CardError(f"not valid {format.upper()}: {error}", path=source) from None
    if not isinstance(data, dict):
        raise CardError("a card must be a mapping", path=source)
    if data.get("kind") != CARD_KIND:
        raise CardError(f"not a judge card (kind must be {CARD_KIND!r})", path=source)
    # An older card lacks what the estimate needs; the command that writes a current one:
    reexport = ("re-export it: calibrate card export --dataset "
                f"{(data.get('calibration') or {}).get('dataset', 'DATASET')} --judge "
                f"{(data.get('judge') or {}).get('name', 'JUDGE')} -o {source}")
    if data.get("schema_version") == 1:
        raise CardError(
            "card schema_version 1 carries no calibration evidence (how the labels were drawn, "
            "the judge's verdict strata, flips, segments), so it cannot reproduce the report's "
            f"correction and could give another number for the same verdicts; {reexport}",
            path=source,
        )
    if data.get("schema_version") == CARD_SCHEMA_VERSION and (
            (data.get("judge") or {}).get("kind") == "pairwise"
            and (data.get("evidence") or {}).get("kind") != "pairwise"):
        raise CardError(
            "this pairwise card carries no pairwise evidence (how the labels were drawn, the "
            "judge's verdict strata, one-order rows), only its raw 3 x 3 table, so it cannot "
            "reproduce the report's corrected shares and could give other numbers for the same "
            f"verdicts; {reexport}", path=source,
        )
    if data.get("schema_version") != CARD_SCHEMA_VERSION:
        raise CardError(
            f"card schema_version {data.get('schema_version')!r} is not supported (this "
            f"calibrate reads version {CARD_SCHEMA_VERSION})", path=source,
        )
    try:
        card = JudgeCard.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors()
        )
        raise CardError(problems, path=source) from None
    card.verify(source=source)
    return card


def load_card(path: str | Path) -> JudgeCard:
    """Load and verify a card file (JSON or YAML by extension).

    Raises:
        CardError: missing, unreadable, malformed, or a config hash mismatch.
    """
    file = Path(path)
    fmt = _format_for(file)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CardError("no such file", path=str(path)) from None
    except (OSError, UnicodeDecodeError) as error:
        raise CardError(f"cannot read: {error}", path=str(path)) from None
    return loads_card(text, source=str(path), format=fmt)


__all__ = [
    "CARD_KIND",
    "CARD_SCHEMA_VERSION",
    "CARD_SUFFIXES",
    "CardAnchor",
    "CardCalibration",
    "CardChoices",
    "CardError",
    "CardEstimation",
    "CardInterval",
    "CardJudge",
    "CardMetrics",
    "CardRefusedError",
    "CardSelection",
    "CardStress",
    "Confusion",
    "JudgeCard",
    "PairwiseCardMetrics",
    "Policy",
    "anchor_hash",
    "build_card",
    "card_counts",
    "card_from_report",
    "card_problems",
    "dumps_card",
    "export_card",
    "judge_identity",
    "load_card",
    "loads_card",
    "package_versions",
    "write_card",
]
