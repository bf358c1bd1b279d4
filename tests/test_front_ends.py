"""The front ends stay thin: few library modules, no store, the workflows in between.

``calibrate_app`` (the CLI and the pages) parses input, calls :mod:`judges.workflows` over a
:class:`judges.workspace.Workspace` and renders (issue 26). import-linter forbids its package
modules to import a store (pyproject.toml); the pages are scripts outside the package, so the
same rule is read here from their source, and the number of library modules the front ends
import is pinned so it can only fall.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from repo_paths import REPO

FRONT_END = REPO / "calibrate_app"
LIBRARIES = ("labels", "judges")

# The most library modules calibrate_app may import: 55 before the workflows of issue 26
# (report, card, gate, compare, drift, align, stress, select/cascade; import, label queue,
# judge runs, team) moved below it.
MAX_LIBRARY_MODULES = 30

# Front-end files that still import a store (the same debt as the import-linter contract's
# ignore_imports, plus the pages, which import-linter does not see).
STORE_DEBT: set[str] = set()

# The thin callers of the workflows: they neither import nor build a store.
THIN = (
    "calibrate_app/cli/_report.py",
    "calibrate_app/cli/_gate.py",
    "calibrate_app/cli/_align.py",
    "calibrate_app/cli/_selective.py",
    "calibrate_app/app_pages/calibration.py",
    "calibrate_app/app_pages/export.py",
    "calibrate_app/alignment_panel.py",
    "calibrate_app/compare_view.py",
    "calibrate_app/selective_view.py",
    "calibrate_app/pairwise_view.py",
    "calibrate_app/cli/_rows.py",
    "calibrate_app/cli/_judges.py",
    "calibrate_app/cli/_batch.py",
    "calibrate_app/cli/_team.py",
    "calibrate_app/cli/_demo.py",
    "calibrate_app/cli/_app.py",
    "calibrate_app/app_pages/data.py",
    "calibrate_app/app_pages/judges.py",
    "calibrate_app/access.py",
    "calibrate_app/uploads.py",
    "calibrate_app/resources.py",
)


def _imported_names(path: Path) -> list[str]:
    """Every dotted name an import in ``path`` names: the module and module.name for each name."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names]
    return names


def _module_of(name: str, root: Path) -> str | None:
    """The longest prefix of ``name`` that is a module or package under ``root``."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        candidate = root.joinpath(*parts[:k])
        if candidate.with_suffix(".py").exists() or (candidate / "__init__.py").exists():
            return ".".join(parts[:k])
    return None


def library_modules(root: Path = REPO) -> set[str]:
    """The library modules (of ``labels`` and ``judges``) any file of ``calibrate_app`` imports.

    Imports inside functions and under ``TYPE_CHECKING`` count too: a front end that names a
    module depends on it. ``from judges.workflows import align`` counts the package and the
    module.
    """
    found: set[str] = set()
    for path in (root / "calibrate_app").rglob("*.py"):
        for name in _imported_names(path):
            if name.split(".")[0] in LIBRARIES:
                module = _module_of(name, root)
                if module is not None:
                    found.add(module)
    return found


def test_the_front_ends_import_few_library_modules() -> None:
    modules = library_modules()
    assert len(modules) <= MAX_LIBRARY_MODULES, sorted(modules)


def test_front_ends_import_no_store_but_the_listed_debt() -> None:
    importing = {
        str(path.relative_to(REPO))
        for path in FRONT_END.rglob("*.py")
        if any(re.match(r"(labels|judges)\.stores\b", name) for name in _imported_names(path))
    }
    assert importing <= STORE_DEBT, sorted(importing - STORE_DEBT)


def test_the_thin_callers_build_no_store() -> None:
    built = [
        f"{path}:{n}"
        for path in THIN
        for n, line in enumerate((REPO / path).read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\b[A-Z]\w*Store\(", line)
    ]
    assert built == []
    assert not STORE_DEBT.intersection(THIN)
