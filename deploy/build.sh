#!/usr/bin/env bash
# Builds Go packages of this checkout with the git revision stamped in (cmd/internal/buildinfo), so
# `starter version` names it even where Go's own VCS stamping is off (-buildvcs=false) or there is
# no .git (the image gets it as a build argument instead). Usage:
#   deploy/build.sh OUTDIR PACKAGE...
# TOPOFLOW_REVISION overrides the revision.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$1"
shift
rev="${TOPOFLOW_REVISION:-}"
if [[ -z "$rev" ]]; then
  rev="$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
  if [[ "$rev" != unknown && -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]]; then
    rev="$rev-dirty"
  fi
fi
cd "$root"
go build -ldflags "-X github.com/topoflow/topoflow/cmd/internal/buildinfo.Revision=$rev" -o "$out" "$@"
