# Attention, step by step: the two commands.
#
#   make lab     set up .venv (first time only), build your own workspace/ (the lessons without their
#                solutions; git ignores it, so your work survives a git pull) and open JupyterLab there
#   make test    set up .venv with the test tools, then every stage of TEST_STAGES below: everything
#
# While editing: make check (under 90 s). Teachers and authors: make teach opens the source
# notebooks (notebooks/, solutions filled in). Every target: make help.
# Without make (Windows): py tools\course.py lab   (or: teach, env --dev); tools/course.py does the set-up
# for make too: the Python version check, .venv, torch's CPU or CUDA build (TORCH=auto|cpu|cuda).
# Installs are skipped when requirements*.txt and pyproject.toml did not change
# (a hash of them in stamp files inside .venv).

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python

# Where the browser tests write their screenshots (test-artifacts/latency.json: what they measured).
SCREENSHOTS ?= test-artifacts/screenshots

# torch's build: auto (the CPU build on Linux without an NVIDIA GPU), cpu or cuda (tools/course.py)
TORCH  ?= auto
COURSE := $(PYTHON) tools/course.py --torch $(TORCH)

# Never let playwright download a browser: the tests use the system Chromium.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Same hash order in every run, so regenerated notebooks do not churn.
export PYTHONHASHSEED := 0

# The stages of make test, in the order it runs them: the one list of them (CI runs make test).
TEST_STAGES := lint test-lib test-notebooks test-other-cpu test-browser test-binder test-grading test-hub

# The tests never reach the internet: lesson 10 shows its offline path (the course's own model, not
# GPT-2 downloaded), in every stage of make test, in make check and in CI.
TEST_TARGETS := test check $(TEST_STAGES)
$(TEST_TARGETS): export LESSONS_OFFLINE := 1

STAMP_RUN := $(VENV)/.installed-runtime
STAMP_DEV := $(VENV)/.installed-dev

.DEFAULT_GOAL := help
.PHONY: help lab teach test check $(TEST_STAGES) notebooks learner release class-report grades html html-teacher transcripts bench clean distclean

# Every target of .PHONY, said once here (tests/tools/test_make_targets.py holds the list to .PHONY).
help:
	@echo "make lab        open the course in JupyterLab, in your own workspace/ (sets up $(VENV) the first time)"
	@echo "make teach      open the source notebooks (solutions filled in): teachers and authors"
	@echo "make check      the edit loop, under 90 s: ruff, every test that needs no kernel, server,"
	@echo "                browser, other process or training (pytest --edit-loop), the doctests"
	@echo "make test       everything, stage by stage: $(TEST_STAGES)"
	@echo "make lint       ruff over the library, tests, tools, benchmarks and notebooks"
	@echo "make test-lib   the library tests (all but browser, Binder, grading and hub), then the doctests"
	@echo "make test-notebooks  every notebook under nbval, offline, with its peak memory recorded"
	@echo "make test-other-cpu  the notebooks and doctests again on another numeric path of this CPU"
	@echo "make test-browser    every notebook in JupyterLab in headless Chromium, and the static pages offline"
	@echo "make test-binder     Binder's environment as repo2docker builds it, every notebook in it"
	@echo "make test-grading    nbgrader's real pipeline over every lesson with exercises"
	@echo "make test-hub        a class on a real JupyterHub with configurable-http-proxy and nbgitpuller"
	@echo "make notebooks  stamp (Colab cell, slides, course maps), then re-run every notebook from a clean kernel"
	@echo "make learner    the learner copy in build/learner (solutions removed, answers cleared)"
	@echo "make release VERSION=x.y.z   bump the version everywhere, commit, and release branch learner,"
	@echo "                tag learner-vx.y.z, CHANGELOG.md (re-runs only lessons whose code changed); it"
	@echo "                refuses the placeholder accessibility contact (KEEP_PLACEHOLDER_CONTACT=1: a trial)"
	@echo "make html       static pages + printable handouts of every lesson, learner copy, in build/html"
	@echo "make html-teacher  the same with the solutions, in build/html-teacher (teachers only)"
	@echo "make class-report NBGRADER_COURSE=dir  which mistakes the class made, and the concept quiz's gain"
	@echo "make grades COURSE_DIR=dir ROSTER=roster.csv  Canvas's and Moodle's gradebook import files"
	@echo "make transcripts  what the Orca screen reader says on lessons 04, 06, 07 and a formula, into"
	@echo "                docs/accessibility.md (Xvfb, Orca, Chromium: apt packages, see .ci/run)"
	@echo "make bench      run benchmarks/*.py"
	@echo "make clean      remove caches and test artifacts (keeps $(VENV))"
	@echo "make distclean  clean, and remove $(VENV) too"

# ---------------------------------------------------------------- environment

# tools/course.py checks the Python version and venv support, picks torch's build, installs the pinned
# requirements and the course library, and writes these stamps (a hash of the files they come from).
$(STAMP_RUN): requirements.txt pyproject.toml tools/course.py
	$(COURSE) env

$(STAMP_DEV): requirements-dev.txt $(STAMP_RUN)
	$(COURSE) env --dev

# ---------------------------------------------------------------------- lab

lab:
	$(COURSE) lab

teach:
	$(COURSE) teach

# --------------------------------------------------------------------- tests

# Every stage of TEST_STAGES in turn, each run even when one before it failed (make test fails if any did);
# at the end, each stage's wall time, the CPU time spent while it ran and how busy that kept the cores, and
# whether it failed, in the order they ran (tools/stage_time.py, build/stage-times.txt).
STAGE_TIMES := build/stage-times.txt
test:
	@mkdir -p build && : > $(STAGE_TIMES); status=0; \
	for stage in $(TEST_STAGES); do \
	  $(PYTHON) tools/stage_time.py $(STAGE_TIMES) $$stage -- $(MAKE) --no-print-directory $$stage || status=1; \
	done; \
	$(PYTHON) tools/stage_time.py $(STAGE_TIMES); \
	exit $$status

# The library's tests run in random order (pytest-randomly; the seed is printed, -p randomly -p
# "randomly_seed=N" repeats an order) and on every core (pytest-xdist by units of work,
# tests/helpers/work_units.py: a file's tests stay on one worker, so a module's fixture is built once, but
# for the cases of a few long independent tests, each a unit of its own). Tests that start a kernel or a
# JupyterLab run apart, one at a time: kernels pick their TCP ports by asking for a free one, and two at
# once can pick the same one.
PARALLEL := -p randomly -n auto --maxprocesses 4 --dist loadscope
SUITES   := browser or binder or grading or hub

# The edit loop: one pytest over the tests and the doctests; --edit-loop (tests/conftest.py) leaves out
# the tests marked slow, training, kernel, subprocess, lab, browser, binder, grading or hub, and fails one
# left in that starts a process; hypothesis runs its dev profile (a fifth of the examples).
check: lint
	HYPOTHESIS_PROFILE=dev $(BIN)/pytest $(PARALLEL) --edit-loop tests --doctest-modules lessons_lib tools/course.py

lint: $(STAMP_DEV)
	$(BIN)/ruff check lessons_lib tests notebooks benchmarks tools .ci

# the library tests (with those whose kernels talk over Unix sockets), then the kernel and lab tests one at a
# time, then every example in the library's docstrings (doctests)
test-lib: $(STAMP_DEV)
	$(BIN)/pytest $(PARALLEL) -m "not ($(SUITES)) and (not (kernel or lab) or unix_sockets)" tests
	$(BIN)/pytest -p randomly -m "not ($(SUITES)) and (kernel or lab) and not unix_sockets" tests
	$(BIN)/pytest --doctest-modules lessons_lib tools/course.py

# Every notebook under nbval, in a kernel with the network cut off that records its peak memory
# (tools/offline_kernel.py): the course runs offline and fits a 2 GB Binder. A notebook's cells run in
# order in one kernel; the notebooks share the cores (NBVAL_PARALLEL, one file per worker).
KERNEL_DIR := build/jupyter
NBVAL_PARALLEL := -n auto --maxprocesses 4 --dist loadfile
test-notebooks: $(STAMP_DEV)
	@rm -rf build/kernel-peaks
	$(PY) tools/offline_kernel.py install $(KERNEL_DIR) --name course-offline
	JUPYTER_PATH=$(abspath $(KERNEL_DIR)) LESSONS_KERNEL_LOG=$(abspath build/kernel-peaks) \
	  $(BIN)/pytest $(NBVAL_PARALLEL) --nbval --nbval-kernel-name course-offline notebooks/
	$(PY) tools/offline_kernel.py report build/kernel-peaks notebooks/*.ipynb --limit-mb 1500

# The notebooks and the doctests again, on another numeric path of this CPU (tools/other_cpu.py: numpy's
# optional SIMD features off, OpenBLAS on its generic core, torch on its baseline kernels): what they print
# must not depend on the machine
# (an AVX-512 laptop, an Apple-silicon Mac or an ARM hub prints the same).
test-other-cpu: $(STAMP_DEV)
	$(PY) tools/offline_kernel.py install $(KERNEL_DIR) --name course-offline
	JUPYTER_PATH=$(abspath $(KERNEL_DIR)) $(PY) tools/other_cpu.py \
	  $(BIN)/pytest $(NBVAL_PARALLEL) -p no:cacheprovider --nbval --nbval-kernel-name course-offline notebooks/
	$(PY) tools/other_cpu.py $(BIN)/pytest -p no:cacheprovider --doctest-modules lessons_lib tools/course.py

# axe-core, the accessibility engine the browser tests run in Chromium (tests/helpers/a11y.py): pinned, from npm,
# installed into build/node with configurable-http-proxy (below), never fetched at run time.
AXE_VERSION := 4.14.1
AXE := build/node/node_modules/axe-core/axe.min.js

# Outside CI a missing Chromium skips this stage with one line on what to install; in CI it fails.
# tests/browser/: every lesson in JupyterLab and Notebook 7, one file per concern (test_lesson_walk,
# test_keyboard, test_axe, test_reflow, test_slides, test_latency: one Run All per lesson and front end
# serves the checks of all of them, tests/browser/conftest.py), and the static pages offline
# (test_offline_pages); on two pytest-xdist workers, each with its own JupyterLab and Chromium: a page's
# checks go to one worker together (--dist loadscope, with the page as the unit of work:
# tests/helpers/work_units.py), and a run where a page was opened on both fails. Key press timing is a
# benchmark: make bench.
test-browser: $(STAMP_DEV) $(AXE)
	@if ! $(PY) tools/course.py check-browser && [ -z "$$CI" ]; then exit 0; fi; \
	mkdir -p $(SCREENSHOTS) && \
	LESSONS_SCREENSHOTS=$(abspath $(SCREENSHOTS)) $(BIN)/pytest -n 2 --dist loadscope -m browser tests/browser

# Binder's environment as repo2docker builds it (its base Jupyter versions, then binder/: the same
# pins, torch's CPU build, nbgitpuller), built once into $(BINDER_ENV) by tools/binder_env.py and
# reused while binder/, the pins and lessons_lib are unchanged; then pip check, /lab and /tree,
# an empty home + nbgitpuller, and every notebook under nbval in it (slow: a few minutes).
BINDER_ENV := build/binder-env
test-binder: $(STAMP_DEV)
	$(PY) tools/binder_env.py --dest $(BINDER_ENV)
	$(BIN)/pytest -m binder -s tests/binder/test_binder.py

# nbgrader's real pipeline in a temporary course directory, with the course's judge: generate_assignment
# for every lesson with exercises, autograde and generate_feedback for three students: all right (every
# lesson), one planted mistake per exercise (every exercise in one short notebook, and lesson 07 whole), some
# exercises untouched (04, 06); every way of getting points without the work (one submission each, all 0);
# the course's secret (no learner's process holds it; a file that cannot be trusted stops grading); the
# class report on a class of four graded the same way; a term's deadlines, extensions, late penalties,
# collect --update, feedback pages and the LMS files through the exchange; submissions collected from a
# platform's download (zip_collect); a feedback page in Chromium, offline, with axe-core ($(AXE)); attacks
# graded in the sandbox as root and as an ordinary account, that account where it may make no user
# namespace (nothing graded), and the Zero to JupyterHub grading Job's own command. A few
# minutes, on two pytest-xdist workers (a module's course on one; their kernels on Unix sockets in a folder
# per worker, tests/grading/conftest.py).
test-grading: $(STAMP_DEV) $(AXE)
	$(BIN)/pytest -n 2 --dist loadfile -m grading tests/grading/

# A class on a real JupyterHub: configurable-http-proxy from npm (into build/node) as a service of its
# own, the Binder environment (binder/'s kernels over Unix sockets) as each learner's server, the hub
# settings of docs/classroom.md, the course by an nbgitpuller link: 40 learners start at once, then
# the faults of a class (a kernel killed, hub and proxy restarted, a server stopped by the teacher, a
# kernel at its memory limit); the tally (kernels started, dead, restarted; edits kept) is written to
# test-artifacts/hub-tally.json (several minutes); and, on a hub of its own, grading through nbgrader's
# exchange, set up by tools/hub_grading.py (tests/hub/test_hub_grading.py). The two files run at once, on
# two pytest-xdist workers; what they measured is printed at the end (test-artifacts/hub-figures.txt).
# configurable-http-proxy 5 needs Node >= 20; Debian bookworm's own nodejs is 18, where 4.6.3 runs.
CHP_VERSION := $(shell node -e 'process.stdout.write(+process.versions.node.split(".")[0] >= 20 ? "5.3.0" : "4.6.3")' 2>/dev/null || echo 4.6.3)
CHP := build/node/node_modules/.bin/configurable-http-proxy
# Both npm packages (the proxy, axe-core) come in one call: a later `npm install --no-save` into
# build/node would remove what an earlier one installed.
$(CHP) $(AXE) &:
	@command -v npm >/dev/null || { echo "npm is missing: apt-get install nodejs npm (.ci/run does)"; exit 1; }
	npm install --no-save --no-audit --no-fund --prefix build/node configurable-http-proxy@$(CHP_VERSION) \
	  axe-core@$(AXE_VERSION)

test-hub: $(STAMP_DEV) $(CHP)
	$(PY) tools/binder_env.py --dest $(BINDER_ENV)
	$(BIN)/pytest -n 2 --dist loadfile -m hub tests/hub/test_hub.py tests/hub/test_hub_grading.py

# ----------------------------------------------------------------- notebooks

# --stamp: split heading cells too tall for a slide, stamp (Colab cell, slides, nbgrader, course maps),
# stamp the times; then every notebook runs (tools/run_notebooks.py).
notebooks: $(STAMP_RUN)
	$(PY) tools/run_notebooks.py --stamp notebooks/*.ipynb

learner: $(STAMP_RUN)
	$(PY) tools/learner_release.py --out build/learner

# The release in one command (tools/learner_release.py --release): VERSION written everywhere it
# stands (pyproject.toml, CITATION.cff, docs/classroom.md's image tags, docs/accessibility.md; the launch
# links and each lesson's metadata by the stamp),
# notebooks re-stamped and re-run only where their code changed, the commit "Release VERSION" on this
# branch, the learner copy on branch learner, tag learner-vVERSION (never moved), CHANGELOG.md's entry
# from its Unreleased notes; prints the push commands, the learner branch and tag to the learners'
# repository and this branch only elsewhere (tests/tools/test_release.py and test_release_publishing.py
# run them on bare remotes). Stops with git's own message, nothing bumped, when git cannot commit.
release: $(STAMP_RUN)
	@test -n "$(VERSION)" || { echo "usage: make release VERSION=x.y.z (the new version)"; exit 1; }
	$(PY) tools/learner_release.py --release $(VERSION) --out build/learner$(if $(KEEP_PLACEHOLDER_CONTACT), --keep-placeholder-contact)


# The class report (tools/class_report.py): per exercise, how many learners made each named mistake
# (CSV, a chart with its alt text, a Markdown page), and the concept quiz before/after with the class's
# normalised gain, read from the nbgrader course folder NBGRADER_COURSE after nbgrader autograde. Without
# it, the usage line and a failure, before any set-up.
NBGRADER_COURSE ?=
CLASS_REPORT_USAGE := usage: make class-report NBGRADER_COURSE=path/to/nbgrader/course
ifeq ($(strip $(NBGRADER_COURSE)),)
class-report:
	@echo "$(CLASS_REPORT_USAGE)" >&2
	@$(if $(filter command line,$(origin COURSE)),echo "(COURSE is the set-up command; the course folder is NBGRADER_COURSE)" >&2;) exit 1
else
class-report: $(STAMP_RUN)
	$(PY) tools/class_report.py "$(NBGRADER_COURSE)" --out build/class-report
endif

# Grades into the learning platform (tools/lms.py grades): Canvas's and Moodle's gradebook import files,
# a column per graded lesson, from nbgrader's gradebook.db, with a roster mapping hub users to the
# platform's ids (COURSE_DIR, not COURSE: that name is tools/course.py's command here); ASSIGNMENTS, a CSV
# naming each lesson's assignment in the platform, so that its column lands on it (docs/classroom.md).
grades: $(STAMP_DEV)
	@test -n "$(COURSE_DIR)" -a -n "$(ROSTER)" || { echo "usage: make grades COURSE_DIR=path/to/nbgrader/course ROSTER=roster.csv"; exit 1; }
	$(PY) tools/lms.py grades $(COURSE_DIR) --roster $(ROSTER) --out build/grades$(if $(ASSIGNMENTS), --assignments $(ASSIGNMENTS))

# Static pages that work offline (MathJax copied into the build folder from jupyter-server-mathjax,
# a test-tools requirement): the learner's copy by default, the teacher's (solutions) by name.
html: $(STAMP_DEV)
	$(PY) tools/export_html.py --out build/html

html-teacher: $(STAMP_DEV)
	$(PY) tools/export_html.py --teacher --out build/html-teacher

# What a real screen reader says (tools/screen_reader_transcript.py): Orca on Xvfb reading Chromium, with
# JupyterLab serving the course and a static page; written between the transcript markers of
# docs/accessibility.md. The browser stage runs the same on lesson 04's slider (tests/browser/test_screen_reader.py).
transcripts: $(STAMP_DEV)
	$(PY) tools/screen_reader_transcript.py --write

# Each benchmark prints ratios measured side by side in one run (not part of make test); key_press.py drives
# JupyterLab and Notebook 7 in Chromium with the test tools' playwright, hence the dev install.
bench: $(STAMP_DEV)
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
