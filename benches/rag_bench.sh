#!/usr/bin/env bash
# Whole-process wall time and peak RSS of `routeval rag FILE --k 10 --json` against PyPI
# `rag-quality-check FILE --k 10 --json`, side by side, on the benchmark inputs of
# $ROUTEVAL_SHARED/bench/rag_bench_gen.py (ids and texts, 100,000 cases by default).
#
# usage: benches/rag_bench.sh [ROUTEVAL_BIN] [RQC_BIN] [SIZE] [RUNS] [RQC_RUNS]
#   ROUTEVAL_BIN  default target/release/routeval (cargo build --release -p routeval-cli)
#   RQC_BIN       default: rag-quality-check on PATH (pip install rag-quality-check)
#   SIZE          cases per file (default 100000); RUNS of routeval (default 3) and RQC_RUNS
#                 of rag-quality-check (default 1: it takes minutes on the text file); medians
# Also checks that both tools print identical JSON.
set -euo pipefail
ROUTEVAL=${1:-target/release/routeval}
RQC=${2:-rag-quality-check}
SIZE=${3:-100000}
RUNS=${4:-3}
RQC_RUNS=${5:-1}
SHARED=${ROUTEVAL_SHARED:-$(cd "$(dirname "$0")/../.." && pwd)/shared}
DATA=${RAG_BENCH_DIR:-${TMPDIR:-/tmp}/routeval-rag-bench}
mkdir -p "$DATA"
if [ ! -f "$DATA/rqc_text_$SIZE.json" ]; then
  python3 "$SHARED/bench/rag_bench_gen.py" --out "$DATA" --sizes "$SIZE" --trec-queries 1 >/dev/null
fi

# measure CMD... -> prints "wall_s rss_kb"
measure() {
  /usr/bin/time -o "$DATA/time.txt" -f "%e %U %S %M" "$@" > "$DATA/last.out" 2>/dev/null
  tail -1 "$DATA/time.txt"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf "%-6s %-10s %10s %10s %12s\n" input tool wall_s cpu_s peak_rss_MB
for kind in ids text; do
  f="$DATA/rqc_${kind}_$SIZE.json"
  for tool in routeval rqc; do
    walls=(); cpus=(); rss=()
    n=$RUNS; [ "$tool" = rqc ] && n=$RQC_RUNS
    for _ in $(seq "$n"); do
      if [ "$tool" = routeval ]; then
        r=$(measure "$ROUTEVAL" rag "$f" --k 10 --json)
        cp "$DATA/last.out" "$DATA/routeval_$kind.json"
      else
        r=$(measure "$RQC" "$f" --k 10 --json)
        cp "$DATA/last.out" "$DATA/rqc_$kind.json"
      fi
      read -r wall user sys kb <<<"$r"
      walls+=("$wall"); cpus+=("$(echo "$user + $sys" | bc -l)"); rss+=("$kb")
    done
    w=$(printf "%s\n" "${walls[@]}" | median)
    c=$(printf "%s\n" "${cpus[@]}" | median)
    m=$(printf "%s\n" "${rss[@]}" | median)
    printf "%-6s %-10s %10s %10s %12.1f\n" "$kind" "$tool" "$w" "$c" "$(echo "$m / 1024" | bc -l)"
  done
  if cmp -s "$DATA/routeval_$kind.json" "$DATA/rqc_$kind.json"; then
    echo "$kind: JSON output identical"
  else
    echo "$kind: JSON output DIFFERS"; exit 1
  fi
done
