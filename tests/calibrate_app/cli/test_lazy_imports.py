"""No `--help` and no listing command loads the engine's heavy libraries.

Each check runs in a fresh interpreter (the one the tests run in has everything loaded
already), which then lists the heavy top-level modules in ``sys.modules``. The CPU time of every
``--help`` is printed by ``bench/cli_startup.py``; here only which modules load is checked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# Statistics, NumPy, data frames, the front end and the provider SDKs: only the commands that use
# them may import them.
HEAVY = ("scipy", "statsmodels", "sklearn", "pandas", "pyarrow", "streamlit", "openai",
         "anthropic", "numpy")

_DRIVER = """
import json, sys
from calibrate_app.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(name for name in sys.modules if "." not in name)), file=sys.stderr)
"""


def _modules_after(args: list[str], cwd: Path) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, *args], cwd=cwd, capture_output=True, text=True,
        timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("args", [["--help"], ["datasets"], ["datasets", "--json"]],
                         ids=" ".join)
def test_listing_commands_leave_the_heavy_libraries_unloaded(
    args: list[str], tmp_path: Path
) -> None:
    loaded = _modules_after(["--db", str(tmp_path / "c.duckdb"), *args], tmp_path)
    assert "click" in loaded  # the probe sees what the command imported
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_datasets_opens_the_store(tmp_path: Path) -> None:
    loaded = _modules_after(["--db", str(tmp_path / "c.duckdb"), "datasets"], tmp_path)
    assert "duckdb" in loaded
    # Read-only: a missing file reads as an empty database, and none is created.
    assert not (tmp_path / "c.duckdb").exists()


_EVERY_HELP = """
import json, sys
from click.testing import CliRunner
from calibrate_app.cli import cli, command_paths

runner, failed, paths = CliRunner(), [], [path for path, _ in command_paths(cli)]
for path in paths:
    result = runner.invoke(cli, [*path, "--help"])
    if result.exit_code != 0 or "Usage:" not in result.output:
        failed.append([" ".join(path), result.exit_code, result.output[-500:]])
print(json.dumps({"failed": failed, "helps": len(paths),
                  "loaded": sorted(name for name in sys.modules if "." not in name)}))
"""


def test_no_help_of_any_command_loads_the_statistics_the_store_or_the_app(
    tmp_path: Path,
) -> None:
    # One interpreter asks every command and group for its help, as a user would one by one;
    # the choices some options list (designs, rules, signals, formats) come from name modules
    # that import nothing heavy.
    done = subprocess.run([sys.executable, "-c", _EVERY_HELP], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["failed"] == [] and seen["helps"] > 30, seen["failed"]
    heavy = {*HEAVY, "duckdb"}
    assert not heavy & set(seen["loaded"]), sorted(heavy & set(seen["loaded"]))


def test_a_command_that_needs_the_statistics_loads_them(tmp_path: Path) -> None:
    # The other side of the contract: the libraries come in with the command that uses them
    # (a report, even one that finds no dataset to report on).
    loaded = _modules_after(["--db", str(tmp_path / "c.duckdb"), "report", "--dataset", "none",
                             "--judge", "none"], tmp_path)
    assert "scipy" in loaded
