#!/usr/bin/env python3
"""Build the seed corpora of the fuzz targets from routeval's committed examples and fixtures
and from the shared goldens (never from ../shared/thirdparty). Writes fuzz/corpus/<target>/
(git-ignored). Usage: python3 fuzz/seed_corpora.py [SHARED_DIR]  (default: $ROUTEVAL_SHARED,
else ../shared beside the checkout). Parquet seeds need pyarrow; without it they are skipped.
"""
import glob
import hashlib
import json
import os
import sys

FUZZ = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(FUZZ)
SHARED = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
    "ROUTEVAL_SHARED", os.path.join(os.path.dirname(ROOT), "shared"))
GOLDEN = os.path.join(SHARED, "golden")
EX = os.path.join(ROOT, "examples", "data")


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(FUZZ, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


# trec_eval: FLAGS QRELS \0 RUN
pairs = [(os.path.join(EX, "trec", "qrels.txt"), os.path.join(EX, "trec", "run.txt"))]
pairs += [(os.path.join(EX, "compare", "qrels"), r) for r in glob.glob(os.path.join(EX, "compare", "*.run"))]
for case in sorted(glob.glob(os.path.join(ROOT, "crates/cli/tests/fixtures/trec_matrix/cases/*"))):
    pairs.append((os.path.join(case, "qrels"), os.path.join(case, "run")))
for i, (q, r) in enumerate(pairs):
    if os.path.exists(q) and os.path.exists(r):
        qb, rb = read(q)[:20000], read(r)[:20000]
        for flags in (0, 0x25 + i % 7, 0x4a, 0x93):
            put("trec_eval", bytes([flags]) + qb + b"\0" + rb)

# rag_json and rag_cases: golden case inputs and the example
for path in sorted(glob.glob(os.path.join(GOLDEN, "rag", "cases", "*.json"))):
    try:
        case = json.loads(read(path))
    except ValueError:
        continue
    put("rag_json", read(path)[:20000])
    cases = case.get("input", {}).get("cases") if isinstance(case, dict) else None
    if cases is not None:
        text = json.dumps(cases, ensure_ascii=False)
        put("rag_json", text)
        put("rag_cases", b"\0" + text.encode())
        if isinstance(cases, list):
            put("rag_cases", b"\x05" + "\n".join(json.dumps(c) for c in cases).encode())
ex = os.path.join(EX, "rag", "cases.json")
if os.path.exists(ex):
    put("rag_cases", b"\0" + read(ex))
    put("rag_json", read(ex))
for s in ['NaN', '[1e400, -Infinity, 123456789012345678901234567890]', '{"a": 1, "a": 2}',
          '"\\ud800"', '\ufeff{}', '[[[[[]]]]]', '"\u2028\u0085"']:
    put("rag_json", s)

# crb_bank: golden bank files and the example bank
for path in sorted(glob.glob(os.path.join(GOLDEN, "crb", "cases", "*", "bank.jsonl"))) + [os.path.join(EX, "crb", "bank.jsonl")]:
    if os.path.exists(path):
        lines = read(path).split(b"\n")
        put("crb_bank", b"\n".join(lines[:40]))

# predictions: example and golden prediction files
for path in (glob.glob(os.path.join(GOLDEN, "crb", "cases", "*", "predictions.json"))
             + [os.path.join(EX, "crb", "predictions.json"), os.path.join(EX, "gqr", "predictions.jsonl")]):
    if os.path.exists(path):
        put("predictions", read(path)[:20000])
put("predictions", '{"id": "a", "tier": "high"}\n{"id": 3, "pred_tier_id": 2, "usage": {"prompt_tokens": 3}}\n{"id": "x", "label": 1.0}\n{"id": "y", "label": "7"}\n')

# gqr_readers: one row per registry dataset with its columns, in every format; the example rows
registry = json.loads(read(os.path.join(ROOT, "data", "gqr", "sources.json")))
rows = []
for d in registry["datasets"]:
    row = {}
    t = d["text"]
    for key in ("column", "title", "body"):
        if key in t:
            row[t[key]] = "What is the interest rate on a savings account? 1e-05 = = Heading = ="
    for c in t.get("columns", []):
        row[c] = "a question title with words"
    for f in d.get("filters", []):
        for c in f.get("columns", []) or []:
            row.setdefault(c, 1)
        if "column" in f and f["column"] not in row:
            row[f["column"]] = f.get("value", (f.get("values") or [0])[0])
    rows.append(row)
for row in rows:
    cols = list(row)
    csv = ",".join(cols) + "\n" + ",".join('"%s"' % str(row[c]).replace('"', '""') for c in cols) + "\nNA," + ",".join("" for _ in cols[1:]) + "\n"
    put("gqr_readers", b"\0" + csv.encode())
    put("gqr_readers", b"\2" + (json.dumps(row) + "\n" + json.dumps({k: None for k in row})).encode())
put("gqr_readers", b"\1" + json.dumps(rows).encode())
put("gqr_readers", b"\1" + json.dumps({"data": rows[:5]}).encode())
put("gqr_readers", b"\4" + b"What is a bond?,0\nhello,1\n")
ex = os.path.join(EX, "gqr", "rows.jsonl")
if os.path.exists(ex):
    put("gqr_readers", b"\2" + read(ex)[:20000])
try:
    import io
    import pyarrow as pa
    import pyarrow.parquet as pq
    for i, row in enumerate(rows):
        table = pa.Table.from_pylist([row, {k: None for k in row}])
        buf = io.BytesIO()
        pq.write_table(table, buf, compression=["NONE", "SNAPPY"][i % 2])
        put("gqr_readers", b"\3" + buf.getvalue())
    table = pa.table({"text": ["a", None, "c"], "label": [1, 2, None], "f": [1.5, float("nan"), 1e-05],
                      "b": [True, False, None], "l": [[1, 2], [], None]})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    put("gqr_readers", b"\3" + buf.getvalue())
except ImportError:
    print("pyarrow not installed: no Parquet seeds", file=sys.stderr)

# route_config: example configs (JSON, Jsonnet) with instances, golden route cases
inst = read(os.path.join(EX, "dsl", "outputs.jsonl"))[:8000] if os.path.exists(os.path.join(EX, "dsl", "outputs.jsonl")) else b""
for name, flag in (("routes.json", 0), ("toytask.jsonnet", 1)):
    p = os.path.join(EX, "dsl", name)
    if os.path.exists(p):
        put("route_config", bytes([flag]) + read(p) + b"\0" + inst)
rc = os.path.join(GOLDEN, "query-dsl", "route_cases.jsonl")
if os.path.exists(rc):
    for line in read(rc).decode().split("\n"):
        if not line.strip():
            continue
        c = json.loads(line)
        cfg = c.get("config")
        if cfg is None:
            continue
        put("route_config", b"\0" + json.dumps(cfg).encode() + b"\0" + "\n".join(json.dumps(i) for i in c.get("instances", [])).encode())
put("route_config", b"\1local r(n) = if n == 0 then [] else [{where: {x: n}, metrics: ['exact_match']}] + r(n - 1); {routes: r(3)}\0{\"x\": 1}")

# parse_eval (query-dsl): QUERY \n VALUE from the golden where-cases
qc = os.path.join(GOLDEN, "query-dsl", "cases.jsonl")
if os.path.exists(qc):
    import ast
    for line in read(qc).decode().split("\n"):
        try:
            c = json.loads(line)
            w, v = c["where"], c["extra_info"]
            w = ast.literal_eval(w) if isinstance(w, str) else w
            v = ast.literal_eval(v) if isinstance(v, str) else v
            put("parse_eval", json.dumps(w) + "\n" + json.dumps(v))
        except (ValueError, SyntaxError, KeyError, TypeError):
            continue

for t in sorted(os.listdir(os.path.join(FUZZ, "corpus"))):
    print(t, len(os.listdir(os.path.join(FUZZ, "corpus", t))))
