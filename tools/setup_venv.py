"""Create and fill the project's virtual environment for `make run` and `make test`.

Usage: ``python3 tools/setup_venv.py VENV run|dev`` (the Makefile calls it; stdlib only, so the
system Python runs it before the venv exists).

- ``run`` installs the runtime dependencies (``-e .``), ``dev`` adds the dev extras
  (``-e '.[dev]'``) to the same venv.
- With `uv <https://docs.astral.sh/uv/>`_ when it can be had: a ``uv`` on PATH, else the ``uv``
  wheel from PyPI (a few seconds; uv ships its own binary), installed with pip into
  ``VENV/uv`` (a new venv is made without pip; uv adds pip to it with the rest). uv installs
  the runtime in seconds where pip takes minutes.
- uv is given the package locations pip is configured with (``pip config list``: pip.conf
  files and ``PIP_*`` variables: index-url, extra-index-url, find-links, constraint, no-index,
  trusted-host, cert), so both install from the same places; and pip's rule of taking the best
  version across all of them (``--index-strategy unsafe-best-match``: uv's default stops at the
  first location that has a package). A user who configured uv's own index (``UV_INDEX_URL``,
  ``UV_DEFAULT_INDEX``, ``UV_INDEX``, ``UV_EXTRA_INDEX_URL``, ``UV_FIND_LINKS``,
  ``UV_NO_INDEX``) keeps it: then pip's locations are not passed.
- Falls back to pip when uv cannot be installed or its install fails, or when
  ``CALIBRATE_NO_UV=1``. pip prints a line every 20 s, so a long install is not silent.

Every step prints what it does, how long it should take and how long it took.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

UV_INDEX_VARIABLES = ("UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_EXTRA_INDEX_URL",
                      "UV_FIND_LINKS", "UV_NO_INDEX")
HEARTBEAT_S = 20.0


def say(message: str) -> None:
    """Print one line of progress at once (make shows it as it comes)."""
    print(f"[setup] {message}", flush=True)


def run(command: list[str], *, env: dict[str, str] | None = None) -> int:
    """Run ``command``, its output shown as it comes; its exit code."""
    return subprocess.call(command, env=env)


def run_uv(command: list[str], env: dict[str, str]) -> int:
    """Run a ``uv pip install``: its progress lines shown, its list of packages counted.

    uv says what it resolves, downloads and builds; the one line per installed package
    (`` + name==version``, about 60 of them) is summed up in one line.
    """
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, bufsize=1)
    assert proc.stdout is not None
    changed = 0
    for line in proc.stdout:
        if line[:3] in (" + ", " - ", " ~ "):
            changed += 1
        else:
            sys.stdout.write(line)
            sys.stdout.flush()
    code = proc.wait()
    if changed:
        say(f"  {changed} packages added, removed or replaced")
    return code


def run_with_heartbeat(command: list[str], what: str) -> tuple[int, list[str]]:
    """Run a quiet ``command``, printing a line every 20 s; its exit code and output lines.

    pip prints nothing useful for minutes with ``--quiet`` and hundreds of lines without it:
    here its lines are read, and every 20 s one line says how long it has run, how many
    packages it has collected and what it is doing now.
    """
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, bufsize=1)
    lines: list[str] = []
    done = threading.Event()

    def beat() -> None:
        started = time.monotonic()
        while not done.wait(HEARTBEAT_S):
            collected = sum(line.startswith("Collecting") for line in lines)
            last = lines[-1].strip()[:70] if lines else "starting"
            say(f"  … {what}: {time.monotonic() - started:.0f} s, {collected} packages "
                f"collected; now: {last}")

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
    code = proc.wait()
    done.set()
    return code, lines


def pip_settings(python: Path) -> dict[str, str]:
    """The install options pip is configured with (``pip config list``), the most specific kept.

    ``pip config list`` prints ``section.name='value'`` for the merged configuration files and
    ``:env:.name='value'`` for ``PIP_*`` variables; a variable overrides the ``install``
    section, which overrides ``global``.
    """
    try:
        out = subprocess.run([str(python), "-m", "pip", "config", "list"], capture_output=True,
                             text=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    rank = {"global": 0, "install": 1, ":env:": 2}
    found: dict[str, tuple[int, str]] = {}
    for line in out.splitlines():
        key, sep, value = line.partition("=")
        section, _, name = key.rpartition(".")
        if not sep or section not in rank:
            continue
        try:
            parsed = shlex.split(value)
        except ValueError:
            continue
        text = parsed[0] if parsed else ""
        if name not in found or rank[section] >= found[name][0]:
            found[name] = (rank[section], text)
    return {name: text for name, (_, text) in found.items()}


def uv_index_args(settings: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The uv options and environment that point uv at the places pip installs from."""
    env = dict(os.environ)
    if settings.get("cert") and "SSL_CERT_FILE" not in env:
        env["SSL_CERT_FILE"] = settings["cert"]
    if any(env.get(name) for name in UV_INDEX_VARIABLES):
        return [], env  # the user configured uv's index: keep it
    args: list[str] = []
    if settings.get("no-index", "").lower() in ("1", "true", "yes", "on"):
        args.append("--no-index")
    if settings.get("index-url"):
        args += ["--index-url", settings["index-url"]]
    for url in settings.get("extra-index-url", "").split():
        args += ["--extra-index-url", url]
    for place in settings.get("find-links", "").split():
        args += ["--find-links", place]
    for host in settings.get("trusted-host", "").split():
        args += ["--allow-insecure-host", host]
    for path in settings.get("constraint", "").split():
        if Path(path).exists():
            args += ["--constraint", path]
    # pip takes the best version across every location; uv's default stops at the first
    # location that has the package at all, which would pin a package to an old local copy.
    args += ["--index-strategy", "unsafe-best-match"]
    return args, env


def has_pip(venv: Path) -> bool:
    """Whether the venv has its own pip (a venv made for uv has none until uv adds it)."""
    return (venv / "bin" / "pip").exists()


def find_uv(venv: Path, python: Path) -> str | None:
    """A uv to install with: on PATH, already in the venv, or installed with pip.

    Into the venv by its own pip when it has one; else by the pip of the Python running this
    script, into ``VENV/uv`` (``--target``), so a new venv needs no pip of its own first
    (``ensurepip`` takes 4–16 s on a busy 2-core machine).
    """
    if os.environ.get("CALIBRATE_NO_UV"):
        say("CALIBRATE_NO_UV is set: installing with pip (up to 5 minutes)")
        return None
    for candidate in (shutil.which("uv"), venv / "bin" / "uv", venv / "uv" / "bin" / "uv"):
        if candidate and Path(candidate).exists():
            return str(candidate)
    say("installing uv (PyPI's wheel, its own binary) with pip: about 5 s")
    started = time.monotonic()
    if has_pip(venv):
        command, uv = [str(python), "-m", "pip", "install"], venv / "bin" / "uv"
    else:
        command = [sys.executable, "-m", "pip", "install", "--target", str(venv / "uv")]
        uv = venv / "uv" / "bin" / "uv"
    code, lines = run_with_heartbeat(
        [*command, "--quiet", "--disable-pip-version-check", "uv"], "pip install uv")
    if code != 0 or not uv.exists():
        sys.stdout.write("".join(lines[-20:]))
        say(f"could not install uv (exit {code}): installing with pip instead "
            "(up to 5 minutes)")
        return None
    say(f"  uv installed in {time.monotonic() - started:.0f} s")
    return str(uv)


def install_with_pip(python: Path, spec: str, what: str) -> None:
    """The fallback: the venv's pip, a line every 20 s."""
    if not has_pip(python.parent.parent):
        say("adding pip to the venv (ensurepip: a few seconds)")
        if run([str(python), "-m", "ensurepip", "--upgrade", "--default-pip"]) != 0:
            raise SystemExit("[setup] could not add pip to the venv")
    say(f"installing {what} with pip: up to 5 minutes (a line every {HEARTBEAT_S:.0f} s)")
    started = time.monotonic()
    code, lines = run_with_heartbeat(
        [str(python), "-m", "pip", "install", "--progress-bar", "off",
         "--disable-pip-version-check", "-e", spec], f"pip install -e {spec}")
    if code != 0:
        sys.stdout.write("".join(lines[-40:]))
        raise SystemExit(f"[setup] pip install -e {spec} failed (exit {code})")
    say(f"  installed with pip in {time.monotonic() - started:.0f} s")


def main() -> int:
    """Create the venv if needed and install the runtime (``run``) or dev (``dev``) set."""
    if len(sys.argv) != 3 or sys.argv[2] not in ("run", "dev"):
        raise SystemExit("usage: setup_venv.py VENV run|dev")
    venv, target = Path(sys.argv[1]), sys.argv[2]
    python = venv / "bin" / "python"
    spec, what = (".", "the runtime dependencies (Streamlit, DuckDB, pandas, scikit-learn, "
                  "the provider SDKs; about 800 MB)") if target == "run" else (
        ".[dev]", "the dev tools (pytest, ruff, mypy, Playwright and the test extras)")
    started = time.monotonic()
    if not python.exists():
        say(f"creating {venv} with {sys.executable} (a few seconds)")
        step = time.monotonic()
        # For uv, without pip: uv installs pip into it with the rest, in a fraction of the
        # time ensurepip takes (the fallback runs ensurepip when it needs pip).
        bare = [] if os.environ.get("CALIBRATE_NO_UV") else ["--without-pip"]
        if run([sys.executable, "-m", "venv", *bare, str(venv)]) != 0:
            raise SystemExit(f"[setup] could not create {venv}")
        say(f"  created in {time.monotonic() - step:.0f} s")
    uv = find_uv(venv, python)
    installed = False
    if uv is not None:
        args, env = uv_index_args(pip_settings(python if has_pip(venv) else Path(sys.executable)))
        say(f"installing {what} with uv: 10–60 s")
        step = time.monotonic()
        # pip too, so `.venv/bin/pip` works as in a venv made by pip.
        code = run_uv([uv, "pip", "install", "--python", str(python), *args, "-e", spec, "pip"],
                      env)
        if code == 0:
            say(f"  installed with uv in {time.monotonic() - step:.0f} s")
            installed = True
        else:
            say(f"uv failed (exit {code}): installing with pip instead")
    if not installed:
        install_with_pip(python, spec, what)
    say(f"{venv} ready in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
