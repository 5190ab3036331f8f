#!/usr/bin/env bash
# topoflow on v1beta2 storage: brings up a stack whose Cluster and ClusterClass CRDs serve v1beta1
# and v1beta2 and store v1beta2, as Cluster API v1.11+ does, converted by the worker's own webhook
# (TOPOFLOW_CRDS=v1beta2 deploy/stack/run.sh, the simulated providers and the sample class), and
# runs tests/v1beta2: a Cluster written as v1beta2 created, upgraded and deleted. Uses the "test"
# stack (purged first and afterwards; KEEP_STACK=1 keeps it).
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
go test -tags v1beta2 -count=1 -timeout 10m -v ./tests/v1beta2/... || status=$?
if [[ $status -ne 0 ]]; then
  echo "logs: $STACK_DIR (KEEP_STACK=1 keeps the stack)"
  tail -30 "$STACK_DIR/worker.log" || true
fi
exit $status
