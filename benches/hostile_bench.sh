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
#   ragkeys  `routeval rag` on one case whose `relevant` map has K distinct keys (25k/50k/100k)
#   route    `routeval route` over M MB of small records (~130 bytes each; 16/32/64 MB), without and with
#            --out: seconds and peak RSS (MB, from /usr/bin/time); RSS should stay flat
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
for k in (25000, 50000, 100000):
    with open(f"{t}/ragkeys{k}.json", "w") as f:
        json.dump([{"query": "q", "retrieved": ["d1", "d2"],
                    "relevant": {f"d{i}": 1 for i in range(k)}}], f)
with open(f"{t}/routes.json", "w") as f:
    json.dump({"routes": [
        {"name": "qa", "where": {"kind": "qa"}, "metrics": ["exact_match"], "group_by": "lang"},
        {"name": "all", "metrics": ["exact_match", "output_length_stats"]}]}, f)
for mb in (16, 32, 64):
    with open(f"{t}/route{mb}.jsonl", "w") as f:
        size, i = 0, 0
        while size < mb << 20:
            rec = {"lm_output": "word%d" % (i % 7), "references": ["word%d" % (i % 5)],
                   "extra_info": {"kind": "qa" if i % 2 else "open",
                                  "lang": "en" if i % 3 else "ja", "id": i}}
            line = json.dumps(rec) + "\n"
            f.write(line)
            size += len(line)
            i += 1
PY

# FAMILIES="route" (say) runs only those families.
want() { [[ " ${FAMILIES:-graded inter regex ragkeys route} " == *" $1 "* ]]; }
echo "family size seconds"
want graded && for L in 16384 32768 65535; do
  echo "graded $L $(secs "$BIN" trec -m ndcg "$T/graded$L.qrels" "$T/graded$L.run")"
done
want inter && for n in 100000 200000 400000; do
  echo "inter $n $(secs "$BIN" trec "$T/inter.qrels" "$T/inter$n.run")"
  echo "grouped $n $(secs "$BIN" trec "$T/inter.qrels" "$T/grouped$n.run")"
done
want regex && for n in 50000 100000 200000; do
  echo "regex-atomic $n $(secs "$BIN" filter --count --where '{"t": {"regex": "(?>a+)b"}}' "$T/rx$n.jsonl")"
  echo "regex-possessive $n $(secs "$BIN" filter --count --where '{"t": {"regex": "a++b"}}' "$T/rx$n.jsonl")"
done
want ragkeys && for k in 25000 50000 100000; do
  echo "ragkeys $k $(secs "$BIN" rag "$T/ragkeys$k.json" --json)"
done
# Peak RSS in MB and seconds of one command.
rss() { local st=0; /usr/bin/time -o "$T/time.txt" -f "%M %e" timeout "${STEP_TIMEOUT:-120}" "$@" >/dev/null 2>&1 || st=$?; tail -n 1 "$T/time.txt" | awk -v st="$st" '{printf "%.0f MB %s s%s", $1/1024, $2, (st ? " (exit " st ")" : "")}'; }
want route && for mb in 16 32 64; do
  echo "route $mb MB $(rss "$BIN" route --config "$T/routes.json" --data "$T/route$mb.jsonl")"
  echo "route+out $mb MB $(rss "$BIN" route --config "$T/routes.json" --data "$T/route$mb.jsonl" --out "$T/out$mb")"
done
