# Quick start (see README): `make demo` runs the main job, `make test` runs the tests.
# Each target creates the virtual environment in .venv first if it is missing or stale.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-test
OUT    ?= out

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

demo: $(STAMP)
	$(BIN)/jaxqueens show examples/queens8.txt
	$(BIN)/jaxqueens show examples/diagonal8.txt
	$(BIN)/jaxqueens check examples/queens17.txt
	$(BIN)/jaxqueens render examples/queens17.txt -o $(OUT)/queens17.png

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python scripts/bench_fitness.py

clean:
	rm -rf $(VENV) $(OUT) build *.egg-info
