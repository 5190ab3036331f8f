#!/usr/bin/env bash
# The same fleet create beside real Cluster API v1.14.2, run twice on the real-providers stack
# (deploy/capi/up.sh): once with Cluster API's own topology controller (CAPI_TOPOLOGY=clusterapi),
# once with topoflow (core's ClusterTopology and RuntimeSDK gates off). Each run starts from a
# purged stack, applies the in-memory ClusterClass, creates N Clusters of it at once and waits
# until every one of their MachineDeployments has all its replicas available. It prints, per run,
# the time that took and the CPU seconds every process of the stack used meanwhile, then the
# whole stack's CPU and time of topoflow against Cluster API's.
#
#   tests/capicompare.sh            10 Clusters
#   tests/capicompare.sh 20         20 Clusters
#   MODES=topoflow KEEP_STACK=1 tests/capicompare.sh   one side only, its stack kept to look at
#
# Measured from the create to the last worker available; the stack's start-up is not counted.
# The first run builds Cluster API's managers (~25 minutes on 2 cores; cached afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/capi/env.sh
clusters="${1:-10}"
[[ "$clusters" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [CLUSTERS] (a positive number, not \"$clusters\")" >&2; exit 2; }
timeout_s="${CAPICOMPARE_TIMEOUT:-900}"
procs=("${CAPI_STACK_PROCS[@]}")
tick="$(getconf CLK_TCK)"
out="$(mktemp -d)"
read -r -a modes <<<"${MODES:-clusterapi topoflow}"
for mode in "${modes[@]}"; do
  case "$mode" in clusterapi | topoflow) ;; *) echo "MODES: clusterapi and/or topoflow, not \"$mode\"" >&2; exit 2 ;; esac
done
cleanup() {
  if [[ "${KEEP_STACK:-}" != "1" ]]; then deploy/stack/down.sh --purge >/dev/null 2>&1 || true; fi
  rm -rf "$out"
}
trap cleanup EXIT

# cpu_ticks PID: user and system time of PID and its descendants, in clock ticks.
cpu_ticks() {
  local pid="$1" sum=0 child
  if [[ -r "/proc/$pid/stat" ]]; then
    # Fields 14 and 15 after the command name (which ends with ")").
    sum="$(sed 's/^.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')"
  fi
  for child in $(ps -o pid= --ppid "$pid" 2>/dev/null); do
    sum=$((sum + $(cpu_ticks "$child")))
  done
  echo "$sum"
}

# snapshot FILE: every process's ticks, one "name ticks" line each (0 when not running).
snapshot() {
  local p pid
  for p in "${procs[@]}"; do
    pid="$(cat "$STACK_DIR/$p.pid" 2>/dev/null || true)"
    if [[ -n "$pid" ]]; then echo "$p $(cpu_ticks "$pid")"; else echo "$p 0"; fi
  done >"$1"
}

# available NS: how many MachineDeployments in NS have every replica available and ready.
available() {
  kc get machinedeployments.v1beta2.cluster.x-k8s.io -n "$1" \
    -o jsonpath='{range .items[*]}{.spec.replicas} {.status.availableReplicas} {.status.readyReplicas}{"\n"}{end}' |
    awk '$1 != "" && $2 + 0 >= $1 && $3 + 0 >= $1 {n++} END {print n + 0}'
}

# elapsed START: seconds since START (date +%s.%N).
elapsed() { awk -v s="$1" -v n="$(date +%s.%N)" 'BEGIN {printf "%.1f", n - s}'; }

run() {
  local mode="$1" ns="compare" i start took
  deploy/stack/down.sh --purge >/dev/null 2>&1 || true
  CAPI_TOPOLOGY="$mode" deploy/capi/up.sh >"$out/$mode.up.log" 2>&1 ||
    { tail -30 "$out/$mode.up.log" >&2; return 1; }
  kc create namespace "$ns" >/dev/null
  kc apply -n "$ns" -f deploy/capi/samples/clusterclass.yaml >/dev/null 2>&1
  for i in $(seq -w 1 "$clusters"); do
    sed -e "s/^  name: mem$/  name: cmp-$i/" -e "s/^  namespace: default$/  namespace: $ns/" deploy/capi/samples/cluster.yaml
    echo "---"
  done >"$out/clusters.yaml"
  # The class settled (its status written for its generation) before the clock starts.
  kc wait -n "$ns" clusterclasses --all --for=jsonpath='{.status.observedGeneration}'=1 --timeout=120s >/dev/null
  snapshot "$out/$mode.cpu0"
  start=$(date +%s.%N)
  kc apply -f "$out/clusters.yaml" >/dev/null 2>&1
  local n=0
  while ((n < clusters)); do
    if (($(date +%s) - ${start%.*} > timeout_s)); then
      echo "$mode: $n of $clusters Clusters' workers available after ${timeout_s}s" >&2
      return 1
    fi
    sleep 1
    n="$(available "$ns")"
  done
  took="$(elapsed "$start")"
  snapshot "$out/$mode.cpu1"
  echo "$took" >"$out/$mode.took"
}

report() {
  local mode="$1" p a b total=0
  printf '%s: %d Clusters, workers available after %.1fs\n' "$mode" "$clusters" "$(cat "$out/$mode.took")"
  while read -r p b; do
    a="$(awk -v p="$p" '$1 == p {print $2}' "$out/$mode.cpu0")"
    if ((b - a > 0)); then awk -v p="$p" -v d=$((b - a)) -v t="$tick" 'BEGIN {printf "  %-28s %7.1fs\n", p, d / t}'; fi
    total=$((total + b - a))
  done <"$out/$mode.cpu1"
  awk -v d="$total" -v t="$tick" 'BEGIN {printf "  %-28s %7.1fs\n", "whole stack", d / t}'
  echo "$total" >"$out/$mode.total"
}

for mode in "${modes[@]}"; do
  log "fleet create of $clusters Clusters, the topology run by $mode"
  run "$mode"
done
echo
echo "capicompare, $(date -u +%F), $clusters Clusters of the in-memory class, Cluster API $CAPI_VERSION"
for mode in "${modes[@]}"; do report "$mode"; done
if ((${#modes[@]} == 2)); then
  awk -v c="$(cat "$out/clusterapi.total")" -v t="$(cat "$out/topoflow.total")" \
    -v ct="$(cat "$out/clusterapi.took")" -v tt="$(cat "$out/topoflow.took")" \
    'BEGIN { printf "topoflow against Cluster API: CPU %+.0f%%, workers available %+.0f%%\n", (t / c - 1) * 100, (tt / ct - 1) * 100 }'
fi
