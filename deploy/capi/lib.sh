# Shared by the real-providers profile's scripts (deploy/capi/up.sh, deploy/capi/switch.sh,
# tests/capi.sh and tests/capicompare.sh through deploy/capi/env.sh).
# Sourced after deploy/stack/lib.sh, not run.
#
# Who runs the topology ("the mode", kept in $STACK_DIR/capi-topology):
#   topoflow    Cluster API core with its ClusterTopology and RuntimeSDK gates off, topoflow's
#               worker and starter running, topoflow's Cluster, ClusterClass and ExtensionConfig
#               webhooks in place of Cluster API's (the profile's default)
#   clusterapi  Cluster API's own topology controller and Runtime SDK (gates on) and its own
#               webhooks; topoflow not running and none of its webhooks registered
CAPI_VERSION="${CAPI_VERSION:-v1.14.2}"
export CAPI_VERSION
CAPI_MODE_FILE="$STACK_DIR/capi-topology"
capi_pki="$STACK_DIR/capi-pki"
# Each manager's webhook, health and diagnostics ports, above the stack's own.
capi_port_base=$((9444 + _off))

# CAPI_STACK_PROCS: every process of the profile's stack, by the name of its pid file (what
# tests/capi.sh and tests/capicompare.sh measure).
CAPI_STACK_PROCS=(etcd kube-apiserver temporal worker starter capi-core capi-kubeadm-bootstrap capi-kubeadm-control-plane capi-docker)

kc() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" "$@"; }

capi_moddir() { GOFLAGS=-mod=mod go mod download -json "$1@$CAPI_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'; }

# capi_providers: sets the providers array, one line per manager:
# name|binary|config dir|webhook configuration prefix|provider label|extra feature gates
capi_providers() {
  local capi_dir test_dir
  capi_dir="$(capi_moddir sigs.k8s.io/cluster-api)"
  test_dir="$(capi_moddir sigs.k8s.io/cluster-api/test)"
  [[ -d "$capi_dir" && -d "$test_dir" ]] || { log "could not download Cluster API $CAPI_VERSION modules"; return 1; }
  providers=(
    "core|capi-core|$capi_dir/core/config|capi-|cluster-api|MachinePool=true"
    "bootstrap|capi-kubeadm-bootstrap|$capi_dir/bootstrap/kubeadm/config|capi-kubeadm-bootstrap-|bootstrap-kubeadm|MachinePool=true"
    "controlplane|capi-kubeadm-control-plane|$capi_dir/controlplane/kubeadm/config|capi-kubeadm-control-plane-|control-plane-kubeadm|ClusterTopology=true"
    "infrastructure|capi-docker|$test_dir/infrastructure/docker/config|capd-|infrastructure-docker|ClusterTopology=true,MachinePool=true"
  )
}

# capi_core_gates MODE: core's feature gates; its topology controller and Runtime SDK run only
# when Cluster API owns the topology.
capi_core_gates() {
  case "$1" in
    clusterapi) echo "ClusterTopology=true,RuntimeSDK=true,MachinePool=true" ;;
    *) echo "ClusterTopology=false,RuntimeSDK=false,MachinePool=true" ;;
  esac
}

# capi_pki_init: one serving certificate for 127.0.0.1 signed by a local CA, shared by the
# managers' webhook servers (the API server trusts the CA through each webhook's caBundle).
capi_pki_init() {
  [[ -f "$capi_pki/tls.crt" ]] && return 0
  mkdir -p "$capi_pki"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=topoflow-capi-ca" \
    -keyout "$capi_pki/ca.key" -out "$capi_pki/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$capi_pki/tls.key" -out "$capi_pki/tls.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\n' >"$capi_pki/san.ext"
  openssl x509 -req -in "$capi_pki/tls.csr" -CA "$capi_pki/ca.crt" -CAkey "$capi_pki/ca.key" -CAcreateserial -days 3650 \
    -extfile "$capi_pki/san.ext" -out "$capi_pki/tls.crt" 2>/dev/null
}

# capi_install INDEX MODE: installs provider INDEX's CRDs and admission webhooks (by URL on
# 127.0.0.1). Core's Cluster, ClusterClass and ExtensionConfig webhooks are left out while
# topoflow serves them; its webhook configurations are replaced whole, so a switch leaves no
# webhook of the other mode behind.
capi_install() {
  local i="$1" mode="$2" name bin dir prefix provider gates drop=""
  IFS='|' read -r name bin dir prefix provider gates <<<"${providers[$i]}"
  if [[ "$name" == core && "$mode" != clusterapi ]]; then drop="clusters,clusterclasses,extensionconfigs"; fi
  {
    kc kustomize "$dir/crd"
    echo "---"
    kc kustomize "$dir/webhook"
  } | "$BIN/localize" -url "https://127.0.0.1:$((capi_port_base + i))" -ca-file "$capi_pki/ca.crt" \
        -prefix "$prefix" -provider "$provider" -drop "$drop" >"$STACK_DIR/capi-$name.yaml"
  if [[ "$name" == core ]]; then
    kc delete --ignore-not-found mutatingwebhookconfiguration "${prefix}mutating-webhook-configuration" >/dev/null
    kc delete --ignore-not-found validatingwebhookconfiguration "${prefix}validating-webhook-configuration" >/dev/null
  fi
  kc apply --server-side --force-conflicts -f "$STACK_DIR/capi-$name.yaml" >/dev/null
}

# capi_start INDEX MODE: (re)starts provider INDEX's manager and waits until it is ready.
capi_start() {
  local i="$1" mode="$2" name bin dir prefix provider gates
  IFS='|' read -r name bin dir prefix provider gates <<<"${providers[$i]}"
  if [[ "$name" == core ]]; then gates="$(capi_core_gates "$mode")"; fi
  stop_one "$bin"
  log "starting $bin $CAPI_VERSION (webhooks :$((capi_port_base + i)), $gates)"
  # POD_IP: where the in-memory backend's workload API servers listen.
  POD_IP=127.0.0.1 start "$bin" "$BIN/$bin" --kubeconfig "$KUBECONFIG_FILE" --leader-elect=false \
    --webhook-port "$((capi_port_base + i))" --webhook-cert-dir "$capi_pki" \
    --health-addr "127.0.0.1:$((capi_port_base + 100 + i))" \
    --diagnostics-address "127.0.0.1:$((capi_port_base + 200 + i))" --insecure-diagnostics \
    --feature-gates "$gates"
}

capi_wait_ready() {
  local i="$1" name bin
  IFS='|' read -r name bin _ <<<"${providers[$i]}"
  wait_for "$bin" 120 curl -sf "http://127.0.0.1:$((capi_port_base + 100 + i))/readyz" ||
    { log "$bin is not ready:"; tail -20 "$STACK_DIR/$bin.log" >&2; return 1; }
}

# topoflow_start: the worker (which registers its webhook configurations) and the starter.
topoflow_start() {
  start worker "$BIN/worker" --webhook-addr "127.0.0.1:$WEBHOOK_PORT" --webhook-cert-dir "$STACK_DIR/webhook" \
    --webhook-self-signed --webhook-register-url "https://127.0.0.1:$WEBHOOK_PORT" --metrics-addr "127.0.0.1:$WORKER_METRICS_PORT"
  start starter "$BIN/starter" run --metrics-addr "127.0.0.1:$STARTER_METRICS_PORT"
  wait_for "the admission webhooks" 30 curl -sfk "https://127.0.0.1:$WEBHOOK_PORT/healthz" ||
    { log "the worker does not serve its webhooks:"; tail -20 "$STACK_DIR/worker.log" >&2; return 1; }
  local name
  for name in worker starter; do
    running "$name" || { log "$name exited:"; tail -20 "$STACK_DIR/$name.log" >&2; return 1; }
  done
}

# topoflow_stop: the starter and the worker stopped, and topoflow's webhook configurations
# removed: left registered with nobody serving them, they fail every Cluster write closed.
topoflow_stop() {
  stop_one starter
  stop_one worker
  kc delete --ignore-not-found mutatingwebhookconfiguration topoflow-mutating-webhook-configuration >/dev/null
  kc delete --ignore-not-found validatingwebhookconfiguration topoflow-validating-webhook-configuration >/dev/null
}
