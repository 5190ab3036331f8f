#!/usr/bin/env bash
# The real-providers profile test: topoflow beside Cluster API v1.14.2's own controllers (core,
# kubeadm bootstrap, KubeadmControlPlane, in-memory backend) on a stack of its own
# (deploy/capi/up.sh), a Cluster created, upgraded two minors and deleted, a fleet Rollout, and
# Clusters of Cluster API's own topology controller taken over and handed back (tests/realcapi).
# Prints the time taken and the peak memory of every process of the stack. KEEP_STACK=1 keeps
# the stack afterwards. The first run builds Cluster API's managers (~25 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/capi/env.sh

started=$SECONDS
cleanup() {
  [[ -n "${sampler:-}" ]] && kill "$sampler" 2>/dev/null
  if [[ "${KEEP_STACK:-}" != "1" ]]; then deploy/stack/down.sh --purge >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
deploy/stack/down.sh --purge >/dev/null 2>&1 || true
deploy/capi/up.sh
up_took=$((SECONDS - started))
source "$STACK_DIR/env"

# Peak RSS per process, sampled every 2 s while the test runs.
procs=("${CAPI_STACK_PROCS[@]}")
peaks="$STACK_DIR/rss-peaks"
: >"$peaks"
(
  declare -A peak
  while true; do
    for p in "${procs[@]}"; do
      pid="$(cat "$STACK_DIR/$p.pid" 2>/dev/null || true)"
      kb="$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)"
      if (( kb > ${peak[$p]:-0} )); then peak[$p]=$kb; fi
    done
    { for p in "${procs[@]}"; do echo "$p ${peak[$p]:-0}"; done; } >"$peaks.tmp" && mv "$peaks.tmp" "$peaks"
    sleep 2
  done
) &
sampler=$!

test_started=$SECONDS
status=0
go test -tags realcapi -count=1 -timeout 30m -v ./tests/realcapi/... || status=$?
test_took=$((SECONDS - test_started))
# Beside Cluster API v1.14 topoflow reads and writes the cluster.x-k8s.io kinds it models as
# v1beta2 (v1beta1 is deprecated there): no deprecation warning for them and no field of theirs
# dropped in the worker's or starter's log (of their last start: the takeover test restarts them).
# Not yet covered: provider templates read in the version the ClusterClass names, and
# ExtensionConfigs (runtime.cluster.x-k8s.io/v1alpha1).
kinds="Cluster|ClusterClass|MachineDeployment|MachinePool|MachineHealthCheck|MachineSet|Machine"
for log in worker starter; do
  if grep -E "cluster\.x-k8s\.io/v1beta1 ($kinds) is deprecated|ignoring fields topoflow does not know.* object=\"($kinds) " "$STACK_DIR/$log.log"; then
    echo "FAIL: the $log read or wrote cluster.x-k8s.io/v1beta1, or dropped fields it read (above)"; status=1
  fi
done

echo
echo "real-providers profile: stack up in ${up_took}s, test ${test_took}s (exit $status)"
echo "peak RSS (MiB):"
total=0
while read -r p kb; do
  printf '  %-28s %6d\n' "$p" $((kb / 1024))
  total=$((total + kb))
done <"$peaks"
printf '  %-28s %6d\n' "all" $((total / 1024))
if [[ $status -ne 0 ]]; then
  echo "logs: $STACK_DIR (kept: KEEP_STACK=1 to look at a running stack)"
fi
exit $status
