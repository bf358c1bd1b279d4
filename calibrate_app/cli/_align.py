"""``calibrate judge split | align | adopt | stress``: tune a judge on dev rows, prove it on test.

Thin commands over :mod:`judges.workflows.align`, which the app's alignment panel calls too.
``align`` runs the current revision on the dev and test rows, asks a proposer model for a
revision from the dev disagreements, runs that on the same rows and prints the diff and the test
numbers; nothing is adopted until ``adopt`` is run with the proposal's id.
"""

from __future__ import annotations

from typing import Any

import click

from calibrate_app.cli._context import AppContext, pass_app, pass_app_and_json
from calibrate_app.cli._judges import _find_config, judge_group

STAND_IN = ("STAND-IN: {who} is the scripted provider, not a model; these numbers show the "
            "workflow, not a judge's quality.")


def _stand_in_notes(*specs: tuple[str, str]) -> list[str]:
    return [STAND_IN.format(who=f"{who} ({spec})") for who, spec in specs
            if spec.startswith("scripted/")]


@click.command("split")
@click.option("--dataset", required=True, help="Dataset whose labelled rows are split.")
@click.option("--criterion", default="faithfulness", show_default=True)
@click.option("--seed", type=int, default=None, help="Seed of a new split (default 17).")
@click.option("--test-share", type=click.FloatRange(0.05, 0.95), default=None,
              help="Share of test rows of a new split (default 0.5).")
@pass_app_and_json()
def judge_split(app: AppContext, dataset: str, criterion: str, seed: int | None,
                test_share: float | None, as_json: bool) -> None:
    """Show (making it the first time) the dev/test split of a dataset's labelled rows.

    The split is made once, stratified by human label and segment; rows labelled later are
    assigned as they are read. Tuning views show dev rows only.
    """
    from calibrate_app.cli._context import echo_json
    from judges.workflows import align

    workspace = app.workspace
    workspace.labels.dataset(dataset)
    view = align.split(workspace, dataset, criterion, seed=seed, test_share=test_share)
    split, evaluations, revisions, warning = (view.split, view.evaluations, view.revisions,
                                              view.warning)
    if as_json:
        echo_json({"dataset": dataset, "criterion": criterion, "seed": split.seed,
                   "test_share": split.test_share, "dev": split.ids("dev"),
                   "test_rows": len(split.ids("test")), "test_evaluations": evaluations,
                   "test_revisions": revisions, "warning": warning})
        return
    click.echo(split.describe())
    click.echo(f"Test set used {evaluations} times by {revisions} revisions.")
    if warning:
        click.echo(f"WARNING: {warning}")


@click.command("align")
@click.argument("config_name", metavar="CONFIG")
@click.option("--dataset", required=True, help="Dataset with labelled rows.")
@click.option("--model", default=None, help="Judge with another provider/model (new config id).")
@click.option("--proposer", default="scripted/proposer", show_default=True,
              help="provider/model that writes the revision (scripted/... or local/... offline).")
@click.option("--min-sensitivity", type=click.FloatRange(0, 1), default=0.80, show_default=True,
              help="Certification: lowest acceptable lower bound of sensitivity (test rows).")
@click.option("--min-specificity", type=click.FloatRange(0, 1), default=0.80, show_default=True,
              help="Certification: lowest acceptable lower bound of specificity (test rows).")
@click.option("--concurrency", type=click.IntRange(1, 512), default=8, show_default=True)
@pass_app_and_json("the result")
def judge_align(
    app: AppContext, config_name: str, dataset: str, model: str | None, proposer: str,
    min_sensitivity: float, min_specificity: float, concurrency: int, as_json: bool,
) -> None:
    """Propose a revision of CONFIG from its dev disagreements and test it on held-out rows.

    Runs the current revision (the one adopted last, else CONFIG) on the dev and test rows,
    asks the proposer for revised criteria and few-shot examples from dev rows only, runs the
    proposal on the same rows, and prints the diff, the disagreements it addresses, and test
    sensitivity, specificity and kappa with intervals and an exact McNemar test against the
    current revision. Nothing is adopted: run `calibrate judge adopt PROPOSAL` for that.
    """
    from calibrate_app.cli._context import echo_json
    from judges.workflows import align

    workspace = app.workspace
    workspace.labels.dataset(dataset)
    base = align.current_revision(
        workspace, align.with_model(_find_config(app, config_name), model, config_name), dataset)
    split = align.split(workspace, dataset, base.criterion).split
    notes = _stand_in_notes(("the judge", base.model), ("the proposer", proposer))
    for note in notes:
        click.echo(note, err=True)
    click.echo(split.describe(), err=True)
    outcome = align.propose(workspace, dataset, base, proposer=proposer, settings=app.settings,
                            min_sensitivity=min_sensitivity, min_specificity=min_specificity,
                            concurrency=concurrency)
    proposal, result = outcome.proposal, outcome.result
    if as_json:
        data: dict[str, Any] = result.to_dict()
        data.update(proposal_id=proposal.proposal_id, diff=proposal.diff,
                    addressed=[d.item_id for d in proposal.addressed], stand_in=notes)
        echo_json(data)
        return
    for line in proposal.describe():
        click.echo(line)
    click.echo(proposal.diff, nl=False)
    for line in result.describe():
        click.echo(line)
    for note in notes:
        click.echo(note)
    click.echo(f"Nothing adopted. Adopt with: calibrate judge adopt {proposal.proposal_id}")


@click.command("adopt")
@click.argument("proposal_id")
@pass_app
def judge_adopt(app: AppContext, proposal_id: str) -> None:
    """Adopt a proposed revision (explicitly): later `judge align` runs start from it."""
    from judges.workflows import align

    adoption = align.adopt(app.workspace, proposal_id)
    proposal, stored = adoption.proposal, adoption.config
    click.echo(f"Adopted {stored.name} r{stored.revision} ({proposal.config_id}) for "
               f"{proposal.dataset}/{proposal.criterion}.")


@click.command("stress")
@click.argument("config_name", metavar="CONFIG")
@click.option("--dataset", required=True, help="Dataset of pointwise RAG rows.")
@click.option("--model", default=None, help="Judge with another provider/model (new config id).")
@click.option("--test", "tests", multiple=True,
              type=click.Choice(["source_deletion", "source_order", "answer_padding",
                                 "embedded_instructions"]),
              help="Run only these tests (repeatable; default all).")
@click.option("--limit", type=click.IntRange(1), default=None, help="Only the first K rows.")
@click.option("--concurrency", type=click.IntRange(1, 512), default=8, show_default=True)
@pass_app_and_json("the result")
def judge_stress(
    app: AppContext, config_name: str, dataset: str, model: str | None, tests: tuple[str, ...],
    limit: int | None, concurrency: int, as_json: bool,
) -> None:
    """Perturbation tests with a known right answer: flip rates with intervals, no experts.

    Source deletion must turn a pass into a fail; source order, answer padding and embedded
    instructions must not change the verdict. Perturbed rows go into DATASET.stress, linked to
    their originals and never calibrated; the results go into the judge card.
    """
    from calibrate_app.cli._context import echo_json
    from judges.workflows import align

    workspace = app.workspace
    workspace.labels.dataset(dataset)
    config = align.with_model(_find_config(app, config_name), model, config_name)
    notes = _stand_in_notes(("the judge", config.model))
    result = align.stress(workspace, dataset, config, settings=app.settings, tests=tests,
                          limit=limit, concurrency=concurrency)
    if as_json:
        echo_json({"stress_run": result.stress_run, "dataset": dataset,
                   "derived_dataset": result.derived_dataset, "judge": config.label,
                   "config_id": config.config_id, "family_warning": result.family_warning,
                   "stand_in": notes,
                   "tests": [{"test": t.test, "expectation": t.expectation,
                              "eligible": t.eligible, "flip_rate": t.flip_rate.to_dict(),
                              "flipped": list(t.flipped)} for t in result.tests]})
        return
    for line in result.describe():
        click.echo(line)
    for note in notes:
        click.echo(note)


def register(cli: click.Group) -> None:
    """Add these commands to the ``judge`` group (``cli`` is unused: nothing top-level)."""
    for command in (judge_split, judge_align, judge_adopt, judge_stress):
        judge_group.add_command(command)
