"""The installed version is found under the distribution's name, or by its entry point (issue 28).

An environment installed before the rename holds this project as ``calibrate`` until it is
reinstalled; the unrelated ``calibrate`` package on PyPI must never be taken for it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import pytest
from click.testing import CliRunner
from repo_paths import REPO

from calibrate_app.cli import cli
from labels.distribution import COMMAND, DISTRIBUTION, ENTRY_POINT, installed_version

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


@dataclass
class _Dist:
    version: str


@dataclass
class _Entry:
    value: str
    dist: _Dist | None


def _installed(monkeypatch: pytest.MonkeyPatch, versions: dict[str, str],
               scripts: list[_Entry]) -> None:
    """Pretend these distributions (name -> version) and ``calibrate`` scripts are installed."""

    def version(name: str) -> str:
        if name not in versions:
            raise metadata.PackageNotFoundError(name)
        return versions[name]

    def entry_points(**selection: Any) -> list[_Entry]:
        assert selection == {"group": "console_scripts", "name": COMMAND}
        return scripts

    monkeypatch.setattr(metadata, "version", version)
    monkeypatch.setattr(metadata, "entry_points", entry_points)


def test_the_names_agree_with_pyproject() -> None:
    assert PROJECT["name"] == DISTRIBUTION
    assert PROJECT["scripts"] == {COMMAND: ENTRY_POINT}
    extras = PROJECT["optional-dependencies"]
    assert f"{DISTRIBUTION}[team]" in extras["test"]
    assert f"{DISTRIBUTION}[test]" in extras["dev"]
    assert not [r for rs in extras.values() for r in rs if r.startswith("calibrate[")]


def test_the_distribution_name_comes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    _installed(monkeypatch, {DISTRIBUTION: "0.2.0", "calibrate": "0.1.0"},
               [_Entry(ENTRY_POINT, _Dist("0.1.0"))])
    assert installed_version() == "0.2.0"


def test_an_install_from_before_the_rename_is_found_by_its_entry_point(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _installed(monkeypatch, {"calibrate": "0.1.0"},
               [_Entry("calibrate.cli:run", _Dist("0.10.0")), _Entry(ENTRY_POINT, _Dist("0.1.0"))])
    assert installed_version() == "0.1.0"


def test_another_projects_calibrate_command_is_not_this_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _installed(monkeypatch, {"calibrate": "0.10.0"}, [_Entry("calibrate.cli:run", _Dist("0.10.0"))])
    assert installed_version() is None


def test_calibrate_version_names_the_distribution(monkeypatch: pytest.MonkeyPatch) -> None:
    _installed(monkeypatch, {DISTRIBUTION: "0.2.0"}, [])
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.output == f"calibrate, version 0.2.0 ({DISTRIBUTION})\n"


def test_calibrate_version_without_an_install_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _installed(monkeypatch, {}, [])
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 1
    assert f"pip install {DISTRIBUTION}" in result.output
