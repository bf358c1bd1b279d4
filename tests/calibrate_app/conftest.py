"""Fixtures for the app tests: a seeded database, the app script, AppTest helpers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from app_browser import Server, open_page, shows

from labels import LabelStore
from labels.importing import import_rows

# Rows whose text would do something if it were rendered as markdown, HTML or LaTeX.
INJECTIONS = (
    "<script>window.__injected = 1</script>",
    "![x](http://127.0.0.1:9/track)",
    "[x](javascript:alert(1))",
    "$x$",
)


def write_rows(path: Path, n: int, *, injections: bool = False) -> Path:
    """A JSONL file of ``n`` pointwise rows (``q0`` …); optionally the injection rows first."""
    rows = []
    if injections:
        for k, text in enumerate(INJECTIONS):
            rows.append({
                "id": f"inj{k}", "question": f"Injection {k}: {text}",
                "answer": f"Answer with {text} inside", "sources": [f"Source with {text}"],
                "reference": f"Reference {text}",
            })
    for i in range(n):
        rows.append({
            "id": f"q{i}", "question": f"Question number {i}?", "answer": f"Answer {i}.",
            "sources": [f"Passage {i}.1", f"Passage {i}.2"], "reference": f"Reference {i}",
        })
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def make_rows() -> object:
    """The :func:`write_rows` helper (test modules cannot import each other)."""
    return write_rows


@pytest.fixture
def rows_server(make_server: Any, tmp_path: Path) -> Callable[..., Server]:
    """Start an app server on datasets of :func:`write_rows` rows (name → how many).

    ``then`` runs on the store after the import (labels, queue settings, criteria).
    """

    def make(sizes: dict[str, int], *,
             then: Callable[[LabelStore], None] | None = None) -> Server:
        def seed(store: LabelStore) -> None:
            for name, n in sizes.items():
                import_rows(store, write_rows(tmp_path / f"{name}.jsonl", n), name)
            if then is not None:
                then(store)

        server: Server = make_server(seed)
        return server

    return make


@pytest.fixture
def empty_server(make_server: Any) -> Server:
    """An app server on an empty database."""
    server: Server = make_server(lambda store: None)
    return server


@pytest.fixture
def data_page(browser: Any, empty_server: Server) -> Any:
    """A browser page on ``empty_server``'s Data page, which says there is no dataset yet.

    Close ``page.context`` to end the page's session.
    """
    page = open_page(browser, empty_server.url)
    shows(page, "No datasets yet", timeout=30_000)
    return page


@pytest.fixture
def injections() -> tuple[str, ...]:
    """Strings that must reach the page literally."""
    return INJECTIONS


@pytest.fixture
def seeded(store: LabelStore, tmp_path: Path, app_env: Path) -> LabelStore:
    """The store with dataset ``demo`` (6 rows) and ``inj`` (the injection rows only)."""
    import_rows(store, write_rows(tmp_path / "demo.jsonl", 6), "demo")
    import_rows(store, write_rows(tmp_path / "inj.jsonl", 0, injections=True), "inj")
    return store


@pytest.fixture(scope="session")
def selective_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The judge-that-abstains database of ``tests/support/selective_data.py``, built once."""
    from selective_data import build_selective_db

    return build_selective_db(tmp_path_factory.mktemp("selective"))
