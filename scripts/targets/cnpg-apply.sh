#!/bin/sh
# pgslow apply command for a CloudNativePG cluster (docs/server.md). Reads pgslow's JSON on
# stdin, merges .settings into the Cluster's .spec.postgresql.parameters (a null removes the
# parameter: JSON merge patch), then waits until the operator has rolled the change out.
#
#   --apply-command '/usr/share/pgslow/targets/cnpg-apply.sh CLUSTER NAMESPACE'
#
# Needs kubectl and jq, and RBAC to get, patch and watch clusters.postgresql.cnpg.io.
set -eu
cluster=$1
namespace=${2:-default}
timeout=${PGSLOW_CNPG_TIMEOUT:-900s}

change=$(cat)
# CloudNativePG takes every parameter value as a string.
patch=$(printf '%s' "$change" | jq -c '{spec: {postgresql: {parameters:
  (.settings | with_entries(.value |= (if . == null then null else tostring end)))}}}')
restart=$(printf '%s' "$change" | jq -r '.restart_needed')

k() { kubectl -n "$namespace" "$@"; }
# The operator's webhook refuses fixed parameters (e.g. wal_level, archive_mode) here, with
# its reason on stderr: pgslow shows it.
k patch cluster "$cluster" --type merge -p "$patch"

if [ "$restart" = true ]; then
  # A postmaster parameter: the operator restarts the replicas, then the primary (switchover
  # or in-place restart, per .spec.primaryUpdateMethod). Wait until it has begun ...
  waited=0
  while [ "$(k get cluster "$cluster" -o jsonpath='{.status.phase}')" = "Cluster in healthy state" ] &&
        [ "$waited" -lt 60 ]; do
    sleep 2
    waited=$((waited + 2))
  done
fi
# ... and until the cluster is ready again (`kubectl cnpg status CLUSTER` shows the same).
k wait cluster "$cluster" --for=condition=Ready --timeout="$timeout"
