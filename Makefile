# Quick start (see README): `make demo` runs the main job, `make test` runs the tests.
# Each target creates the virtual environment in .venv first if it is missing or stale.
# `make gpu-check` compiles every GPU executable for described GPUs in its own venv (.venv-gpu).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-test
OUT    ?= out
GPU_VENV  := .venv-gpu
GPU_STAMP := $(GPU_VENV)/.installed

.PHONY: demo lint test test-floor bench docs gpu-check clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

demo: $(STAMP)
	$(BIN)/jaxqueens solve -n 8 --chains 10000 --out $(OUT)/solve-8 --plot --force
	$(BIN)/jaxqueens solve -n 100 --chains 1000 --out $(OUT)/solve-100 --plot --force
	$(BIN)/jaxqueens check $(OUT)/solve-100/solutions.npy

# Format, lint and types (config in pyproject.toml; ruff and mypy pinned in the test extra). The
# format check names the Python folders: ruff 0.17 would also reformat README's code blocks.
lint: $(STAMP)
	$(BIN)/ruff format --check jaxqueens tests scripts
	$(BIN)/ruff check jaxqueens tests scripts docs/_gen
	$(BIN)/mypy

# One worker per core (pytest-xdist); worksteal: a worker that runs out takes queued tests from
# the other, and tests/conftest.py puts the longest files first, so no long test starts last.
test: lint
	$(BIN)/python -m pytest -q -n auto --dist worksteal

DOCS_STAMP := $(VENV)/.installed-docs

$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,docs]'
	touch $@

# The documentation site (mkdocs + mkdocstrings): warnings are errors and every example runs.
docs: $(DOCS_STAMP)
	$(BIN)/mkdocs build --strict
# The dependency floors: exactly the lowest versions pyproject.toml declares (and the lowest Python),
# in a fresh venv of their own, with the package on top (--no-deps: nothing upgraded); `pip check`
# confirms they satisfy its requirements, then a representative subset of the tests runs. CI runs
# it after `make test` (tests/test_packaging.py keeps these pins and pyproject.toml's floors equal).
FLOOR_PYTHON ?= python3.11
FLOOR_VENV   := .venv-floor
FLOOR_PINS   := jax==0.7.2 jaxlib==0.7.2 numpy==2.0.0 matplotlib==3.8.4 \
                pytest==7.0.0 pytest-xdist==3.2.0 hypothesis==6.0.0 chex==0.1.86
FLOOR_TESTS  := tests/core tests/solvers/test_minconflicts.py tests/drivers/test_minconflicts.py \
                tests/parallel tests/cli/test_solve.py

test-floor:
	rm -rf $(FLOOR_VENV)
	$(FLOOR_PYTHON) -m venv $(FLOOR_VENV)
	$(FLOOR_VENV)/bin/python -m pip install --quiet $(FLOOR_PINS)
	$(FLOOR_VENV)/bin/python -m pip install --quiet --no-deps -e .
	$(FLOOR_VENV)/bin/python -m pip check
	$(FLOOR_VENV)/bin/python -m pytest -q -p no:cacheprovider -n auto $(FLOOR_TESTS)

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	for b in scripts/bench_*.py; do $(BIN)/python $$b || exit 1; done

# The GPU venv: jax, the CUDA plugin and PJRT at the jax version the project's venv resolved,
# ptxas (nvidia-cuda-nvcc-cu12) and nvdisasm (the SASS the count kernel's model reads); ~1.2 GB.
# The plugin prints a traceback on `import jax` without a GPU, so it never goes into .venv;
# scripts/gpu_check.py sets JAX_PLATFORMS=cpu itself.
$(GPU_STAMP): pyproject.toml $(STAMP)
	$(PYTHON) -m venv $(GPU_VENV)
	V=$$($(BIN)/python -c "import importlib.metadata as m; print(m.version('jax'))") && \
	$(GPU_VENV)/bin/python -m pip install --quiet "jax==$$V" "jax-cuda12-plugin==$$V" \
		"jax-cuda12-pjrt==$$V" nvidia-cuda-nvcc-cu12 nvidia-cuda-nvdisasm
	$(GPU_VENV)/bin/python -m pip install --quiet --no-deps -e .
	touch $@

# GPU_CHECK_ARGS: a part of the check, e.g. "--families threads --merge" (the thread kernel alone,
# its records replaced in benchmarks/results/gpu-compile.json; minutes where the whole takes ~30).
gpu-check: $(GPU_STAMP)
	$(GPU_VENV)/bin/python scripts/gpu_check.py $(GPU_CHECK_ARGS)

# On a machine with a GPU and JAX's CUDA plugin (the lent GPU's image has both; nothing is
# installed): the GPU paths measured, every result checked, into
# benchmarks/results/gpu-measured.json beside gpu-compile.json's prediction (under 8 minutes).
.PHONY: gpu-measure
gpu-measure:
	PYTHONPATH=. $(PYTHON) scripts/bench_gpu.py

clean:
	rm -rf $(VENV) $(FLOOR_VENV) $(GPU_VENV) $(OUT) build *.egg-info
