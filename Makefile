# Two commands for a newcomer: `make demo` and `make test`. Both set themselves up.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean clean-cache

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[viz,envs,test]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m carom.cli demo

test: $(STAMP)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) benchmarks/geometry.py
	$(PY) benchmarks/broadphase.py
	$(PY) benchmarks/broadphase_bulk.py
	$(PY) benchmarks/verlet.py
	$(PY) benchmarks/sleep.py
	$(PY) benchmarks/busy_core.py
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) out
	find . -name __pycache__ -prune -exec rm -rf {} +

# Numba's disk cache does not notice a changed kernel in another module: drop it after editing kernels.
clean-cache:
	find src -name '*.nbi' -delete -o -name '*.nbc' -delete
