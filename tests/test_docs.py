"""The README stays a README, and no link in it or in ``docs/`` leads nowhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from repo_paths import REPO

README = REPO / "README.md"
README_LIMIT = 10_240  # bytes: what it is, two commands, a tour, where to read on
PAGES = [README, REPO / "bench" / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
# [text](target): targets without a scheme are files in the repository, maybe with an anchor.
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of ``page``'s headings: lower case, punctuation dropped, spaces to ``-``."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    found = set()
    for heading in re.findall(r"^#+\s+(.+?)\s*$", text, re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


def links(page: Path) -> list[str]:
    """The relative link targets of ``page`` (code blocks left out)."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def test_readme_is_at_most_10_kib() -> None:
    size = len(README.read_bytes())
    assert size <= README_LIMIT, (
        f"README.md is {size} bytes, over {README_LIMIT}: move the detail into docs/ and link it"
    )


def test_readme_keeps_the_two_commands_and_the_ci_entry() -> None:
    readme = README.read_text(encoding="utf-8")
    assert "make run" in readme and "make test" in readme
    assert "make test" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_points_at_a_file_and_anchor(page: Path) -> None:
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        goal = (page.parent / path).resolve() if path else page
        if not goal.exists():
            broken.append(f"{target}: no file {goal}")
        elif anchor and goal.suffix == ".md" and anchor not in anchors(goal):
            broken.append(f"{target}: no heading with the anchor #{anchor} in {goal.name}")
    assert not broken, f"{page.relative_to(REPO)}:\n" + "\n".join(broken)
