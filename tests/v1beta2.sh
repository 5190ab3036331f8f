#!/usr/bin/env bash
# topoflow on v1beta2 storage: brings up a stack whose Cluster and ClusterClass CRDs serve v1beta1
# and v1beta2 and store v1beta2, as Cluster API v1.11+ does, converted by the worker's own webhook
# (TOPOFLOW_CRDS=v1beta2 deploy/stack/run.sh, the simulated providers and the sample class), and
# runs tests/v1beta2: a Cluster written as v1beta2 created, upgraded and deleted; a Cluster's
# v1beta2 status (conditions, replica counters, kubectl's printer columns); Rollouts (a class
# rebase, then a variable change with maintenance windows) over Clusters created as v1beta2;
# `kubectl apply --server-side` of partial v1beta1 Clusters. Uses the "test" stack (or
# $TOPOFLOW_STACK; purged first and afterwards; KEEP_STACK=1 keeps it).
set -euo pipefail
cd "$(dirname "$0")/.."
export TOPOFLOW_STACK="${TOPOFLOW_STACK:-test}" TOPOFLOW_CRDS=v1beta2
unset TOPOFLOW_STACK_DIR KUBECONFIG TEMPORAL_ADDRESS
source deploy/stack/lib.sh

cleanup() {
  if [[ "${KEEP_STACK:-}" != "1" ]]; then deploy/stack/down.sh --purge >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
deploy/stack/down.sh --purge >/dev/null 2>&1 || true
deploy/stack/run.sh
source "$STACK_DIR/env"
status=0
KUBECTL="$BIN/kubectl" go test -tags v1beta2 -count=1 -timeout 20m -v ./tests/v1beta2/... || status=$?
# The worker and the starter speak v1beta2 to this stack (v1beta1 is deprecated here, as in Cluster
# API v1.11+): no deprecation warning, and no field of what they read dropped.
for log in worker starter; do
  if grep -E "v1beta1 [A-Za-z]+ is deprecated|ignoring fields topoflow does not know" "$STACK_DIR/$log.log"; then
    echo "FAIL: the $log read or wrote cluster.x-k8s.io/v1beta1, or dropped fields it read (above)"; status=1
  fi
done
# `make up` again, straight away and after `make down`: the stack is kept, the CRDs re-applied,
# and both API versions of the sample Cluster still served (the conversion webhook as the worker
# registered it).
if [[ $status -eq 0 ]]; then
  for again in "straight away" "after make down"; do
    [[ "$again" == "after make down" ]] && deploy/stack/down.sh >/dev/null
    echo "== make up again, $again"
    if ! deploy/stack/run.sh >"$STACK_DIR/rerun.log" 2>&1; then
      echo "FAIL: deploy/stack/run.sh again, $again:"; tail -20 "$STACK_DIR/rerun.log"; status=1; break
    fi
    for v in v1beta1 v1beta2; do
      if ! "$BIN/kubectl" get "clusters.$v.cluster.x-k8s.io" demo -n default -o name >/dev/null; then
        echo "FAIL: the sample Cluster is not served as $v after make up again, $again"; status=1
      fi
    done
  done
fi
if [[ $status -ne 0 ]]; then
  echo "logs: $STACK_DIR (KEEP_STACK=1 keeps the stack)"
  tail -30 "$STACK_DIR/worker.log" || true
fi
exit $status
