"""The libraries never import a front end: ``calibrate_app`` → ``judges`` → ``labels``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from repo_paths import REPO

ROOT = REPO
FRONT_ENDS = ("calibrate_app", "streamlit", "click")


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize("library", ["labels", "judges"])
def test_library_imports_no_front_end(library: str) -> None:
    offending = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in sorted((ROOT / library).rglob("*.py"))
        for line, name in _imports(path)
        if name.split(".")[0] in FRONT_ENDS
    ]
    assert offending == []


def test_labels_imports_nothing_from_judges() -> None:
    offending = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in sorted((ROOT / "labels").rglob("*.py"))
        for line, name in _imports(path)
        if name.split(".")[0] == "judges"
    ]
    assert offending == []
