# rankbias: two commands.  `make book` builds the book, `make test` runs every check.
# Everything is idempotent: stamps record what is done, so a second run does only what changed.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin
TESTBED := data/build/wikisample
STAMP  := $(VENV)/.installed

.PHONY: all install book chapter lab test lint pytest book-strict book-any-data browser-test data bench clean distclean mutation

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
# Jupyter Book caches each chapter's executed notebook (_build/.jupyter_cache) by the chapter's
# own code.  Its outputs also depend on the package and the testbed: before each build,
# book/_ext/chapter_cache.py hashes, per chapter, the package files it imports (transitively,
# with the data files they read), pyproject.toml and the testbed's stamp, and drops the cached
# run of each chapter whose hash changed (and has Sphinx read its page again).  A rebuild with
# nothing changed re-executes nothing; after a change to the package only the chapters that
# import the changed file re-execute.  `.venv/bin/python book/_ext/chapter_cache.py affected
# FILE` says which chapters those are, and through which imports.
REFRESH_CHAPTERS := $(PY) book/_ext/chapter_cache.py refresh

# `make book DATA=path/to/folder`: the whole book on a dataset folder of one's own, checked
# first, into _build/<folder name>/html with its own cache (book/_ext/build_book.py); the
# default book and its cache are left as they are.  `make test` builds strictly on DATA too.
DATA ?=

ifeq ($(strip $(DATA)),)
book: data
	$(REFRESH_CHAPTERS)
	$(BIN)/jupyter-book build . --builder html
else
book: $(STAMP)
	$(PY) book/_ext/build_book.py "$(DATA)"
endif

# The strict build also builds the chapter template (outside the book) alone, strictly.
book-strict: data
	$(REFRESH_CHAPTERS)
	$(BIN)/jupyter-book build . --builder html -W --keep-going
	$(PY) book/_ext/build_chapter.py --strict book/chapter_template.md

# One chapter, executed (or taken from the book's cache) and built as a page of its own in
# _build/_chapter/html: `make chapter NB=notebooks/04_fairr_nfairr.md`.
# A missing or unknown NB stops make before anything is built.
NB ?=
ifneq ($(filter chapter,$(MAKECMDGOALS)),)
ifeq ($(strip $(NB)),)
$(error make chapter: say which chapter, e.g. make chapter NB=notebooks/04_fairr_nfairr.md)
endif
ifeq ($(wildcard $(NB)),)
$(error make chapter: NB=$(NB): no such file; the chapters are $(wildcard notebooks/*.md))
endif
endif

chapter: data
	$(PY) book/_ext/build_chapter.py $(if $(strip $(DATA)),"--data=$(DATA)") "$(NB)"

# JupyterLab on the project's environment, the chapters opening as notebooks (jupytext reads
# the MyST Markdown; book/_lab/overrides.json makes that the default for .md files).
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings

lab: data
	mkdir -p $(LAB_SETTINGS)
	cp book/_lab/overrides.json $(LAB_SETTINGS)/overrides.json
	$(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)"

# ---- tests -------------------------------------------------------------------------------
lint: $(STAMP)
	$(BIN)/ruff check src tests bench book/_ext examples
	$(BIN)/ruff format --check src tests bench book/_ext examples

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

# The book on three more folders, strictly (issue: the whole book on any data): the documented
# layout alone (three systems, numeric qids, no manifest), the papers' ten rankers on two query
# sets with their word lists, groups and polarisation scores, and `rankbias data msmarco` over a
# stand-in collection (tests/folders.py makes them from the testbed and ../shared/data/public).
FOLDERS := data/build/folders

$(FOLDERS)/.complete: tests/folders.py $(TESTBED)/.complete
	rm -rf $(FOLDERS)
	$(PY) tests/folders.py $(FOLDERS) $(TESTBED)
	touch $@

book-any-data: $(FOLDERS)/.complete
	for folder in $(FOLDERS)/any-*/; do \
		$(PY) book/_ext/build_book.py --strict "$$folder" || exit 1; \
	done
	$(BIN)/pytest -q -m any_data tests/book/test_any_data.py

test: lint pytest book-strict book-any-data browser-test

# ---- benchmarks --------------------------------------------------------------------------
# BENCH=name runs one (bench/run.py lists them); book_bench needs the testbed's words.
bench: data
	$(PY) bench/run.py $(BENCH)

clean:
	rm -rf _build

distclean: clean
	rm -rf $(VENV) data/build

# ---- mutation testing --------------------------------------------------------------------
# mutmut (settings: [tool.mutmut] in pyproject.toml) mutates metrics/, analysis/, runs.py,
# text.py, scoring.py and collection.py in a copy of the project under mutants/ (ignored by
# git), runs the tests that reach each mutant, and keeps its results there: a second run
# re-checks only what changed
# (`rm -rf mutants` starts afresh).  The score per area follows; `$(BIN)/mutmut results` lists
# the survivors, `$(BIN)/mutmut show <name>` shows one.  Slow: about 13 000 mutants, hours on
# two cores; MUTANTS='rankbias.metrics.*' (names or globs) re-checks only those.
# mutmut re-copies the .py files on every run but other package files only when absent.
# Its record of which tests reach which function (mutants/mutmut-stats.json) is traced again
# only for new tests, so a function added since (a helper split out of another) would have
# "no tests": the record is dropped whenever a .py under src/ or tests/ is newer than it, and
# mutmut traces the whole suite again (about 20 minutes on two cores).
MUTANTS ?=
MUTMUT_STATS := mutants/mutmut-stats.json
mutation: $(STAMP)
	test ! -f $(MUTMUT_STATS) || test -z "$$(find src tests -name '*.py' -newer $(MUTMUT_STATS))" \
		|| rm $(MUTMUT_STATS)
	test ! -d mutants/src || find mutants/src -type f ! -name '*.py' ! -name '*.meta' \
		! -name '*.spans' -delete
	env -u PYTHONPATH RANKBIAS_PUBLIC_DATA=$(abspath ../shared/data/public) \
		HYPOTHESIS_PROFILE=mutation $(BIN)/mutmut run $(MUTANTS)
	$(PY) tests/mutation_score.py
