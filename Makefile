# Quick start (see README): `make demo` runs the main job, `make test` runs the tests.
# Each target creates the virtual environment in .venv first if it is missing or stale.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-test
OUT    ?= out

.PHONY: demo test bench docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

demo: $(STAMP)
	$(BIN)/jaxqueens solve -n 8 --chains 10000 --out $(OUT)/solve-8 --plot
	$(BIN)/jaxqueens solve -n 100 --chains 1000 --out $(OUT)/solve-100 --plot
	$(BIN)/jaxqueens check $(OUT)/solve-100/solutions.npy

test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto  # one worker per core (pytest-xdist): 10 min instead of 14 on 2 cores

DOCS_STAMP := $(VENV)/.installed-docs

$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,docs]'
	touch $@

# The documentation site (mkdocs + mkdocstrings): warnings are errors and every example runs.
docs: $(DOCS_STAMP)
	$(BIN)/mkdocs build --strict

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	for b in scripts/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) $(OUT) build *.egg-info
