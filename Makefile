# arrayplan — capacity planner for storage arrays. `make help` lists the targets.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VENV   := .venv
PY     := $(VENV)/bin/python
PORT   ?= 50051
DATA   ?= data
# Two xdist workers: the server-starting tests run as two groups in file order, tests/services on one
# worker and tests/cluster on the other, the engine's CPU-bound tests filling both (tests/conftest.py).
# PYTEST_ARGS= runs everything in one process.
PYTEST_ARGS ?= -n 2 --dist loadgroup
# The Go modules: the client (clients/go) and the OpenTofu/Terraform provider.
GO_MODULES := clients/go clients/terraform

##@ Getting started
.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make \033[36m<target>\033[0m\n"} \
	  /^[a-zA-Z_-]+:.*?##/ { printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2 } \
	  /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

.PHONY: setup
setup: ## Install what serving needs (.venv, stubs, bin/grpcurl, numba kernels compiled once); idempotent
	@bash scripts/setup.sh

.PHONY: test-setup
test-setup: ## setup plus the tools only the tests use (kube-apiserver, helm, otelcol, OpenTofu, hadolint, chromium, postgresql; cached)
	@bash scripts/setup.sh --test-tools

.PHONY: run
run: setup ## Start `arrayplan serve` on 127.0.0.1:50051 (PORT=...) with local Ray, SQLite under $(DATA)/, traces in the store
	$(VENV)/bin/arrayplan serve --port $(PORT) --data-dir $(DATA)

##@ Development
.PHONY: proto
proto: setup ## Regenerate the Python and Go stubs from proto/ (services/arrayplan, clients/go/proto; setup does it when proto/ changes)
	@rm -f $(VENV)/.proto-stamp && bash scripts/setup.sh

.PHONY: test
test: test-setup ## Run the whole test suite against real components (Ray, gRPC, SQLite, OpenTelemetry) on 2 xdist workers (PYTEST_ARGS=...)
	$(PY) -m pytest $(PYTEST_ARGS)

.PHONY: test-fast
test-fast: setup ## The suite without the @slow tests (real servers, long simulations): the inner loop; `make test` stays the whole suite
	$(PY) -m pytest $(PYTEST_ARGS) -m "not slow"

.PHONY: lock
lock: setup ## Resolve requirements.txt into requirements.lock (every transitive version and hash; setup installs the lock)
	bash scripts/lock.sh

.PHONY: lint
lint: setup ## buf lint of the API, ruff, the layers (import-linter, .importlinter), the types (mypy, mypy.ini), go vet and staticcheck
	cd proto && ../$(VENV)/bin/buf lint
	for m in $(GO_MODULES); do (cd $$m && go vet ./... && $(CURDIR)/bin/staticcheck ./...); done
	$(VENV)/bin/ruff check engine services tests
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

.PHONY: provider
provider: ## Build the OpenTofu/Terraform provider into bin/terraform-provider-arrayplan (docs/terraform.md)
	cd clients/terraform && go build -o $(CURDIR)/bin/terraform-provider-arrayplan .

.PHONY: cluster-tools
cluster-tools: ## Build helm, otelcol, kube-apiserver, tofu and link etcd into bin/ (test-setup runs it; cached in ~/.cache/arrayplan)
	bash scripts/cluster_tools.sh

.PHONY: helm-docs
helm-docs: setup ## Regenerate helm/arrayplan/README.md from values.yaml
	bash scripts/helm_docs.sh

.PHONY: bench
bench: setup ## Print one JSON object of speed and memory figures
	$(PY) -m arrayplan_services.bench

.PHONY: load
load: test-setup ## Load test: ghz at concurrency 50 on GetDrive, GetPlan, ListDrives (rps, p99, errors, RSS); server RSS before and after 16 big plans; health p99 under 4 abandoned day-long calls
	$(PY) scripts/load.py

.PHONY: clean
clean: ## Remove generated stubs and caches (keeps .venv, bin/ and data/)
	rm -rf services/arrayplan .pytest_cache .ruff_cache .mypy_cache .import_linter_cache $(VENV)/.proto-stamp
	find . -name __pycache__ -prune -exec rm -rf {} +
