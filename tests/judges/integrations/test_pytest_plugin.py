"""The pytest plugin, run by pytest itself (pytester) on the demo's judge card.

Each inner session loads the plugin with ``-p`` and plugin autoloading off, so the test is the
same before and after the package (and its ``pytest11`` entry point) is installed.
"""

from __future__ import annotations

import csv
import tomllib
from importlib import import_module
from pathlib import Path

import pytest
from demo_card import DemoCard
from repo_paths import REPO

from judges.integrations import score

PLUGIN = "judges.integrations.pytest_plugin"
PASSING_TESTS = "def test_ok():\n    assert True\n"


@pytest.fixture
def inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", PLUGIN, "-p", "no:cacheprovider", *args)


def section(result: pytest.RunResult) -> list[str]:
    """The lines of the plugin's terminal section, blank lines left out.

    pytest puts a blank line under the section's title when the plugin is also installed through
    its entry point (as in CI's venv), and none when it is loaded by ``-p`` alone.
    """
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if "calibrate: judge card gate" in line)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("=")), len(lines))
    return [line for line in lines[start + 1:end] if line.strip()]


def test_the_entry_point_is_declared_and_names_the_plugin() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    target = project["entry-points"]["pytest11"]["calibrate"]
    assert target == PLUGIN
    assert hasattr(import_module(target), "pytest_addoption")


def test_without_its_options_the_plugin_is_inert(inner: pytest.Pytester) -> None:
    inner.makepyfile(PASSING_TESTS)
    result = run(inner)
    assert result.ret == 0
    assert not any("calibrate" in line for line in result.outlines)
    # A bar without a card is refused, not ignored.
    orphan = run(inner, "--calibrate-min-pass-rate", "0.6")
    assert orphan.ret == pytest.ExitCode.USAGE_ERROR
    assert "--calibrate-min-pass-rate need --calibrate-card CARD" in orphan.errlines[0]


def test_a_met_bar_passes_and_shows_the_corrected_rate_with_interval_and_n(
        inner: pytest.Pytester, demo_card: DemoCard) -> None:
    inner.makepyfile(PASSING_TESTS)
    result = run(inner, "--calibrate-card", str(demo_card.card), "--calibrate-verdicts",
                 str(demo_card.calibration), "--calibrate-min-pass-rate", "0.6")
    assert result.ret == 0, result.outlines
    expected = score(demo_card.card, demo_card.calibration).corrected
    lines = section(result)
    assert lines[1] == (f"corrected pass rate {expected.format()} (95%, method {expected.method}; "
                        "n = 91 verdicts, 0 unscored, 9 unsure)")
    assert expected.format() == "0.673 [0.640, 0.685]"
    assert lines[2].startswith("observed pass rate  0.319 [0.232, 0.420]")
    assert lines[-1] == ("PASS: lower 95% bound 0.640 >= 0.6: corrected pass rate 0.673 "
                         "[0.640, 0.685] over 91 verdicts")


def test_a_missed_bar_fails_a_session_whose_tests_all_passed(
        inner: pytest.Pytester, demo_card: DemoCard) -> None:
    inner.makepyfile(PASSING_TESTS)
    result = run(inner, "--calibrate-card", str(demo_card.card), "--calibrate-verdicts",
                 str(demo_card.calibration), "--calibrate-min-pass-rate", "0.7")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert section(result)[-1] == ("FAIL: lower 95% bound 0.640 < 0.7: corrected pass rate "
                                   "0.673 [0.640, 0.685] over 91 verdicts")
    # On the point estimate the same bar is met.
    point = run(inner, "--calibrate-card", str(demo_card.card), "--calibrate-verdicts",
                str(demo_card.calibration), "--calibrate-min-pass-rate", "0.67",
                "--calibrate-on", "estimate")
    assert point.ret == 0
    assert section(point)[-1].startswith("PASS: point estimate 0.673 >= 0.67")


def test_an_unidentified_correction_never_passes(inner: pytest.Pytester,
                                                 demo_card: DemoCard) -> None:
    """The production week: the judge's sensitivity differs by segment, the answer is [0, 1]."""
    inner.makepyfile(PASSING_TESTS)
    result = run(inner, "--calibrate-card", str(demo_card.card), "--calibrate-verdicts",
                 str(demo_card.week), "--calibrate-min-pass-rate", "0.05")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    lines = section(result)
    assert "corrected pass rate 0.520 [0.000, 1.000]" in lines[1] and "n = 88" in lines[1]
    assert lines[-1].startswith("FAIL: lower 95% bound 0.000 < 0.05")


def test_tests_that_judge_rows_record_verdicts_for_the_gate(
        inner: pytest.Pytester, demo_card: DemoCard) -> None:
    """One test per row records the judge's verdict; the session gets the file's answer."""
    with demo_card.calibration.open(encoding="utf-8") as handle:
        rows = [(r["item_id"], r["repeat"], r["order"], r["verdict"], r["config_id"])
                for r in csv.DictReader(handle)]
    inner.makepyfile(f"""
import pytest

ROWS = {rows!r}

@pytest.mark.parametrize("item_id, repeat, order, verdict, config_id", ROWS)
def test_row(calibrate_verdict, item_id, repeat, order, verdict, config_id):
    calibrate_verdict(item_id, verdict or None, repeat=repeat, order=order, config_id=config_id)
""")
    result = run(inner, "--calibrate-card", str(demo_card.card),
                 "--calibrate-min-pass-rate", "0.6")
    result.assert_outcomes(passed=len(rows))
    assert result.ret == 0
    assert "corrected pass rate 0.673 [0.640, 0.685]" in section(result)[1]


def test_bad_input_is_a_usage_error_naming_file_row_and_column(
        inner: pytest.Pytester, demo_card: DemoCard, tmp_path: Path) -> None:
    other = tmp_path / "other-judge.csv"
    text = demo_card.calibration.read_text(encoding="utf-8")
    lines = text.splitlines()
    lines[3] = lines[3].replace("b2:1967089ffe21956c2b7a4d04596781e0", "b2:" + "0" * 32)
    other.write_text("\n".join(lines) + "\n", encoding="utf-8")
    inner.makepyfile(PASSING_TESTS)
    result = run(inner, "--calibrate-card", str(demo_card.card), "--calibrate-verdicts",
                 str(other), "--calibrate-min-pass-rate", "0.6")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    error = section(result)[0]
    assert error.startswith(f"ERROR: {other}, column 'config_id': verdicts come from judge "
                            f"config b2:{'0' * 32}")

    missing = run(inner, "--calibrate-card", str(tmp_path / "no-card.json"))
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    assert f"--calibrate-card: {tmp_path / 'no-card.json'}: no such file" in missing.errlines[0]
