#!/usr/bin/env bash
# Regenerates deepcopy functions and CRDs from the API types in model/api.
# With --check it fails when the committed files differ from what the types produce.
set -euo pipefail
source "$(dirname "$0")/stack/lib.sh"
cd "$root"

CONTROLLER_GEN_VERSION=v0.23.0
cg="$BIN/controller-gen"
if ! cached_tool controller-gen "$CONTROLLER_GEN_VERSION"; then
  echo "installing controller-gen $CONTROLLER_GEN_VERSION"
  GOBIN="$TOOLS_CACHE/controller-gen/$CONTROLLER_GEN_VERSION" go install "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_GEN_VERSION"
  cached_tool controller-gen "$CONTROLLER_GEN_VERSION"
fi

gen() {
  local out="$1"
  "$cg" object paths=./model/api/...
  "$cg" crd:allowDangerousTypes=false paths=./model/api/... output:crd:dir="$out"
  # The simulated providers' CRDs live with their types under tests/.
  "$cg" object paths=./tests/sim/api/...
  "$cg" crd paths=./tests/sim/api/... output:crd:dir="$out/sim"
}

if [[ "${1:-}" == "--check" ]]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  gen "$tmp"
  if ! diff -r "$tmp" deploy/crds >/dev/null || [[ -n "$(git status --porcelain -- model/api tests/sim/api)" ]]; then
    diff -r "$tmp" deploy/crds || true
    git status --porcelain -- model/api tests/sim/api
    echo "generated files are stale: run deploy/generate.sh and commit the result" >&2
    exit 1
  fi
  echo "generated files are up to date"
else
  rm -rf deploy/crds
  mkdir -p deploy/crds/sim
  gen deploy/crds
  echo "wrote deploy/crds"
fi
