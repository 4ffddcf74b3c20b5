#!/bin/sh
# pgslow apply command for an AWS RDS for PostgreSQL instance with its own (non-default) DB
# parameter group (docs/server.md). Reads pgslow's JSON on stdin, modifies the group's
# parameters (a null resets one to the engine default), waits until RDS has applied them, and
# reboots the instance when a parameter waits for it (pending-reboot).
#
#   --apply-command '/usr/share/pgslow/targets/rds-apply.sh PARAMETER_GROUP DB_INSTANCE'
#
# Needs the aws CLI (credentials the usual way) and jq. RDS takes memory and time parameters
# in the parameter's own unit (shared_buffers in 8kB pages): write those values so in the
# settings you apply (shared_buffers: "2048"), as `pgslow knobs show NAME` names the unit.
set -eu
group=$1
instance=$2

change=$(cat)
restart=$(printf '%s' "$change" | jq -r '.restart_needed')
method=immediate
[ "$restart" = true ] && method=pending-reboot

set_params=$(printf '%s' "$change" | jq -c --arg m "$method" '[.settings | to_entries[]
  | select(.value != null) | {ParameterName: .key, ParameterValue: .value, ApplyMethod: $m}]')
reset_params=$(printf '%s' "$change" | jq -c --arg m "$method" '[.settings | to_entries[]
  | select(.value == null) | {ParameterName: .key, ApplyMethod: $m}]')
if [ "$set_params" != "[]" ]; then
  aws rds modify-db-parameter-group --db-parameter-group-name "$group" --parameters "$set_params"
fi
if [ "$reset_params" != "[]" ]; then
  aws rds reset-db-parameter-group --db-parameter-group-name "$group" --parameters "$reset_params"
fi

status() {
  aws rds describe-db-instances --db-instance-identifier "$instance" \
    --query 'DBInstances[0].DBParameterGroups[0].ParameterApplyStatus' --output text
}
waited=0
while [ "$(status)" = applying ] && [ "$waited" -lt 600 ]; do
  sleep 5
  waited=$((waited + 5))
done
if [ "$(status)" = pending-reboot ]; then
  aws rds reboot-db-instance --db-instance-identifier "$instance" >/dev/null
  aws rds wait db-instance-available --db-instance-identifier "$instance"
fi
