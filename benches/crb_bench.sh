#!/usr/bin/env bash
# Whole-process CPU time and peak RSS of `routeval crb eval` (gold predictor, native tokenizers,
# loading included) on CommonRouterBench-shaped banks, as the issue's acceptance measures it.
#
# usage: benches/crb_bench.sh [SIZES...]        (default: 970 20000)
# env:   ROUTEVAL_SHARED (default ../shared), RUNS (default 3), CLEANROOM=1 to also time the
#        Python clean-room model (needs `pip install tiktoken tokenizers`; slow: minutes at 20k).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${ROUTEVAL_SHARED:-$ROOT/../shared}"
RUNS="${RUNS:-3}"
SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(970 20000)
WORK="${TMPDIR:-/tmp}/routeval-crb-bench"
mkdir -p "$WORK"
cargo build --release -q -p routeval-cli --manifest-path "$ROOT/Cargo.toml"
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/routeval"
TOK="$SHARED/thirdparty/tokenizers"
echo "machine: $(nproc) cores, $(uname -m), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in "${SIZES[@]}"; do
  bank="$WORK/bank$n.jsonl"
  [ -f "$bank" ] || python3 "$SHARED/bench/crb/crb_bank_gen.py" "$n" "$bank" >/dev/null
  for i in $(seq "$RUNS"); do
    /usr/bin/time -f "rows=$n run=$i wall=%es cpu=%Us+%Ss peak_rss=%MKB" \
      "$BIN" crb eval --bank "$bank" --predictor gold --tokenizers "$TOK" --json -o "$WORK/summary$n.json"
  done
  if [ "${CLEANROOM:-0}" = 1 ]; then
    case_dir="$WORK/cases$n/gold"
    mkdir -p "$case_dir"
    cp "$bank" "$case_dir/bank.jsonl"
    python3 - "$case_dir" "$WORK/summary$n.json" <<'PY'
import json, sys
d, s = sys.argv[1], json.load(open(sys.argv[2]))
s.pop("routeval_tokenizers", None)
preds = {r["id"]: r["gold_tier_id"] for r in s["rows"]}
json.dump(preds, open(f"{d}/predictions.json", "w"))
s["classifier"] = "gold"
s["shard"] = "bank.jsonl"
json.dump(s, open(f"{d}/expected_summary.json", "w"))
json.dump({"mode": "run_question_bank_eval", "predictor_label": "gold", "n": None, "seed": 42,
           "manifest_used_for_sampling": "none", "extra_summary": None,
           "error_row_message": "predictor error"}, open(f"{d}/case.json", "w"))
PY
    /usr/bin/time -f "cleanroom rows=$n wall=%es cpu=%Us+%Ss peak_rss=%MKB (includes its own check of routeval's summary)" \
      env ROUTEVAL_SHARED="$SHARED" python3 "$SHARED/oracles/crb/cleanroom.py" "$WORK/cases$n"
  fi
done
