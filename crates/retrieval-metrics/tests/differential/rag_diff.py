#!/usr/bin/env python3
"""Differential check of `routeval rag` against PyPI rag-quality-check 0.1.0 (not a cargo test).

Generates random case files full of edge cases (Unicode casefolding, CJK, marks, emoji,
odd whitespace, ids of every JSON type, graded/binary/empty relevance, odd gains, blank
and non-string answers), runs the reference CLI in-process and `routeval rag` as a
process, and compares stdout, stderr (program name aside) and exit status byte for byte,
in text mode and with --json.

usage: python rag_diff.py ROUTEVAL_BIN [N_FILES] [SEED]
  (needs `pip install rag-quality-check`; run it from a venv that has it)
"""
import contextlib
import io
import json
import random
import subprocess
import sys

from rag_quality_check import cli

WORDS = ("reset password billing plan cancel Straße STRASSE ﬁle Σίσυφος ΣΊΣΥΦΟΣ İstanbul "
         "KELVIN café cafe\u0301 x² ½ Ⅻ ① ＡＢＣ 中文 検索 한국어 か\u3099 abc中文 2024年 "
         "पासवर्ड बदलें बदलने مرحبا שָׁלוֹם ภาษาไทย p_reset doc-42 a_b_c http://x.y/z "
         "9f86d081884c7d659a2feaa0c55ad015 the is it what how I ❤️ 👨\u200d👩\u200d👧 "
         "e.g. 3.14 ok! why? 。 ！ ۔ । ॥ ؟ soft\u00adhyphen zero\u200bwidth 'quote' \"dq\" "
         "back\\slash tab\tx").split(" ")
SEPS = [" ", " ", " ", "  ", "\n", "\t", "\u00a0", "\u3000", ". ", "? ", "! ", "。", "\u001c", "\u2028"]


def text(rnd, lo=0, hi=12):
    n = rnd.randint(lo, hi)
    out = ""
    for i in range(n):
        out += rnd.choice(WORDS)
        if i + 1 < n:
            out += rnd.choice(SEPS)
    if rnd.random() < 0.3:
        out += rnd.choice([".", "?", "!", "。", " ", "\n"])
    return out


def scalar(rnd):
    return rnd.choice([0, 1, 2, 1.0, 1.5, -0.0, True, False, None, 10**20, "1", "p_reset", ""])


def item(rnd):
    r = rnd.random()
    if r < 0.35:
        return text(rnd, 1, 14)
    if r < 0.55:
        return rnd.choice(["p_reset", "p_billing", "doc-1", "d1", "d2", "Paris", "x" * 41, "x" * 40])
    if r < 0.7:
        return scalar(rnd)
    d = {}
    if rnd.random() < 0.8:
        d["id"] = rnd.choice(["d1", "d2", "d3", 1, 2, None, 1.0, True, "p_reset"])
    for key in ["text", "passage", "content", "chunk", "document"]:
        if rnd.random() < 0.25:
            d[key] = rnd.choice([text(rnd, 1, 14), "", 42, None])
    return d


def relevant(rnd):
    r = rnd.random()
    if r < 0.25:
        return None
    if r < 0.55:
        return [rnd.choice(["d1", "d2", "p_reset", 1, 2, 1.0, True, {"id": "d1"}, {"text": "d3"}]) for _ in range(rnd.randint(0, 4))]
    gains = [0, 1, 2, 3, 0.5, -1, True, False, "2", " 1.5 ", "1e0", "nan", "1_0", "inf"]
    return {rnd.choice(["d1", "d2", "d3", "p_reset", "1"]): rnd.choice(gains) for _ in range(rnd.randint(0, 4))}


def case(rnd):
    c = {}
    if rnd.random() < 0.95:
        c["query"] = rnd.choice([text(rnd, 0, 8), text(rnd, 1, 8), text(rnd, 1, 8), 42, 0, None, "", ["a", 1], {"x": 1}, True, 2.5])
    if rnd.random() < 0.95:
        c["retrieved"] = [item(rnd) for _ in range(rnd.randint(0, 7))]
    rel = relevant(rnd)
    if rel is not None or rnd.random() < 0.1:
        c["relevant"] = rel
    if rnd.random() < 0.6:
        c["answer"] = rnd.choice([text(rnd, 1, 20), text(rnd, 1, 20), "", "  ", 42, False, None, "It is."])
    if rnd.random() < 0.4:
        c["ground_truth"] = rnd.choice([text(rnd, 1, 10), "", 7, None])
    return c


def reference(argv, stdin):
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(argv)
            except SystemExit as e:
                code = e.code
    finally:
        sys.stdin = old
    return out.getvalue(), err.getvalue(), code


def main():
    binary = sys.argv[1]
    n_files = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rnd = random.Random(seed)
    bad = 0
    for f in range(n_files):
        cases = [case(rnd) for _ in range(rnd.randint(0, 12))]
        stdin = json.dumps(cases, ensure_ascii=False)
        k = rnd.choice([1, 2, 3, 5, 10])
        t = rnd.choice(["0", "0.25", "0.5", "0.5", "0.75", "1"])
        for extra in ([], ["--json"], ["--weakest", str(rnd.choice([0, 1, 5]))]):
            argv = ["-", "--k=%d" % k, "--threshold=%s" % t] + extra
            r_out, r_err, r_code = reference(argv, stdin)
            p = subprocess.run([binary, "rag"] + argv, input=stdin.encode(), capture_output=True)
            o_out, o_err = p.stdout.decode(), p.stderr.decode()
            want_out = r_out.replace("rag-quality-check", "routeval rag")
            want_err = r_err.replace("rag-quality-check", "routeval rag")
            if (o_out, o_err, p.returncode) != (want_out, want_err, r_code):
                bad += 1
                print("MISMATCH file %d argv %s" % (f, argv))
                print("input:", stdin[:2000])
                for a, b in ((o_out, want_out), (o_err, want_err)):
                    if a != b:
                        al, bl = a.splitlines(), b.splitlines()
                        for x, y in zip(al, bl):
                            if x != y:
                                print("  ours:", repr(x))
                                print("  want:", repr(y))
                                break
                        else:
                            print("  lengths", len(al), len(bl))
                if p.returncode != r_code:
                    print("  exit", p.returncode, r_code)
                if bad > 5:
                    sys.exit(1)
    print("differential: %d files x 3 runs, %d mismatches" % (n_files, bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
