"""Commands for the judge that abstains and the card that notices drift.

``calibrate judge select`` and ``calibrate judge cascade`` (thin over
:mod:`judges.workflows.selective`) certify acceptance rules, write the accepted rows and send the
rest to the Label queue's escalated order; ``calibrate drift`` (thin over
:mod:`judges.workflows.gate`) tests a card for judge and system drift. Exit codes of ``drift``:
0 the card holds, 1 drift, 2 bad input.
"""

from __future__ import annotations

from typing import Any

import click

from calibrate_app.cli._context import AppContext, LazyChoice, pass_app_and_json
from calibrate_app.cli._judges import judge_group
from calibrate_app.cli._paths import ClientPath


def _rules() -> list[str]:
    from judges.calibration.vocabulary import AGGREGATION_RULES

    return list(AGGREGATION_RULES)


def _signals() -> list[str]:
    from judges.calibration.vocabulary import SIGNALS

    return list(SIGNALS)


def _p_values() -> list[str]:
    from judges.calibration.vocabulary import P_VALUES

    return [p.replace("_", "-") for p in P_VALUES]


_ALPHA = click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True),
                      required=True,
                      help="The error rate among accepted verdicts to guarantee, e.g. 0.1.")
_DELTA = click.option("--delta", type=click.FloatRange(0, 1, min_open=True, max_open=True),
                      default=0.1, show_default=True,
                      help="The chance the guarantee may fail (per stage).")
_TARGET = click.option("--target", default=None,
                       help="The run to settle (default: --dataset itself), judged by the same "
                       "judges; its escalated rows go to its Label queue.")
_SIGNAL = click.option("--signal", "signals", multiple=True, type=LazyChoice(_signals),
                       help="Signals of the judge's confidence (repeatable; default: agreement "
                       "across repeats and swapped orders, and the verdict probability when its "
                       "calls carry one).")
_P_VALUE = click.option("--p-value", type=LazyChoice(_p_values), default="binomial",
                        show_default=True,
                        help="The p-value of each rule: the exact binomial tail, or the "
                        "Hoeffding-Bentkus bound.")
_AGGREGATION = click.option(
    "--aggregation", type=LazyChoice(_rules), default=None,
    help="How repeated / swapped calls combine per item (every stage); default: each judge "
         "config's aggregation (all_agree for imported verdicts).")
_ONE = click.option(
    "--one-threshold", is_flag=True,
    help="One threshold for every row (the pooled test; the labels must be a random sample) "
         "instead of one per judge verdict (the default: a judge's passes and fails are not "
         "equally reliable).")
_OUTPUT = click.option("-o", "--output", default=None, type=ClientPath(dir_okay=False),
                       help="Write id,verdict of the accepted rows (.csv, .jsonl, .parquet).")
_QUEUE = click.option("--escalate/--no-escalate", default=True, show_default=True,
                      help="Record the escalated rows and switch the target's Label queue to the "
                      "escalated order (for everyone labelling it).")


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def cascade_text(data: dict[str, Any]) -> list[str]:
    """The terminal summary of a cascade (its JSON form)."""
    from judges.calibration import format_interval

    lines = [f"Cascade on {data['target']!r} ({data['rows']} rows), rules certified on the "
             f"labels of {data['dataset']!r} ({data['criterion']}); rule {data['rule_id']}",
             f"  design: {data['design']}"]
    cost = data["cost_per_1000_rows"]["stages"]
    for k, s in enumerate(data["stages"], start=1):
        usd = cost.get(s["judge"])
        bars = ", ".join(f"{name} >= {_fmt(t)}" if t is not None else f"{name}: none"
                         for name, t in s["thresholds"].items())
        stand_in = " (STAND-IN, not a model)" if s["stand_in"] else ""
        lines += [
            f"  stage {k}: {s['judge']}{stand_in} ({s['model']}), signals "
            f"{', '.join(s['signals'])}",
            f"    settles {s['accepted']} of the {s['reaching']} rows reaching it "
            f"({s['settled_share']:.1%} of the run); cost "
            + ("unknown (no tokens or costs logged)" if usd is None else
               f"${usd:.4f} per 1,000 rows of the run ({s['cost']['source']})"),
            f"    thresholds: {bars}",
        ]
        if s["refused"]:
            lines.append(f"    accepts nothing: {s['reason']}")
        else:
            lines.append(
                f"    {s['accepted_labelled']} accepted labelled rows, {s['errors']} wrong "
                f"(estimate {_fmt(s['error_estimate'])}): {s['guarantee']}")
    e = data["expert"]
    lines.append(f"  experts: {e['escalated']} escalated rows ({data['escalated_share']:.1%}; "
                 f"{e['labels_per_1000']:.0f} labels per 1,000 rows), {e['labelled']} labelled"
                 + ("" if e["median_seconds_per_label"] is None else
                    f", median {e['median_seconds_per_label']:.0f} s per label"))
    p = data["pass_rate"]
    if p is None:
        lines.append("  whole-run pass rate: -")
    else:
        lines.append(f"  whole-run pass rate  {format_interval(p)}   (method {p['method']})")
        if p["reason"]:
            lines.append(f"    {p['reason']}")
        lines += [f"    note: {w}" for w in p["warnings"]]
    lines += [f"  warning: {w}" for w in data["warnings"]]
    return lines


def _run_cascade(app: AppContext, dataset: str, judges: tuple[str, ...], alpha: float,
                 delta: float, target: str | None, signals: tuple[str, ...], p_value: str,
                 output: str | None, escalate: bool, as_json: bool,
                 extra: dict[str, Any], aggregation: str | None, one: bool) -> None:
    from calibrate_app.cli._context import echo_json
    from judges.workflows import selective

    outcome = selective.cascade(app.workspace, dataset, list(judges), alpha=alpha, delta=delta,
                                target=target, signals=signals, rule=aggregation,
                                p_value=p_value, one_threshold=one, output=output,
                                escalate=escalate, **extra)
    cascade, data = outcome.cascade, outcome.data
    if as_json:
        echo_json(data)
        return
    click.echo("\n".join(cascade_text(data)))
    if output is not None:
        click.echo(f"accepted rows written to {data['accepted_file']} "
                   f"({len(cascade.accepted())} rows: id,verdict)")
    if escalate:
        click.echo(f"{data['escalation']['rows']} escalated rows recorded (rule "
                   f"{cascade.rule_id}); the Label queue of {cascade.target!r} / "
                   f"{cascade.criterion!r} is now in escalated order")


@judge_group.command("select")
@click.option("--dataset", required=True, help="Dataset with human labels.")
@click.option("--judge", required=True, help="Judge name or config id.")
@_ALPHA
@_DELTA
@_TARGET
@_SIGNAL
@click.option("--with", "with_judges", multiple=True,
              help="Another judge whose agreement is a signal (repeatable; a card cannot carry "
                   "this signal into score/gate).")
@_P_VALUE
@_AGGREGATION
@_ONE
@_OUTPUT
@_QUEUE
@pass_app_and_json("the rule and what it accepts")
def judge_select(app: AppContext, dataset: str, judge: str, alpha: float, delta: float,
                 target: str | None, signals: tuple[str, ...], with_judges: tuple[str, ...],
                 p_value: str, aggregation: str | None, one_threshold: bool,
                 output: str | None, escalate: bool, as_json: bool) -> None:
    """Certify when the judge's verdict can be taken, write those rows, escalate the rest.

    From the labelled rows and the judge's own signals, Learn then Test chooses the acceptance
    rule whose error rate among accepted verdicts is at most --alpha with probability at least
    1 - --delta (fixed-sequence testing, exact binomial p-values, a threshold per judge
    verdict with delta split over them). The rest go to the Label queue's escalated order.
    """
    if with_judges and signals and "judges" not in signals:
        raise click.UsageError("--with gives the 'judges' signal: add --signal judges")
    if "judges" in signals and not with_judges:
        raise click.UsageError("the 'judges' signal needs the other judges: --with JUDGE")
    extra = {"with_judges": list(with_judges)}
    _run_cascade(app, dataset, (judge,), alpha, delta, target, signals, p_value, output,
                 escalate, as_json, extra, aggregation, one_threshold)


@judge_group.command("cascade")
@click.option("--dataset", required=True, help="Dataset with human labels.")
@click.option("--judge", "judges", required=True, multiple=True,
              help="A stage, cheapest first (repeat: --judge small --judge strong); experts "
                   "settle what every stage abstains on.")
@_ALPHA
@_DELTA
@_TARGET
@_SIGNAL
@_P_VALUE
@_AGGREGATION
@_ONE
@click.option("--prices", "prices_file", type=ClientPath(dir_okay=False), default=None,
              help="Price table YAML/JSON for calls that logged tokens but no cost.")
@_OUTPUT
@_QUEUE
@pass_app_and_json("the cascade")
def judge_cascade(app: AppContext, dataset: str, judges: tuple[str, ...], alpha: float,
                  delta: float, target: str | None, signals: tuple[str, ...], p_value: str,
                  aggregation: str | None, one_threshold: bool, prices_file: str | None,
                  output: str | None, escalate: bool, as_json: bool) -> None:
    """Judge A, then judge B, then experts: each stage certified with its own rule.

    Shows the share each stage settles, the cost per 1,000 rows from the logged tokens and
    costs, and the whole run's corrected pass rate combining the accepted verdicts and the
    experts' labels on the escalated rows.
    """
    extra = {"prices_file": prices_file}
    _run_cascade(app, dataset, judges, alpha, delta, target, signals, p_value, output,
                 escalate, as_json, extra, aggregation, one_threshold)


def drift_text(data: dict[str, Any]) -> list[str]:
    """The terminal summary of a drift check (its JSON form)."""
    lines = [data["sentence"], f"  card of {data['card']['judge']} ({data['card']['config_id']})"
             f"; false-alarm level {data['alpha']:g} at any stopping time, rows in "
             f"{data['order']} order"]
    for t in data["tests"]:
        state = (f"DRIFT at row {t['crossed_at']}" if t["rejected"] else "holds")
        mean = "-" if t["mean"] is None else f"{t['mean']:.3f}"
        lines.append(f"  {t['name']}: {t['n']} rows, mean {mean} vs {t['null']:.3f}, "
                     f"e-value {t['e_max']:.3g} (needs {1 / t['level']:.3g}): {state}")
    lines += [f"  warning: {w}" for w in data["warnings"]]
    return lines


@click.command("drift")
@click.option("--card", "card_file", required=True, type=ClientPath(dir_okay=False),
              help="Judge card file (calibrate card export).")
@click.argument("new_verdicts", required=False, type=ClientPath(dir_okay=False))
@click.option("--anchor", "anchor_file", type=ClientPath(dir_okay=False), default=None,
              help="The card's anchor rows (its labelled calibration rows) re-scored by the "
                   "same judge config: tells judge drift from system drift.")
@click.option("--labels", "labels_file", type=ClientPath(dir_okay=False), default=None,
              help="Expert labels of new rows (id,label): tests the card's sensitivity and "
                   "specificity on them.")
@click.option("--baseline", "baseline_file", type=ClientPath(dir_okay=False), default=None,
              help="Verdicts of an earlier run to compare the new pass rate with (default: "
                   "the card's calibration rows).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.05, show_default=True,
              help="Chance of a false alarm at any stopping time, over all the tests.")
@click.option("--tolerance", type=click.FloatRange(0, 1), default=None,
              help="Share of anchor rows that may re-score differently without drift "
                   "(default: the card's, from the judge's own flips).")
@click.option("--in-file-order", is_flag=True,
              help="Test rows in file order (a file in time order); default: id-hash order.")
@click.option("--allow-unverified", is_flag=True,
              help="Accept verdicts without a config_id (not checked against the card).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def drift_command(ctx: click.Context, card_file: str, new_verdicts: str | None,
                  anchor_file: str | None, labels_file: str | None, baseline_file: str | None,
                  alpha: float, tolerance: float | None, in_file_order: bool,
                  allow_unverified: bool, as_json: bool) -> None:
    """Does the card still hold? Exit 0 it holds, 1 drift (who drifted), 2 bad input.

    NEW_VERDICTS are the judge's verdicts on new rows; --anchor the card's anchor rows
    re-scored by the judge; --labels experts' labels on new rows. Anytime-valid betting
    e-processes: checking after every batch keeps the false-alarm rate at --alpha.
    """
    from calibrate_app.cli._context import echo_json
    from judges.workflows import card as cards
    from judges.workflows import gate

    if new_verdicts is None and anchor_file is None:
        raise click.UsageError("give NEW_VERDICTS and/or --anchor ANCHOR_VERDICTS")
    report = gate.drift(cards.load_card(card_file), new_verdicts, anchor_file=anchor_file,
                        labels_file=labels_file, baseline_file=baseline_file, alpha=alpha,
                        tolerance=tolerance, in_file_order=in_file_order,
                        allow_unverified=allow_unverified)
    data = report.to_json()
    if as_json:
        echo_json(data)
    else:
        click.echo("\n".join(drift_text(data)))
    ctx.exit(1 if report.result.drifted else 0)


def register(cli: click.Group) -> None:
    """Add ``drift`` (the ``judge`` subcommands register with their group)."""
    cli.add_command(drift_command)
