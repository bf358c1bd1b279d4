"""Commands over the calibration: ``report``, ``card export``/``show``, ``score``, ``gate``.

Each is a thin layer over :mod:`judges.reporting`, :mod:`judges.card` and :mod:`judges.gate`.
``--json`` output is stable and documented in ``docs/report-json.md``.

``gate`` exit codes: 0 the bar is met; 1 it is not (the reason is printed); 2 bad input (an
unreadable or edited card, an unreadable verdicts file, verdicts of another judge config, no
scored verdict, or a card whose counts cannot correct a pass rate).
"""

from __future__ import annotations

from typing import Any

import click

from calibrate_app.cli._context import AppContext, pass_app
from judges.calibration import DESIGNS, format_interval
from judges.card import CardError, export_card, load_card
from judges.gate import gate, score_file
from judges.reporting import (
    AGGREGATION_RULES,
    JudgeReport,
    calibration_report,
    judge_leaderboard,
)

_DESIGN = click.Choice(["auto", *DESIGNS])
_RULES = click.Choice(list(AGGREGATION_RULES))


def _pct(value: dict[str, Any]) -> str:
    return format_interval(value)


def render_report(report: JudgeReport) -> str:
    """A plain-text summary of a report for the terminal."""
    d = report.to_json()
    c = d["confusion"]
    lines = [
        f"Judge {d['judge']['name']} ({d['judge']['config_id']}) on {d['dataset']!r}, "
        f"criterion {d['criterion']!r}",
        f"Labelled rows used: {d['n']} (human pass {d['m1']}, fail {d['m0']}); "
        f"target rows: {d['n_target']} of {d['target']!r}",
        f"Confusion (human x judge): TP {c['tp']}  FN {c['fn']}  FP {c['fp']}  TN {c['tn']}",
        "",
        f"  sensitivity          {_pct(d['sensitivity'])}",
        f"  specificity          {_pct(d['specificity'])}",
        f"  false-positive rate  {_pct(d['fpr'])}   (failing answers the judge passes)",
        f"  Cohen's kappa        {_pct(d['kappa'])}",
    ]
    if d["human_agreement"]:
        h = d["human_agreement"]
        lines.append(
            f"  human-human kappa    {_pct(h['kappa'])}   ({h['annotators']} annotators, "
            f"{h['items']} shared items: the ceiling)"
        )
    lines += [
        "",
        f"  observed pass rate   {_pct(d['observed_pass_rate'])}   (judge, uncorrected)",
        f"  corrected pass rate  {_pct(d['corrected_pass_rate'])}   (method {d['method']}, "
        f"design {d['design']})",
        f"  human pass rate      {_pct(d['human_pass_rate'])}   (labelled rows only)",
    ]
    reason = d["corrected_pass_rate"]["reason"]
    if reason:
        lines.append(f"  corrected pass rate: {reason}")
    lines += [
        "",
        f"Design: {d['design_reason']}",
        f"Unsure: human {d['unsure']['human']}, judge {d['unsure']['judge_labelled']} "
        f"(labelled) / {d['unsure']['judge_target']} (target); unscored: "
        f"{d['unscored']['labelled']} (labelled) / {d['unscored']['target']} (target)",
        f"Flip rates: swap {_pct(d['swap_flip_rate'])}, repeat {_pct(d['repeat_flip_rate'])}",
        f"Disagreements: {d['disagreements']} rows",
        f"Plan: {d['plan']['message']}",
    ]
    if d["segments"]:
        lines += ["", f"{'segment':<32} {'n':>5}  {'sensitivity':<22} {'FPR':<22} corrected"]
        for s in d["segments"]:
            lines.append(
                f"{s['segment'][:32]:<32} {s['n']:>5}  {_pct(s['sensitivity']):<22} "
                f"{_pct(s['fpr']):<22} {_pct(s['corrected_pass_rate'])}"
            )
    if d["warnings"]:
        lines += ["", "Warnings:"] + [f"  - {w}" for w in d["warnings"]]
    return "\n".join(lines)


@click.command("report")
@click.option("--dataset", required=True, help="Dataset with the human labels.")
@click.option(
    "--judge", "judges", required=True, multiple=True,
    help="Judge name or config id. Repeat to add a leaderboard of several judges.",
)
@click.option("--criterion", default=None, help="Label criterion (default: the judge's).")
@click.option(
    "--target", default=None,
    help="Dataset whose pass rate to estimate (default: --dataset). Another dataset judged by "
    "the same config is a separate calibration set (label shift allowed).",
)
@click.option(
    "--design", type=_DESIGN, default="auto", show_default=True,
    help="How the labelled rows were drawn (auto: from --target and the Label page's queue).",
)
@click.option(
    "--aggregation", type=_RULES, default="all_agree", show_default=True,
    help="How repeated / position-swapped calls combine per item (all_agree = MT-Bench).",
)
@click.option("--half-width", type=click.FloatRange(0, 1, min_open=True), default=0.05,
              show_default=True, help="Interval half-width the labelling plan aims for.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@pass_app
def report_command(
    app: AppContext, dataset: str, judges: tuple[str, ...], criterion: str | None,
    target: str | None, design: str, aggregation: str, half_width: float, as_json: bool,
) -> None:
    """Calibrate a judge against the human labels: error rates, kappa, corrected pass rate."""
    from calibrate_app.cli import echo_json

    report = calibration_report(
        app.store, dataset, judges[0], criterion=criterion, target=target,
        design=None if design == "auto" else design, rule=aggregation,
        target_half_width=half_width,
    )
    board = None
    if len(judges) > 1:
        board = judge_leaderboard(app.store, dataset, list(judges),
                                  criterion=report.criterion, rule=aggregation)
    if as_json:
        data = report.to_json()
        if board is not None:
            data["leaderboard"] = board.to_json()
        echo_json(data)
        return
    click.echo(render_report(report))
    if board is not None:
        click.echo("")
        click.echo("Leaderboard (by kappa; McNemar p vs the best):")
        for entry in board.to_json():
            p = entry["mcnemar_p_vs_best"]
            click.echo(
                f"  {entry['rank']}. {entry['judge']['name']:<24} kappa "
                f"{format_interval(entry['kappa'])}  n={entry['n']}"
                + ("" if p is None else f"  p={p:.4g}")
            )


@click.group("card")
def card_group() -> None:
    """Judge cards: a judge's calibration in one file for CI (score, gate)."""


@card_group.command("export")
@click.option("--dataset", required=True, help="Calibration dataset (with human labels).")
@click.option("--judge", required=True, help="Judge name or config id.")
@click.option("--criterion", default=None, help="Label criterion (default: the judge's).")
@click.option("--design", type=_DESIGN, default="auto", show_default=True,
              help="How the labelled rows were drawn.")
@click.option("--aggregation", type=_RULES, default="all_agree", show_default=True,
              help="How repeated / swapped calls combine per item (also used by the gate).")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Card file: .json, .yaml or .yml.")
@pass_app
def card_export(
    app: AppContext, dataset: str, judge: str, criterion: str | None, design: str,
    aggregation: str, output: str,
) -> None:
    """Write the judge card: config + hash, error rates with intervals, dataset hash."""
    card = export_card(
        app.store, dataset, judge, output, criterion=criterion,
        design=None if design == "auto" else design, rule=aggregation,
    )
    m = card.metrics
    click.echo(
        f"Card for {card.judge.name} ({card.judge.config_id}) written to {output}: "
        f"sensitivity {m.sensitivity.format()}, specificity "
        f"{m.specificity.format()}, n={m.n} (m1={m.m1}, m0={m.m0})"
    )


@card_group.command("show")
@click.argument("card_file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the whole card as JSON.")
def card_show(card_file: str, as_json: bool) -> None:
    """Check a card (schema, config hash) and print what it says."""
    from calibrate_app.cli import echo_json

    card = load_card(card_file)
    if as_json:
        echo_json(card.to_json())
        return
    m, c, j = card.metrics, card.calibration, card.judge
    click.echo(f"Judge {j.name} r{j.revision} ({j.config_id}), model {j.model}")
    click.echo(f"Calibrated on {c.dataset!r} ({c.labelled_rows} labelled of {c.rows} rows, "
               f"{c.n_annotators} annotators), {card.created_at.isoformat()}")
    click.echo(f"  sensitivity {m.sensitivity.format()}")
    click.echo(f"  specificity {m.specificity.format()}")
    click.echo(f"  kappa       {m.kappa.format()}")
    click.echo(f"  policy: repeats {j.policy.repeats}, swap {j.policy.swap}, "
               f"aggregation {j.policy.aggregation}")


def _score_text(data: dict[str, Any]) -> list[str]:
    lines = [
        f"Verdicts {data['verdicts_file']} scored with the card of {data['card']['judge']} "
        f"({data['card']['config_id']})",
        f"  scored items         {data['n']} (unscored {data['unscored']}, "
        f"unsure {data['unsure']})",
        f"  observed pass rate   {format_interval(data['observed_pass_rate'])}",
        f"  corrected pass rate  {format_interval(data['corrected_pass_rate'])}   "
        f"(method {data['method']})",
    ]
    if data["corrected_pass_rate"]["reason"]:
        lines.append(f"  corrected pass rate: {data['corrected_pass_rate']['reason']}")
    lines += [f"  warning: {w}" for w in data["warnings"]]
    return lines


@click.command("score")
@click.option("--card", "card_file", required=True, type=click.Path(dir_okay=False),
              help="Judge card file (calibrate card export).")
@click.argument("verdicts_file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def score_command(card_file: str, verdicts_file: str, as_json: bool) -> None:
    """Corrected pass rate + interval of new verdicts (VERDICTS_FILE) of the card's judge."""
    from calibrate_app.cli import echo_json

    card = load_card(card_file)
    data = score_file(card, verdicts_file).to_json()
    if as_json:
        echo_json(data)
    else:
        click.echo("\n".join(_score_text(data)))


@click.command("gate")
@click.option("--card", "card_file", required=True, type=click.Path(dir_okay=False),
              help="Judge card file (calibrate card export).")
@click.argument("verdicts_file", type=click.Path(dir_okay=False))
@click.option("--min-pass-rate", required=True, type=click.FloatRange(0, 1),
              help="The bar the corrected pass rate must clear.")
@click.option("--on", "on", type=click.Choice(["lower", "estimate"]), default="lower",
              show_default=True,
              help="Compare the interval's lower bound (safe) or the point estimate.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def gate_command(
    ctx: click.Context, card_file: str, verdicts_file: str, min_pass_rate: float, on: str,
    as_json: bool,
) -> None:
    """Exit 1 when the corrected pass rate of VERDICTS_FILE is below the bar (0 otherwise).

    Exit 2 on bad input: an unreadable or edited card, verdicts of another judge config, no
    scored verdict, or a card that cannot correct a pass rate.
    """
    from calibrate_app.cli import echo_json

    card = load_card(card_file)
    score = score_file(card, verdicts_file)
    if score.corrected.refused:
        raise CardError(
            f"this card cannot correct a pass rate: {score.corrected.reason}", path=card_file
        )
    result = gate(score, min_pass_rate=min_pass_rate, on=on)  # type: ignore[arg-type]
    data = score.to_json()
    data["gate"] = result.to_json()
    if as_json:
        echo_json(data)
    else:
        click.echo("\n".join(_score_text(data)))
        click.echo(("PASS: " if result.passed else "FAIL: ") + result.reason)
    ctx.exit(0 if result.passed else 1)


def register(cli: click.Group) -> None:
    """Add these commands to the top-level group."""
    cli.add_command(report_command)
    cli.add_command(card_group)
    cli.add_command(score_command)
    cli.add_command(gate_command)
