"""CPU time and peak memory of every `calibrate ... --help`, beside the floor an interpreter costs.

Each command runs in a fresh interpreter, waited for with ``os.wait4``, which hands back that
one child's resource use: CPU seconds (user + system; other load on a shared machine changes
them less than wall-clock time would) and its peak resident memory (never below this small
process's own, about 12 MiB, which Linux counts in a child at fork). The commands are found by
walking the click group, so a new subcommand is timed without editing this file. Two floors are
measured in the same run: ``python -c pass`` and the ``--help`` of a bare click group (the least
any click command line can cost); ``calibrate datasets`` and an eager import of every command's
libraries (what `calibrate --help` cost before the commands imported the engine lazily) give the
other end. Run:

    .venv/bin/python bench/cli_startup.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# The libraries the commands use, imported at once: the cost the lazy imports avoid.
_EVERYTHING = (
    "import calibrate_app.cli, judges.reporting, judges.outputs.card, judges.outputs.gate, "
    "judges.outputs.compare, "
    "judges.runner, judges.verdicts, labels.importing, labels.exporting"
)
_BARE_CLICK = (
    "import click\n"
    "@click.group()\n"
    "@click.option('--db')\n"
    "def cli(db):\n"
    "    '''A group with one option.'''\n"
    "cli(['--help'])"
)
AIM_SECONDS = 0.5


def run_once(command: list[str], cwd: Path) -> tuple[float, float]:
    """CPU seconds and peak RSS (MiB) of one run of ``command`` in a child process."""
    child = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {child.returncode}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # Linux: KiB


def best(repeats: int, command: list[str], cwd: Path) -> tuple[float, float]:
    """The least CPU time and peak RSS of ``repeats`` runs (the least disturbed by other load)."""
    runs = [run_once(command, cwd) for _ in range(repeats)]
    return min(cpu for cpu, _ in runs), min(rss for _, rss in runs)


# Lists every command path, the group itself first, depth first by name. It runs in a child so
# that this process stays small: Linux counts the parent's resident pages at fork in a child's
# peak RSS, so a parent that had imported the CLI would raise every figure to its own size.
_LIST_COMMANDS = """
import json
from calibrate_app.cli import cli, command_paths
print(json.dumps([list(path) for path, _ in command_paths(cli)]))
"""


def subcommands() -> list[list[str]]:
    """Every command path of ``calibrate``, the root first, depth first by name."""
    done = subprocess.run([sys.executable, "-c", _LIST_COMMANDS], capture_output=True,
                          text=True, check=True)
    paths: list[list[str]] = json.loads(done.stdout)
    return paths


def main() -> None:
    """Print CPU seconds and peak RSS of each ``--help``, the floors, and which miss the aim."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        db = str(cwd / "bench.duckdb")
        python = [sys.executable]
        command = [*python, "-m", "calibrate_app.cli", "--db", db]
        rows["python -c pass (floor)"] = best(args.repeats, [*python, "-c", "pass"], cwd)
        rows["bare click --help (floor)"] = best(args.repeats, [*python, "-c", _BARE_CLICK], cwd)
        helps = []
        for path in subcommands():
            name = " ".join(("calibrate", *path, "--help"))
            helps.append(name)
            rows[name] = best(args.repeats, [*command, *path, "--help"], cwd)
        rows["calibrate datasets"] = best(args.repeats, [*command, "datasets"], cwd)
        rows["eager import (reference)"] = best(args.repeats, [*python, "-c", _EVERYTHING], cwd)
    width = max(len(name) for name in rows)
    print(f"CPU seconds (user + system) and peak RSS, best of {args.repeats}:")
    for name, (seconds, rss) in rows.items():
        print(f"  {name:<{width}} {seconds:6.3f} s  {rss:6.1f} MiB")
    slow = [name for name in [*helps, "calibrate datasets"] if rows[name][0] >= AIM_SECONDS]
    worst = max(helps, key=lambda name: rows[name][0])
    print(f"slowest --help: {worst}, {rows[worst][0]:.3f} s CPU; "
          f"{len(slow)} of {len(helps) + 1} commands at or above the {AIM_SECONDS} s aim"
          + (": " + ", ".join(slow) if slow else ""))


if __name__ == "__main__":
    main()
