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

.PHONY: run test lint bench clean demo-align wheel wheel-check

# tools/setup_venv.py prints each step and how long it took. It installs with uv (PyPI's wheel,
# its own binary: the runtime in seconds) from the places pip is configured to use, and falls
# back to pip (minutes) when uv cannot be had or CALIBRATE_NO_UV=1.
$(RUN_STAMP): pyproject.toml
	@# A venv made before the distribution was renamed (issue 28) holds this checkout as
	@# `calibrate`: uninstalled first, or two distributions would own bin/calibrate (and removing
	@# the old one later would remove the command). Only ours: the unrelated PyPI `calibrate`
	@# has no calibrate_app entry point.
	@if [ -x $(BIN)/python ] && $(BIN)/python -c "import importlib.metadata as m, sys; sys.exit('calibrate_app.cli:main' not in (m.distribution('calibrate').read_text('entry_points.txt') or ''))" 2>/dev/null; \
	then $(BIN)/python -m pip uninstall --quiet --yes calibrate; fi
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

# The release's wheel (docs/architecture.md#releasing), named for the distribution
# llm-judge-calibrate. pip builds it with the setuptools [build-system] asks for, in an isolated
# environment. build/ goes before (setuptools copies what it finds there into the wheel, files
# deleted from the source included) and after, with the egg-info: on sys.path (an editable
# install, PYTHONPATH=.) that folder would pass for an installed llm-judge-calibrate.
wheel:
	rm -rf build dist *.egg-info
	$(PYTHON) -m pip wheel --no-deps --quiet -w dist .
	rm -rf build *.egg-info
	@ls -l dist

# What `pip install llm-judge-calibrate` gives: the wheel and its dependencies from the registry
# in a new venv, and `calibrate demo` run there from a folder outside the checkout. About 900 MB
# of dependencies: 1-3 minutes.
wheel-check: wheel
	@echo "Installing dist/*.whl into a new venv with its dependencies (pip is quiet; 1-3 minutes)."
	set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(PYTHON) -m venv "$$tmp/venv"; \
	"$$tmp/venv/bin/pip" install -qq --no-compile dist/*.whl; \
	cd "$$tmp"; env -u PYTHONPATH "$$tmp/venv/bin/calibrate" --version; \
	env -u PYTHONPATH "$$tmp/venv/bin/calibrate" --db demo.duckdb demo --no-app; \
	env -u PYTHONPATH "$$tmp/venv/bin/calibrate" --db demo.duckdb datasets --json > datasets.json; \
	"$$tmp/venv/bin/python" -c 'import json, sys; names = {d["name"] for d in json.load(open("datasets.json"))}; sys.exit(0 if {"demo-labelled", "mtbench"} <= names else f"datasets: {sorted(names)}")'

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist
