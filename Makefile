# The README's commands. Each target creates/reuses .venv and installs the package with its dependencies.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint bench dist clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## demo: the main job on embedded defaults: conformance kit on the example env, then an offline atroposlib process run
demo: $(STAMP)
	$(BIN)/hermes-envs demo --out demo-output

## test: the whole test suite (slow tests included), on two workers (pytest-xdist)
test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -n 2

## test-fast: the suite without the tests marked slow
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -n 2 -m "not slow"

## dist: the wheel and the sdist into dist/ (`pip install dist/hermes_envs-*.whl` installs it anywhere)
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --no-isolation --outdir dist .

## lint: ruff (lint and format) over the code, then mypy over the package (settings in pyproject's [tool.mypy]).
# mypy runs in one process: its parallel workers (-n, MYPY_NUM_WORKERS) must start within 3 s, and on a loaded
# 2-core machine they do not ("INTERNAL ERROR ... OSError: Cannot connect to build worker(s)", mypy 2.4.1).
lint: $(STAMP)
	$(BIN)/ruff check hermes_envs environments tests bench conformance scripts
	$(BIN)/ruff format --check hermes_envs environments tests bench conformance scripts
	MYPY_NUM_WORKERS=0 $(BIN)/mypy hermes_envs

bench: $(STAMP)
	for f in bench/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) demo-output build dist *.egg-info
