# The two commands of the README: `make run` (demo app) and `make test` (the whole suite).
# `make run` installs the runtime dependencies only; `make test` adds the dev extras to the same
# venv (two stamps, so `make test` after `make run` upgrades the venv instead of skipping it).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed

.PHONY: run test lint bench clean

$(RUN_STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(RUN_STAMP)
	$(BIN)/calibrate --db demo.duckdb demo

test: lint
	$(BIN)/python -m pytest

# The gates (also the pre-commit hooks): ruff with docstring rules, mypy --strict, and the
# import contracts in pyproject.toml (layers, pure statistics, Streamlit and DuckDB confined).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
