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
#        TOPOFLOW_STACK=capi deploy/stack/down.sh --purge   stop it and delete its state
set -euo pipefail
export TOPOFLOW_STACK="${TOPOFLOW_STACK:-capi}"
source "$(dirname "$0")/../stack/lib.sh"
CAPI_VERSION="${CAPI_VERSION:-v1.14.2}"
export CAPI_VERSION

"$root/deploy/capi/build.sh"
TOPOFLOW_CRDS=capi "$root/deploy/stack/up.sh"
export KUBECONFIG="$KUBECONFIG_FILE" TEMPORAL_ADDRESS
kc() { "$BIN/kubectl" "$@"; }

log "building topoflow"
"$root/deploy/build.sh" "$BIN/" ./cmd/worker ./cmd/starter ./deploy/capi/localize

# One serving certificate for 127.0.0.1 signed by a local CA, shared by the managers' webhook
# servers (the API server trusts the CA through each webhook's caBundle).
pki="$STACK_DIR/capi-pki"
if [[ ! -f "$pki/tls.crt" ]]; then
  mkdir -p "$pki"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=topoflow-capi-ca" \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$pki/tls.key" -out "$pki/tls.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\n' >"$pki/san.ext"
  openssl x509 -req -in "$pki/tls.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 3650 \
    -extfile "$pki/san.ext" -out "$pki/tls.crt" 2>/dev/null
fi

moddir() { GOFLAGS=-mod=mod go mod download -json "$1@$CAPI_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'; }
capi_dir="$(moddir sigs.k8s.io/cluster-api)"
test_dir="$(moddir sigs.k8s.io/cluster-api/test)"
[[ -d "$capi_dir" && -d "$test_dir" ]] || { log "could not download Cluster API $CAPI_VERSION modules"; exit 1; }

# name|binary|config dir|webhook configuration prefix|provider label|resources whose webhooks topoflow serves|feature gates
providers=(
  "core|capi-core|$capi_dir/core/config|capi-|cluster-api|clusters,clusterclasses,extensionconfigs|ClusterTopology=false,RuntimeSDK=false,MachinePool=true"
  "bootstrap|capi-kubeadm-bootstrap|$capi_dir/bootstrap/kubeadm/config|capi-kubeadm-bootstrap-|bootstrap-kubeadm||MachinePool=true"
  "controlplane|capi-kubeadm-control-plane|$capi_dir/controlplane/kubeadm/config|capi-kubeadm-control-plane-|control-plane-kubeadm||ClusterTopology=true"
  "infrastructure|capi-docker|$test_dir/infrastructure/docker/config|capd-|infrastructure-docker||ClusterTopology=true,MachinePool=true"
)
# Each manager's webhook, health and diagnostics ports, above the stack's own.
port_base=$((9444 + _off))

log "installing Cluster API $CAPI_VERSION CRDs and webhooks"
i=0
for p in "${providers[@]}"; do
  IFS='|' read -r name bin dir prefix provider drop gates <<<"$p"
  {
    kc kustomize "$dir/crd"
    echo "---"
    kc kustomize "$dir/webhook"
  } | "$BIN/localize" -url "https://127.0.0.1:$((port_base + i))" -ca-file "$pki/ca.crt" \
        -prefix "$prefix" -provider "$provider" -drop "$drop" >"$STACK_DIR/capi-$name.yaml"
  kc apply --server-side --force-conflicts -f "$STACK_DIR/capi-$name.yaml" >/dev/null
  i=$((i + 1))
done
# topoflow's own API (fleet Rollouts and their strategies) beside Cluster API's.
kc apply --server-side --force-conflicts -f "$root/deploy/crds/topoflow.dev_rollouts.yaml" \
  -f "$root/deploy/crds/topoflow.dev_rolloutstrategies.yaml" >/dev/null
kc wait --for condition=Established --timeout 60s crd --all >/dev/null

for name in starter worker; do stop_one "$name"; done
i=0
for p in "${providers[@]}"; do
  IFS='|' read -r name bin dir prefix provider drop gates <<<"$p"
  stop_one "$bin"
  log "starting $bin $CAPI_VERSION (webhooks :$((port_base + i)))"
  # POD_IP: where the in-memory backend's workload API servers listen.
  POD_IP=127.0.0.1 start "$bin" "$BIN/$bin" --kubeconfig "$KUBECONFIG_FILE" --leader-elect=false \
    --webhook-port "$((port_base + i))" --webhook-cert-dir "$pki" \
    --health-addr "127.0.0.1:$((port_base + 100 + i))" \
    --diagnostics-address "127.0.0.1:$((port_base + 200 + i))" --insecure-diagnostics \
    --feature-gates "$gates"
  i=$((i + 1))
done
i=0
for p in "${providers[@]}"; do
  IFS='|' read -r name bin _ <<<"$p"
  wait_for "$bin" 120 curl -sf "http://127.0.0.1:$((port_base + 100 + i))/readyz" ||
    { log "$bin is not ready:"; tail -20 "$STACK_DIR/$bin.log" >&2; exit 1; }
  i=$((i + 1))
done

start worker "$BIN/worker" --webhook-addr "127.0.0.1:$WEBHOOK_PORT" --webhook-cert-dir "$STACK_DIR/webhook" \
  --webhook-self-signed --webhook-register-url "https://127.0.0.1:$WEBHOOK_PORT" --metrics-addr "127.0.0.1:$WORKER_METRICS_PORT"
start starter "$BIN/starter" run --metrics-addr "127.0.0.1:$STARTER_METRICS_PORT"
wait_for "the admission webhooks" 30 curl -sfk "https://127.0.0.1:$WEBHOOK_PORT/healthz" ||
  { log "the worker does not serve its webhooks:"; tail -20 "$STACK_DIR/worker.log" >&2; exit 1; }
for name in worker starter; do
  running "$name" || { log "$name exited:"; tail -20 "$STACK_DIR/$name.log" >&2; exit 1; }
done

cat <<MSG

topoflow is running beside Cluster API $CAPI_VERSION on the local stack "$STACK".
  Try it:        kubectl apply -f $root/deploy/capi/samples/   (an in-memory ClusterClass and Cluster)
  Temporal UI:   http://127.0.0.1:$TEMPORAL_UI_PORT
  Watch it:      $BIN/kubectl --kubeconfig $KUBECONFIG_FILE get cluster,kcp,machinedeployments,machines -A -w
  Logs:          $STACK_DIR/{worker,starter,capi-core,capi-kubeadm-bootstrap,capi-kubeadm-control-plane,capi-docker}.log
  Environment:   source $STACK_DIR/env
  Stop:          TOPOFLOW_STACK=$STACK deploy/stack/down.sh   (--purge deletes its state)
MSG
