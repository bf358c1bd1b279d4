"""No module of ``calibrate_app``, ``judges`` or ``labels`` runs over 700 lines.

A module that long holds more than one job (the v0.1 review found ``report.py`` and
``runner.py`` doing four each); the line is where a reader stops holding a file in their head.
Split such a module along a seam of its own (one job a file), not just to get under the line.
"""

from __future__ import annotations

from pathlib import Path

from repo_paths import REPO

PACKAGES = ("calibrate_app", "judges", "labels")
MAX_LINES = 700


def _over(limit: int, root: Path) -> list[str]:
    """``path: N lines`` for each ``.py`` file longer than ``limit``, the longest first."""
    counts = [
        (len(path.read_text(encoding="utf-8").splitlines()), path.relative_to(root).as_posix())
        for package in PACKAGES for path in (root / package).rglob("*.py")
    ]
    return [f"{path}: {n} lines" for n, path in sorted(counts, reverse=True) if n > limit]


def test_no_module_is_over_700_lines() -> None:
    offenders = _over(MAX_LINES, REPO)
    assert not offenders, f"modules over {MAX_LINES} lines:\n" + "\n".join(offenders)


def test_the_count_finds_a_long_module(tmp_path: Path) -> None:
    (tmp_path / "judges").mkdir()
    (tmp_path / "judges" / "long.py").write_text("x = 1\n" * 701, encoding="utf-8")
    (tmp_path / "judges" / "short.py").write_text("x = 1\n" * 700, encoding="utf-8")
    assert _over(MAX_LINES, tmp_path) == ["judges/long.py: 701 lines"]
