# rankbias: two commands.  `make book` builds the book, `make test` runs every check.
# Everything is idempotent: stamps record what is done, so a second run does only what changed.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin
TESTBED := data/build/wikisample
STAMP  := $(VENV)/.installed

.PHONY: all install book test lint pytest book-strict browser-test data bench clean distclean mutation

all: book

# ---- environment -----------------------------------------------------------------------
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, pinned to the CPU wheel; GPU users: see README.
	$(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[testbed,book,test,msmarco,dask]"
	touch $(STAMP)

install: $(STAMP)

# ---- data --------------------------------------------------------------------------------
data: $(TESTBED)/.complete

# Rebuilt when the code or resources that determine it change; embeddings stay cached.
TESTBED_INPUTS := src/rankbias/data/wikisample.py src/rankbias/retrieval.py \
	src/rankbias/resources/gendered_terms.csv src/rankbias/resources/queries_sensitive.tsv

$(TESTBED)/.complete: $(TESTBED_INPUTS) | $(STAMP)
	$(BIN)/rankbias data build --out $(TESTBED) --force

# ---- book --------------------------------------------------------------------------------
# Jupyter Book caches each notebook's outputs by the notebook's own text.  The outputs also
# depend on the package and the testbed, so any change to those clears the cache (and the
# Sphinx environment, which would otherwise skip unchanged pages): a rebuild
# with nothing changed re-executes nothing, a rebuild after a change re-executes everything.
PACKAGE_FILES := $(shell find src -type f \( -name '*.py' -o -name '*.csv' -o -name '*.tsv' \
	-o -name '*.dic' -o -name '*.json' \) 2>/dev/null)
EXECUTION_INPUTS := _build/.execution-inputs

$(EXECUTION_INPUTS): $(PACKAGE_FILES) $(TESTBED)/.complete pyproject.toml
	rm -rf _build/.jupyter_cache _build/.doctrees
	mkdir -p _build
	touch $@

book: data $(EXECUTION_INPUTS)
	$(BIN)/jupyter-book build . --builder html

book-strict: data $(EXECUTION_INPUTS)
	$(BIN)/jupyter-book build . --builder html -W --keep-going

# ---- tests -------------------------------------------------------------------------------
lint: $(STAMP)
	$(BIN)/ruff check src tests bench book/_ext
	$(BIN)/ruff format --check src tests bench book/_ext

# `pytest -q` deselects the browser tests (pyproject's addopts): they need the built book.
pytest: data
	$(BIN)/pytest -q

# Every page of the strictly built book opened in headless Chromium (tests/book): console
# errors, failed or outside requests, math, images, links, search, downloads; screenshots
# in _build/screenshots.  Without a Chromium pytest skips them with the reason, and so says
# this line.
CHROMIUM = $(or $(RANKBIAS_CHROMIUM),$(shell command -v chromium 2>/dev/null))

browser-test: book-strict
	@test -x "$(CHROMIUM)" || echo "make: browser tests SKIPPED: no Chromium found (install Debian's chromium package, or set RANKBIAS_CHROMIUM)"
	$(BIN)/pytest -q -m browser tests/book

test: lint pytest book-strict browser-test

# ---- benchmarks --------------------------------------------------------------------------
bench: $(STAMP)
	$(PY) bench/run.py $(BENCH)

clean:
	rm -rf _build

distclean: clean
	rm -rf $(VENV) data/build

# ---- mutation testing --------------------------------------------------------------------
# mutmut (settings: [tool.mutmut] in pyproject.toml) mutates metrics/, analysis/, runs.py and
# text.py in a copy of the project under mutants/ (ignored by git), runs the tests that reach
# each mutant, and keeps its results there: a second run re-checks only what changed
# (`rm -rf mutants` starts afresh).  The score per area follows; `$(BIN)/mutmut results` lists
# the survivors, `$(BIN)/mutmut show <name>` shows one.  Slow: about 13 000 mutants, hours on
# two cores; MUTANTS='rankbias.metrics.*' (names or globs) re-checks only those.
# mutmut re-copies the .py files on every run but other package files only when absent.
MUTANTS ?=
mutation: $(STAMP)
	test ! -d mutants/src || find mutants/src -type f ! -name '*.py' ! -name '*.meta' \
		! -name '*.spans' -delete
	env -u PYTHONPATH $(BIN)/mutmut run $(MUTANTS)
	$(PY) tests/mutation_score.py
