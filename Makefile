# topoflow: the two commands a newcomer needs are `make up` and `make test`.
.PHONY: up down purge test docs-check test-capi soak bench bench-capi generate build

up: ## bring up etcd, kube-apiserver, Temporal; run topoflow with a sample Cluster
	./deploy/stack/run.sh

down: ## stop everything (state is kept)
	./deploy/stack/down.sh

purge: ## stop everything and delete local state
	./deploy/stack/down.sh --purge

test: ## all tests: checks, unit tests, integration tests on a real stack
	./tests/run.sh

docs-check: ## the docs check: links and anchors, make targets, starter subcommands and flags, paths (also in make test)
	go test -count=1 ./tests/docs/

test-capi: ## topoflow beside real Cluster API v1.14.2 controllers (own stack; builds them once, ~25 min)
	./tests/capi.sh

soak: ## fault soak: 100 faults over Clusters in create, chained upgrade and delete (own stack; ~75 min)
	./tests/soak.sh -clusters 10 -faults 100 $(SOAK_FLAGS)

bench: ## fleet bench: raw apply rate, fleet create/upgrade, no-op requests, memory, history (own stack)
	./tests/bench.sh -clusters 100 $(BENCH_FLAGS)

bench-capi: ## the same 10 Clusters created beside real Cluster API: its topology controller, then topoflow (CPU, time)
	./tests/capicompare.sh 10

generate: ## regenerate deepcopy functions and CRDs from model/api
	./deploy/generate.sh

build:
	./deploy/build.sh bin/ ./cmd/worker ./cmd/starter ./tests/sim/cmd/simprovider
