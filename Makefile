# The two commands of the README: `make demo` and `make test`.
# Each creates .venv when it is missing and installs the project into it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# `make test` and the other targets: goldenkit with its test tools (the [dev] extra).
$(STAMP): $(BIN)/python pyproject.toml setup.py
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# `make demo`: goldenkit and its own dependencies only (no test tools, Ray, ADK, JupyterLab or browser).
$(DEMO_STAMP): $(BIN)/python pyproject.toml setup.py
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/goldenkit demo

# `make test` runs `make lint` first (a failure there fails it), then the tests and the docstring
# examples of goldenkit/ (--doctest-modules, pyproject.toml) except the lint ones, then mypy checks
# the package strictly.
test: lint
	$(BIN)/python -m pytest -m "not lint"
	$(BIN)/mypy --strict goldenkit

# The checks of the code's shape: ruff, then the tests tests/conftest.py marks lint (formatting,
# size limits, layers, declared dependencies, the wheel, the speed of --help).
lint: $(STAMP)
	$(BIN)/ruff check goldenkit tests benchmarks
	$(BIN)/python -m pytest -m lint tests

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_dataset.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
