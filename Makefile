# Two commands for a newcomer: `make demo` and `make test`. Both set themselves up.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench docs gallery fuzz wheel clean clean-cache

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[viz,envs,test,docs,ray]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m carom.cli demo

test: $(STAMP)
	$(PY) -m pytest

# The documentation site (MkDocs, strict: a broken link or reference fails) into site/.
docs: $(STAMP)
	$(PY) -m mkdocs build --strict

# The docs' pictures: every example headless into docs/gallery/, the lab's into docs/lab/ (no display needed).
gallery: $(STAMP)
	$(PY) docs/make_gallery.py

bench: $(STAMP)
	$(PY) benchmarks/geometry.py
	$(PY) benchmarks/broadphase.py
	$(PY) benchmarks/broadphase_bulk.py
	$(PY) benchmarks/verlet.py
	$(PY) benchmarks/sleep.py
	$(PY) benchmarks/busy_core.py
	$(PY) benchmarks/run.py
	$(PY) benchmarks/box2d.py
	$(PY) benchmarks/box2d_profile.py
	$(PY) benchmarks/settle_probe.py

# A wheel that carries its compiled kernels (both processor levels), into dist/
wheel: $(STAMP)
	$(PY) tools/kernel_wheel.py --out dist

# The seeded churn of tests/churn.py for as long as asked: make fuzz MINUTES=30 (FUZZ_ARGS for more, e.g.
# FUZZ_ARGS="--bodies 40"); a failure prints its seed, step and last operations (rerun: --seed N -v).
MINUTES ?= 5
fuzz: $(STAMP)
	$(PY) tests/churn.py --minutes $(MINUTES) --steps 2000 $(FUZZ_ARGS)

clean:
	rm -rf $(VENV) out site build dist
	find . -name __pycache__ -prune -exec rm -rf {} +

# Numba's disk cache does not notice a changed kernel in another module: drop it after editing kernels.
clean-cache:
	find src -name '*.nbi' -delete -o -name '*.nbc' -delete
