#!/bin/sh
# The hook for the Makefile and CI: installs the PostgreSQL majors the version matrix tests
# (default 16 17 18) with `pgslow server install`, idempotently (a major already there is left
# alone without asking the registry). Each gets the newest release pinned in
# runner/server/pg_packages.cpp, with no override (docs/versions.md, "Pinned releases").
# Usage: scripts/install-pg-versions.sh [PGSLOW] [MAJOR...]
set -eu
pgslow=${1:-build/pgslow}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- 16 17 18
exec "$pgslow" server install "$@"
