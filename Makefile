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

.PHONY: demo test bench gpu-check clean

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

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	for b in scripts/bench_*.py; do $(BIN)/python $$b || exit 1; done

# The GPU venv: jax, the CUDA plugin and PJRT at the jax version the project's venv resolved, and
# ptxas (nvidia-cuda-nvcc-cu12); ~1.2 GB. The plugin prints a traceback on `import jax` without a
# GPU, so it never goes into .venv; scripts/gpu_check.py sets JAX_PLATFORMS=cpu itself.
$(GPU_STAMP): pyproject.toml $(STAMP)
	$(PYTHON) -m venv $(GPU_VENV)
	V=$$($(BIN)/python -c "import importlib.metadata as m; print(m.version('jax'))") && \
	$(GPU_VENV)/bin/python -m pip install --quiet "jax==$$V" "jax-cuda12-plugin==$$V" \
		"jax-cuda12-pjrt==$$V" nvidia-cuda-nvcc-cu12
	$(GPU_VENV)/bin/python -m pip install --quiet --no-deps -e .
	touch $@

gpu-check: $(GPU_STAMP)
	$(GPU_VENV)/bin/python scripts/gpu_check.py

clean:
	rm -rf $(VENV) $(GPU_VENV) $(OUT) build *.egg-info
