#!/bin/bash
# TPS with and without the wait sampler: 6 alternating pairs of 10 s tpcb-like runs (the order
# within a pair alternates too, so drift does not favour one side), each from a fresh clone.
set -euo pipefail
PGSLOW=${PGSLOW:-build/pgslow}
WD=${WD:-/var/tmp/pgslow-waits-overhead}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
"$PGSLOW" --workdir "$WD" server start >/dev/null
run() { "$PGSLOW" --workdir "$WD" bench -w tpcb-like -s 10 -c 8 -T 10 --warmup 2 --json "$OUT/$1.json" "${@:2}" >/dev/null; }
for i in 1 2 3 4 5 6; do
  if (( i % 2 )); then run on$i; run off$i --no-wait-sampling; else run off$i --no-wait-sampling; run on$i; fi
done
python3 - "$OUT" <<'PY'
import json, math, statistics, sys
d = sys.argv[1]
r = []
for i in range(1, 7):
    on = json.load(open(f"{d}/on{i}.json"))["tps"]; off = json.load(open(f"{d}/off{i}.json"))["tps"]
    r.append(math.log(on / off)); print(f"pair {i}: with {on:8.1f}  without {off:8.1f}  ratio {on/off:.3f}")
m, s = statistics.mean(r), statistics.stdev(r); h = 2.571 * s / math.sqrt(len(r))
print(f"with/without: {math.exp(m):.3f} (95% interval {math.exp(m-h):.3f}-{math.exp(m+h):.3f}), 6 pairs")
PY
