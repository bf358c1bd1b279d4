"""pytest plugin: gate a test session on a judge card's corrected pass rate.

Registered as the ``calibrate`` plugin (``pytest11`` entry point), so it loads with the
package; it does nothing unless ``--calibrate-card`` is given::

    pytest --calibrate-card card.json --calibrate-verdicts verdicts.csv
           --calibrate-min-pass-rate 0.8 [--calibrate-on lower|estimate]

Verdicts come from a file (``--calibrate-verdicts``, read when the session ends, so the
session's own tests may write it) and/or from tests that judge rows themselves through the
``calibrate_verdict`` fixture (``calibrate_verdict("row-7", "pass", config_id=...)``). At the
end the terminal summary shows the corrected pass rate with its interval and n, next to the
judge's observed rate; a missed bar makes the session fail (exit code 1) even when every test
passed, and bad input (an unreadable card or verdicts file, verdicts of another judge config)
exits 4 (pytest's usage error) with the message naming file, row and column.

Scoring goes through :func:`judges.integrations.score`, the one estimation path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from judges.card_model import JudgeCard
    from judges.integrations import CardGate
    from judges.outputs.gate import Score

RecordVerdict = Callable[..., None]


@dataclass
class _State:
    """What the plugin holds for one session.

    On ``config.stash``, not in module globals, so in-process runs (pytester's) share nothing.
    """

    card: JudgeCard
    verdicts_path: str | None
    min_pass_rate: float | None
    on: str
    allow_unverified: bool
    records: list[dict[str, Any]] = field(default_factory=list)
    score: Score | None = None
    gate: CardGate | None = None
    error: str | None = None


_KEY = pytest.StashKey[_State]()


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise pytest.UsageError(
            f"--calibrate-min-pass-rate: {text!r} is not a number in [0, 1]") from None
    if not 0.0 <= value <= 1.0:
        raise pytest.UsageError(f"--calibrate-min-pass-rate: {value} is not in [0, 1]")
    return value


def pytest_addoption(parser: pytest.Parser) -> None:
    """The plugin's options (all inert unless ``--calibrate-card`` is given)."""
    group = parser.getgroup("calibrate", "judge card gate (calibrate)")
    group.addoption("--calibrate-card", metavar="CARD",
                    help="Judge card (calibrate card export): report the corrected pass rate "
                    "of the session's verdicts and gate on it.")
    group.addoption("--calibrate-verdicts", metavar="FILE",
                    help="Verdicts of the card's judge (CSV, JSONL, JSON, Parquet; what "
                    "calibrate verdicts export writes), read when the session ends.")
    group.addoption("--calibrate-min-pass-rate", metavar="RATE", default=None,
                    help="Fail the session when the corrected pass rate is below RATE.")
    group.addoption("--calibrate-on", choices=("lower", "estimate"), default="lower",
                    help="Compare the interval's lower bound (default, safe) or the point "
                    "estimate with --calibrate-min-pass-rate.")
    group.addoption("--calibrate-allow-unverified", action="store_true", default=False,
                    help="Accept verdicts without a config_id (reported as UNVERIFIED).")


def pytest_configure(config: pytest.Config) -> None:
    """Load the card up front: a bad card stops the session before any test runs."""
    path = config.getoption("calibrate_card", None)
    if not path:
        if config.getoption("calibrate_verdicts", None) or config.getoption(
                "calibrate_min_pass_rate", None) is not None:
            # A bar without a card would be silently ignored: a gate that never gates.
            raise pytest.UsageError("--calibrate-verdicts and --calibrate-min-pass-rate need "
                                    "--calibrate-card CARD")
        return
    from judges.outputs.card import load_card
    from labels.errors import CalibrateError

    try:
        card = load_card(path)
    except CalibrateError as error:
        raise pytest.UsageError(f"--calibrate-card: {error}") from None
    if card.judge.kind == "pairwise":
        raise pytest.UsageError(f"--calibrate-card: {path}: a pairwise card scores win "
                                "rates; the plugin gates pass/fail cards")
    bar = config.getoption("calibrate_min_pass_rate")
    config.stash[_KEY] = _State(
        card=card, verdicts_path=config.getoption("calibrate_verdicts"),
        min_pass_rate=None if bar is None else _rate(bar), on=config.getoption("calibrate_on"),
        allow_unverified=config.getoption("calibrate_allow_unverified"))


@pytest.fixture
def calibrate_verdict(request: pytest.FixtureRequest) -> RecordVerdict:
    """Record a judge verdict for the session's gate: ``record(item_id, verdict, **columns)``.

    ``verdict`` is ``pass``/``fail``/``unsure`` (or ``None`` for no usable verdict); the
    keyword columns are those of a verdicts file (``config_id``, ``segment``, ``repeat``,
    ``order``, ``document_id``). Without ``--calibrate-card`` the verdict is not scored.
    """
    state = request.config.stash.get(_KEY, None)

    def record(item_id: str, verdict: str | None, **columns: Any) -> None:
        if state is not None:
            state.records.append({"id": item_id, "verdict": verdict, **columns})

    return record


def _score(state: _State) -> None:
    from judges.integrations import gate, score, verdicts_from_records
    from labels.errors import CalibrateError
    from labels.reading import read_table

    try:
        if state.verdicts_path is None and not state.records:
            raise CalibrateError("no verdicts: give --calibrate-verdicts FILE or record them "
                                 "with the calibrate_verdict fixture")
        # The file's rows first, so an error names the row a user finds in the file; the
        # recorded verdicts follow under their own name.
        rows: list[dict[str, Any]] = []
        sources = []
        if state.verdicts_path is not None:
            table = read_table(state.verdicts_path)
            # ``verdicts export`` names the id column item_id; recorded rows name it id.
            names = {c: "id" if c == "item_id" and "id" not in table.columns else c
                     for c in table.columns}
            rows += [{names[c]: table.data[c][i] for c in table.columns}
                     for i in range(table.n_rows)]
            sources.append(state.verdicts_path)
        if state.records:
            rows += state.records
            sources.append("calibrate_verdict")
        verdicts = verdicts_from_records(rows, source=" + ".join(sources))
        state.score = score(state.card, verdicts, allow_unverified=state.allow_unverified)
        if state.min_pass_rate is not None:
            state.gate = gate(state.card, state.score, min_pass_rate=state.min_pass_rate,
                              on=state.on)  # type: ignore[arg-type]
    except CalibrateError as error:
        state.error = str(error)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Score the verdicts and turn a missed bar (1) or bad input (4) into the exit status."""
    state = session.config.stash.get(_KEY, None)
    if state is None:
        return
    _score(state)
    if state.error is not None:
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
    elif state.gate is not None and not state.gate.passed and exitstatus in (
            pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        # Every test passed (or there were none: a session run for the gate alone), and
        # still the judge's corrected pass rate misses the bar: the session fails.
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int,
                            config: pytest.Config) -> None:
    """The corrected pass rate with its interval and n, and the gate's verdict."""
    state = config.stash.get(_KEY, None)
    if state is None:
        return
    from judges.integrations import summary_lines

    terminalreporter.section("calibrate: judge card gate")
    if state.error is not None:
        terminalreporter.write_line(f"ERROR: {state.error}", red=True)
        return
    assert state.score is not None
    for line in summary_lines(state.score, None if state.gate is None else state.gate.decision):
        if line.startswith("PASS: "):
            terminalreporter.write_line(line, green=True)
        elif line.startswith("FAIL: "):
            terminalreporter.write_line(line, red=True)
        else:
            terminalreporter.write_line(line)
