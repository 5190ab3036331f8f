#!/usr/bin/env bash
# Runs every test: generated-file, format and docs checks, unit tests (with -race), then the
# integration suite against a real kube-apiserver + etcd and a real Temporal server, brought up
# by the project's own stack scripts as a separate "test" stack (its own ports and state), a
# short fault soak, topoflow on v1beta2 storage (tests/v1beta2.sh), and topoflow beside real
# Cluster API controllers (tests/capi.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export TOPOFLOW_STACK=test

echo "== generated files (deepcopy, CRDs)"
deploy/generate.sh --check

echo "== gofmt and go vet"
unformatted="$(gofmt -l $(git ls-files '*.go'))"
if [[ -n "$unformatted" ]]; then echo "gofmt would change: $unformatted" >&2; exit 1; fi
go vet ./...
go vet -tags integration ./tests/...
go vet -tags realcapi ./tests/realcapi/...
go vet -tags v1beta2 ./tests/v1beta2/...
(cd tests/realcapi/sdkextension && go vet ./...)

echo "== docs (links and anchors, make targets, starter subcommands and flags, paths)"
go test -count=1 ./tests/docs/

echo "== docker-compose.yaml (parsed and validated; this machine kind runs no container engine)"
source deploy/stack/lib.sh
command -v docker-compose >/dev/null || { as_root apt-get update -qq; as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-compose >/dev/null; }
KUBECONFIG=/dev/null docker-compose -f docker-compose.yaml config -q

echo "== unit tests"
go test -race -count=1 ./model/... ./activities/... ./workflows/... ./cmd/... ./internal/... ./tests/sim/... ./tests/soak/... ./deploy/...

echo "== fuzzing (briefly): manifest decoding, variable validation, patch engine, extension answers"
# A count of executions, not a duration: with a duration, Go 1.26's fuzz coordinator can report
# its own deadline as a failure ("context deadline exceeded", no failing input; golang/go#75804,
# fixed in Go 1.27), which this machine kind hit about one run in ten.
go test -run '^$' -fuzz '^FuzzStrict$' -fuzztime "${FUZZTIME:-20000x}" ./model/decode
go test -run '^$' -fuzz '^FuzzValidate$' -fuzztime "${FUZZTIME:-20000x}" ./model/variables
go test -run '^$' -fuzz '^FuzzApply$' -fuzztime "${FUZZTIME:-20000x}" ./model/patches
go test -run '^$' -fuzz '^FuzzExternalAnswer$' -fuzztime "${FUZZTIME:-20000x}" ./model/patches

echo "== local test stack"
cleanup() {
  if [[ "${KEEP_STACK:-}" != "1" ]]; then deploy/stack/down.sh --purge >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
deploy/stack/up.sh
source ".stack/test/env"

echo "== integration tests (real kube-apiserver, etcd, Temporal)"
# Without -v, a passing test prints one line and a failing one prints its assertions and logs.
go test -tags integration -count=1 -timeout 20m ./tests/integration/...

echo "== fault soak, short (every fault kind once; make soak runs 100)"
tests/soak.sh -clusters 2 -faults 6 -gap-min 2s -gap-max 6s -apiserver-outage-min 5s -apiserver-outage-max 10s -seed 3

echo "== topoflow on v1beta2 storage (Cluster and ClusterClass CRDs store v1beta2, converted by the worker)"
tests/v1beta2.sh

echo "== topoflow beside real Cluster API v1.14.2 (own stack; the managers are built once into the tools cache, ~25 minutes the first time)"
deploy/stack/down.sh --purge >/dev/null 2>&1 || true
tests/capi.sh
