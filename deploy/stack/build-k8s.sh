#!/usr/bin/env bash
# Builds kube-apiserver and kubectl from the Go module proxy into the tools cache outside the
# clone (one folder per version, see lib.sh) and links them into bin/.
#
# k8s.io/kubernetes points its staging modules (k8s.io/api, k8s.io/client-go, ...) at local
# directories with `replace`, which a dependent module cannot follow. So we build from a
# throwaway wrapper module that pins every staging module to the matching v0.x.y release.
# The first build takes about 4-5 minutes on 2 cores; later runs reuse bin/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

KUBE_VERSION="${KUBE_VERSION:-v1.36.3}"
mkdir -p "$BIN"

# A build links the release's version into the binary (as Kubernetes' own build does), so
# clients that check the server version (Cluster API's managers refuse "v0.0.0-master") accept
# it; a cached binary from before that is rebuilt.
reports_version() {
  "$TOOLS_CACHE/$1/$KUBE_VERSION/$1" --version 2>/dev/null | grep -q "$KUBE_VERSION" ||
    "$TOOLS_CACHE/$1/$KUBE_VERSION/$1" version --client 2>/dev/null | grep -q "$KUBE_VERSION"
}
needed=()
for cmd in kube-apiserver kubectl; do
  { cached_tool "$cmd" "$KUBE_VERSION" && reports_version "$cmd"; } || needed+=("$cmd")
done
if [[ ${#needed[@]} -eq 0 ]]; then
  echo "kube-apiserver and kubectl $KUBE_VERSION already built in bin/"
  exit 0
fi

staging="v0.${KUBE_VERSION#v1.}"
work="$TOOLS_CACHE/.k8s-build-$$"
rm -rf "$work"
mkdir -p "$work"
cd "$work"

# The list of staging modules comes from k8s.io/kubernetes' own go.mod, so a new Kubernetes
# version that adds a staging module needs no edit here.
modfile="$(GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
[[ -f "$modfile" ]] || { echo "could not download k8s.io/kubernetes@$KUBE_VERSION" >&2; exit 1; }
{
  echo "module topoflow.local/k8s-build"
  echo
  grep -m1 '^go ' "$modfile"
  echo
  echo "require k8s.io/kubernetes $KUBE_VERSION"
  echo
  echo "replace ("
  sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\t\1 => \1 '"$staging"'#p' "$modfile"
  echo ")"
} > go.mod
{
  echo "//go:build tools"
  echo
  echo "package tools"
  echo
  for cmd in "${needed[@]}"; do echo "import _ \"k8s.io/kubernetes/cmd/$cmd\""; done
} > tools.go

GOFLAGS=-mod=mod go mod tidy >/dev/null
minor="${KUBE_VERSION#v1.}"; minor="${minor%%.*}"
ldflags="-s -w"
for vpkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $vpkg.gitVersion=$KUBE_VERSION -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$minor -X $vpkg.gitTreeState=clean"
  ldflags+=" -X $vpkg.gitCommit=unknown -X $vpkg.buildDate=1970-01-01T00:00:00Z"
done
for cmd in "${needed[@]}"; do
  echo "building $cmd $KUBE_VERSION (staging modules $staging); the first build takes a few minutes"
  mkdir -p "$TOOLS_CACHE/$cmd/$KUBE_VERSION"
  GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags="$ldflags" -o "$TOOLS_CACHE/$cmd/$KUBE_VERSION/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd"
  mv "$TOOLS_CACHE/$cmd/$KUBE_VERSION/$cmd.tmp" "$TOOLS_CACHE/$cmd/$KUBE_VERSION/$cmd"
  cached_tool "$cmd" "$KUBE_VERSION"
done
cd "$root"
rm -rf "$work"
echo "built ${needed[*]} in $TOOLS_CACHE, linked into bin/"
