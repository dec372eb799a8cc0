# The two commands: `make demo` (run the main job offline on the embedded Postgres)
# and `make test` (run the test suite; `make test-fast` for the edit loop). Both create .venv on first use.
#
# Python: the first supported interpreter found (3.11, 3.12, 3.13, then python3 when its
# version fits pyproject's requires-python); `make PYTHON=python3.12 test` overrides.
SUPPORTED := python3.11 python3.12 python3.13
PYTHON ?= $(shell for p in $(SUPPORTED) python3; do \
	  command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(not ((3, 11) <= sys.version_info[:2] < (3, 14)))' 2>/dev/null \
	  && { echo $$p; break; }; done)
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed
PYTEST_ARGS ?=
# The tests run in parallel processes (pytest-xdist), each with its own embedded PostgreSQL; one
# file's tests on one worker, so that a module's daemon or server starts once; the files in the
# order tests/conftest.py gives (the longest first). More workers than cores pay: the end-to-end
# tests mostly wait on servers, daemons and the browser.
TEST_WORKERS ?= 4
PYTEST = $(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

.PHONY: demo test test-fast lint dev validate bench clean print-python lock screenshots

# The venv gets requirements.lock: every package at one version, with its hashes (pyproject keeps
# ranges, for the wheel's users). uv writes it rather than pip-tools because one uv resolution holds
# for every supported Python (--universal; numpy and scipy differ by version), where pip-compile
# resolves for the interpreter running it only. setuptools is locked too (test extra) and builds the
# editable install without build isolation, and the venv's own pip installs (not upgraded): nothing
# unpinned is fetched.
LOCK = requirements.lock
UV_VERSION = 0.13.9
LOCK_COMMAND = uv pip compile pyproject.toml --extra test --universal --generate-hashes --python-version 3.11 -o $(LOCK)

$(STAMP): pyproject.toml setup.py $(LOCK)
	@test -n "$(PYTHON)" || { echo "no supported Python found (3.11-3.13); set PYTHON=..."; exit 2; }
	@echo "using $(PYTHON) ($$($(PYTHON) -c 'import sys; print(sys.version.split()[0])')) for $(VENV)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --require-hashes --no-deps -r $(LOCK)
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

# Resolve pyproject.toml's dependencies and test extra again (newest versions within its ranges)
# with a pinned uv in the venv; tests/test_dependency_lock.py checks the result against pyproject.
lock:
	@test -n "$(PYTHON)" || { echo "no supported Python found (3.11-3.13); set PYTHON=..."; exit 2; }
	test -x $(BIN)/pip || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet 'uv==$(UV_VERSION)'
	$(BIN)/$(LOCK_COMMAND) --quiet

demo: $(STAMP)
	$(BIN)/newsdedup demo

# Every test, after the linter (ruff, configured in pyproject.toml) and Dagster's own check.
# TEST_MARKS narrows both passes (CI's second interpreter: TEST_MARKS="not slow").
TEST_MARKS ?= slow or not slow
test: $(STAMP) lint
	VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/dg check defs
	$(BIN)/python -m pytest -q -p no:cacheprovider -m "($(TEST_MARKS)) and signals" $(PYTEST_ARGS)
	$(PYTEST) -m "($(TEST_MARKS)) and not signals" $(PYTEST_ARGS)

# The edit loop: every test but those that start servers or processes of their own, daemons and
# browsers (markers in pyproject.toml).
test-fast: $(STAMP) lint
	$(PYTEST) -m "not slow and not daemon and not browser and not signals" $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .

# The pictures of the README and the docs (docs/screenshots/): the browser tests of the reader site and
# of the Dagster UI's asset graph, with Debian's chromium, keep their screenshots there when
# NEWSDEDUP_UPDATE_SCREENSHOTS=1 (otherwise in the tests' tmp directories).
screenshots: $(STAMP)
	NEWSDEDUP_UPDATE_SCREENSHOTS=1 $(BIN)/python -m pytest -q -p no:cacheprovider -m "slow or not slow" \
	  tests/test_publish_browser.py::test_pages_in_four_scripts_and_two_directions tests/test_ui_browser.py

dev: $(STAMP)
	$(BIN)/newsdedup dev

bench: $(STAMP)
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/neardup.py
	$(BIN)/python bench/clustering.py

print-python:
	@echo $(PYTHON)

clean:
	rm -rf $(VENV) .venv-python3.* .newsdedup build dist *.egg-info
