#!/usr/bin/env bash
# Stops one component of the local stack, for outage drills: stop.sh temporal (or kube-apiserver,
# etcd, worker, starter, simprovider). Its state is kept; up.sh (or run.sh for topoflow's own
# processes) brings it back, and topoflow resumes where it stopped.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
case "${1:-}" in
  temporal|kube-apiserver|etcd|worker|starter|simprovider) stop_one "$1" ;;
  *) echo "usage: $0 temporal|kube-apiserver|etcd|worker|starter|simprovider" >&2; exit 2 ;;
esac
