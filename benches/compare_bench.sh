#!/usr/bin/env bash
# `routeval compare` on NQ queries × 5 runs × 5 measures (--test t, default CI) against five
# `routeval trec -c` runs on the same files (issue 11 acceptance: compare ≤ 1.5× the five trec
# runs). Inputs are generated outside the repository with ../shared/bench/gen_trec.py: the
# qrels of seed 1 and the runs of seeds 1..5 (other seeds' runs retrieve mostly unjudged
# documents, which costs the same to evaluate).
#
# usage: benches/compare_bench.sh [NQ] [DOCS_PER_QUERY]      (default: 100000 20)
# env:   ROUTEVAL_SHARED (default ../shared), RUNS (default 3), CARGO_TARGET_DIR honoured.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${ROUTEVAL_SHARED:-$ROOT/../shared}"
RUNS="${RUNS:-3}"
NQ="${1:-100000}"
PER="${2:-20}"
WORK="${TMPDIR:-/tmp}/routeval-compare-bench"
mkdir -p "$WORK"
cargo build --release -q -p routeval-cli --manifest-path "$ROOT/Cargo.toml"
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/routeval"
for s in 1 2 3 4 5; do
  d="$WORK/q${NQ}_p${PER}_s$s"
  [ -f "$d/run.txt" ] || python3 "$SHARED/bench/gen_trec.py" "$NQ" "$PER" "$s" "$d" >/dev/null
  sed "s/ synth\$/ sys$s/" "$d/run.txt" > "$WORK/run$s.txt"
done
QRELS="$WORK/q${NQ}_p${PER}_s1/qrels.txt"
M=(-m map -m ndcg_cut.10 -m P.10 -m recall.100 -m recip_rank)
echo "machine: $(nproc) cores, $(uname -m), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "inputs: $NQ queries, $PER docs/query, 5 runs of $(wc -l < "$WORK/run1.txt") lines"
for i in $(seq "$RUNS"); do
  start=$(date +%s.%N)
  for s in 1 2 3 4 5; do
    "$BIN" trec -c "${M[@]}" "$QRELS" "$WORK/run$s.txt" > /dev/null
  done
  mid=$(date +%s.%N)
  "$BIN" compare "${M[@]}" --test t "$QRELS" "$WORK"/run{1,2,3,4,5}.txt > /dev/null 2>&1
  end=$(date +%s.%N)
  python3 -c "t=$mid-$start; c=$end-$mid; print(f'run {$i}: 5x trec {t:.2f}s, compare {c:.2f}s, ratio {c/t:.2f}')"
done
