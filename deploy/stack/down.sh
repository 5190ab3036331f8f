#!/usr/bin/env bash
# Stops the local stack (topoflow processes first, then Temporal, kube-apiserver, etcd).
# State (etcd data, Temporal database) is kept; pass --purge to delete it too.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
# The Cluster API managers run only in the real-providers profile (deploy/capi/up.sh).
for name in starter worker simprovider capi-core capi-kubeadm-bootstrap capi-kubeadm-control-plane capi-docker temporal kube-apiserver etcd; do
  stop_one "$name"
done
if [[ "${1:-}" == "--purge" ]]; then
  log "deleting $STACK_DIR"
  rm -rf "$STACK_DIR"
fi
