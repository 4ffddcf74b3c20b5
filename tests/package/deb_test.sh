#!/bin/sh
# The Debian package, tested the way a user meets it: CPack builds it from this build tree,
# it is unpacked into a clean folder prefix (dpkg -x, no root install), and the unpacked
# pgslow runs from outside the source tree: it must find its own catalog and scenario library
# under <prefix>/share/pgslow and check a scenario of it against a live managed server.
# Usage: deb_test.sh BUILD_DIR
set -eu
build=$1
work=$(mktemp -d /tmp/pgslow-deb-XXXXXX)
chmod 755 "$work"  # as root the managed cluster runs as `postgres`, who must reach the workdir
pgslow=""
cleanup() {
  if [ -n "$pgslow" ] && [ -d "$work/wd" ]; then "$pgslow" --workdir "$work/wd" server destroy >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

cd "$build"
if ! cpack -G DEB -B "$work/pkg" >"$work/cpack.log" 2>&1; then cat "$work/cpack.log"; exit 1; fi
deb=$(ls "$work"/pkg/*.deb)
echo "built $(basename "$deb")"
dpkg-deb --field "$deb" Package Version Depends
dpkg-deb --field "$deb" Depends | grep -q libpq5
# What the tests link stays out of what the package depends on.
if dpkg-deb --field "$deb" Depends Recommends | grep -Ei 'gtest|gmock|benchmark|clang'; then
  echo "the package depends on a test-only package"; exit 1
fi

dpkg -x "$deb" "$work/root"
pgslow="$work/root/usr/bin/pgslow"
for f in usr/share/pgslow/knobs/io.yaml usr/share/pgslow/knobs/presets.yaml \
         usr/share/pgslow/scenarios/quick.yaml usr/share/doc/pgslow/server.md; do
  test -f "$work/root/$f" || { echo "missing from the package: /$f"; exit 1; }
done

cd /  # nowhere near the source tree
unset PGSLOW_HOME PGSLOW_PG_VERSION
# The version is the package's: both come from project(VERSION).
version=$("$pgslow" --version)
test "$version" = "pgslow $(dpkg-deb --field "$deb" Version)" || { echo "version: $version"; exit 1; }
"$pgslow" --workdir "$work/wd" check "$work/root/usr/share/pgslow/scenarios/quick.yaml"
# A scenario of the installed library by name, found as `run` finds it; a misspelt name gets
# the closest one.
"$pgslow" --workdir "$work/wd" check --offline quick | grep -q "usr/share/pgslow/scenarios/quick.yaml: scenario ok"
if "$pgslow" --workdir "$work/wd" check --offline quik >"$work/quik.log" 2>&1; then
  echo "check quik succeeded"; exit 1
fi
grep -q "did you mean 'quick'" "$work/quik.log" || { cat "$work/quik.log"; exit 1; }

# The catalog really is the installed one: without its io.yaml, io_method is unknown.
"$pgslow" knobs list | grep -q io_method
rm "$work/root/usr/share/pgslow/knobs/io.yaml"
if "$pgslow" knobs list | grep -q io_method; then
  echo "the installed pgslow read a catalog other than its own"; exit 1
fi
echo "the installed pgslow reads $work/root/usr/share/pgslow"
