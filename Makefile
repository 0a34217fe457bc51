# Task entry points. Tool configuration lives in pyproject.toml.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_RUN ?= demo-run
# pytest-xdist workers; 0 runs the suite in one process (every test is safe under -n: ports are
# ephemeral, files are per-test tmp_path, pty tests take the terminal's own size).
PYTEST_WORKERS ?= 2
SCRIPTS := blindtest bt-design bt-generate bt-judge bt-audit bt-analyze bt-verify bt-plan

.PHONY: help venv test test-fast lint fmt docs demo demo-llm demo-candidates bench golden check clean

help:
	@echo "make demo    run blindtest on the bundled demo prompts against the local simulator"
	@echo "make demo-llm  the same chain judged by a simulated LLM judge"
	@echo "make demo-candidates  four candidates ranked end to end (a bot judge, then bt-verify)"
	@echo "make test    create $(VENV), install, run the test suite and smoke-run every command"
	@echo "make test-fast  the inner loop: the suite without the pseudo-terminal tests"
	@echo "make lint    ruff check, ruff format --check, mypy, schema copy check"
	@echo "make bench   client throughput against the simulator, vs the openai SDK"

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	@# Bytecode for the checkout, as pip writes it for an installed package (under
	@# PYTHONDONTWRITEBYTECODE every command would otherwise compile its modules first).
	$(BIN)/python -m compileall -q blindtest
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS)
	@for s in $(SCRIPTS); do $(BIN)/$$s --help > /dev/null || { echo "$$s --help failed"; exit 1; }; done
	@echo "all console scripts answer --help"

# The inner loop while editing: every test but the pseudo-terminal ones (marker pty). Run
# `make test` before a commit.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -m "not pty" -n $(PYTEST_WORKERS)

lint: $(STAMP)
	$(BIN)/ruff check blindtest tests
	$(BIN)/ruff format --check blindtest tests
	$(BIN)/mypy
	$(BIN)/cog --check docs/cli.md

fmt: $(STAMP)
	$(BIN)/ruff check --fix blindtest tests
	$(BIN)/ruff format blindtest tests

docs: $(STAMP)
	$(BIN)/cog -r docs/cli.md

# The demo never deletes anything: run again, it resumes DEMO_RUN (or refuses a directory that
# holds anything but a demo run); remove a finished demo-run/ yourself.
demo: $(STAMP)
	$(BIN)/python -m blindtest.cli.demo "$(DEMO_RUN)"

# The chain judged by a simulated LLM judge (the bundled judge prompt, position swap, diagnostics).
DEMO_LLM_RUN ?= demo-llm-run
demo-llm: $(STAMP)
	$(BIN)/python -m blindtest.cli.demo_llm "$(DEMO_LLM_RUN)"

# Four candidates (the simulator's two models, each also with a system prompt that moves its
# style), every pair on every prompt, judged by the length bot: the ranking, then bt-verify.
DEMO_CANDIDATES_RUN ?= demo-candidates-run
demo-candidates: $(STAMP)
	$(BIN)/python -m blindtest.cli.demo_candidates "$(DEMO_CANDIDATES_RUN)"

# Regenerate examples/run against the simulator; review the diff before committing.
golden: $(STAMP)
	$(MAKE) -C examples golden PY=../$(BIN)/python
	$(MAKE) -C examples/gate golden PY=../../$(BIN)/python

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	@# Every benchmark runs and prints its figures; a missed target fails the whole at the end.
	@status=0; for name in startup process pipeline generate llm_judge ranking candidates; do \
	  echo "$(BIN)/python tests/benchmarks/bench_$$name.py"; \
	  $(BIN)/python tests/benchmarks/bench_$$name.py || status=1; \
	done; exit $$status

check: lint test

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
