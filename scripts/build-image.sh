#!/usr/bin/env bash
# Builds pgslow's image from the Dockerfile and smoke-tests it (`make image`; docs/server.md,
# "The image"). Needs nothing but the Debian archive this machine's apt uses:
#   1. the base: `debootstrap --variant=minbase bookworm` from the configured apt mirror (read
#      from apt's own configuration, `apt-cache policy`), with bookworm-updates and the security
#      suite in its sources.list, apt's cache and lists dropped; kept as a tar in the cache
#      folder and reused for a week; imported with `podman import` as localhost/debian-base:bookworm
#      and tagged as the names the Dockerfile's FROM lines use (debian:bookworm,
#      debian:bookworm-slim), so they resolve locally. With --base registry the FROM lines pull
#      from the registry as usual instead (a machine that reaches one);
#   2. the image, built with podman (the OCI runtime that works here: scripts/podman-env.sh),
#      tagged IMAGE:src-<hash of the sources> and IMAGE:latest. A tree whose sources give the
#      same hash reuses the image;
#   3. the smoke test: `pgslow --help`, then a one-stage scenario of a few seconds
#      (scripts/image-smoke.yaml) on the managed cluster inside the container, run as root so
#      the server runs as `postgres`. Once per image.
# Usage: scripts/build-image.sh [--tag IMAGE] [--base debootstrap|registry] [--no-smoke] [--refresh-base]
# Environment: PGSLOW_IMAGE_CACHE (default /var/cache/pgslow/image), PGSLOW_BUILD_LOCK (a file:
# the podman build runs under `flock` on it, beside other compiles), KUBECTL_VERSION (default
# none: the image then has no kubectl; a version such as v1.31.2 fetches it from dl.k8s.io).
# Prints the image's name on its last line.
set -euo pipefail

die() { echo "pgslow: build-image.sh: $*" >&2; exit 1; }
say() { echo "pgslow: $*" >&2; }

src=$(cd "$(dirname "$0")/.." && pwd)
tag=localhost/pgslow
base=debootstrap
smoke=1
refresh_base=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --tag) tag=${2:?--tag needs a name}; shift 2 ;;
    --base) base=${2:?--base needs debootstrap or registry}; shift 2 ;;
    --no-smoke) smoke=0; shift ;;
    --refresh-base) refresh_base=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
case $base in debootstrap | registry) ;; *) die "--base is debootstrap or registry, not '$base'" ;; esac
suite=bookworm
command -v podman >/dev/null || die "podman is missing: apt-get install podman runc debootstrap (or scripts/install-deps.sh image)"
[[ $base == registry ]] || [[ $(id -u) -eq 0 ]] ||
  die "debootstrap makes the base as root: run as root, or give --base registry to pull the FROM images"

# The cache: root's, and writable by nobody else at any level (root runs what is imported from it).
cache=${PGSLOW_IMAGE_CACHE:-/var/cache/pgslow/image}
[[ $cache == /* ]] || die "PGSLOW_IMAGE_CACHE must be an absolute path, not '$cache'"
(umask 022 && mkdir -p "$cache")
dir=$cache
while :; do
  read -r owner mode < <(stat -c '%u %a' "$dir")
  if [[ $owner -ne 0 && $owner -ne $(id -u) ]] || (( (8#$mode & 8#022) != 0 && (8#$mode & 8#1000) == 0 )); then
    die "$dir (owner uid $owner, mode $mode) may be written by another user: use a folder only you can write (chmod go-w, or PGSLOW_IMAGE_CACHE=DIR)"
  fi
  [[ $dir == / ]] && break
  dir=$(dirname "$dir")
done

# The mirror apt uses for a suite's main component, from apt's own view of its sources (one-line
# or deb822 files alike): "500 http://deb.debian.org/debian bookworm/main amd64 Packages".
apt_mirror() {
  apt-cache policy 2>/dev/null | awk -v want="$1/main" '$3 == want && $2 ~ /:\/\// {print $2; exit}'
}

started=$SECONDS
base_tar="$cache/debian-$suite-minbase.tar"
if [[ $base == debootstrap ]]; then
  command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install debootstrap (or --base registry)"
  if [[ $refresh_base == 1 || ! -s $base_tar ]] || [[ -n $(find "$base_tar" -mtime +7) ]]; then
    mirror=$(apt_mirror "$suite")
    [[ -n $mirror ]] || die "apt has no source for $suite/main (or its lists are missing): add one to /etc/apt/sources.list.d and run apt-get update"
    security=$(apt_mirror "$suite-security")
    rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
    trap 'rm -rf "$rootfs" "$base_tar.tmp"' EXIT
    say "debootstrap --variant=minbase $suite from $mirror (the base, cached in $cache)"
    if ! debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1; then
      tail -n 20 "$cache/debootstrap.log" >&2
      die "debootstrap failed (log: $cache/debootstrap.log)"
    fi
    {
      echo "deb $mirror $suite main"
      echo "deb $mirror $suite-updates main"
      if [[ -n $security ]]; then echo "deb $security $suite-security main"; fi
    } >"$rootfs/etc/apt/sources.list"
    [[ -n $security ]] || say "warning: apt has no source for $suite-security: the base's sources.list has none"
    chroot "$rootfs" apt-get clean
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin
    tar -C "$rootfs" --numeric-owner -cf "$base_tar.tmp" .
    mv -f "$base_tar.tmp" "$base_tar"
    rm -rf "$rootfs"
    trap - EXIT
    say "base made in $((SECONDS - started)) s: $(du -m "$base_tar" | cut -f1) MB"
  fi
  base_id=$(stat -c '%Y-%s' "$base_tar")
  have=$(podman image inspect --format '{{index .Config.Labels "org.pgslow.base"}}' localhost/debian-base:$suite 2>/dev/null || true)
  if [[ $have != "$base_id" ]]; then
    say "importing the base as localhost/debian-base:$suite"
    podman import --quiet --change "LABEL org.pgslow.base=$base_id" --change 'CMD ["/bin/bash"]' \
      "$base_tar" localhost/debian-base:$suite >/dev/null
  fi
  # The Dockerfile's FROM names, resolved locally (podman and docker look in local storage first).
  while read -r name; do
    podman tag localhost/debian-base:$suite "docker.io/library/$name"
  done < <(sed -n 's/^FROM \([^ ]*\).*/\1/p' "$src/Dockerfile" | sort -u)
  probe=localhost/debian-base:$suite
else
  probe=docker.io/library/debian:$suite-slim
  podman pull -q "$probe" >/dev/null
fi

# shellcheck source=scripts/podman-env.sh
. "$src/scripts/podman-env.sh"
pgslow_podman_env "$cache" "$probe"

# What the image is built from: every file of the build context (the tree without what
# .dockerignore leaves out, and without what git ignores).
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  list() { git -C "$src" ls-files -z --cached --others --exclude-standard | sort -zu; }
else
  list() { (cd "$src" && find . -type f ! -path './.git/*' ! -path './build*' ! -path './.pgslow/*' ! -path './results/*' -printf '%P\0' | sort -z); }
fi
# (A file deleted but still in git's index is not in the context either.)
hash=$(cd "$src" && list | while IFS= read -r -d '' f; do if [[ -f $f ]]; then printf '%s\0' "$f"; fi; done |
  xargs -0 -r sha256sum -- | sha256sum | cut -c1-16)
hash=$(printf '%s %s %s\n' "$hash" "${KUBECTL_VERSION:-none}" "$(podman image inspect --format '{{.Id}}' "$probe")" | sha256sum | cut -c1-16)
image="$tag:src-$hash"
if podman image exists "$image"; then
  say "reusing $image (the sources are unchanged)"
else
  say "building $image with podman (runtime: $(sed -n 's/^runtime = "\(.*\)"/\1/p' "$CONTAINERS_CONF" | grep . || echo default))"
  build_started=$SECONDS
  lock=()
  if [[ -n ${PGSLOW_BUILD_LOCK:-} ]]; then lock=(flock "$PGSLOW_BUILD_LOCK"); fi
  log="$cache/build.log"
  if ! "${lock[@]}" podman build --pull=missing --build-arg "KUBECTL_VERSION=${KUBECTL_VERSION:-none}" \
      --label "org.pgslow.source=$hash" -t "$image" "$src" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "podman build failed (log: $log)"
  fi
  say "built $image in $((SECONDS - build_started)) s"
  # The images of older sources go (their layers stay while the new image shares them).
  for old in $(podman images --format '{{.Repository}}:{{.Tag}}' --filter "reference=$tag:src-*"); do
    if [[ $old != "$image" && $old != "$tag:latest" ]]; then podman rmi "$old" >/dev/null 2>&1 || true; fi
  done
fi
podman tag "$image" "$tag:latest"
size=$(podman image inspect --format '{{.Size}}' "$image")
say "$image: $((size / 1000000)) MB"

if [[ $smoke == 1 && ! -e $cache/smoked-$hash ]]; then
  smoke_started=$SECONDS
  podman run --rm "$image" --help | grep -q "make PostgreSQL slow on purpose" ||
    die "$image: pgslow --help did not print its usage"
  # As root inside, so the managed cluster's server runs as `postgres` (docs/user-guide.md).
  out=$(podman run --rm --user 0 --entrypoint /bin/sh \
    -v "$src/scripts/image-smoke.yaml:/smoke.yaml:ro" "$image" -c '
      set -e
      pgslow --workdir /var/tmp/pgslow run /smoke.yaml --out /var/tmp/results >/var/tmp/run.log 2>&1 || { tail -n 40 /var/tmp/run.log; exit 1; }
      test -s /var/tmp/results/report.json
      echo "server user: $(stat -c %U /var/tmp/pgslow/cluster/data)"
      pgslow --workdir /var/tmp/pgslow server stop >/dev/null' 2>&1) ||
    { echo "$out" >&2; die "$image: the smoke scenario failed"; }
  grep -qx "server user: postgres" <<<"$out" || { echo "$out" >&2; die "$image: the server did not run as postgres"; }
  : >"$cache/smoked-$hash"
  say "smoke test passed in $((SECONDS - smoke_started)) s: --help, and scripts/image-smoke.yaml on the managed cluster (server as postgres)"
fi
echo "$image"
