"""CPU time of `calibrate --help` and `calibrate datasets` against loading the whole engine.

Each command runs in a fresh interpreter; the CPU time (user + system) of that child process is
read from ``resource.getrusage(RUSAGE_CHILDREN)``, so other load on a shared machine changes the
figures less than wall-clock time would. The reference, in the same run, is an interpreter that
imports every command's libraries (what `calibrate --help` loaded before the commands imported
the engine lazily). Run:

    .venv/bin/python bench/cli_startup.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

# The libraries the commands use, imported at once: the cost the lazy imports avoid.
_EVERYTHING = (
    "import calibrate_app.cli, judges.reporting, judges.card, judges.gate, judges.compare, "
    "judges.runner, judges.verdicts, labels.importing, labels.exporting"
)
AIM_SECONDS = 0.5


def cpu_seconds(command: list[str], cwd: Path) -> float:
    """User + system CPU seconds of one run of ``command`` in a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best(repeats: int, command: list[str], cwd: Path) -> float:
    """The least CPU time of ``repeats`` runs (the least disturbed by other load)."""
    return min(cpu_seconds(command, cwd) for _ in range(repeats))


def main() -> None:
    """Print the CPU seconds of each command and their share of the eager reference."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        db = str(cwd / "bench.duckdb")
        cli = [sys.executable, "-m", "calibrate_app.cli", "--db", db]
        rows = {
            "python -c pass": best(args.repeats, [sys.executable, "-c", "pass"], cwd),
            "calibrate --help": best(args.repeats, [*cli, "--help"], cwd),
            "calibrate datasets": best(args.repeats, [*cli, "datasets"], cwd),
            "eager import (reference)": best(args.repeats, [sys.executable, "-c", _EVERYTHING],
                                             cwd),
        }
    reference = rows["eager import (reference)"]
    print(f"CPU seconds (user + system), best of {args.repeats}:")
    for name, seconds in rows.items():
        print(f"  {name:<26} {seconds:6.3f} s   {seconds / reference:5.2f} of the eager import")
    for name in ("calibrate --help", "calibrate datasets"):
        verdict = "within" if rows[name] < AIM_SECONDS else "ABOVE"
        print(f"{name}: {rows[name]:.3f} s CPU, {verdict} the {AIM_SECONDS} s aim")


if __name__ == "__main__":
    main()
