"""Commands over the calibration: ``report`` and ``card export``/``show``.

Each is a thin layer over :mod:`judges.workflows.report` and :mod:`judges.workflows.card`, which
the Calibration and Export pages call too. ``--json`` output is stable and documented in
``docs/report-json.md``. The commands that use a card in CI
(``score``, ``gate``, ``compare``) are in :mod:`calibrate_app.cli._gate`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from calibrate_app.cli._context import AppContext, LazyChoice, pass_app, pass_app_and_json
from calibrate_app.cli._gate import OTLP, write_otlp
from calibrate_app.cli._paths import ClientPath

if TYPE_CHECKING:
    from judges.workflows.report import JudgeReport, PairwiseReport


def _designs() -> list[str]:
    from judges.calibration.vocabulary import DESIGN_ESTIMATORS

    return ["auto", *DESIGN_ESTIMATORS]


def _rules() -> list[str]:
    from judges.calibration.vocabulary import AGGREGATION_RULES

    return list(AGGREGATION_RULES)


_DESIGN = LazyChoice(_designs)
_RULES = LazyChoice(_rules)


def _pct(value: dict[str, Any], *, agreement: bool = False) -> str:
    """An interval for the terminal: the page's words where it collapsed ("all 14 agree")."""
    from judges.calibration import describe_interval

    return describe_interval(value, agreement=agreement)


def render_report(report: JudgeReport) -> str:
    """A plain-text summary of a report for the terminal."""
    from judges.calibration.vocabulary import describe_counts, describe_used

    d = report.to_json()
    summary = report.answer.summary()
    c = d["confusion"]
    counts = d.get("counts", {})
    tc, lc = counts.get("target"), counts.get("labelled")
    judged_note = (f"{tc['judged']} of {tc['rows']} target rows judged" if tc
                   else f"{d['n_target']} target rows judged")
    stand_in = "  [STAND-IN: scripted verdicts, not a model]" if d["judge"].get("stand_in") else ""
    lines = [f"WORSE THAN CHANCE: {d['worse_than_chance']}", ""] if d.get(
        "worse_than_chance") else []
    lines += [
        f"Judge {d['judge']['name']} ({d['judge']['config_id']}) on {d['dataset']!r}, "
        f"criterion {d['criterion']!r}{stand_in}",
        f"Labelled rows used: {d['n']}" + (f" of {lc['rows']}" if lc else "")
        + f" (human pass {d['m1']}, fail {d['m0']}); target {d['target']!r}: {judged_note}",
        f"Confusion (human x judge): TP {c['tp']}  FN {c['fn']}  FP {c['fp']}  TN {c['tn']}",
        "",
        # The Calibration page's first screen says the same, from the same summary.
        f"True pass rate of {d['target']!r}: {summary.sentence()}",
        f"  (it estimates {summary.estimand})",
        "",
        f"  sensitivity          {_pct(d['sensitivity'])}",
        f"  specificity          {_pct(d['specificity'])}",
        f"  false-positive rate  {_pct(d['fpr'])}   (failing answers the judge passes)",
        f"  Cohen's kappa        {_pct(d['kappa'], agreement=True)}",
    ]
    if d["human_agreement"]:
        h = d["human_agreement"]
        lines.append(
            f"  human-human kappa    {_pct(h['kappa'], agreement=True)}   ({h['annotators']} "
            "annotators, "
            f"{h['items']} shared items: the ceiling)"
        )
        lines += [f"    {p['a']} x {p['b']}: kappa {_pct(p['kappa'], agreement=True)} "
                  f"(n {p['kappa']['n']})" for p in h["pairs"]]
    lines += [
        "",
        f"  observed pass rate   {_pct(d['observed_pass_rate'])}   (judge, uncorrected; "
        f"{judged_note})",
        f"  corrected pass rate  {_pct(d['corrected_pass_rate'])}   (method {d['method']}, "
        f"design {d['design']})",
        f"  labels only          {_pct(d['labels_only_pass_rate'])}   (human pass rate of "
        "the labelled rows alone; "
        + ("also an estimate of the target)" if d["labels_only_pass_rate"]["valid_for_target"]
           else "not an estimate of the target)"),
    ]
    reason = d["corrected_pass_rate"]["reason"]
    if reason:
        lines.append(f"  corrected pass rate: {reason}")
    lines += ["", f"Design: {d['design_reason']}"]
    if tc and lc:
        lines.append(f"Target: {describe_counts(tc, rows='target ')}")
        lines.append("Labelled: " + describe_used(used=d["n"], m1=d["m1"], m0=d["m0"],
                                                  labelled=lc))
    else:
        lines.append(
            f"Unsure: human {d['unsure']['human']}, judge {d['unsure']['judge_labelled']} "
            f"(labelled) / {d['unsure']['judge_target']} (target); unscored: "
            f"{d['unscored']['labelled']} (labelled) / {d['unscored']['target']} (target)"
        )
    if d.get("selection", {}).get("check"):
        lines.append(f"Selection check: {d['selection']['check']}")
    lines += [
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
    if d.get("transfer"):
        lines += _transfer_lines(d["transfer"])
    if d["warnings"]:
        lines += ["", "Warnings:"] + [f"  - {w}" for w in d["warnings"]]
    return "\n".join(lines)


def _transfer_lines(t: dict[str, Any]) -> list[str]:
    """The transfer check: segment mix, per-segment accuracy, the segment-aware correction."""
    mix, sens, fpr = t["mix_test"], t["sensitivity_test"], t["fpr_test"]
    aware = t["segment_aware_pass_rate"]
    lines = [
        "",
        "Transfer check (does the correction carry over to the target?):",
        f"  segment mix, calibration vs target: p = {mix['p_value']:.3g} ({mix['method']}, "
        f"total variation {t['mix_distance']:.2f})",
        f"  judge accuracy across segments: sensitivity p = {sens['p_value']:.3g}, "
        f"FPR p = {fpr['p_value']:.3g}",
        f"  {'segment':<24} {'n':>4} {'calib.':>6} {'target':>6}  {'sensitivity':<22} FPR",
    ]
    for s in t["segments"]:
        lines.append(
            f"  {s['segment'][:24]:<24} {s['n']:>4} {s['calibration_share']:>6.0%} "
            f"{s['target_share']:>6.0%}  {_pct(s['sensitivity']):<22} {_pct(s['fpr'])}"
        )
    lines.append(f"  segment-aware corrected pass rate {_pct(aware)}  "
                 "(per-segment rates weighted by the target's segment shares)")  # fmt: skip
    return lines


def _shares(win: dict[str, Any], key: str | None = None) -> str:
    shares = win if key is None else win[key]
    return "  ".join(f"{side} {_pct(shares[side])}" for side in ("a", "b", "tie"))


def render_pairwise_report(report: PairwiseReport) -> str:
    """A plain-text summary of a pairwise (a / b / tie) report for the terminal."""
    d = report.to_json()
    ag, pc, win = d["agreement"], d["position_consistency"], d["win_rate"]
    table = d["confusion"]["table"]
    lines = [
        f"Pairwise judge {d['judge']['name']} ({d['judge']['config_id']}) on {d['dataset']!r}, "
        f"criterion {d['criterion']!r}",
        f"Human votes compared: {d['n_votes']} on {d['n_rows']} rows; target rows: "
        f"{win['n_target']} of {d['target']!r}",
        "",
        "Agreement with the human votes (per vote, as Zheng et al. 2023 count it):",
        f"  with ties            {_pct(ag['with_ties'])}   (n = {ag['with_ties']['n']} votes)",
        f"  without ties         {_pct(ag['without_ties'])}   (n = {ag['without_ties']['n']} "
        "votes where neither side said tie)",
        f"  Cohen's kappa        {_pct(d['kappa'])}   (3 classes: a, b, tie)",
    ]
    h = d["human_agreement"]
    if h:
        lines += [
            f"  human-human          {_pct(h['with_ties'])} with ties, {_pct(h['without_ties'])} "
            f"without   ({h['with_ties']['n']} vote pairs on {h['rows']} rows: the ceiling)",
            f"  Krippendorff alpha   {_pct(h['krippendorff_alpha'])}   (annotators)",
        ]
    lines += ["", "Votes (rows: human, columns: judge)   a      b      tie"]
    for name, row in zip(("a", "b", "tie"), table, strict=True):
        lines.append(f"  human {name:<30} " + " ".join(f"{c:6d}" for c in row))
    flip = pc["flip_rate"]
    lines += [
        "",
        f"Position consistency: {_pct(flip)} of rows changed verdict with the order "
        f"({pc['flipped']} of {pc['order_pairs']}; aggregation {pc['rule']})"
        if flip["estimate"] is not None else
        "Position consistency: not measured (the judge ran one order)",
        "",
        f"Win rate ({d['population']}):",
        f"  design               {d['design'] or 'refused'}: {d['design_reason']}",
        f"  observed (judge)     {_shares(win, 'observed')}",
        f"  corrected            {_shares(win, 'corrected')}   (method {win['method']})",
        f"  labels alone         {_shares(d['labels_only'])}",
    ]
    if win["refused"]:
        lines.append(f"  corrected win rate refused: {win['reason']}")
    one = d["one_order"]
    if one["calibration"] or one["target"]:
        lines.append(f"  one order only       {one['calibration']} calibration rows, "
                     f"{one['target']} target rows: {one['counted']}")
    if d["by_pair"]:
        lines += ["", f"{'model pair (a vs b)':<40} {'n':>5}  corrected a / b / tie"]
        for p in d["by_pair"]:
            pair = f"{p['model_a']} vs {p['model_b']}"
            lines.append(f"  {pair[:38]:<38} {p['n_target']:>5}  {_shares(p, 'corrected')}")
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
    help="How the labelled rows were drawn (auto: from --target and the provenance recorded "
    "with each label). An override the provenance or the verdict check contradicts is refused.",
)
@click.option(
    "--aggregation", type=_RULES, default=None,
    help="How repeated / position-swapped calls combine per item (all_agree = MT-Bench); "
         "default: the judge config's aggregation, all_agree for imported verdicts.",
)
@click.option("--half-width", type=click.FloatRange(0, 1, min_open=True), default=0.05,
              show_default=True, help="Interval half-width the labelling plan aims for.")
@OTLP
@pass_app_and_json("the report")
def report_command(
    app: AppContext, dataset: str, judges: tuple[str, ...], criterion: str | None,
    target: str | None, design: str, aggregation: str | None, half_width: float,
    otlp_file: str | None, as_json: bool,
) -> None:
    """Calibrate a judge against the human labels: error rates, kappa, corrected pass rate."""
    from calibrate_app.cli._context import echo_json
    from judges.workflows import report as reports

    workspace = app.read_workspace
    if reports.is_pairwise(workspace, dataset):
        if otlp_file is not None:
            raise click.UsageError("--otlp exports pass/fail reports; a pairwise report's "
                                   "shares are not pass rates")
        if len(judges) > 1:
            raise click.UsageError("a pairwise report takes one --judge")
        pairwise = reports.pairwise(workspace, dataset, judges[0], criterion=criterion,
                                    target=target, rule=aggregation,
                                    design=None if design == "auto" else design)
        if as_json:
            echo_json(pairwise.to_json())
        else:
            click.echo(render_pairwise_report(pairwise))
        return
    report = reports.report(
        workspace, dataset, judges[0], criterion=criterion, target=target,
        design=None if design == "auto" else design, rule=aggregation, half_width=half_width,
    )
    board = None
    if len(judges) > 1:
        board = reports.leaderboard(workspace, dataset, judges, criterion=report.criterion,
                                    rule=aggregation)
    data = report.to_json()
    write_otlp(otlp_file, data, "report")
    if as_json:
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
                f"{_pct(entry['kappa'])}  n={entry['n']}"
                + ("" if p is None else f"  p={p:.4g}")
            )
            if entry["note"]:
                click.echo(f"     {entry['note']}")


@click.group("card")
def card_group() -> None:
    """Judge cards: a judge's calibration in one file for CI (score, gate)."""


@card_group.command("export")
@click.option("--dataset", required=True, help="Calibration dataset (with human labels).")
@click.option("--judge", required=True, help="Judge name or config id.")
@click.option("--criterion", default=None, help="Label criterion (default: the judge's).")
@click.option("--design", type=_DESIGN, default="auto", show_default=True,
              help="How the labelled rows were drawn.")
@click.option("--aggregation", type=_RULES, default=None,
              help="How repeated / swapped calls combine per item (also used by the gate); "
                   "default: the judge config's aggregation.")
@click.option("-o", "--output", default=None, type=ClientPath(dir_okay=False),
              help="Card file: .json, .yaml or .yml (required unless --preview).")
@click.option("--preview", is_flag=True,
              help="Print the card (YAML with -o *.yaml, else JSON) and whether it would be "
                   "refused, without writing anything.")
@click.option("--force", is_flag=True,
              help="Write the card even from a stand-in provider, an unfinished or partial run, "
                   "or fewer than 30 labels per class (judges.calibration.trust.SMALL_SAMPLE); "
                   "the card lists why (forced).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=None,
              help="Also certify an acceptance rule (calibrate judge select): error among "
                   "accepted verdicts at most ALPHA; score and gate apply it.")
@click.option("--delta", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=None, help="With --alpha: the chance the guarantee may fail (default 0.1).")
@pass_app
def card_export(
    app: AppContext, dataset: str, judge: str, criterion: str | None, design: str,
    aggregation: str | None, output: str | None, preview: bool, force: bool,
    alpha: float | None, delta: float | None,
) -> None:
    """Write the judge card: config + hash, error rates with intervals, dataset hash.

    A card from a stand-in (scripted) provider, a cancelled, failed or partial run, or fewer
    than 30 labelled rows of a human class is refused unless --force is given.
    """
    from judges.workflows import card as cards

    if output is None and not preview:
        raise click.UsageError("give -o/--output FILE, or --preview to see the card first")
    if delta is not None and alpha is None:
        raise click.UsageError("--delta goes with --alpha (the acceptance rule)")
    options: dict[str, Any] = {"criterion": criterion,
                               "design": None if design == "auto" else design,
                               "rule": aggregation, "alpha": alpha, "delta": delta}
    if preview:
        card = cards.preview(app.read_workspace, dataset, judge, **options)
        yaml_file = bool(output and output.lower().endswith((".yaml", ".yml")))
        click.echo(cards.dumps_card(card, format="yaml" if yaml_file else "json"), nl=False)
        if card.forced and not force:
            click.echo("Would be refused without --force: " + "; ".join(card.forced), err=True)
        return
    assert output is not None  # checked above
    card = cards.export(app.read_workspace, dataset, judge, output, force=force, **options)
    m = card.metrics
    if m.pairwise is not None:
        click.echo(
            f"Card for pairwise judge {card.judge.name} ({card.judge.config_id}) written to "
            f"{output}: agreement {m.pairwise.agreement_with_ties.format()} with ties, "
            f"{m.pairwise.agreement_without_ties.format()} without, kappa "
            f"{m.pairwise.kappa.format()}, n={m.n} rows ({m.pairwise.n_votes} votes); design "
            f"{card.calibration.design}"
        )
        for reason in card.forced:
            click.echo(f"FORCED: {reason}", err=True)
        return
    click.echo(
        f"Card for {card.judge.name} ({card.judge.config_id}) written to {output}: "
        f"sensitivity {m.sensitivity.format()}, specificity "
        f"{m.specificity.format()}; {cards.card_counts(card)}"
    )
    sel = card.selection
    if sel is not None:
        click.echo(
            f"  acceptance rule {sel.rule_id}: accepts {sel.accepted} of {sel.rows} rows "
            f"({sel.accepted_share:.1%}), error at most {sel.alpha:g} with probability "
            f"{1 - sel.delta:.0%}" + (f" -- accepts nothing: {sel.reason}" if sel.refused
                                      else ""))
    for reason in card.forced:
        click.echo(f"FORCED: {reason}", err=True)


@card_group.command("show")
@click.argument("card_file", type=ClientPath(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the whole card as JSON.")
def card_show(card_file: str, as_json: bool) -> None:
    """Check a card (schema, config hash) and print what it says."""
    from calibrate_app.cli._context import echo_json
    from judges.workflows import card as cards

    card = cards.load_card(card_file)
    if as_json:
        echo_json(card.to_json())
        return
    m, c, j = card.metrics, card.calibration, card.judge
    stand_in = " (STAND-IN: scripted, not a model)" if j.stand_in else ""
    click.echo(f"Judge {j.name} r{j.revision} ({j.config_id}), model {j.model}{stand_in}")
    click.echo(f"Calibrated on {c.dataset!r} ({c.labelled_rows} labelled of {c.rows} rows, "
               f"{c.n_annotators} annotators), {card.created_at.isoformat()}")
    click.echo(f"  {cards.card_counts(card)}")
    for reason in card.forced:
        click.echo(f"  FORCED: {reason}")
    click.echo(f"  sensitivity {m.sensitivity.format()}")
    click.echo(f"  specificity {m.specificity.format()}")
    click.echo(f"  kappa       {m.kappa.format()}")
    click.echo(f"  policy: repeats {j.policy.repeats}, swap {j.policy.swap}, "
               f"aggregation {j.policy.aggregation}")
    for s in card.stress:  # calibrate judge stress: flip rates with a known right answer
        click.echo(f"  stress {s.test} ({s.expectation}) on {s.dataset!r}: flip rate "
                   f"{s.flip_rate.format()}, n={s.flip_rate.n} of {s.eligible}")
    if card.stress and card.stress[0].family_warning:
        click.echo(f"  same family: {card.stress[0].family_warning}")


def register(cli: click.Group) -> None:
    """Add these commands to the top-level group."""
    cli.add_command(report_command)
    cli.add_command(card_group)
