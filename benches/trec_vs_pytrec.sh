#!/usr/bin/env bash
# End-to-end comparison: `routeval trec` vs pytrec-eval-terrier (parse + evaluate), medians of N
# runs per side (default 5; the lower middle for an even N; wall, CPU and RSS each on its own).
# After one untimed warm-up run each, the two alternate run by run, pytrec first in odd rounds
# (with an odd N routeval follows pytrec once more than the other way round).
# Usage: benches/trec_vs_pytrec.sh [DATA_DIR] [N]
#   DATA_DIR defaults to target/trec-bench (generated with ../shared/bench/gen_trec.py 100000 100 1)
#   Needs: python3 with `pip install pytrec-eval-terrier`, GNU time (/usr/bin/time).
#   Every child runs under `timeout` (STEP_TIMEOUT seconds each, default 1800; killed 10 s after
#   the signal if it ignores it): a hung tool stops the script instead of waiting forever.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${1:-target/trec-bench}"
N="${2:-5}"
[[ "$N" =~ ^[1-9][0-9]{0,2}$ ]] || { echo "trec_vs_pytrec.sh: N must be 1-999, not '$N'" >&2; exit 2; }
STEP_TIMEOUT="${STEP_TIMEOUT:-1800}"
[[ "$STEP_TIMEOUT" =~ ^[1-9][0-9]{0,4}$ ]] || { echo "trec_vs_pytrec.sh: STEP_TIMEOUT must be 1-99999 seconds, not '$STEP_TIMEOUT'" >&2; exit 2; }
# lim CMD...: CMD under the step timeout; a timeout ends the script with a message.
lim() {
  local st=0
  timeout -k 10 "$STEP_TIMEOUT" "$@" || st=$?
  if [ "$st" -eq 124 ] || [ "$st" -eq 137 ]; then
    echo "trec_vs_pytrec.sh: $1 timed out after $STEP_TIMEOUT s (STEP_TIMEOUT)" >&2
  fi
  return "$st"
}
SHARED="${ROUTEVAL_SHARED:-$(cd ../shared && pwd)}"
if [ ! -f "$DATA/run.txt" ]; then
  lim python3 "$SHARED/bench/gen_trec.py" 100000 100 1 "$DATA"
fi
lim cargo build --release -p routeval-cli >/dev/null
BIN=target/release/routeval
MEAS=(-m P.10 -m recall.10 -m recip_rank -m ndcg_cut.10 -m success.10 -m map)
TIMES=$(mktemp -d)
trap 'rm -rf "$TIMES"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
one() { # name, command...: one timed run, appended to the name's file (a tool's own stderr
  # stays on the terminal; a failing tool stops the script under set -e)
  local name=$1; shift
  # (`timeout` runs the tool as its child: GNU time's figures include it.)
  /usr/bin/time -a -o "$TIMES/$name.txt" -f "%e %M %U %S" timeout -k 10 "$STEP_TIMEOUT" "$@" > /dev/null || {
    local st=$?
    [ "$st" -eq 124 ] || [ "$st" -eq 137 ] && echo "trec_vs_pytrec.sh: $1 timed out after $STEP_TIMEOUT s (STEP_TIMEOUT)" >&2
    return "$st"
  }
}
report() { # name
  local name=$1 wall rss cpu
  wall=$(awk '{print $1}' "$TIMES/$name.txt" | median)
  rss=$(awk '{print $2}' "$TIMES/$name.txt" | median)
  cpu=$(awk '{print $3 + $4}' "$TIMES/$name.txt" | median)
  echo "$name: median wall ${wall}s, median CPU (user+sys) ${cpu}s, median peak RSS $((rss / 1024)) MB (wall runs: $(awk '{printf "%s ", $1}' "$TIMES/$name.txt"))"
}
echo "machine: $(nproc) cores, $(awk '/model name/ {$1=$2=$3=""; print; exit}' /proc/cpuinfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
# The two tools alternate run by run, so a slow minute of the machine hits both.
one warmup python3 benches/trec_pytrec.py "$DATA/qrels.txt" "$DATA/run.txt"
one warmup "$BIN" trec "${MEAS[@]}" "$DATA/qrels.txt" "$DATA/run.txt"
for i in $(seq "$N"); do
  if [ $((i % 2)) = 1 ]; then
    one pytrec python3 benches/trec_pytrec.py "$DATA/qrels.txt" "$DATA/run.txt"
    one routeval "$BIN" trec "${MEAS[@]}" "$DATA/qrels.txt" "$DATA/run.txt"
  else
    one routeval "$BIN" trec "${MEAS[@]}" "$DATA/qrels.txt" "$DATA/run.txt"
    one pytrec python3 benches/trec_pytrec.py "$DATA/qrels.txt" "$DATA/run.txt"
  fi
done
report routeval
report pytrec
echo "same numbers:"
if diff <(lim "$BIN" trec "${MEAS[@]}" "$DATA/qrels.txt" "$DATA/run.txt" | sort) \
        <(lim python3 benches/trec_pytrec.py "$DATA/qrels.txt" "$DATA/run.txt" | sort); then
  echo "  identical"
else
  echo "  DIFFER"; exit 1
fi
# ranx (Numba), when `python3 -c "import ranx"` works (`pip install ranx`): its parse +
# evaluate after a warm-up call (JIT compilation not counted), timed inside the process.
if python3 -c "import ranx" 2>/dev/null; then
  for _ in $(seq "$N"); do
    lim python3 benches/trec_ranx.py "$DATA/qrels.txt" "$DATA/run.txt" 2>&1 >/dev/null | tail -n 1
  done
else
  echo "ranx: not installed (pip install ranx), skipped"
fi
