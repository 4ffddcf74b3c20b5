#!/usr/bin/env bash
# The Kubernetes Jobs `pgslow jobs` writes, tested where no cluster runs: the image is built (or
# reused while the sources are unchanged) and smoke-tested by scripts/build-image.sh; a 2 × 2
# matrix's Jobs are written; the pod template of two of its cells (PostgreSQL 15 in two
# envelopes) runs as a Pod under `podman kube play` (podman 4.3 plays Pods, not Jobs) with the
# shared objects of common.yaml (the results claim, the scenario's ConfigMap). Each pod must end
# as its Job would: the pgslow container exits 0 after the scenario, the db container stops on
# its request, the envelope is the db container's limit, and the report is on the claim.
# `pgslow compare` then puts the two cells side by side. Everything made is removed.
# Usage: k8s_pod_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
pgslow=$2/pgslow
if [[ $(id -u) -ne 0 ]]; then echo "needs root (the image's debootstrap base, podman's storage)"; exit 77; fi
for tool in podman yq; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: scripts/install-deps.sh test installs it"; exit 1; }
done

image=$("$src/scripts/build-image.sh" | tail -n 1)
# podman as build-image.sh set it up (the runtime and limits that work here).
# shellcheck source=scripts/podman-env.sh
. "$src/scripts/podman-env.sh"
pgslow_podman_env "${PGSLOW_IMAGE_CACHE:-/var/cache/pgslow/image}" "$image"

work=$(mktemp -d /tmp/pgslow-k8s-XXXXXX)
claim="pgslow-results-test-$$"
played=()
cleanup() {
  local f
  for f in "${played[@]}"; do podman kube down "$f" >/dev/null 2>&1 || true; done
  podman volume rm -f "$claim" pgslow-scenario-image-smoke >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$pgslow" jobs "$src/scripts/image-smoke.yaml" --versions 15,16 --envelopes 256MB/1,512MB/2 \
  --image "$image" --server-image "15=$image" --results-claim "$claim" -o "$work/jobs" >"$work/jobs.log" ||
  { cat "$work/jobs.log"; fail "pgslow jobs failed"; }
cat "$work/jobs.log"
mapfile -t jobs < <(cd "$work/jobs" && ls pgslow-*.yaml)
[[ ${#jobs[@]} -eq 4 ]] || fail "a 2 x 2 matrix wrote ${#jobs[@]} Jobs: ${jobs[*]}"
for f in "${jobs[@]}"; do
  [[ $(yq -r .kind "$work/jobs/$f") == Job ]] || fail "$f is not a Job"
  [[ $(yq -r '.spec.template.spec.containers | map(.name) | join(",")' "$work/jobs/$f") == db,pgslow ]] ||
    fail "$f: the pod template's containers are not db and pgslow"
done
# The version picks the server's image: 15 is pgslow's own, 16 the official one by default.
[[ $(yq -r '.spec.template.spec.containers[0].image' "$work/jobs/pgslow-image-smoke-pg16-mem256mi-cpu1000m.yaml") == docker.io/library/postgres:16 ]] ||
  fail "the PostgreSQL 16 cell's server image is not postgres:16"

declare -A want_memory=([mem256mi-cpu1000m]=268435456 [mem512mi-cpu2000m]=536870912)
reports=()
for envelope in mem256mi-cpu1000m mem512mi-cpu2000m; do
  cell=pg15-$envelope
  job=pgslow-image-smoke-$cell
  pod="$work/$cell-pod.yaml"
  # The Job's pod template as a Pod, after what every Job shares (the claim once: podman makes
  # its volume, which the next cell's pod mounts as it is).
  if [[ ${#reports[@]} -eq 0 ]]; then shared=$(cat "$work/jobs/common.yaml"); else
    shared=$(yq -y 'select(.kind != "PersistentVolumeClaim")' "$work/jobs/common.yaml"); fi
  { echo "$shared"; echo "---"
    yq -y '{apiVersion: "v1", kind: "Pod", metadata: {name: .metadata.name, labels: .spec.template.metadata.labels}, spec: .spec.template.spec}' \
      "$work/jobs/$job.yaml"; } >"$pod"
  started=$SECONDS
  played+=("$pod")
  podman kube play "$pod" >"$work/play.log" 2>&1 || { cat "$work/play.log"; fail "$cell: podman kube play failed"; }
  # podman wait returns when the container exits; the bound is the test's, not a sleep.
  rc=$(timeout 600 podman wait "$job-pgslow") || fail "$cell: the pgslow container did not exit in 10 minutes"
  if [[ $rc != 0 ]]; then
    podman logs "$job-pgslow" 2>&1 | tail -n 40
    podman logs "$job-db" 2>&1 | tail -n 20
    fail "$cell: the pgslow container exited $rc"
  fi
  # It stopped the server through the control FIFO: the pod ends, as the Job must to complete.
  db_rc=$(timeout 60 podman wait "$job-db") || fail "$cell: the db container still runs after pgslow's stop"
  [[ $db_rc == 0 ]] || fail "$cell: the db container exited $db_rc"
  memory=$(podman inspect "$job-db" --format '{{.HostConfig.Memory}}')
  [[ $memory == "${want_memory[$envelope]}" ]] || fail "$cell: the db container's memory limit is $memory, not ${want_memory[$envelope]}"
  mountpoint=$(podman volume inspect "$claim" --format '{{.Mountpoint}}')
  [[ -s $mountpoint/$cell/report.json ]] || fail "$cell: no report.json on the claim ($(ls -R "$mountpoint"))"
  mkdir -p "$work/results/$cell"
  cp "$mountpoint/$cell/report.json" "$work/results/$cell/"
  grep -q '"small-shared-buffers"' "$work/results/$cell/report.json" || fail "$cell: the report has no stage small-shared-buffers"
  echo "$cell: the pod ran in $((SECONDS - started)) s, pgslow and db exited 0, memory limit $memory"
  podman kube down "$pod" >/dev/null
  reports+=("$work/results/$cell/report.json")
done

"$pgslow" compare "${reports[@]}" >"$work/compare.txt" || { cat "$work/compare.txt"; fail "pgslow compare failed"; }
cat "$work/compare.txt"
for cell in pg15-mem256mi-cpu1000m pg15-mem512mi-cpu2000m; do
  grep -q "$cell" "$work/compare.txt" || fail "compare does not name $cell"
done
grep -q "small-shared-buffers" "$work/compare.txt" || fail "compare has no row for the stage"
echo "PASS: the pod template ran two cells, compared side by side"
