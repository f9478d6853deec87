#!/usr/bin/env bash
# Whole-process timings for the threshold sweeps (issue 12):
#  1. `routeval crb sweep` with 1000 thresholds on a 970-row bank vs one `routeval crb eval`
#     of the same bank (native tokenizers, loading included; target: sweep <= 3x eval);
#  2. `routeval gqr sweep` with 10,000 thresholds over test sets of the full size (9,000 ID
#     rows + 6,471 OOD rows in 7 sets, synthetic texts and random probabilities; target <= 1 s).
# The NDCH hull on 100k points is a criterion bench: `cargo bench -p routeval-frontier --bench hull`.
#
# usage: benches/frontier_bench.sh     env: ROUTEVAL_SHARED (default ../shared), RUNS (default 3)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${ROUTEVAL_SHARED:-$ROOT/../shared}"
RUNS="${RUNS:-3}"
WORK="${TMPDIR:-/tmp}/routeval-frontier-bench"
mkdir -p "$WORK"
cargo build --release -q -p routeval-cli --manifest-path "$ROOT/Cargo.toml"
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/routeval"
TOK="$SHARED/thirdparty/tokenizers"
echo "machine: $(nproc) cores, $(uname -m), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
bank="$WORK/bank970.jsonl"
[ -f "$bank" ] || python3 "$SHARED/bench/crb/crb_bank_gen.py" 970 "$bank" >/dev/null
python3 - "$bank" "$WORK" <<'PY'
import json, random, sys
bank, work = sys.argv[1], sys.argv[2]
rng = random.Random(12)
with open(bank) as f, open(f"{work}/scores.jsonl", "w") as s, open(f"{work}/preds.jsonl", "w") as p:
    for line in f:
        if not line.strip():
            continue
        row = json.loads(line)
        w = [rng.random() for _ in range(4)]
        t = sum(w)
        s.write(json.dumps({"id": row["id"], "tier_probs": [x / t for x in w]}) + "\n")
        p.write(json.dumps({"id": row["id"], "tier_id": rng.randrange(4)}) + "\n")
# A full-size GQR build: 9,000 ID rows, 7 OOD sets with 6,471 rows.
import os
b = f"{work}/gqr_build"
os.makedirs(b, exist_ok=True)
sizes = {"jigsaw": 2000, "olid": 860, "hate_xplain": 1000, "hate_speech_slovak ": 500,
         "dkhate": 329, "web_questions": 1000, "ml_questions": 782}
files = []
with open(f"{work}/gqr_probs.jsonl", "w") as pr:
    rows = []
    for i in range(9000):
        d = ["law", "finance", "healthcare"][i % 3]
        rows.append({"id": f"id_test/{d}/{i}", "text": "t", "label": i % 3, "domain": d, "dataset": d})
    with open(f"{b}/id_test.jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    files.append({"path": "id_test.jsonl", "rows": len(rows), "blake3": "-"})
    ood = []
    for name, n in sizes.items():
        for i in range(n):
            ood.append({"id": f"ood_test/{name}/{i}", "text": "t", "label": 3, "domain": "ood", "dataset": name})
    with open(f"{b}/ood_test.jsonl", "w") as f:
        for r in ood:
            f.write(json.dumps(r) + "\n")
    files.append({"path": "ood_test.jsonl", "rows": len(ood), "blake3": "-"})
    for r in rows + ood:
        w = [rng.random() for _ in range(3)]
        t = sum(w)
        pr.write(json.dumps({"id": r["id"], "probs": [x / t for x in w]}) + "\n")
json.dump({"build": "gqr", "registry_blake3": "-", "files": files, "missing": [], "datasets": [], "warnings": []},
          open(f"{b}/manifest.json", "w"))
PY
for i in $(seq "$RUNS"); do
  /usr/bin/time -f "crb eval (970 rows, one prediction set) run=$i wall=%es cpu=%Us+%Ss peak_rss=%MKB" \
    "$BIN" crb eval --bank "$bank" --predictor "file:$WORK/preds.jsonl" --tokenizers "$TOK" --json -o "$WORK/eval.json"
  /usr/bin/time -f "crb sweep (970 rows, 1000 thresholds) run=$i wall=%es cpu=%Us+%Ss peak_rss=%MKB" \
    "$BIN" crb sweep --bank "$bank" --scores "$WORK/scores.jsonl" --thresholds 0:0.999:0.001 --tokenizers "$TOK" --json -o "$WORK/sweep.json"
  /usr/bin/time -f "gqr sweep (15,471 texts, 10,000 thresholds) run=$i wall=%es cpu=%Us+%Ss peak_rss=%MKB" \
    "$BIN" gqr sweep --scores "$WORK/gqr_probs.jsonl" --build-dir "$WORK/gqr_build" --thresholds 0:0.9999:0.0001 --json -o "$WORK/gqr_sweep.json"
done
