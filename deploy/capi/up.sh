#!/usr/bin/env bash
# The real-providers profile: topoflow beside Cluster API's own controllers on a local stack of
# its own ("capi", ports +5000), as in a management cluster running Cluster API v1.11+.
#
#   Cluster API core        Cluster, MachineDeployment, MachineSet, Machine, health checks; its
#                           ClusterTopology and RuntimeSDK gates off (topoflow does that work)
#   kubeadm bootstrap       KubeadmConfig
#   KubeadmControlPlane     the control plane
#   Docker provider         DevCluster/DevMachine with the in-memory backend: simulated machines,
#                           etcd members and workload API servers (ports 19000, 20000 upward)
#
# Cluster API's CRDs (v1beta2 stored, v1beta1 served through its conversion webhooks) and
# admission webhooks are installed from its modules, called by URL on 127.0.0.1; the Cluster,
# ClusterClass and ExtensionConfig webhooks are topoflow's (the worker registers them). The
# managers are built once into the tools cache (deploy/capi/build.sh, ~25 minutes the first time).
#
# Usage: deploy/capi/up.sh            bring it all up (again: restarts topoflow and the managers)
#        CAPI_TOPOLOGY=clusterapi deploy/capi/up.sh
#                                     Cluster API runs the topology itself (its gates and webhooks
#                                     on, topoflow not started): the state topoflow takes over from
#        deploy/capi/switch.sh topoflow|clusterapi   hand the topology over (see the script)
#        TOPOFLOW_STACK=capi deploy/stack/down.sh --purge   stop it and delete its state
set -euo pipefail
export TOPOFLOW_STACK="${TOPOFLOW_STACK:-capi}"
source "$(dirname "$0")/../stack/lib.sh"
source "$(dirname "$0")/lib.sh"
mode="${CAPI_TOPOLOGY:-topoflow}"
case "$mode" in topoflow | clusterapi) ;; *) log "CAPI_TOPOLOGY must be topoflow or clusterapi, not $mode"; exit 2 ;; esac

"$root/deploy/capi/build.sh"
TOPOFLOW_CRDS=capi "$root/deploy/stack/up.sh"
export KUBECONFIG="$KUBECONFIG_FILE" TEMPORAL_ADDRESS

log "building topoflow"
"$root/deploy/build.sh" "$BIN/" ./cmd/worker ./cmd/starter ./deploy/capi/localize

capi_pki_init
capi_providers
log "installing Cluster API $CAPI_VERSION CRDs and webhooks"
for i in "${!providers[@]}"; do capi_install "$i" "$mode"; done
# topoflow's own API (fleet Rollouts and their strategies, ClusterClass revisions) beside
# Cluster API's.
kc apply --server-side --force-conflicts -f "$root/deploy/crds/topoflow.dev_rollouts.yaml" \
  -f "$root/deploy/crds/topoflow.dev_rolloutstrategies.yaml" \
  -f "$root/deploy/crds/topoflow.dev_clusterclassrevisions.yaml" >/dev/null
kc wait --for condition=Established --timeout 60s crd --all >/dev/null

topoflow_stop
for i in "${!providers[@]}"; do capi_start "$i" "$mode"; done
for i in "${!providers[@]}"; do capi_wait_ready "$i"; done
if [[ "$mode" == topoflow ]]; then topoflow_start; fi
echo "$mode" >"$CAPI_MODE_FILE"

cat <<MSG

Cluster API $CAPI_VERSION is running on the local stack "$STACK"; the topology is run by $mode.
  Try it:        kubectl apply -f $root/deploy/capi/samples/   (an in-memory ClusterClass and Cluster)
  Hand it over:  deploy/capi/switch.sh topoflow|clusterapi
  Temporal UI:   http://127.0.0.1:$TEMPORAL_UI_PORT
  Watch it:      $BIN/kubectl --kubeconfig $KUBECONFIG_FILE get cluster,kcp,machinedeployments,machines -A -w
  Logs:          $STACK_DIR/{worker,starter,capi-core,capi-kubeadm-bootstrap,capi-kubeadm-control-plane,capi-docker}.log
  Environment:   source $STACK_DIR/env
  Stop:          TOPOFLOW_STACK=$STACK deploy/stack/down.sh   (--purge deletes its state)
MSG
