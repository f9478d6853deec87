#!/usr/bin/env bash
# `routeval compare` on many systems (issue 27 acceptance): K runs × NQ queries.
#  1. `compare --anova --test tukey --risk 1` against the same compare without them (target ≤ 2×);
#  2. `compare --test randomized-tukey --iterations 10000` (target ≤ 2 s on 2 cores).
# Inputs are generated outside the repository: the qrels of ../shared/bench/gen_trec.py (seed 1)
# and K runs that re-score seed 1's retrieved documents with per-system noise (so every run
# retrieves judged documents, as real systems do).
#
# usage: benches/many_systems_bench.sh [K] [NQ]      (default: 50 1000)
# env:   ROUTEVAL_SHARED (default ../shared), RUNS (repetitions, default 5), CARGO_TARGET_DIR.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${ROUTEVAL_SHARED:-$ROOT/../shared}"
RUNS="${RUNS:-5}"
K="${1:-50}"
NQ="${2:-1000}"
WORK="${TMPDIR:-/tmp}/routeval-many-bench/k${K}_q${NQ}"
mkdir -p "$WORK"
cargo build --release -q -p routeval-cli --manifest-path "$ROOT/Cargo.toml"
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/routeval"
[ -f "$WORK/base/run.txt" ] || python3 "$SHARED/bench/gen_trec.py" "$NQ" 100 1 "$WORK/base" >/dev/null
if [ ! -f "$WORK/run$K.txt" ]; then
  python3 - "$WORK" "$K" <<'PY'
import random, sys
work, k = sys.argv[1], int(sys.argv[2])
rel = {}
for line in open(f"{work}/base/qrels.txt"):
    q, _, d, r = line.split()
    rel[(q, d)] = int(r)
rows = [line.split() for line in open(f"{work}/base/run.txt")]
for s in range(1, k + 1):
    rng = random.Random(s)
    skill = rng.random()
    with open(f"{work}/run{s}.txt", "w") as f:
        for q, _, d, rank, score, _ in rows:
            v = float(score) + skill * 3 * rel.get((q, d), 0) + rng.gauss(0, 2)
            f.write(f"{q} Q0 {d} {rank} {v:.3f} sys{s}\n")
PY
fi
QRELS="$WORK/base/qrels.txt"
mapfile -t FILES < <(for s in $(seq "$K"); do echo "$WORK/run$s.txt"; done)
echo "machine: $(nproc) cores, $(uname -m), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "inputs: $K runs x $NQ queries ($(wc -l < "$WORK/run1.txt") lines each), 5 default measures"
t() { /usr/bin/time -f "%e %U %S %M" "$@" > /dev/null 2> "$WORK/time" || { cat "$WORK/time"; exit 1; }; tail -n 1 "$WORK/time"; }
for i in $(seq "$RUNS"); do
  read -r pw pu ps pm < <(t "$BIN" compare "$QRELS" "${FILES[@]}")
  read -r mw mu ms mm < <(t "$BIN" compare "$QRELS" "${FILES[@]}" --anova --test tukey --risk 1)
  read -r rw ru rs rm < <(t "$BIN" compare "$QRELS" "${FILES[@]}" --test randomized-tukey --iterations 10000 --no-ci)
  python3 -c "print(f'run $i: plain {$pw:.2f}s wall ({$pu}+{$ps} s CPU, {$pm/1024:.0f} MB); anova+tukey+risk {$mw:.2f}s ({$mu}+{$ms} s CPU), ratio {$mw/$pw:.2f}; randomized-tukey 10k {$rw:.2f}s ({$ru}+{$rs} s CPU, {$rm/1024:.0f} MB)')"
done
