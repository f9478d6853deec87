#!/usr/bin/env bash
# Whole-process wall time and peak RSS of `routeval rag FILE --k 10 --json` against PyPI
# `rag-quality-check FILE --k 10 --json`, side by side, on the benchmark inputs of
# $ROUTEVAL_SHARED/bench/rag_bench_gen.py (ids and texts, 100,000 cases by default).
#
# usage: benches/rag_bench.sh [ROUTEVAL_BIN] [RQC_BIN] [SIZE] [RUNS] [RQC_RUNS]
#   ROUTEVAL_BIN  default target/release/routeval (cargo build --release -p routeval-cli)
#   RQC_BIN       default: rag-quality-check on PATH (pip install rag-quality-check)
#   SIZE          cases per file (default 100000); RUNS of routeval and RQC_RUNS of
#                 rag-quality-check (default 5 each, as issue 26 asks; rag-quality-check takes
#                 over a minute per run on the 100k text file); medians (the lower middle
#                 for an even count), each column on its own. After one untimed warm-up run
#                 each, the two tools alternate run by run, so a slow minute of the machine
#                 hits both.
# Also checks that both tools print identical JSON.
# Every child runs under `timeout` (STEP_TIMEOUT seconds each, default 1800; killed 10 s after
# the signal if it ignores it): a hung tool stops the script instead of waiting forever.
set -euo pipefail
ROUTEVAL=${1:-target/release/routeval}
RQC=${2:-rag-quality-check}
SIZE=${3:-100000}
[[ "$SIZE" =~ ^[1-9][0-9]{0,7}$ ]] || { echo "rag_bench.sh: SIZE must be 1-99999999 cases, not '$SIZE'" >&2; exit 2; }
RUNS=${4:-5}
RQC_RUNS=${5:-5}
for v in "$RUNS" "$RQC_RUNS"; do
  [[ "$v" =~ ^[1-9][0-9]{0,2}$ ]] || { echo "rag_bench.sh: RUNS and RQC_RUNS must be 1-999, not '$v'" >&2; exit 2; }
done
STEP_TIMEOUT=${STEP_TIMEOUT:-1800}
[[ "$STEP_TIMEOUT" =~ ^[1-9][0-9]{0,4}$ ]] || { echo "rag_bench.sh: STEP_TIMEOUT must be 1-99999 seconds, not '$STEP_TIMEOUT'" >&2; exit 2; }
SHARED=${ROUTEVAL_SHARED:-$(cd "$(dirname "$0")/../.." && pwd)/shared}
DATA=${RAG_BENCH_DIR:-${TMPDIR:-/tmp}/routeval-rag-bench}
mkdir -p "$DATA"
if [ ! -f "$DATA/rqc_text_$SIZE.json" ]; then
  timeout -k 10 "$STEP_TIMEOUT" python3 "$SHARED/bench/rag_bench_gen.py" --out "$DATA" --sizes "$SIZE" --trec-queries 1 >/dev/null || {
    st=$?
    if [ "$st" -eq 124 ] || [ "$st" -eq 137 ]; then
      echo "rag_bench.sh: rag_bench_gen.py timed out after $STEP_TIMEOUT s (STEP_TIMEOUT)" >&2
    fi
    exit "$st"
  }
fi

# measure CMD...: one timed run; sets R to "wall_s user_s sys_s rss_kb". A tool that fails
# or times out stops the script with its exit status and the end of its stderr (never a
# timing of a failure). `timeout` runs the tool as its child, so GNU time's figures (which
# include waited-for descendants) are the tool's.
measure() {
  local st=0
  /usr/bin/time -o "$DATA/time.txt" -f "%e %U %S %M" timeout -k 10 "$STEP_TIMEOUT" "$@" > "$DATA/last.out" 2> "$DATA/last.err" || st=$?
  if [ "$st" -ne 0 ]; then
    if [ "$st" -eq 124 ] || [ "$st" -eq 137 ]; then
      echo "rag_bench.sh: $1 timed out after $STEP_TIMEOUT s (STEP_TIMEOUT)" >&2
    else
      echo "rag_bench.sh: $1 failed: $(head -1 "$DATA/time.txt")" >&2
    fi
    tail -n 20 "$DATA/last.err" >&2
    exit 1
  fi
  R=$(tail -1 "$DATA/time.txt")
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# run TOOL KIND: one timed run of TOOL (routeval or rqc) on the KIND file; the output goes to
# $DATA/TOOL_KIND.json and the timing line (wall user sys kb) is left in R.
run() {
  local f="$DATA/rqc_${2}_$SIZE.json"
  if [ "$1" = routeval ]; then
    measure "$ROUTEVAL" rag "$f" --k 10 --json
  else
    measure "$RQC" "$f" --k 10 --json
  fi
  cp "$DATA/last.out" "$DATA/${1}_$2.json"
}

printf "%-6s %-10s %10s %10s %12s\n" input tool wall_s cpu_s peak_rss_MB
for kind in ids text; do
  : > "$DATA/times_routeval.txt"
  : > "$DATA/times_rqc.txt"
  # One untimed warm-up run each (cold caches), then the timed runs: the reference first in
  # odd rounds, routeval first in even ones (with an odd count, routeval follows the reference
  # in one round more than the other way round: the order that does not favour routeval).
  run rqc "$kind"
  run routeval "$kind"
  max=$(( RUNS > RQC_RUNS ? RUNS : RQC_RUNS ))
  for i in $(seq "$max"); do
    order="rqc routeval"; [ $((i % 2)) = 0 ] && order="routeval rqc"
    for tool in $order; do
      n=$RUNS; [ "$tool" = rqc ] && n=$RQC_RUNS
      [ "$i" -le "$n" ] || continue
      run "$tool" "$kind"
      echo "$R" >> "$DATA/times_$tool.txt"
    done
  done
  for tool in routeval rqc; do
    t="$DATA/times_$tool.txt"
    w=$(awk '{print $1}' "$t" | median)
    c=$(awk '{print $2 + $3}' "$t" | median)
    m=$(awk '{print $4}' "$t" | median)
    printf "%-6s %-10s %10s %10.2f %12.1f\n" "$kind" "$tool" "$w" "$c" "$(echo "$m / 1024" | bc -l)"
  done
  if cmp -s "$DATA/routeval_$kind.json" "$DATA/rqc_$kind.json"; then
    echo "$kind: JSON output identical"
  else
    echo "$kind: JSON output DIFFERS"; exit 1
  fi
done
