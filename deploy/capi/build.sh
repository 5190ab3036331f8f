#!/usr/bin/env bash
# Builds Cluster API's own managers (core, kubeadm bootstrap, KubeadmControlPlane and the Docker
# provider, whose DevCluster/DevMachine kinds carry the in-memory backend) from the Go module proxy
# into the tools cache outside the clone, one folder per version, and links them into bin/; also
# the test Runtime Extension built on Cluster API's SDK.
# Used by the real-providers profile (#13); the fast suite does not need them.
#
# Cluster API's modules point at each other with `replace` (the main module at ./api, the test
# module at ../), which a dependent module cannot follow, so the build runs in a throwaway wrapper
# module that requires all three at the same release. The first build takes ~25 minutes on 2 cores;
# later runs only link the cached binaries.
set -euo pipefail
source "$(dirname "$0")/../stack/lib.sh"

CAPI_VERSION="${CAPI_VERSION:-v1.14.2}"
# binary name -> main package
declare -A mains=(
  [capi-core]=sigs.k8s.io/cluster-api/core
  [capi-kubeadm-bootstrap]=sigs.k8s.io/cluster-api/bootstrap/kubeadm
  [capi-kubeadm-control-plane]=sigs.k8s.io/cluster-api/controlplane/kubeadm
  [capi-docker]=sigs.k8s.io/cluster-api/test/infrastructure/docker
)

# The Runtime Extension built on Cluster API's SDK (tests/realcapi/sdkextension, a module of its
# own), cached by Cluster API version and a hash of its source.
ext_src="$root/tests/realcapi/sdkextension"
ext_key="$CAPI_VERSION-$(cat "$ext_src/main.go" "$ext_src/go.mod" "$ext_src/go.sum" | sha256sum | cut -c1-12)"
if ! cached_tool capi-sdk-extension "$ext_key"; then
  echo "building capi-sdk-extension $ext_key (Cluster API's Runtime SDK)"
  dir="$TOOLS_CACHE/capi-sdk-extension/$ext_key"
  mkdir -p "$dir"
  (cd "$ext_src" && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$dir/capi-sdk-extension.tmp" .)
  mv "$dir/capi-sdk-extension.tmp" "$dir/capi-sdk-extension"
  cached_tool capi-sdk-extension "$ext_key"
fi

needed=()
for name in capi-core capi-kubeadm-bootstrap capi-kubeadm-control-plane capi-docker; do
  cached_tool "$name" "$CAPI_VERSION" || needed+=("$name")
done
if [[ ${#needed[@]} -eq 0 ]]; then
  echo "Cluster API $CAPI_VERSION managers already built"
  exit 0
fi

work="$TOOLS_CACHE/.capi-build-$$"
trap 'rm -rf "$work"' EXIT
rm -rf "$work"
mkdir -p "$work"
cd "$work"

# The wrapper takes the main module's k8s.io pins as its own so the managers link the same
# Kubernetes libraries Cluster API was released with.
modfile="$(GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/cluster-api@$CAPI_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
[[ -f "$modfile" ]] || { echo "could not download sigs.k8s.io/cluster-api@$CAPI_VERSION" >&2; exit 1; }
{
  echo "module topoflow.local/capi-build"
  echo
  grep -m1 '^go ' "$modfile"
  echo
  echo "require ("
  echo "	sigs.k8s.io/cluster-api $CAPI_VERSION"
  echo "	sigs.k8s.io/cluster-api/api $CAPI_VERSION"
  echo "	sigs.k8s.io/cluster-api/test $CAPI_VERSION"
  grep -E '^[[:space:]]+(k8s.io/[a-z0-9-]+|sigs.k8s.io/controller-runtime) v' "$modfile" | sed 's#//.*##'
  echo ")"
} > go.mod
{
  echo "//go:build tools"
  echo
  echo "package tools"
  echo
  for name in "${needed[@]}"; do echo "import _ \"${mains[$name]}\""; done
} > tools.go

GOFLAGS=-mod=mod go mod tidy >/dev/null
for name in "${needed[@]}"; do
  echo "building $name $CAPI_VERSION (${mains[$name]}); the first build takes minutes"
  dir="$TOOLS_CACHE/$name/$CAPI_VERSION"
  mkdir -p "$dir"
  GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$dir/$name.tmp" "${mains[$name]}"
  mv "$dir/$name.tmp" "$dir/$name"
  cached_tool "$name" "$CAPI_VERSION"
done
echo "built ${needed[*]} in $TOOLS_CACHE, linked into bin/"
