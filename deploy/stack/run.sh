#!/usr/bin/env bash
# The main job: brings up the local stack (see up.sh), builds topoflow, runs the worker, the
# starter and the simulated providers against it, and applies the sample ClusterClass + Cluster.
# Idempotent: rerunning rebuilds and restarts topoflow's processes and keeps the stack.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
# Cluster and ClusterClass stored as v1beta2, as in a management cluster running Cluster API
# v1.11+, converted by the worker's webhook (TOPOFLOW_CRDS=topoflow: v1beta1 only).
export TOPOFLOW_CRDS="${TOPOFLOW_CRDS:-v1beta2}"
"$root/deploy/stack/up.sh"

log "building topoflow"
"$root/deploy/build.sh" "$BIN/" ./cmd/worker ./cmd/starter ./tests/sim/cmd/simprovider

export KUBECONFIG="$KUBECONFIG_FILE" TEMPORAL_ADDRESS
for name in starter worker simprovider; do stop_one "$name"; done
start simprovider "$BIN/simprovider"
# The worker also serves the admission webhooks and the Cluster and ClusterClass conversion webhook
# (a self-signed certificate in $STACK_DIR/webhook) and registers them, so `kubectl apply` of bad
# input fails and both API versions are served.
start worker "$BIN/worker" --webhook-addr "127.0.0.1:$WEBHOOK_PORT" --webhook-cert-dir "$STACK_DIR/webhook" \
  --webhook-self-signed --webhook-register-url "https://127.0.0.1:$WEBHOOK_PORT" --metrics-addr "127.0.0.1:$WORKER_METRICS_PORT"
start starter "$BIN/starter" run --metrics-addr "127.0.0.1:$STARTER_METRICS_PORT"
wait_for "the admission webhooks" 30 curl -sfk "https://127.0.0.1:$WEBHOOK_PORT/healthz" ||
  { log "the worker does not serve its webhooks:"; tail -20 "$STACK_DIR/worker.log" >&2; exit 1; }
for name in simprovider worker starter; do
  running "$name" || { log "$name exited:"; tail -20 "$STACK_DIR/$name.log" >&2; exit 1; }
done

# The samples are created once: on a rerun the Cluster may have been upgraded or changed, and
# applying the sample again would undo that (a version going back is refused).
if "$BIN/kubectl" get cluster demo -n default >/dev/null 2>&1; then
  log "the sample Cluster default/demo exists; left as it is"
else
  log "applying the sample ClusterClass and Cluster"
  "$BIN/kubectl" apply -f "$root/deploy/samples/clusterclass.yaml" -f "$root/deploy/samples/cluster.yaml"
fi

cat <<MSG

topoflow is running on the local stack.
  Temporal UI:   http://127.0.0.1:$TEMPORAL_UI_PORT  (workflow topology/default/demo)
  Webhooks:      https://127.0.0.1:$WEBHOOK_PORT (admission, and conversion of Cluster and ClusterClass; served by the worker)
  CRDs:          $TOPOFLOW_CRDS (v1beta2: Cluster and ClusterClass stored as v1beta2, served as both)
  Metrics:       http://127.0.0.1:$WORKER_METRICS_PORT/metrics (worker), http://127.0.0.1:$STARTER_METRICS_PORT/metrics (starter)
  Watch it:      $BIN/kubectl --kubeconfig $KUBECONFIG_FILE get cluster,simcluster,simcontrolplane,machinedeployments -A -w
  Logs:          $STACK_DIR/{worker,starter,simprovider,kube-apiserver,temporal,etcd}.log
  Environment:   source $STACK_DIR/env
  Stop:          make down   (state is kept; 'make purge' deletes it)
MSG
