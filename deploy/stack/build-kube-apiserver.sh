#!/usr/bin/env bash
# Builds kube-apiserver from the Go module proxy into bin/ (cached).
#
# k8s.io/kubernetes points its staging modules (k8s.io/api, k8s.io/client-go, ...) at local
# directories with `replace`, which a dependent module cannot follow. So we build it from a
# throwaway wrapper module that pins every staging module to the matching v0.x.y release.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.36.3}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$root/bin/kube-apiserver"
stamp="$root/bin/kube-apiserver.version"

if [[ -x "$out" && -f "$stamp" && "$(cat "$stamp")" == "$KUBE_VERSION" ]]; then
  echo "kube-apiserver $KUBE_VERSION already built: $out"
  exit 0
fi

staging="v0.${KUBE_VERSION#v1.}"
work="$root/bin/.kube-apiserver-build"
rm -rf "$work"
mkdir -p "$work"
cd "$work"

# The list of staging modules comes from k8s.io/kubernetes' own go.mod, so a new
# Kubernetes version with a new staging module needs no edit here.
modfile="$(GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
goline="$(grep -m1 '^go ' "$modfile")"
{
  echo "module topoflow.local/kube-apiserver-build"
  echo
  echo "$goline"
  echo
  echo "require k8s.io/kubernetes $KUBE_VERSION"
  echo
  echo "replace ("
  sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\t\1 => \1 '"$staging"'#p' "$modfile"
  echo ")"
} > go.mod
cat > tools.go <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
GO

echo "building kube-apiserver $KUBE_VERSION (staging $staging); this takes a few minutes"
GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || true
GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$out" k8s.io/kubernetes/cmd/kube-apiserver
echo "$KUBE_VERSION" > "$stamp"
cd "$root"
rm -rf "$work"
echo "built $out"
