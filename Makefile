# The two commands of the README: `make demo` and `make test`.
# Each creates .venv when it is missing and installs the project into it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/goldenkit demo

# pytest runs the tests and the docstring examples of goldenkit/ (--doctest-modules, pyproject.toml),
# then mypy checks the package strictly.
test: $(STAMP)
	$(BIN)/python -m pytest
	$(BIN)/mypy --strict goldenkit

lint: $(STAMP)
	$(BIN)/ruff check goldenkit tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_dataset.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
