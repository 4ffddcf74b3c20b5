#!/bin/sh
# scripts/install-deps.sh's two sets, on a machine that has none of the packages (a dpkg-query
# that finds nothing): `run` (make run) would install only what building and running pgslow
# needs, none of the tests' packages; `test` (make test) would install those too.
# Usage: deps_sets_test.sh SOURCE_DIR
set -eu
deps="$1/scripts/install-deps.sh"
work=$(mktemp -d /tmp/pgslow-deps-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
printf '#!/bin/sh\nexit 1\n' >"$work/bin/dpkg-query"
chmod 755 "$work/bin/dpkg-query"

PATH="$work/bin:$PATH" "$deps" --dry-run run >"$work/run"
PATH="$work/bin:$PATH" "$deps" --dry-run test >"$work/test"
"$deps" --list run >"$work/run-list"
# On an empty machine the dry run is the whole set, and one of them is the server.
cmp "$work/run" "$work/run-list" || { echo "--dry-run run differs from --list run"; exit 1; }
grep -qx postgresql-15 "$work/run" || { echo "run does not install postgresql-15"; exit 1; }
# The managed pooler (docs/pooler.md) runs Debian's PgBouncer, in run and so in test.
grep -qx pgbouncer "$work/run" || { echo "run does not install pgbouncer"; exit 1; }
for p in libgtest-dev libgmock-dev libbenchmark-dev clang-format universal-ctags clang-14 libclang-rt-14-dev \
         chromium xfsprogs btrfs-progs podman runc debootstrap catatonit yq npm; do
  if grep -qx "$p" "$work/run"; then echo "make run would install $p, a test-only package"; exit 1; fi
  # npm is looked for as a command, which this machine may have.
  if [ "$p" != npm ] && ! grep -qx "$p" "$work/test"; then
    echo "make test would not install $p"; exit 1
  fi
done
# Everything `run` installs, `test` installs too.
if grep -vxF -f "$work/test" "$work/run"; then echo "^ in run but not in test"; exit 1; fi
echo "run: $(wc -l <"$work/run") packages, test: $(wc -l <"$work/test")"
