#!/usr/bin/env bash
# Hands the topology of every Cluster on the real-providers stack (deploy/capi/up.sh) from Cluster
# API's own topology controller to topoflow, or back; the runbook of docs/takeover.md, as a script.
# Only Cluster API core restarts: the providers keep running (the in-memory backend's machines
# live in its process).
#
#   deploy/capi/switch.sh topoflow     the way in:   core's ClusterTopology and RuntimeSDK gates
#                                      off, Cluster API's Cluster/ClusterClass/ExtensionConfig
#                                      webhooks replaced by topoflow's, topoflow started
#   deploy/capi/switch.sh clusterapi   the way back: refused while a Cluster is behind its
#                                      class's newest revision (starter revisions check); then
#                                      topoflow stopped and its webhook configurations removed,
#                                      Cluster API's webhooks and gates on
set -euo pipefail
export TOPOFLOW_STACK="${TOPOFLOW_STACK:-capi}"
source "$(dirname "$0")/../stack/lib.sh"
source "$(dirname "$0")/lib.sh"
mode="${1:-}"
case "$mode" in topoflow | clusterapi) ;; *) echo "usage: $0 topoflow|clusterapi" >&2; exit 2 ;; esac
[[ -f "$CAPI_MODE_FILE" ]] || { log "no real-providers stack here ($STACK_DIR): run deploy/capi/up.sh first"; exit 1; }
export KUBECONFIG="$KUBECONFIG_FILE" TEMPORAL_ADDRESS
capi_providers
core=0

if [[ "$mode" == topoflow ]]; then
  # Cluster API's topology controller stops first, so nobody else writes the topology meanwhile.
  capi_start "$core" topoflow
  capi_wait_ready "$core"
  capi_install "$core" topoflow
  topoflow_start
else
  # Cluster API computes every Cluster from the live ClusterClass: a Cluster that topoflow holds on
  # an older ClusterClass revision would change at once. Refuse, naming them, until they are moved.
  if ! "$BIN/starter" revisions check; then
    log "not handing back: move those Clusters to their class's newest revision first (docs/class-revisions.md)"
    exit 1
  fi
  topoflow_stop
  capi_install "$core" clusterapi
  capi_start "$core" clusterapi
  capi_wait_ready "$core"
fi
echo "$mode" >"$CAPI_MODE_FILE"
log "the topology is run by $mode"
