"""The examples in the statistics docstrings run and give the numbers they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import judges.calibration

MODULES = sorted(
    m.name for m in pkgutil.iter_modules(judges.calibration.__path__, "judges.calibration.")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
