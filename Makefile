# Two commands on a fresh machine with only python3:
#   make run    - create .venv on first use, install xmlthresh, run the main job (embedded synthetic data)
#   make test   - create .venv on first use, install xmlthresh with test extras, run the test suite, then
#                 check the package as users get it (make check-installed: .ci/installed/check.sh builds the
#                 wheels, installs them into a fresh venv in a temporary directory and runs them from there),
#                 then the tracking and command-line tests against the newest MLflow and Hydra (make test-newest),
#                 then the documentation site (make docs)
#   make docs   - build the documentation site into site/ (mkdocs, every warning an error)
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

.PHONY: run test test-fast test-newest pytest check-installed docs setup ui clean

setup: $(STAMP)

$(STAMP): pyproject.toml plugins/xmlthresh-peers/pyproject.toml plugins/xmlthresh-libmultilabel/pyproject.toml \
  plugins/xmlthresh-mdn/pyproject.toml plugins/xmlthresh-flow/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[all,test,docs]' -e 'plugins/xmlthresh-peers[xcolumns]' \
	  -e plugins/xmlthresh-libmultilabel
	# the optional CDE estimators (PyTorch's CPU build, kept on this kind of machine) so that their tests run
	# instead of skipping; where that build cannot be had they are left out and their tests skip
	$(BIN)/python -m pip install --quiet torch==2.13.0 zuko==1.6.0 \
	  && $(BIN)/python -m pip install --quiet --no-deps -e plugins/xmlthresh-mdn -e plugins/xmlthresh-flow \
	  || echo "note: torch 2.13.0 (CPU) not installable here: the mdn and flow plugins are left out"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/python -m xmlthresh $(ARGS)

test: pytest check-installed test-newest docs

pytest: $(STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

# The inner loop while editing: the tests that start no interpreter, run no command line, read no real data
# and open no MLflow store (marked "fast" by tests/conftest.py from each test's source), on two pytest-xdist
# workers, with the numba cache a first `make pytest` filled (no background compilation).
test-fast: $(STAMP)
	XMLTHRESH_TEST_WARM_UP=0 $(BIN)/python -m pytest -q -m fast -p no:cacheprovider -n 2 --dist worksteal $(PYTEST_ARGS)

# The tracking and command-line tests in a venv of their own with the newest releases of MLflow and Hydra
# (and of everything they pull in), so that an upgrade shows up as a failing test, not as a silent change.
NEWEST ?= .venv-newest
NEWEST_TESTS := tests/test_tracking.py tests/test_tracking_records.py tests/test_tracking_store.py \
  tests/test_sweeps.py tests/test_cli.py tests/test_console.py tests/test_ui.py tests/test_public_interfaces.py
test-newest:
	test -x $(NEWEST)/bin/python || $(PYTHON) -m venv $(NEWEST)
	$(NEWEST)/bin/python -m pip install --quiet --upgrade pip
	$(NEWEST)/bin/python -m pip install --quiet --upgrade --upgrade-strategy eager -e '.[all,test]' mlflow hydra-core
	$(NEWEST)/bin/python -c "import mlflow, hydra; print('newest: mlflow', mlflow.__version__, 'hydra-core', hydra.__version__)"
	$(NEWEST)/bin/python -m pytest -q -p no:cacheprovider $(NEWEST_TESTS)

# The documentation site (mkdocs.yml: docs/*.md, the API reference from the docstrings, README sections
# included by docs/hooks/readme_sections.py), built with warnings as errors into site/ (without
# mkdocs-material's banner about its successor, which is no warning of the build).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --site-dir site

check-installed: $(STAMP)
	PYTHON=$(PYTHON) BUILD_PYTHON=$(BIN)/python .ci/installed/check.sh

# The MLflow UI on the project's store (runs/ at $$XMLTHRESH_HOME, else here; the artifact root is where
# xmlthresh.tracking.mlflow_runs puts artifacts), loopback only, one worker and without MLflow's background job runner,
# so it is up in seconds; Ctrl-C stops it. UI_PORT=5001 for another port.
# MLflow 3 opens on its GenAI view and shows no metric column: the URL below opens the "Model training"
# view; in an experiment's runs table, "Columns" -> f_macro, lower_bound, upper_bound, gap, fit_seconds and
# params strategy, dataset, beta once (the browser keeps the choice). A sweep's report/comparison.html links
# its runs table (best F-macro first) and each run.
RUNS    ?= $(abspath $(or $(XMLTHRESH_HOME),.))/runs
UI_PORT ?= 5000
ui: $(STAMP)
	$(BIN)/xmlthresh ui --uri sqlite:///$(RUNS)/mlflow.db --port $(UI_PORT)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis site
