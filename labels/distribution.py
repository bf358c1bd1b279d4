"""The name this project is installed under, and the version installed.

The import packages (``calibrate_app``, ``judges``, ``labels``) and the ``calibrate`` command
keep their names; the distribution (what ``pip install`` names) is ``llm-judge-calibrate``,
because ``calibrate`` on PyPI is an unrelated package (issue 28). This module imports nothing
at module level, so ``calibrate --help`` and ``--version`` stay cheap.
"""

from __future__ import annotations

DISTRIBUTION = "llm-judge-calibrate"
"""The distribution name: ``pip install llm-judge-calibrate`` (extras: ``[team]``, ``[local]``,
``[inspect]``)."""

COMMAND = "calibrate"
"""The console script the distribution installs."""

ENTRY_POINT = "calibrate_app.cli:main"
"""What :data:`COMMAND` runs; identifies this project's distribution under any name."""


def installed_version() -> str | None:
    """The installed version of this project's distribution, or None when it is not installed.

    Looks the distribution up under :data:`DISTRIBUTION`, then as whichever installed
    distribution provides the ``calibrate`` command with this project's entry point: an
    environment installed before the rename (as ``calibrate``, editable) keeps working until it
    is reinstalled. Matching the entry point, not the old name, means the unrelated
    ``calibrate`` package on PyPI is never taken for this one.

    Returns:
        The version string (e.g. ``"0.1.0"``), or None when no installed distribution
        provides this project (code run from a source checkout that was never installed).
    """
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        pass
    for entry in metadata.entry_points(group="console_scripts", name=COMMAND):
        if entry.value == ENTRY_POINT and entry.dist is not None:
            return entry.dist.version
    return None


__all__ = ["COMMAND", "DISTRIBUTION", "ENTRY_POINT", "installed_version"]
