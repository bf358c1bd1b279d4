"""Names a package loads on first use (PEP 562), for ``labels`` and ``judges``.

Importing either package then costs nothing: ``calibrate --help`` needs ``labels.errors`` but
neither DuckDB nor pyarrow, and the CLI imports ``judges`` without the statistics.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from typing import Any


def load(package: str, where: Mapping[str, str], name: str) -> Any:
    """The public ``name`` of ``package``, imported from its module ``where[name]`` and kept.

    Raises:
        AttributeError: ``package`` has no such public name.
    """
    module = where.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    setattr(sys.modules[package], name, value)  # the next use finds it without this call
    return value
