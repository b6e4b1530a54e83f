# floe — the two commands a newcomer types are `make build` and `make test`.
# Every target installs what it needs itself (venv, pinned packages, JDBC drivers).

SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.floe-installed
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
JDBC_JARS := /usr/share/java/sqlite-jdbc.jar /usr/share/java/postgresql.jar
# Debian's Chromium drives the docs site's browser test (browsers cannot be downloaded).
CHROMIUM := /usr/bin/chromium
# Debian's PostgreSQL server (initdb, pg_ctl) for `floe cluster up` and tests/cluster.
PG_CTL = $(firstword $(wildcard /usr/lib/postgresql/*/bin/pg_ctl))
# A JDK's compiler for floe's JVM stream decoder (Spark itself needs only a runtime).
JAVAC := /usr/bin/javac
JVM_JAR := src/floe/jvm/floe-jvm.jar
JVM_SRC := $(shell find src/floe/jvm/java -name '*.java')
SQL_DIRS = $(wildcard models macros snapshots tests/data src/dbt/include/floe/macros)

export DBT_PROFILES_DIR := $(CURDIR)/profiles
export DBT_PROJECT_DIR := $(CURDIR)
export DBT_SEND_ANONYMOUS_USAGE_STATS := false
export PYSPARK_PYTHON := $(CURDIR)/$(BIN)/python

.PHONY: help setup postgresql build test test-adapter-suite test-cluster test-privacy-crash chaos lint fmt unit integration bench docs docs-serve clean

help:
	@echo "make build   set up, generate demo data, dbt build on the embedded default"
	@echo "make test    set up, lint, unit + integration tests"
	@echo "make lint | fmt | bench | docs | clean | test-cluster | test-privacy-crash | chaos"

setup: $(STAMP) $(JVM_JAR) $(JDBC_JARS) $(CHROMIUM) postgresql

$(STAMP): requirements.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24"
	$(BIN)/python -m pip install --quiet -r requirements.lock
	@# the distribution was named floe before it became floelake: an old install would shadow it
	$(BIN)/python -m pip uninstall --quiet -y floe 2>/dev/null || true
	$(BIN)/python -m pip install --quiet --no-deps --config-settings editable_mode=compat -e .
	$(BIN)/floe dev install-entry  # bin/dbt asks a warm `floe dev` first (docs/dev.md)
	@# the driver JVM's class-data-sharing archive: Spark starts in about half the time
	$(BIN)/floe dev spark-archive || echo "floe: no class-data-sharing archive; Spark starts slower"
	@touch $@

# floe's JVM decoder, compiled against the jars pyspark bundles (docs/decisions/0058).
$(JVM_JAR): $(JVM_SRC) $(STAMP) | $(JAVAC)
	$(BIN)/floe dev build-jvm

$(JAVAC):
	$(SUDO) apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq openjdk-17-jdk-headless >/dev/null
	@test -x $(JAVAC)

# Debian's JDBC drivers (Iceberg's JDBC catalog on SQLite / PostgreSQL).
$(JDBC_JARS):
	$(SUDO) apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
	    libxerial-sqlite-jdbc-java libpostgresql-jdbc-java >/dev/null
	@test -e /usr/share/java/sqlite-jdbc.jar

# Headless Chromium + its driver for tests/docsite (Playwright launches this binary).
$(CHROMIUM):
	$(SUDO) apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium chromium-driver >/dev/null
	@test -x $(CHROMIUM)
# The Debian package also creates (and, where services run, starts) a `main` cluster of
# its own on port 5432; floe never uses it: `floe cluster up` runs its own instance.
postgresql:
	@test -n "$(PG_CTL)" || { $(SUDO) apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq postgresql >/dev/null; }

build: setup
	$(BIN)/floe build

test: setup lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)

unit: setup
	$(BIN)/python -m pytest -m "not integration" $(PYTEST_ARGS)

integration: setup
	$(BIN)/python -m pytest -m integration $(PYTEST_ARGS)

# dbt's adapter suite alone (it also runs in `make test`): floe's core classes and every
# dbt-tests-adapter class dbt-spark or dbt-databricks runs (tests/adapter/).
test-adapter-suite: setup
	$(BIN)/python -m pytest tests/adapter $(PYTEST_ARGS)

# The scale-out test alone (it also runs in `make test`): cluster up, local vs cluster build.
test-cluster: setup
	$(BIN)/python -m pytest tests/cluster $(PYTEST_ARGS)

# Erasure crash safety, long version: `floe forget` killed at every step in turn (`make
# test` kills it at two), then re-run to completion (docs/privacy.md).
test-privacy-crash: setup
	FLOE_PRIVACY_CRASH_POINTS=all $(BIN)/python -m pytest tests/privacy/test_erasure.py $(PYTEST_ARGS)

# Crash safety, long version: FLOE_CHAOS_KILLS builds SIGKILLed at random moments (`make
# test` kills 5), plus the concurrent-writer tests; prints "N kills, N recoveries, 0
# differences" (docs/reliability.md). FLOE_CHAOS_SEED picks other kill moments.
FLOE_CHAOS_KILLS ?= 20
chaos: setup
	FLOE_CHAOS_KILLS=$(FLOE_CHAOS_KILLS) FLOE_CHAOS_NODES=all FLOE_CHAOS_STREAM_KILLS=10 \
	    $(BIN)/python -m pytest -m chaos -s tests/reliability tests/streams/test_kill.py $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/sqlfluff lint $(SQL_DIRS)
	$(BIN)/floe registry check
	$(BIN)/floe docs-coverage
	$(BIN)/floe privacy scan --static
	$(BIN)/python lint/docs_refs.py

fmt: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
	$(BIN)/sqlfluff fix $(SQL_DIRS)

bench: setup
	$(BIN)/python -m bench

# dbt docs + raw feed docs + column lineage in target/ (floe docs); docs-serve also serves it.
docs: setup
	$(BIN)/floe docs --no-serve

docs-serve: setup
	$(BIN)/floe docs --port 8080

clean:
	rm -rf .floe target logs
