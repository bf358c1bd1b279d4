"""Commands that use a judge card in CI: ``score``, ``gate`` and ``compare``.

Thin layers over :mod:`judges.workflows.gate`; ``--json`` output is stable and documented in
``docs/report-json.md``.

``gate`` exit codes: 0 every bar is met; 1 one is not (the reason is printed); 2 bad input (an
unreadable or edited card, an unreadable verdicts file, verdicts of another judge config or
without one, no scored verdict, a card whose counts cannot correct a pass rate, or options that
do not fit together).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from calibrate_app.cli._paths import ClientPath

FROM_BASELINE = "from-baseline"

_CARD = click.option("--card", "card_file", required=True, type=ClientPath(dir_okay=False),
                     help="Judge card file (calibrate card export).")
OTLP = click.option(
    "--otlp", "otlp_file", type=ClientPath(dir_okay=False), default=None,
    help="Also write the numbers as OpenTelemetry gen_ai.evaluation.result events (OTLP/JSON "
    "logs) to this file.",
)
_ALLOW_UNVERIFIED = click.option(
    "--allow-unverified", is_flag=True,
    help="Accept verdicts without a config_id (not checked against the card's judge); the "
    "output says they are unverified.",
)


class _Bar(click.ParamType[float | str, Any]):
    """A pass rate in [0, 1], or ``from-baseline``."""

    name = "RATE|from-baseline"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> float | str:
        if value == FROM_BASELINE:
            return FROM_BASELINE
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is neither a number in [0, 1] nor {FROM_BASELINE}", param, ctx)
        if not 0.0 <= number <= 1.0:
            self.fail(f"{number} is not in [0, 1]", param, ctx)
        return number


def _score_text(data: dict[str, Any]) -> list[str]:
    from judges.calibration import format_interval

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
    sel = data.get("selection")
    if sel is not None and sel["applied"]:
        rate = sel["accepted_pass_rate"]
        lines.append(
            f"  acceptance rule      accepts {sel['accepted']} of {sel['rows']} "
            f"({sel['accepted_share']:.1%}), error at most {sel['alpha']:g} with probability "
            f"{1 - sel['delta']:.0%}; {sel['escalated']} escalated"
            + ("" if rate is None else f"; judge pass rate among accepted "
               f"{format_interval(rate)} (bounds the error allows)"))
    lines += [f"  warning: {w}" for w in data["warnings"]]
    return lines


def _pairwise_score_text(data: dict[str, Any]) -> list[str]:
    from judges.calibration import format_interval

    def shares(key: str) -> str:
        return "  ".join(f"{side} {format_interval(data[key][side])}" for side in
                         ("a", "b", "tie"))

    c = data["counts"]
    lines = [
        f"Pairwise verdicts {data['verdicts_file']} scored with the card of "
        f"{data['card']['judge']} ({data['card']['config_id']})",
        f"  scored items   {data['n']} (a {c['a']}, b {c['b']}, tie {c['tie']}; unscored "
        f"{data['unscored']})",
        f"  observed       {shares('observed')}",
        f"  corrected      {shares('corrected')}   (method {data['method']}, design "
        f"{data['design']})",
        f"  population     {data['population']}",
    ]
    return lines + [f"  warning: {w}" for w in data["warnings"]]


def compare_text(data: dict[str, Any]) -> list[str]:
    """The terminal summary of a ``compare`` result (its JSON form)."""
    from judges.calibration import format_interval

    t, x = data["table"], data["excluded"]
    p = data["mcnemar_p"]
    difference = format_interval(data["difference"], signed=True)
    observed = data["observed_difference"]
    lines = [
        f"Baseline {data['baseline_file']} vs candidate {data['candidate_file']}, judged by "
        f"{data['card']['judge']} ({data['card']['config_id']})",
        f"  {data['n_paired']} paired items (left out: {x['baseline_only']} only in the "
        f"baseline, {x['candidate_only']} only in the candidate, {x['not_pass_fail']} not "
        "pass/fail in both)",
        f"  baseline   corrected pass rate  {format_interval(data['baseline'])}",
        f"  candidate  corrected pass rate  {format_interval(data['candidate'])}",
        f"  difference (candidate - baseline)  {difference}"
        + ("" if observed is None else f"   (judge pass rates differ by {observed:+.3f})"),
        f"  McNemar p = {'—' if p is None else f'{p:.4g}'} ({data['mcnemar_method']}; "
        f"{t['candidate_only']} items gained a pass, {t['baseline_only']} lost one)",
    ]
    if data["difference"]["reason"]:
        lines.append(f"  difference: {data['difference']['reason']}")
    if data["documents"]:
        lines.append(f"  clustered by {data['documents']} documents (design effect "
                     f"{data['design_effect']:.2f})")
    if data["segments"]:
        lines.append(f"  {'segment':<24} {'n':>5}  {'difference':<26} McNemar p")
        for s in data["segments"]:
            sp = s["mcnemar_p"]
            lines.append(f"  {s['segment'][:24]:<24} {s['n_paired']:>5}  "
                         f"{format_interval(s['difference'], signed=True):<26} "
                         f"{'—' if sp is None else f'{sp:.3g}'}")
    lines += [f"  warning: {w}" for w in data["warnings"]]
    return lines


def write_otlp(otlp_file: str | None, data: dict[str, Any], kind: str) -> None:
    """Write ``data`` (a report's or a score's stable JSON) as OTLP/JSON logs, when asked."""
    if otlp_file is None:
        return
    from judges.workflows import gate

    if data.get("kind") == "pairwise":
        raise click.UsageError("--otlp exports pass/fail results; a pairwise card's or "
                               "report's shares are not pass rates")
    gate.write_otlp(otlp_file, data, kind)


def _emit(data: dict[str, Any], as_json: bool,
          text: Callable[[dict[str, Any]], list[str]]) -> None:
    from calibrate_app.cli._context import echo_json

    if as_json:
        echo_json(data)
    else:
        click.echo("\n".join(text(data)))


@click.command("score")
@_CARD
@click.argument("verdicts_file", type=ClientPath(dir_okay=False))
@_ALLOW_UNVERIFIED
@click.option("--accepted-out", type=ClientPath(dir_okay=False), default=None,
              help="Write id,verdict of the rows the card's acceptance rule accepts.")
@OTLP
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def score_command(card_file: str, verdicts_file: str, allow_unverified: bool,
                  accepted_out: str | None, otlp_file: str | None, as_json: bool) -> None:
    """Corrected pass rate + interval of new verdicts (VERDICTS_FILE) of the card's judge.

    With a card that has an acceptance rule (card export --alpha), also the share of the
    verdicts it accepts and the error bound on them.
    """
    from judges.workflows import card as cards
    from judges.workflows import gate

    card = cards.load_card(card_file)
    if card.judge.kind == "pairwise" and otlp_file is not None:
        raise click.UsageError("--otlp exports pass/fail results; a pairwise card's "
                               "shares are not pass rates")
    score = gate.score(card, verdicts_file, allow_unverified=allow_unverified)
    if not isinstance(score, gate.Score):  # a pairwise card: a / b / tie shares
        _emit(score.to_json(), as_json, _pairwise_score_text)
        return
    if accepted_out is not None:
        if score.selection is None or not score.selection["applied"]:
            raise click.UsageError("--accepted-out needs a card with an acceptance rule that "
                                   "applies to these verdicts (card export --alpha)")
        gate.write_accepted(score, accepted_out)
    data = score.to_json()
    write_otlp(otlp_file, data, "score")
    _emit(data, as_json, _score_text)


@click.command("compare")
@_CARD
@click.argument("baseline_file", type=ClientPath(dir_okay=False))
@click.argument("candidate_file", type=ClientPath(dir_okay=False))
@_ALLOW_UNVERIFIED
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def compare_command(card_file: str, baseline_file: str, candidate_file: str,
                    allow_unverified: bool, as_json: bool) -> None:
    """Corrected pass rates of two versions judged on the same rows, and their difference.

    BASELINE_FILE and CANDIDATE_FILE are verdicts of the card's judge config, matched by id;
    items in one file only are counted and left out.
    """
    from judges.workflows import card as cards
    from judges.workflows import gate

    comparison = gate.compare(cards.load_card(card_file), baseline_file, candidate_file,
                              allow_unverified=allow_unverified)
    _emit(comparison.to_json(), as_json, compare_text)


@click.command("gate")
@_CARD
@click.argument("verdicts_file", type=ClientPath(dir_okay=False))
@click.option("--min-pass-rate", type=_Bar(), default=None,
              help="The bar the corrected pass rate must clear, or from-baseline: the "
              "baseline's lower bound (needs --baseline).")
@click.option("--baseline", "baseline_file", type=ClientPath(dir_okay=False), default=None,
              help="Verdicts of the previous version on the same rows (for --max-drop and "
              "--min-pass-rate from-baseline).")
@click.option("--max-drop", type=click.FloatRange(0, 1), default=None,
              help="Fail when the paired difference's lower bound is below -MAX_DROP (needs "
              "--baseline).")
@click.option("--on", "on", type=click.Choice(["lower", "estimate"]), default="lower",
              show_default=True,
              help="Compare the interval's lower bound (safe) or the point estimate.")
@click.option("--min-accepted-share", type=click.FloatRange(0, 1), default=None,
              help="Fail when the card's acceptance rule accepts less than this share of the "
              "verdicts (the rest need experts).")
@click.option("--side", type=click.Choice(["a", "b", "tie"]), default="b", show_default=True,
              help="Pairwise cards: the side whose corrected share of wins must clear "
              "--min-pass-rate.")
@_ALLOW_UNVERIFIED
@OTLP
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def gate_command(
    ctx: click.Context, card_file: str, verdicts_file: str, min_pass_rate: float | str | None,
    baseline_file: str | None, max_drop: float | None, on: str,
    min_accepted_share: float | None, side: str, allow_unverified: bool,
    otlp_file: str | None, as_json: bool,
) -> None:
    """Exit 1 when VERDICTS_FILE misses a bar (0 otherwise).

    Bars: --min-pass-rate (the corrected pass rate's lower bound, or estimate with --on
    estimate) and, with --baseline, --max-drop (non-inferiority: the paired difference's lower
    bound must be at least -MAX_DROP) and --min-accepted-share (the share of verdicts the
    card's acceptance rule accepts). Exit 2 on bad input: an unreadable or edited card,
    verdicts of another judge config or without one, no scored verdict, a card that cannot
    correct a pass rate, or no bar.
    """
    from calibrate_app.cli._context import echo_json
    from judges.workflows import card as cards
    from judges.workflows import gate

    if min_pass_rate is None and max_drop is None and min_accepted_share is None:
        raise click.UsageError("give a bar: --min-pass-rate, --min-accepted-share and/or "
                               "--baseline with --max-drop")
    if baseline_file is None and (max_drop is not None or min_pass_rate == FROM_BASELINE):
        raise click.UsageError(
            "--max-drop and --min-pass-rate from-baseline compare against the previous "
            "version: give its verdicts with --baseline"
        )
    card = cards.load_card(card_file)
    if card.judge.kind == "pairwise":
        if otlp_file is not None:
            raise click.UsageError("--otlp exports pass/fail results; a pairwise card's "
                                   "shares are not pass rates")
        if baseline_file is not None or not isinstance(min_pass_rate, float):
            raise click.UsageError("a pairwise card gates on --min-pass-rate RATE (the "
                                   "corrected share of --side's wins); --baseline and "
                                   "--max-drop are for pass/fail cards")
        outcome = gate.gate_pairwise(card, verdicts_file, side=side, min_share=min_pass_rate,
                                     on=on, allow_unverified=allow_unverified)
        text = _pairwise_score_text(outcome.data)
    else:
        outcome = gate.gate(
            card, card_file, verdicts_file,
            min_pass_rate=min_pass_rate if isinstance(min_pass_rate, float) else None,
            from_baseline=min_pass_rate == FROM_BASELINE, baseline_file=baseline_file,
            max_drop=max_drop, on=on, min_accepted_share=min_accepted_share,
            allow_unverified=allow_unverified)
        write_otlp(otlp_file, outcome.data, "gate")
        text = _score_text(outcome.data)
        if "comparison" in outcome.data:
            text += compare_text(outcome.data["comparison"])
    if as_json:
        echo_json(outcome.data)
    else:
        click.echo("\n".join(text))
        click.echo(("PASS: " if outcome.passed else "FAIL: ") + outcome.reason)
    ctx.exit(0 if outcome.passed else 1)


def register(cli: click.Group) -> None:
    """Add these commands to the top-level group."""
    cli.add_command(score_command)
    cli.add_command(gate_command)
    cli.add_command(compare_command)
