#!/usr/bin/env bash
# Brings up the local stack of real parts: etcd, kube-apiserver and the Temporal dev server.
# Installs what is missing (etcd from Debian, kube-apiserver/kubectl built from the Go module
# proxy, the temporal CLI with go install), writes a kubeconfig and installs the CRDs.
# Idempotent: a second run reuses whatever is already running.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
mkdir -p "$STACK_DIR"
warn_ephemeral "$ETCD_PORT" "$ETCD_PEER_PORT" "$APISERVER_PORT" "$TEMPORAL_PORT" "$TEMPORAL_UI_PORT" "$WEBHOOK_PORT" "$WORKER_METRICS_PORT" "$STARTER_METRICS_PORT"

# --- install ---------------------------------------------------------------
if ! command -v etcd >/dev/null; then
  log "installing etcd (Debian package etcd-server)"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null
fi
for tool in openssl curl; do
  command -v "$tool" >/dev/null || { as_root apt-get update -qq; as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$tool" >/dev/null; }
done
"$root/deploy/stack/build-k8s.sh"
TEMPORAL_CLI_VERSION=v1.5.1
if ! cached_tool temporal "$TEMPORAL_CLI_VERSION"; then
  log "installing temporal CLI $TEMPORAL_CLI_VERSION (go install; a few minutes the first time)"
  GOBIN="$TOOLS_CACHE/temporal/$TEMPORAL_CLI_VERSION" go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"
  cached_tool temporal "$TEMPORAL_CLI_VERSION"
fi

# --- etcd ------------------------------------------------------------------
etcd_healthy() { curl -fsS "http://127.0.0.1:$ETCD_PORT/health" | grep -q '"health":"true"'; }
if running etcd && etcd_healthy; then
  log "etcd already running on :$ETCD_PORT"
else
  stop_one etcd
  log "starting etcd on :$ETCD_PORT"
  start etcd etcd --name topoflow --data-dir "$STACK_DIR/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "topoflow=http://127.0.0.1:$ETCD_PEER_PORT" --quota-backend-bytes 4294967296
  wait_for etcd 30 etcd_healthy || { tail -20 "$STACK_DIR/etcd.log" >&2; exit 1; }
fi

# --- kube-apiserver ----------------------------------------------------------
pki="$STACK_DIR/pki"
mkdir -p "$pki"
if [[ ! -f "$pki/sa.key" ]]; then
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
fi
if [[ ! -f "$STACK_DIR/token" ]]; then
  head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$STACK_DIR/token"
  chmod 600 "$STACK_DIR/token"
fi
token="$(cat "$STACK_DIR/token")"
# Static token for the admin user; system:masters bypasses RBAC.
printf '%s,topoflow-admin,topoflow-admin,"system:masters"\n' "$token" >"$STACK_DIR/tokens.csv"
chmod 600 "$STACK_DIR/tokens.csv"

apiserver_ready() { curl -fsS -k -H "Authorization: Bearer $token" "https://127.0.0.1:$APISERVER_PORT/readyz" | grep -q ok; }
if running kube-apiserver && apiserver_ready; then
  log "kube-apiserver already running on :$APISERVER_PORT"
else
  stop_one kube-apiserver
  log "starting kube-apiserver on :$APISERVER_PORT"
  start kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$APISERVER_PORT" \
    --cert-dir "$pki" --token-auth-file "$STACK_DIR/tokens.csv" \
    --authorization-mode RBAC --allow-privileged=true \
    --service-account-issuer https://kubernetes.default.svc \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --service-cluster-ip-range 10.96.0.0/16 \
    --disable-admission-plugins ServiceAccount
  wait_for kube-apiserver 90 apiserver_ready || { tail -30 "$STACK_DIR/kube-apiserver.log" >&2; exit 1; }
fi

# The self-signed serving certificate the API server wrote into --cert-dir carries its CA.
cat >"$KUBECONFIG_FILE" <<KCFG
apiVersion: v1
kind: Config
clusters:
- name: topoflow-$STACK
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $pki/apiserver.crt
users:
- name: topoflow-admin
  user:
    token: $token
contexts:
- name: topoflow-$STACK
  context:
    cluster: topoflow-$STACK
    user: topoflow-admin
current-context: topoflow-$STACK
KCFG
chmod 600 "$KUBECONFIG_FILE"

# --- Temporal ------------------------------------------------------------------
temporal_ready() { "$BIN/temporal" operator cluster health --address "$TEMPORAL_ADDRESS" | grep -q SERVING; }
if running temporal && temporal_ready; then
  log "Temporal already running on $TEMPORAL_ADDRESS"
else
  stop_one temporal
  log "starting Temporal dev server on $TEMPORAL_ADDRESS (UI :$TEMPORAL_UI_PORT)"
  sa_flags=()
  for sa in "${SEARCH_ATTRIBUTES[@]}"; do sa_flags+=(--search-attribute "$sa=Keyword"); done
  # The dev server keeps its state in one SQLite file over a single connection, so every
  # persistence write waits for the one before it: in SQLite's default rollback-journal mode each
  # commit syncs the journal and the database, and a fleet's workflows queue behind that. A
  # write-ahead log synced at checkpoints (synchronous=normal) commits with one append and still
  # survives a crash of the Temporal process (the fault soak kills it); only a crash of the
  # machine itself may lose the last commits. Fleet bench: a 100-Cluster create's objects out in
  # about half the time.
  start temporal "$BIN/temporal" server start-dev \
    --ip 127.0.0.1 --port "$TEMPORAL_PORT" --ui-port "$TEMPORAL_UI_PORT" \
    --db-filename "$STACK_DIR/temporal.db" --sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal \
    --log-level warn "${sa_flags[@]}"
  wait_for Temporal 90 temporal_ready || { tail -30 "$STACK_DIR/temporal.log" >&2; exit 1; }
fi

# --- CRDs -----------------------------------------------------------------------
kc() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" "$@"; }
# The real-providers profile installs Cluster API's own CRDs instead (deploy/capi/up.sh).
# TOPOFLOW_CRDS: topoflow (its CRDs, v1beta1), v1beta2 (Cluster and ClusterClass also served as
# v1beta2 and stored so, converted by the worker's webhook: reads wait for a worker started with
# --webhook-register-url), capi (none: deploy/capi/up.sh installs Cluster API's).
case "${TOPOFLOW_CRDS:-topoflow}" in
  topoflow) crds="$root/deploy/crds" ;;
  v1beta2) crds="$root/deploy/crds-v1beta2" ;;
  capi) crds="" ;;
  *) log "TOPOFLOW_CRDS=${TOPOFLOW_CRDS}: want topoflow, v1beta2 or capi"; exit 1 ;;
esac
# The conversion webhook of the v1beta2 CRDs points at a Service in a cluster; the local stack's
# worker serves it on 127.0.0.1 instead and registers its CA (--webhook-register-url). The CRDs are
# installed with that URL already, so that a rerun's apply does not put the Service back beside
# the URL the worker registered (the API server refuses a clientConfig with both).
local_webhook() {
  awk -v url="https://127.0.0.1:$WEBHOOK_PORT/convert" '
    skip { match($0, /^ */); if (RLENGTH > ind) next; skip = 0 }
    incc && /^ *service:$/ { match($0, /^ */); ind = RLENGTH; print substr($0, 1, ind) "url: " url; skip = 1; incc = 0; next }
    { incc = ($0 ~ /^ *clientConfig:$/); print }'
}
if [[ -n "$crds" ]]; then
  log "installing CRDs ($(basename "$crds"))"
  kc kustomize "$crds" | local_webhook | kc apply --server-side --force-conflicts -f - >/dev/null
  kc apply --server-side --force-conflicts -f "$root/deploy/crds/sim" >/dev/null
  kc wait --for condition=Established --timeout 60s crd --all >/dev/null
fi

cat >"$STACK_DIR/env" <<ENV
export KUBECONFIG=$KUBECONFIG_FILE
export TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS
export TOPOFLOW_STACK=$STACK
export TOPOFLOW_STACK_DIR=$STACK_DIR
ENV
log "stack is up: KUBECONFIG=$KUBECONFIG_FILE TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS UI=http://127.0.0.1:$TEMPORAL_UI_PORT"
