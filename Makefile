# Attention, step by step: the two commands.
#
#   make lab     set up .venv (first time only) and open the course in JupyterLab
#   make test    set up .venv with the test tools, then lint, library tests,
#                every notebook under nbval, and every notebook in a real browser
#
# Other targets: make notebooks (stamp, then re-run all notebooks in place, clean kernel),
# make learner (the learner copy, solutions removed), make html (static pages),
# make bench, make lint, make clean, make distclean, make help.
# Installs are skipped when requirements*.txt and pyproject.toml did not change
# (stamp files inside .venv).

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python

# Where the browser test writes one screenshot per notebook and latency.json.
SCREENSHOTS ?= test-artifacts/screenshots

# How JupyterLab is started. tests/test_lab_serves.py reads this line and starts
# the server with exactly these arguments (plus port, token and --no-browser).
LAB_ARGS := --ServerApp.root_dir=. --LabApp.default_url=/lab/tree/notebooks/00_start_here.ipynb notebooks/00_start_here.ipynb
# Jupyter refuses to run as root unless told (containers, CI); the tests add the same flag.
ROOT_ARGS := $(if $(filter 0,$(shell id -u)),--ServerApp.allow_root=True)

# Never let playwright download a browser: the tests use the system Chromium.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Same hash order in every run, so regenerated notebooks do not churn.
export PYTHONHASHSEED := 0

STAMP_RUN := $(VENV)/.installed-runtime
STAMP_DEV := $(VENV)/.installed-dev

.DEFAULT_GOAL := help
.PHONY: help lab test lint test-lib test-notebooks test-browser test-binder test-hub notebooks learner release html bench clean distclean

help:
	@echo "make lab        open the course in JupyterLab (sets up $(VENV) the first time)"
	@echo "make test       lint + library tests + nbval over notebooks/ + browser test"
	@echo "make notebooks  stamp (Colab cell, slides, README map), then re-run every notebook from a clean kernel"
	@echo "make learner    the learner copy in build/learner (solutions removed, answers cleared)"
	@echo "make release VERSION=x.y.z   the learner release: branch learner, tag learner-vx.y.z, CHANGELOG.md"
	@echo "make html       static HTML pages of every lesson in build/html"
	@echo "make bench      run benchmarks/*.py"
	@echo "make clean      remove caches and test artifacts (keeps $(VENV))"
	@echo "make distclean  clean, and remove $(VENV) too"

# ---------------------------------------------------------------- environment

$(PY):
	$(PYTHON) -m venv $(VENV)

# The course itself: pinned runtime requirements, then lessons_lib in editable
# mode without re-resolving its (loose) dependencies.
$(STAMP_RUN): requirements.txt pyproject.toml | $(PY)
	$(PY) -m pip install -r requirements.txt
	$(PY) -m pip install --no-deps -e .
	@touch $@

$(STAMP_DEV): requirements-dev.txt $(STAMP_RUN)
	$(PY) -m pip install -r requirements-dev.txt
	@touch $@

# ---------------------------------------------------------------------- lab

lab: $(STAMP_RUN)
	$(BIN)/jupyter lab $(LAB_ARGS) $(ROOT_ARGS)

# --------------------------------------------------------------------- tests

test: lint test-lib test-notebooks test-browser test-binder test-hub

lint: $(STAMP_DEV)
	$(BIN)/ruff check lessons_lib tests notebooks benchmarks tools .ci

# the library tests, then every example in the library's docstrings (doctests)
test-lib: $(STAMP_DEV)
	$(BIN)/pytest -m "not browser and not binder and not hub" tests
	$(BIN)/pytest --doctest-modules lessons_lib

# Every notebook under nbval, in a kernel with the network cut off that records its peak memory
# (tools/offline_kernel.py): the course runs offline and fits a 2 GB Binder.
KERNEL_DIR := build/jupyter
test-notebooks: $(STAMP_DEV)
	@rm -rf build/kernel-peaks
	$(PY) tools/offline_kernel.py install $(KERNEL_DIR) --name course-offline
	JUPYTER_PATH=$(abspath $(KERNEL_DIR)) LESSONS_KERNEL_LOG=$(abspath build/kernel-peaks) \
	  $(BIN)/pytest --nbval --nbval-kernel-name course-offline notebooks/
	$(PY) tools/offline_kernel.py report build/kernel-peaks notebooks/*.ipynb --limit-mb 1500

test-browser: $(STAMP_DEV)
	@mkdir -p $(SCREENSHOTS)
	LESSONS_SCREENSHOTS=$(abspath $(SCREENSHOTS)) $(BIN)/pytest -m browser tests/test_browser.py

# Binder's environment as repo2docker builds it (its base Jupyter versions, then binder/: the same
# pins, torch's CPU build, nbgitpuller), built once into $(BINDER_ENV) by tools/binder_env.py and
# reused while binder/, the pins and lessons_lib are unchanged; then pip check, /lab and /tree,
# an empty home + nbgitpuller, and every notebook under nbval in it (slow: a few minutes).
BINDER_ENV := build/binder-env
test-binder: $(STAMP_DEV)
	$(PY) tools/binder_env.py --dest $(BINDER_ENV)
	$(BIN)/pytest -m binder -s tests/test_binder.py

# A class on a real JupyterHub: configurable-http-proxy from npm (into build/node), the Binder
# environment as each learner's server, the course by an nbgitpuller link (a few minutes).
CHP_VERSION := 5.3.0
CHP := build/node/node_modules/.bin/configurable-http-proxy
$(CHP):
	@command -v npm >/dev/null || { echo "npm is missing: apt-get install nodejs npm (.ci/run does)"; exit 1; }
	npm install --no-save --no-audit --no-fund --prefix build/node configurable-http-proxy@$(CHP_VERSION)

test-hub: $(STAMP_DEV) $(CHP)
	$(PY) tools/binder_env.py --dest $(BINDER_ENV)
	$(BIN)/pytest -m hub -s tests/test_hub.py

# ----------------------------------------------------------------- notebooks

notebooks: $(STAMP_RUN)
	$(PY) tools/stamp_notebooks.py
	$(PY) .ci/run_notebooks.py notebooks/*.ipynb

learner: $(STAMP_RUN)
	$(PY) tools/learner_release.py --out build/learner

# The learner release: branch learner, tag learner-vVERSION (never moved), CHANGELOG.md's entry,
# the copy's own README; prints the push commands (tests/test_release.py checks it on a bare remote).
release: $(STAMP_RUN)
	@test -n "$(VERSION)" || { echo "usage: make release VERSION=x.y.z (pyproject.toml's version)"; exit 1; }
	$(PY) tools/learner_release.py --release $(VERSION) --out build/learner

html: $(STAMP_RUN)
	$(PY) tools/export_html.py --out build/html

# Each benchmark prints ratios measured side by side in one run (not part of make test).
bench: $(STAMP_RUN)
	@set -e; for f in benchmarks/*.py; do \
	  case "$${f##*/}" in _*|"*.py") continue;; esac; \
	  echo "== $(PY) $$f"; $(PY) "$$f"; \
	done

# ------------------------------------------------------------------- cleanup

clean:
	rm -rf test-artifacts .pytest_cache .ruff_cache .hypothesis build *.egg-info .jupyter-runtime
	find . -path ./$(VENV) -prune -o \( -name __pycache__ -o -name .ipynb_checkpoints \) -type d -print \
	  | xargs rm -rf

distclean: clean
	rm -rf $(VENV)
