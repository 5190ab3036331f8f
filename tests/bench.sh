#!/usr/bin/env bash
# The fleet bench (see tests/bench/main.go): brings up a local stack ("bench" by default, its own
# ports and state), builds topoflow, and prints the figures, e.g.
#   tests/bench.sh -clusters 100
#   tests/bench.sh -clusters 1000 -raw-clusters 100 -upgrade=false
# The stack is stopped and its state deleted afterwards (KEEP_STACK=1 keeps it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export TOPOFLOW_STACK="${TOPOFLOW_STACK:-bench}"
deploy/stack/up.sh
if [[ -z "${KEEP_STACK:-}" ]]; then
  trap 'deploy/stack/down.sh --purge >/dev/null 2>&1 || true' EXIT
fi
source ".stack/$TOPOFLOW_STACK/env"
deploy/build.sh bin/ ./cmd/worker ./cmd/starter
go build -o bin/bench ./tests/bench
bin/bench -root "$root" -bin "$root/bin" "$@"
