# The two commands of the README: `make run` (demo app) and `make test` (the suite without
# the slow-marked tests; `-m slow` runs those).
# `make run` installs the runtime dependencies only; `make test` adds the dev extras to the same
# venv (two stamps, so `make test` after `make run` upgrades the venv instead of skipping it).
# CALIBRATE_NO_UV=1 installs with pip instead of uv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed

.PHONY: run test lint bench clean demo-align

# tools/setup_venv.py prints each step and how long it took. It installs with uv (PyPI's wheel,
# its own binary: the runtime in seconds) from the places pip is configured to use, and falls
# back to pip (minutes) when uv cannot be had or CALIBRATE_NO_UV=1.
$(RUN_STAMP): pyproject.toml
	@$(PYTHON) tools/setup_venv.py $(VENV) run
	@touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP)
	@$(PYTHON) tools/setup_venv.py $(VENV) dev
	@touch $(STAMP)

run: $(RUN_STAMP)
	@echo "Building the demo database (about 10 s), then starting the app."
	$(BIN)/calibrate --db demo.duckdb demo

# One alignment cycle and one stress run on a fresh demo database, with the scripted stand-in
# judge and proposer (the output says so). The first stress run is of the proposed revision (a
# stored judge name means the revision run last), the second of the demo's one-shot judge.
DEMO_JUDGE := judges/demo/data/judges/qwen1.5b-oneshot.yaml
demo-align: $(RUN_STAMP)
	rm -f demo-align.duckdb demo-align.duckdb.wal
	$(BIN)/calibrate --db demo-align.duckdb demo --no-app
	$(BIN)/calibrate --db demo-align.duckdb judge align $(DEMO_JUDGE) --dataset demo-labelled \
		--model scripted/demo-judge --proposer scripted/proposer
	$(BIN)/calibrate --db demo-align.duckdb judge stress qwen1.5b-oneshot --dataset demo-labelled
	$(BIN)/calibrate --db demo-align.duckdb judge stress $(DEMO_JUDGE) --dataset demo-labelled \
		--model scripted/demo-judge

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
