# The two commands: `make demo` (run the main job offline on the embedded Postgres)
# and `make test` (run the test suite). Both create .venv on first use.
PYTHON ?= python3.11
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed

.PHONY: demo test dev validate bench clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (set PYTHON=...)"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/newsdedup demo

test: $(STAMP)
	VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/dg check defs
	$(BIN)/python -m pytest -q -p no:cacheprovider

dev: $(STAMP)
	$(BIN)/newsdedup dev

bench: $(STAMP)
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/neardup.py
	$(BIN)/python bench/clustering.py

clean:
	rm -rf $(VENV) .newsdedup
