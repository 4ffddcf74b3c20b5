# shellcheck shell=bash
# Sourced by scripts/build-image.sh and the image tests: sets up podman for this machine.
#   pgslow_podman_env CACHE_DIR IMAGE
# exports CONTAINERS_CONF (a containers.conf in CACHE_DIR whose default ulimits this process
# may grant: a container runtime without CAP_SYS_RESOURCE cannot raise a limit above the hard
# limit podman runs with, and podman lowers its own RLIMIT_NPROC to 32768), naming the OCI
# runtime that runs IMAGE here: podman's default, else runc (crun refuses a kernel whose
# cgroups are hybrid, v1 plus a v2 hierarchy). Every podman command after it (build, run,
# kube play) reads that file. A CONTAINERS_CONF already set is kept as it is.

pgslow_podman_env() {
  local cache=$1 image=$2
  if [[ -n ${CONTAINERS_CONF:-} ]]; then return 0; fi
  local nofile nproc
  nofile=$(ulimit -Hn)
  nproc=$(ulimit -Hu)
  if [[ $nofile == unlimited || $nofile -gt 1048576 ]]; then nofile=1048576; fi
  if [[ $nproc == unlimited || $nproc -gt 32768 ]]; then nproc=32768; fi
  local conf="$cache/containers.conf" runtime out
  for runtime in "" runc; do
    if [[ -n $runtime ]] && ! command -v "$runtime" >/dev/null; then continue; fi
    {
      echo "# written by pgslow scripts/podman-env.sh: what podman needs on this machine"
      echo "[containers]"
      echo "default_ulimits = [\"nofile=$nofile:$nofile\", \"nproc=$nproc:$nproc\"]"
      if [[ -n $runtime ]]; then printf '[engine]\nruntime = "%s"\n' "$runtime"; fi
    } >"$conf.tmp"
    mv -f "$conf.tmp" "$conf"
    if out=$(CONTAINERS_CONF=$conf podman run --rm --network none --entrypoint true "$image" 2>&1); then
      export CONTAINERS_CONF=$conf
      return 0
    fi
    echo "pgslow: podman (runtime: ${runtime:-its default}) cannot run a container here: ${out##*$'\n'}" >&2
  done
  echo "pgslow: no OCI runtime runs containers here: install runc (apt-get install runc)" >&2
  return 1
}
