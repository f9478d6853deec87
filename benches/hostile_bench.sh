#!/usr/bin/env bash
# Hostile-input scaling (issue 10 item 4): each input family at sizes N, 2N, 4N; the time
# should double with N (linear), not quadruple (quadratic). Figures in benches/hostile.md.
#
#   ROUTEVAL=target/release/routeval benches/hostile_bench.sh
#
# Families:
#   graded   one query judged at levels 0..L (L up to 65535), run = the judged docs, -m ndcg
#   inter    Q=2000 queries x 100 judged docs; run lines round-robin across queries
#   grouped  the same lines grouped by query (the reference point for inter)
#   regex    `routeval filter --count` with (?>a+)b / a++b over one value of N characters
set -euo pipefail
BIN=${ROUTEVAL:-target/release/routeval}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# Each command is cut after STEP_TIMEOUT seconds (default 120): a figure equal to it means "did not finish".
secs() { local s e; s=$(date +%s.%N); timeout "${STEP_TIMEOUT:-120}" "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N); echo "$e - $s" | bc; }

python3 - "$T" <<'PY'
import json, sys
t = sys.argv[1]
for L in (16384, 32768, 65535):
    with open(f"{t}/graded{L}.qrels", "w") as q, open(f"{t}/graded{L}.run", "w") as r:
        for i in range(L + 1):
            q.write(f"q1 0 d{i} {i}\n")
            r.write(f"q1 Q0 d{i} {i + 1} {L - i} r\n")
Q, D = 2000, 100
with open(f"{t}/inter.qrels", "w") as q:
    for qi in range(Q):
        for d in range(D):
            q.write(f"q{qi} 0 d{d} {d % 3}\n")
for n in (100000, 200000, 400000):
    per = n // Q
    lines = [[f"q{qi} Q0 x{d} {d + 1} {per - d} r\n" for d in range(per)] for qi in range(Q)]
    with open(f"{t}/inter{n}.run", "w") as f:
        for d in range(per):
            for qi in range(Q):
                f.write(lines[qi][d])
    with open(f"{t}/grouped{n}.run", "w") as f:
        for qi in range(Q):
            f.writelines(lines[qi])
for n in (50000, 100000, 200000):
    with open(f"{t}/rx{n}.jsonl", "w") as f:
        f.write(json.dumps({"t": "a" * n}) + "\n")
PY

echo "family size seconds"
for L in 16384 32768 65535; do
  echo "graded $L $(secs "$BIN" trec -m ndcg "$T/graded$L.qrels" "$T/graded$L.run")"
done
for n in 100000 200000 400000; do
  echo "inter $n $(secs "$BIN" trec "$T/inter.qrels" "$T/inter$n.run")"
  echo "grouped $n $(secs "$BIN" trec "$T/inter.qrels" "$T/grouped$n.run")"
done
for n in 50000 100000 200000; do
  echo "regex-atomic $n $(secs "$BIN" filter --count --where '{"t": {"regex": "(?>a+)b"}}' "$T/rx$n.jsonl")"
  echo "regex-possessive $n $(secs "$BIN" filter --count --where '{"t": {"regex": "a++b"}}' "$T/rx$n.jsonl")"
done
