#!/usr/bin/env python3
"""Differential run (outside cargo test): random where-queries against the Python model
(shared/oracles/query-dsl/qr_model.py) and random regex patterns against Python's `re`,
compared with routeval's implementation (the `eval_jsonl` example).

usage: python3 crates/query-dsl/tests/diff/diff_model.py [N_QUERIES] [N_PATTERNS] [SEED]
(run from the workspace root; needs ROUTEVAL_SHARED or ../shared)
"""
import json, os, random, re, subprocess, sys, warnings

shared = os.environ.get("ROUTEVAL_SHARED", os.path.join(os.getcwd(), "..", "shared"))
sys.path.insert(0, os.path.join(shared, "oracles", "query-dsl"))
from qr_model import evaluate_case  # noqa: E402

NQ = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
NP = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
SEED = int(sys.argv[3]) if len(sys.argv) > 3 else 7
r = random.Random(SEED)

SCALARS = [None, True, False, 0, 1, -1, 2, 7, 0.5, 1.0, -0.0, 2.5, 9007199254740993, 9007199254740992.0,
           "a", "b", "ab", "math", "é", "e\u0301", "7", "", "Math", "😀", "\uffff", "10", "9"]
KEYS = ["x", "y", "tags", "items", "meta", "0", "*", "lang", "score", "in", "gt"]


def rvalue(d=0):
    k = r.random()
    if d > 2 or k < 0.55:
        return r.choice(SCALARS)
    if k < 0.8:
        return [rvalue(d + 1) for _ in range(r.randint(0, 4))]
    return {r.choice(KEYS): rvalue(d + 1) for _ in range(r.randint(0, 4))}


def rpath():
    segs = [r.choice(KEYS + ["-1", "1", "0", "*", "nope"]) for _ in range(r.randint(1, 3))]
    if r.random() < 0.03:
        segs.append("")
    return ".".join(segs)


OPS = ["eq", "ne", "in", "not_in", "regex", "exists", "gt", "gte", "lt", "lte", "elem_match",
       "==", "!=", ">", ">=", "<", "<="]
PATTERNS = ["^a", "a$", "b", "(", "^(a|b)$", "\\d", "\\w+", "(?i)MATH", ".", "^$"]


def roperand(op, d):
    if op in ("in", "not_in"):
        return r.choice([[rvalue(2) for _ in range(r.randint(0, 3))], "abc", r.choice(SCALARS), {"a": 1}])
    if op == "regex":
        return r.choice(PATTERNS + [5, None])
    if op == "exists":
        return r.choice([True, False, 1])
    if op in ("gt", "gte", "lt", "lte", ">", ">=", "<", "<="):
        return r.choice([0, 1, 2.5, -1, "a", "m", True, None, 9007199254740992.0])
    if op == "elem_match":
        if d > 1:
            return {"eq": 1}
        if r.random() < 0.5:
            return {r.choice(OPS[:10]): roperand(r.choice(OPS[:10]), d + 1) for _ in range(r.randint(1, 2))}
        return rwhere(d + 1)
    return rvalue(2)


def rcond(d):
    k = r.random()
    if k < 0.25:
        return r.choice(SCALARS)
    if k < 0.35:
        return [rvalue(2) for _ in range(r.randint(0, 3))]
    ops = {}
    for _ in range(r.randint(1, 3)):
        op = r.choice(OPS)
        ops[op] = roperand(op, d)
    return ops


def rwhere(d=0):
    return {rpath(): rcond(d) for _ in range(r.randint(1, 3))}


def run_rust(lines):
    exe = subprocess.run(["cargo", "run", "-q", "--release", "-p", "routeval-query-dsl", "--example", "eval_jsonl"],
                         input="\n".join(json.dumps(l, ensure_ascii=False) for l in lines) + "\n",
                         capture_output=True, text=True)
    if exe.returncode != 0:
        sys.exit(exe.stderr)
    return [json.loads(l) for l in exe.stdout.splitlines()]


# ---- where queries against the model
cases = []
for _ in range(NQ):
    info = {k: rvalue() for k in r.sample(KEYS, r.randint(1, 6))}
    cases.append({"where": rwhere(), "extra_info": info, "on_missing_key": r.choice(["skip", "error"])})
got = run_rust(cases)
bad_q = 0
for c, g in zip(cases, got):
    exp, kind = evaluate_case(c["extra_info"], c["where"], c["on_missing_key"])
    want = {"expect": exp} if exp != "error" else {"expect": "error", "error_kind": kind}
    if want != g:
        bad_q += 1
        if bad_q <= 10:
            print("QUERY MISMATCH", json.dumps(c, ensure_ascii=False), "model", want, "rust", g)
print(f"where queries: {NQ - bad_q}/{NQ} agree with qr_model.py")

# ---- regex patterns against Python re
ATOMS = ["a", "b", "ab", ".", "\\d", "\\w", "\\s", "\\W", "\\b", "\\B", "^", "$", "\\A", "\\Z", "[ab]", "[^a]",
         "[a-c]", "[\\d_]", "(a)", "(?:ab)", "(?P<n>a)", "(?P=n)", "\\1", "(?=a)", "(?!b)", "(?<=a)", "(?<!a)",
         "(?i)", "(?m)", "(?s)", "(?x)", "(?a)", "(?i:a)", "(?-i:A)", "*", "+", "?", "{2}", "{,2}", "{1,}", "*?",
         "++", "|", "(", ")", "[", "]", "{", "}", "\\", "é", "É", "²", "\\n", "\\x41", "\\u00e9", "\\N{DIGIT ONE}",
         "[[:alpha:]]", "(?>a+)", "(?(1)a|b)", "#c\n", " ", "\\Z", "\\z", "\\p{L}", "\\h", "[z-a]", "\\0", "\\12"]
HAY = ["", "a", "ab", "abc\n", "A", "aaab", "b a", "é", "É1", "²", "_", "\u001c", "a\nb", "ba", "x y z", "abab",
       "1", "١", "K", "\u212a", "ſ", "a]]", "aB"]
pats = []
for _ in range(NP):
    pats.append("".join(r.choice(ATOMS) for _ in range(r.randint(1, 5))))
lines = [{"pattern": p, "haystacks": HAY} for p in pats]
got = run_rust(lines)
bad_p = 0
both_ok = 0
for p, g in zip(pats, got):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cp = re.compile(p)
        want = {"ok": True, "matches": [cp.search(h) is not None for h in HAY]}
    except (re.error, ValueError, OverflowError, RecursionError):
        want = {"ok": False}
    gg = {"ok": g["ok"]}
    if g["ok"]:
        gg["matches"] = g["matches"]
    if want != gg:
        bad_p += 1
        if bad_p <= 25:
            print("REGEX MISMATCH", repr(p), "python", want, "rust", g)
    elif want["ok"]:
        both_ok += 1
print(f"regex patterns: {NP - bad_p}/{NP} agree with Python re ({both_ok} valid in both, searched on {len(HAY)} haystacks)")
