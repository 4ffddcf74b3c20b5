#!/bin/sh
# A pgslow `apply:` command for a local PostgreSQL server (docs/server.md): it reads the
# settings pgslow sends as JSON on standard input, writes them into an include file of
# postgresql.conf (`include_if_exists = 'pgslow-include.conf'`), then reloads the server with
# pg_ctl, or restarts it when pgslow says a restart is needed. A null value removes the entry.
# The integration test drives a real server only through this script.
#
#   include_file_apply.sh DATA_DIR PG_BIN LOG_FILE
#
# As root, pg_ctl runs as the data directory's owner (PostgreSQL refuses root), and the include
# file is given to that owner.
set -eu
data_dir=$1
pg_bin=$2
log_file=$3
include="$data_dir/pgslow-include.conf"

action=$(python3 -c '
import json, os, sys
path, data_dir = sys.argv[1], sys.argv[2]
change = json.load(sys.stdin)
settings = {k.lower(): v for k, v in change["settings"].items()}
for name, value in settings.items():
    if value is not None and ("\n" in value or "\r" in value):
        sys.exit("refusing a value with a line break for " + name)

def entry_name(line):
    s = line.strip()
    if not s or s.startswith("#") or "=" not in s:
        return None
    return s.split("=", 1)[0].strip().lower()

def entry(name, value):
    return "%s = '\''%s'\''" % (name, value.replace("'\''", "'\'''\''"))

try:
    with open(path) as f:
        lines = f.read().splitlines()
except FileNotFoundError:
    lines = []
out, seen = [], set()
for line in lines:
    name = entry_name(line)
    if name in settings:
        seen.add(name)
        if settings[name] is not None:
            out.append(entry(name, settings[name]))
    else:
        out.append(line)
for name, value in settings.items():
    if name not in seen and value is not None:
        out.append(entry(name, value))
tmp = path + ".tmp"
with open(tmp, "w") as f:
    f.write("".join(l + "\n" for l in out))
st = os.stat(data_dir)
if os.geteuid() == 0:
    os.chown(tmp, st.st_uid, st.st_gid)
os.replace(tmp, path)
print("wrote %d setting(s) to %s" % (len(settings), path), file=sys.stderr)
print("restart" if change.get("restart_needed") else "reload")
' "$include" "$data_dir")

owner=$(stat -c %U "$data_dir")
as_owner() {
  if [ "$(id -u)" = 0 ] && [ "$owner" != root ]; then
    runuser -u "$owner" -- "$@"
  else
    "$@"
  fi
}

if [ "$action" = restart ]; then
  # restart also starts a server that is down; -w waits until it accepts connections.
  as_owner "$pg_bin/pg_ctl" restart -D "$data_dir" -l "$log_file" -m fast -w -t 60
else
  as_owner "$pg_bin/pg_ctl" reload -D "$data_dir"
fi
