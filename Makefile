# kcontrol: `make run` and `make test` set everything up on a fresh Debian machine, then do their job.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.kcontrol-installed
RUN_DIR ?= .kcontrol/demo

.PHONY: run test setup system lint diagrams clean

# A narrated demo: a 3-server ZooKeeper ensemble and 3 brokers, then a KRaft cluster (3
# controllers, 3 brokers); stops everything it started.
run: setup
	$(BIN)/kcontrol cluster demo --dir $(RUN_DIR)

# Two pytest-xdist workers (CI has 2 cores; much of the suite waits on processes, servers and
# timers): a test file is run whole by one worker (tests/conftest.py), each worker has its own
# ZooKeeper ensemble on free ports. PYTEST_WORKERS=0 runs everything in one process.
PYTEST_WORKERS ?= 2

test: setup
	@$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest ran no test; that is a failure" >&2; exit 1; fi; exit $$rc

setup: system $(STAMP)

# Idempotent: checks for java and ZooKeeper's jars, installs only what is missing.
system:
	@bash scripts/setup-system.sh

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[spark,diagrams,test]'
	@touch $@

lint: setup
	$(BIN)/ruff check .

diagrams: setup
	$(BIN)/kcontrol diagrams --out specs/diagrams --format mermaid

clean:
	rm -rf $(VENV) .kcontrol .pytest_cache
