"""The wheel built from this checkout installs and runs on its own (issue 28).

The wheel is built with the running venv's setuptools (no build isolation: offline, about 2 s)
from a copy of the checkout's packaging inputs, installed into a new venv, and ``calibrate`` is
run from there in a folder outside the checkout with ``PYTHONPATH`` unset: the packages, the
demo's data, the judge configs and the app's files must all come from the wheel.

The new venv reaches the running venv's dependencies (Streamlit, DuckDB, pandas...) through a
``.pth`` file listing that venv's package folders, instead of downloading or copying them. A path
line in a ``.pth`` file adds the folder to ``sys.path`` but does not process the ``.pth`` files
inside it, so the checkout's editable install (itself a ``.pth`` line) stays out of reach; the
test checks that no folder on the new venv's ``sys.path`` but its own holds the packages.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import venv
import zipfile
from dataclasses import dataclass
from email.parser import HeaderParser
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from repo_paths import REPO

from labels.distribution import COMMAND, DISTRIBUTION

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
# Run by the new venv's Python: where the packages come from, and every Requires-Dist of the
# installed distribution (extras left out) that the environment does not satisfy.
_PROBE = """
import json, os, sys
from importlib import metadata
from packaging.requirements import Requirement
import calibrate_app, judges, labels
dist = metadata.distribution(sys.argv[1])
unmet = []
for line in dist.requires or []:
    req = Requirement(line)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue  # an extra's requirement
    try:
        have = metadata.version(req.name)
    except metadata.PackageNotFoundError:
        have = None
    if have is None or not req.specifier.contains(have, prereleases=True):
        unmet.append(f"{line} (installed: {have})")
print(json.dumps({
    "files": [m.__file__ for m in (calibrate_app, judges, labels)],
    "holders": [p for p in sys.path if os.path.isfile(os.path.join(p, "judges", "__init__.py"))],
    "version": dist.version,
    "requires": len(dist.requires or []),
    "unmet": unmet,
}))
"""

# Run by the new venv's Python on the demo database: the installed app's router and its first
# page (Data), through Streamlit's AppTest. (The Calibration page's story would double the
# probe's 2 s of CPU; the suite renders it from the checkout.)
_APP_PROBE = """
import json
from pathlib import Path
from streamlit.testing.v1 import AppTest
import calibrate_app
script = Path(calibrate_app.__file__).parent / "streamlit_app.py"
at = AppTest.from_file(str(script), default_timeout=120).run()
print(json.dumps({
    "script": str(script),
    "exceptions": [e.value for e in at.exception],
    "headers": [h.value for h in at.header],
    "tables": [sorted(map(str, d.value.iloc[:, 0])) for d in at.dataframe],
}))
"""


@dataclass(frozen=True)
class Installed:
    """A wheel built from the checkout, installed into a new venv."""

    wheel: Path
    venv: Path

    @property
    def command(self) -> Path:
        """The venv's ``calibrate`` console script."""
        return self.venv / "bin" / COMMAND


def _check_build_backend() -> None:
    """Fail with the fix, not setuptools' own error, when this venv cannot build the wheel.

    ``license = "Apache-2.0"`` (PEP 639) needs setuptools 77; a venv made by ``python -m venv``
    starts with an older one, which rejects pyproject.toml with a message about
    ``project.license``. The ``test`` extra brings the version [build-system] asks for.
    """
    for line in PYPROJECT["build-system"]["requires"]:
        requirement = Requirement(line)
        try:
            have: str | None = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            have = None
        if have is None or not requirement.specifier.contains(have, prereleases=True):
            pytest.fail(f"building the wheel here needs {line} (installed: {have}): "
                        "pip install -e '.[test]'")


def _copy_packaging_inputs(to: Path) -> list[str]:
    """Copy what the build reads (pyproject, readme, licence, packages) to ``to``.

    A copy keeps setuptools' ``build/`` and ``*.egg-info`` out of the checkout and keeps a stale
    ``build/lib`` (files since deleted from the source) out of the wheel. Returns the package
    files copied, as paths relative to ``to``.
    """
    project = PYPROJECT["project"]
    for name in ("pyproject.toml", project["readme"], *project["license-files"]):
        shutil.copy2(REPO / name, to / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for pattern in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]:
        package = pattern.rstrip("*")
        shutil.copytree(REPO / package, to / package, ignore=ignore)
    return sorted(
        path.relative_to(to).as_posix()
        for pattern in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
        for path in (to / pattern.rstrip("*")).rglob("*")
        if path.is_file()
    )


def _dependency_paths() -> list[str]:
    """The running interpreter's ``sys.path`` folders of installed packages, less any checkout.

    Its site-packages, and what ``PYTHONPATH`` or a ``.pth`` line added there (a venv layered
    on another, a ``pip install --target`` folder); not the standard library (the new venv has
    its own), no folder that holds this project's packages (this checkout, or the one an
    editable install points at) and not the suite's helpers in ``tests/``. The running venv
    itself may well be inside the checkout (``make test``'s ``.venv``).
    """
    # Not "platstdlib": in a venv that is the venv's own lib/python3.X, site-packages' parent.
    stdlib = Path(sysconfig.get_path("stdlib")).resolve()
    found: list[str] = []
    for entry in sys.path:
        path = Path(entry or os.curdir).resolve()
        if (not path.is_dir() or path.is_relative_to(stdlib)
                or path.is_relative_to(REPO / "tests")
                or (path / "judges" / "__init__.py").exists()):
            continue
        if str(path) not in found:
            found.append(str(path))
    return found


def _outside_env() -> dict[str, str]:
    """This process's environment, less what would put the checkout on the new venv's path."""
    return {name: value for name, value in os.environ.items()
            if name not in {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"}}


@pytest.fixture(scope="module")
def source_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The copied packaging inputs, and the package files among them."""
    source = tmp_path_factory.mktemp("wheel-source")
    return source, _copy_packaging_inputs(source)


@pytest.fixture(scope="module")
def installed(source_files: tuple[Path, list[str]],
              tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """Build the wheel, make a venv without pip, install the wheel into it, then add the deps."""
    _check_build_backend()
    source, _ = source_files
    dist = tmp_path_factory.mktemp("wheel-dist")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--quiet", "-w", str(dist), str(source)],
        capture_output=True, text=True, timeout=180,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = dist.glob("*.whl")

    target = tmp_path_factory.mktemp("wheel-venv") / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(target)
    python = target / "bin" / "python"
    # pip of this venv installs into the new one (--python); --no-deps before the .pth exists,
    # so pip sees nothing of this venv and never touches it.
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "--quiet", str(wheel)],
        capture_output=True, text=True, timeout=180, env=_outside_env(),
    )
    assert install.returncode == 0, install.stdout + install.stderr
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, env=_outside_env(),
    ).stdout.strip()
    # After the wheel's own files: the new venv's site-packages stays first on sys.path.
    Path(purelib, "_running_venv_deps.pth").write_text(
        "".join(f"{path}\n" for path in _dependency_paths()), encoding="utf-8"
    )
    return Installed(wheel, target)


def _run(installed: Installed, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(installed.command), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=180, env=_outside_env())
    assert done.returncode == 0, f"calibrate {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return done


def test_the_wheel_names_the_distribution_and_holds_every_package_file(
    installed: Installed, source_files: tuple[Path, list[str]]
) -> None:
    version = PYPROJECT["project"]["version"]
    assert installed.wheel.name == f"{DISTRIBUTION.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
        info = f"{DISTRIBUTION.replace('-', '_')}-{version}.dist-info"
        headers = HeaderParser().parsestr(wheel.read(f"{info}/METADATA").decode("utf-8"))
        entry_points = wheel.read(f"{info}/entry_points.txt").decode("utf-8")
    assert headers["Name"] == DISTRIBUTION == PYPROJECT["project"]["name"]
    assert headers["Version"] == version
    assert f"{COMMAND} = calibrate_app.cli:main" in entry_points
    # The demo's data, the judge configs, the app's pages, static files and Streamlit settings
    # are read at run time from beside the code: any file of the packages missing from the
    # wheel is a file a pip install lacks.
    _, files = source_files
    missing = [name for name in files if name not in names]
    assert not missing, (
        f"not in the wheel: {missing}; add them to [tool.setuptools.package-data] in "
        "pyproject.toml (or remove them if they are not the package's)"
    )
    assert "judges/demo/data/labelled.jsonl" in names
    assert "calibrate_app/.streamlit/config.toml" in names


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working folder outside the checkout."""
    work = tmp_path_factory.mktemp("elsewhere")
    assert not work.resolve().is_relative_to(REPO)
    return work


@pytest.fixture(scope="module")
def demo_db(installed: Installed, elsewhere: Path) -> tuple[Path, str]:
    """``calibrate demo --no-app`` run by the installed wheel: the database, and what it printed."""
    db = elsewhere / "demo.duckdb"
    return db, _run(installed, elsewhere, "--db", str(db), "demo", "--no-app").stdout


def test_the_installed_packages_come_from_the_wheel_alone(
    installed: Installed, elsewhere: Path
) -> None:
    probe = subprocess.run(
        [str(installed.venv / "bin" / "python"), "-c", _PROBE, DISTRIBUTION], cwd=elsewhere,
        capture_output=True, text=True, timeout=120, env=_outside_env(),
    )
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    venv_root = installed.venv.resolve()
    for file in found["files"]:
        assert Path(file).resolve().is_relative_to(venv_root), f"imported from {file}"
    # Only the new venv holds the packages: no checkout (this one, or the one the running venv
    # has an editable install of) is on its sys.path.
    assert [Path(p).resolve() for p in found["holders"]] == [Path(found["files"][1]).resolve()
                                                            .parents[1]]
    assert found["version"] == PYPROJECT["project"]["version"]
    assert found["requires"] >= len(PYPROJECT["project"]["dependencies"])
    assert found["unmet"] == []
    assert "Usage: calibrate" in _run(installed, elsewhere, "--help").stdout
    version = _run(installed, elsewhere, "--version").stdout
    assert version == f"calibrate, version {found['version']} ({DISTRIBUTION})\n"


def test_calibrate_demo_builds_the_demo_from_the_installed_data(
    installed: Installed, elsewhere: Path, demo_db: tuple[Path, str]
) -> None:
    db, printed = demo_db
    assert "dataset demo-labelled: 200 rows" in printed, printed
    datasets = {d["name"]: d for d in json.loads(
        _run(installed, elsewhere, "--db", str(db), "datasets", "--json").stdout)}
    assert {"demo-labelled", "demo-production-week", "demo-week-after-fix",
            "mtbench"} <= set(datasets)
    # The labels are CSV files under judges/demo/data/labels: without them the demo still
    # builds, with no labels.
    assert datasets["demo-labelled"]["labels"] == 475
    assert datasets["mtbench"]["kind"] == "pairwise"


def test_the_app_opens_the_demo_from_the_installed_pages(
    installed: Installed, elsewhere: Path, demo_db: tuple[Path, str]
) -> None:
    db, _ = demo_db
    probe = subprocess.run(
        [str(installed.venv / "bin" / "python"), "-c", _APP_PROBE], cwd=elsewhere,
        capture_output=True, text=True, timeout=180,
        env={**_outside_env(), "CALIBRATE_DB_PATH": str(db)},
    )
    assert probe.returncode == 0, probe.stdout + probe.stderr
    shown = json.loads(probe.stdout)
    assert Path(shown["script"]).resolve().is_relative_to(installed.venv.resolve())
    assert shown["exceptions"] == []
    assert shown["headers"][:1] == ["Data"]
    assert ["demo-labelled", "demo-production-week", "demo-week-after-fix",
            "mtbench"] in shown["tables"], shown
