# Shared settings and helpers for the local stack scripts. Sourced, not run.
# Every port and directory can be moved with an environment variable, so a test stack
# (TOPOFLOW_STACK=test) runs beside a dev stack without sharing anything.

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STACK="${TOPOFLOW_STACK:-dev}"
case "$STACK" in
  test) _off=10000 ;;
  soak) _off=20000 ;;
  # Every stack's ports stay below 32768: above it Linux hands out ephemeral ports
  # (ip_local_port_range, 32768-60999 by default), so any outgoing connection can hold one and
  # a listener started later fails at random with "address already in use".
  bench) _off=15000 ;;
  # The real-providers profile (deploy/capi/up.sh): Cluster API's in-memory backend takes ports
  # 19000 and 20000-30000, so this stack stays below them (its managers add 9444-9647 + 5000).
  capi) _off=5000 ;;
  *) _off=0 ;;
esac
STACK_DIR="${TOPOFLOW_STACK_DIR:-$root/.stack/$STACK}"
ETCD_PORT="${TOPOFLOW_ETCD_PORT:-$((12379 + _off))}"
ETCD_PEER_PORT="${TOPOFLOW_ETCD_PEER_PORT:-$((12380 + _off))}"
APISERVER_PORT="${TOPOFLOW_APISERVER_PORT:-$((6443 + _off))}"
TEMPORAL_PORT="${TOPOFLOW_TEMPORAL_PORT:-$((7233 + _off))}"
TEMPORAL_UI_PORT="${TOPOFLOW_TEMPORAL_UI_PORT:-$((8233 + _off))}"
# topoflow's admission webhooks (served by the worker, registered by run.sh).
WEBHOOK_PORT="${TOPOFLOW_WEBHOOK_PORT:-$((9443 + _off))}"
# Metrics and health endpoints of the worker and the starter.
WORKER_METRICS_PORT="${TOPOFLOW_WORKER_METRICS_PORT:-$((9090 + _off))}"
STARTER_METRICS_PORT="${TOPOFLOW_STARTER_METRICS_PORT:-$((9091 + _off))}"
KUBECONFIG_FILE="$STACK_DIR/kubeconfig"
TEMPORAL_ADDRESS="127.0.0.1:$TEMPORAL_PORT"
BIN="$root/bin"
# Big tools (kube-apiserver, kubectl, temporal, controller-gen) are built once per machine into a
# cache outside the clone, one folder per tool and version, and linked into bin/: a fresh clone
# (CI's) reuses them instead of rebuilding for minutes.
TOOLS_CACHE="${TOPOFLOW_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/topoflow/tools}"

# cached_tool NAME VERSION: true (and NAME linked into bin/) when the cache holds NAME at VERSION.
cached_tool() {
  local exe="$TOOLS_CACHE/$1/$2/$1"
  [[ -x "$exe" ]] || return 1
  mkdir -p "$BIN"
  ln -sfn "$exe" "$BIN/$1"
  echo "$2" >"$BIN/$1.version"
}

# Search attributes topoflow keeps current on every Cluster workflow (all Keyword).
SEARCH_ATTRIBUTES=(TopoflowClusterNamespace TopoflowClusterName TopoflowClass TopoflowTargetVersion TopoflowPhase)

# warn_ephemeral PORT...: warns about every PORT in the kernel's ephemeral range (see _off above),
# for ports moved there with a TOPOFLOW_*_PORT variable.
warn_ephemeral() {
  local lo hi p
  read -r lo hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || return 0
  for p in "$@"; do
    if ((p >= lo && p <= hi)); then
      log "warning: port $p is in the ephemeral range $lo-$hi; a listener there can fail at random with \"address already in use\""
    fi
  done
}

log() { printf '[stack:%s] %s\n' "$STACK" "$*" >&2; }

as_root() {
  if [[ "$(id -u)" == 0 ]]; then "$@"; else sudo "$@"; fi
}

# running NAME: true when the process in NAME.pid is alive.
running() {
  local pidfile="$STACK_DIR/$1.pid"
  [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

# start NAME CMD...: runs CMD in its own session, logging to NAME.log, pid in NAME.pid.
start() {
  local name="$1"; shift
  setsid nohup "$@" >"$STACK_DIR/$name.log" 2>&1 < /dev/null &
  echo $! >"$STACK_DIR/$name.pid"
}

# wait_for WHAT SECONDS CMD...: retries CMD until it succeeds or SECONDS pass.
wait_for() {
  local what="$1" secs="$2"; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      log "timed out after ${secs}s waiting for $what"
      return 1
    fi
    sleep 0.5
  done
}

stop_one() {
  local name="$1" pidfile="$STACK_DIR/$1.pid"
  [[ -f "$pidfile" ]] || return 0
  local pid; pid="$(cat "$pidfile")"
  if kill -0 "$pid" 2>/dev/null; then
    log "stopping $name (pid $pid)"
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}
