# rankbias: two commands.  `make book` builds the book, `make test` runs every check.
# Everything is idempotent: stamps record what is done, so a second run does only what changed.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin
TESTBED := data/build/wikisample
STAMP  := $(VENV)/.installed

.PHONY: all install book test lint pytest book-strict data bench clean distclean

all: book

# ---- environment -----------------------------------------------------------------------
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, pinned to the CPU wheel; GPU users: see README.
	$(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[testbed,book,test,msmarco]"
	touch $(STAMP)

install: $(STAMP)

# ---- data --------------------------------------------------------------------------------
data: $(TESTBED)/.complete

# Rebuilt when the code or resources that determine it change; embeddings stay cached.
TESTBED_INPUTS := src/rankbias/data/wikisample.py src/rankbias/retrieval.py \
	src/rankbias/resources/gendered_terms.csv src/rankbias/resources/queries_sensitive.tsv

$(TESTBED)/.complete: $(STAMP) $(TESTBED_INPUTS)
	$(BIN)/rankbias data build --out $(TESTBED) --force

# ---- book --------------------------------------------------------------------------------
book: data
	$(BIN)/jupyter-book build . --builder html

book-strict: data
	$(BIN)/jupyter-book build . --builder html -W --keep-going

# ---- tests -------------------------------------------------------------------------------
lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

pytest: data
	$(BIN)/pytest -q

test: lint pytest book-strict

# ---- benchmarks --------------------------------------------------------------------------
bench: $(STAMP)
	$(PY) bench/run.py $(BENCH)

clean:
	rm -rf _build

distclean: clean
	rm -rf $(VENV) data/build
