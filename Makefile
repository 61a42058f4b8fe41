# lightagent development tasks. `make help` lists them.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.setup-stamp
DISTS := lightagent-core lightagent-flow lightagent-dag lightagent-mcp lightagent-rag-fts \
         lightagent-memory-mem0 lightagent-guardrails lightagent-otel lightagent-serve \
         lightagent-thought lightagent-devtools lightagent-swarm lightagent-runtime lightagent-memory lightagent-skills lightagent-review lightagent-control lightagent-dbos lightagent-selection lightagent-postgres contracts
PYPROJECTS := $(foreach d,$(DISTS),$(d)/pyproject.toml)
PYTEST := $(PY) -m pytest

.DEFAULT_GOAL := help
.PHONY: help setup demo test test-slow test-all lint typecheck format bench bench-security dists check-dists clean

# Colour only on a terminal, and never under NO_COLOR (https://no-color.org).
help: ## List the targets
	@if [ -t 1 ] && [ -z "$$NO_COLOR" ]; then on='\033[36m'; off='\033[0m'; else on=''; off=''; fi; \
	grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | \
	awk -v on="$$on" -v off="$$off" 'BEGIN {FS = ":.*## "}; {printf "  %s%-12s%s %s\n", on, $$1, off, $$2}'

$(STAMP): $(PYPROJECTS) requirements-dev.txt Makefile
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "lightagent needs Python 3.10+")'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q $(foreach d,$(DISTS),-e ./$(d)) -r requirements-dev.txt
	touch $(STAMP)

setup: $(STAMP) ## Create .venv and install every distribution editable, with dev tools

demo: $(STAMP) ## The tour: plugins, an agent with tools and a durable session, flow, DAG, trace
	$(PY) examples/demo.py

# pytest exits 5 when nothing was collected; a target with no tests is not a failure.
test: $(STAMP) ## Every default test (slow fault-injection and load tests: make test-slow)
	$(PYTEST) -m "not slow" || [ $$? -eq 5 ]

test-slow: $(STAMP) ## The slow crash, fault-injection and load tests
	$(PYTEST) -m slow || [ $$? -eq 5 ]

test-all: test test-slow ## Both of the above

lint: $(STAMP) ## ruff check, format check, import contracts (circles, layers, privacy), kernel size and plugin names, typecheck
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(VENV)/bin/lint-imports
	$(PY) scripts/check_core.py
	$(MAKE) --no-print-directory typecheck

MYPY_PACKAGES := lightagent lightagent_flow lightagent_dag lightagent_mcp lightagent_rag_fts \
                 lightagent_memory_mem0 lightagent_guardrails lightagent_contracts \
                 lightagent_thought lightagent_devtools lightagent_swarm lightagent_runtime lightagent_memory lightagent_skills lightagent_review lightagent_control lightagent_dbos lightagent_selection lightagent_postgres
typecheck: $(STAMP) ## mypy over the public packages, then examples/ against the installed ones
	$(PY) -m mypy $(foreach p,$(MYPY_PACKAGES),-p $(p))
	$(PY) -m mypy examples

format: $(STAMP) ## ruff fix and format
	$(PY) -m ruff check --fix .
	$(PY) -m ruff format .

bench: $(STAMP) ## Benchmarks; results go to bench/RESULTS.md
	$(PY) bench/run.py

BENCH_VENV := .venv-bench
bench-security: ## Prompt injection on AgentDojo (own venv .venv-bench); results go to bench/RESULTS.md
	test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install -q -r bench/requirements-security.txt \
		-e ./lightagent-core -e ./lightagent-guardrails -e ./lightagent-review -e ./contracts
	$(BENCH_VENV)/bin/python bench/security_agentdojo.py

dists: $(STAMP) ## Build a wheel of every distribution into dist/
	rm -rf dist && mkdir -p dist
	$(foreach d,$(DISTS),$(PIP) wheel -q --no-deps -w dist ./$(d) &&) true

check-dists: dists ## Install lightagent-core[flow,dag] from the wheels into a fresh venv and check it
	$(PY) scripts/check_dists.py dist

clean: ## Remove the venv, build output and caches
	rm -rf $(VENV) dist build .ruff_cache .pytest_cache .mypy_cache
	find . -name __pycache__ -prune -exec rm -rf {} +
