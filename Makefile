# Two commands on a fresh machine with only python3:
#   make run    - create .venv on first use, install xmlthresh, run the main job (embedded synthetic data)
#   make test   - create .venv on first use, install xmlthresh with test extras, run the test suite, then
#                 check the package as users get it (make check-installed: .ci/installed/check.sh builds the
#                 wheels, installs them into a fresh venv in a temporary directory and runs them from there)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# Real data for development, tests and CI: the pre-filled cache beside the checkout, when present.
SHARED_DATA := $(abspath ../shared/datasets)
ifeq ($(origin XMLTHRESH_DATA), undefined)
  ifneq ($(wildcard $(SHARED_DATA)/README.md),)
    export XMLTHRESH_DATA := $(SHARED_DATA)
  endif
endif

.PHONY: run test pytest check-installed setup ui clean

setup: $(STAMP)

$(STAMP): pyproject.toml plugins/xmlthresh-peers/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]' -e 'plugins/xmlthresh-peers[xcolumns]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/python -m xmlthresh $(ARGS)

test: pytest check-installed

pytest: $(STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

check-installed: $(STAMP)
	PYTHON=$(PYTHON) BUILD_PYTHON=$(BIN)/python .ci/installed/check.sh

ui: $(STAMP)
	$(BIN)/python -m xmlthresh.ui $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
