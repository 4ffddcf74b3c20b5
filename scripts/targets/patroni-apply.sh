#!/bin/sh
# pgslow apply command for a Patroni cluster (docs/server.md). Reads pgslow's JSON on stdin,
# writes .settings into the DCS (postgresql.parameters; a null removes the parameter), reloads
# every member, and restarts the members that wait for a restart when pgslow says one is
# needed.
#
#   --apply-command '/usr/share/pgslow/targets/patroni-apply.sh CLUSTER'
#
# Needs patronictl (configured by PATRONICTL_CONFIG_FILE or /etc/patroni.yml) and jq.
set -eu
cluster=$1

change=$(cat)
restart=$(printf '%s' "$change" | jq -r '.restart_needed')
# patronictl reads YAML, and JSON is YAML.
printf '%s' "$change" | jq -c '{postgresql: {parameters: .settings}}' |
  patronictl edit-config "$cluster" --apply - --force
patronictl reload "$cluster" --force
if [ "$restart" = true ]; then
  patronictl restart "$cluster" --pending --force
fi
