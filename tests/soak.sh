#!/usr/bin/env bash
# The fault soak (see tests/soak/main.go): brings up a local stack ("soak" by default, its own
# ports and state; TOPOFLOW_STACK=test reuses the test stack), builds topoflow, and runs the
# soak with the given flags, e.g.
#   tests/soak.sh -clusters 15 -faults 100 -seed 7
# The stack is left up (stop it with TOPOFLOW_STACK=soak deploy/stack/down.sh --purge).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export TOPOFLOW_STACK="${TOPOFLOW_STACK:-soak}"
deploy/stack/up.sh
source ".stack/$TOPOFLOW_STACK/env"
deploy/build.sh bin/ ./cmd/worker ./cmd/starter
go build -o "bin/soak" ./tests/soak
exec bin/soak -root "$root" -bin "$root/bin" "$@"
