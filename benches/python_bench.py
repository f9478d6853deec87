"""Side-by-side timings of routeval's Python package against the references, in one process.

    python benches/python_bench.py [--queries 30000] [--docs 100] [--cases 20000] [--runs 5]
                                   [--only construct]

Every timing except the import line is, per side, the wall time of the median call (the lower
middle for an even count) of ``--runs`` timed calls (default 5, as issue 26 asks), with that
call's CPU time beside it. After one untimed warm-up call each, the sides alternate call by
call, the reference first in even rounds, so a slow minute of the machine hits both (with an
odd count routeval follows the reference once more than the other way round).

Needs routeval (pip install ./crates/python), pytrec-eval-terrier and rag-quality-check==0.1.0.
Prints one line per comparison; results go into benches/python.md by hand, with the
machine's load noted (timings on a shared machine are noisy).
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time


def cpu_seconds():
    """CPU time of this process so far (user + system, all threads)."""
    try:
        import resource
    except ImportError:  # not on Windows
        return float("nan")
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def median_of(n, calls):
    """Time each side of ``calls`` (``{name: (setup, f)}``, the reference first) ``n`` times
    after one untimed warm-up call each, alternating the sides call by call; ``setup()`` runs
    untimed before each call and its result is passed to ``f``. Returns ``{name: (wall s of
    the median call, CPU s of that call)}``, the lower middle for an even ``n`` (routeval runs
    on every core: its CPU time can exceed its wall time)."""
    times = {name: [] for name in calls}
    names = list(calls)
    for name in names:
        setup, f = calls[name]
        f(setup())
    for i in range(n):
        for name in (names if i % 2 == 0 else names[::-1]):
            setup, f = calls[name]
            arg = setup()
            t, c = time.perf_counter(), cpu_seconds()
            f(arg)
            times[name].append((time.perf_counter() - t, cpu_seconds() - c))
    return {name: sorted(v)[(len(v) - 1) // 2] for name, v in times.items()}


def none():
    return None


def trec_inputs(n_q, n_d, seed=1):
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(n_q):
        qid = f"q{q}"
        docs = [f"doc{q}_{d}" for d in range(n_d)]
        qrels[qid] = {d: rng.choice([0, 0, 0, 1, 2]) for d in rng.sample(docs, 30)}
        run[qid] = {d: rng.random() for d in docs}
    return qrels, run


def rag_cases(n, seed=2):
    rng = random.Random(seed)
    words = "reset password account billing invoice refund solar power energy capital".split()
    cases = []
    for i in range(n):
        passages = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(5)]
        cases.append({
            "query": " ".join(rng.choice(words) for _ in range(5)),
            "retrieved": [{"id": f"p{i}_{j}", "text": t} for j, t in enumerate(passages)],
            "relevant": [f"p{i}_{rng.randint(0, 6)}"],
            "answer": ". ".join(passages[:2]),
        })
    return cases


def construction(qrels, measures, n):
    """Median construction times of both evaluators (wall, and routeval's CPU)."""
    import pytrec_eval
    import routeval.trec as rt

    m = median_of(n, {
        "ref": (none, lambda _: pytrec_eval.RelevanceEvaluator(qrels, measures)),
        "rv": (none, lambda _: rt.RelevanceEvaluator(qrels, measures)),
    })
    (t_ref, _), (t_rv, c_rv) = m["ref"], m["rv"]
    print(f"RelevanceEvaluator(qrels, measures) {len(qrels)} queries x 30 judgments: "
          f"pytrec_eval {t_ref:.3f} s, routeval {t_rv:.3f} s (CPU {c_rv:.3f} s), "
          f"{t_ref / t_rv:.2f}x (medians of {n})")


def construct_only(a):
    qrels, _ = trec_inputs(a.queries, a.docs)
    construction(qrels, {"map", "ndcg_cut.10", "P.10", "recall.100", "recip_rank"}, a.runs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=30000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--cases", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=5,
                    help="timed calls per side; every figure is their median (default 5)")
    ap.add_argument("--only", choices=["construct"],
                    help="construct: time only RelevanceEvaluator(qrels, measures) (issue 26's "
                         "construction target)")
    a = ap.parse_args()
    if not 1 <= a.runs <= 1000:
        ap.error("--runs must be between 1 and 1000")
    if not 1 <= a.queries <= 10_000_000 or not 1 <= a.cases <= 10_000_000:
        ap.error("--queries and --cases must be between 1 and 10,000,000")
    if not 30 <= a.docs <= 100_000:
        ap.error("--docs must be between 30 (each query has 30 judged documents) and 100,000")
    if a.only == "construct":
        return construct_only(a)

    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import routeval"], check=True, timeout=120)
    spawn = time.perf_counter() - t
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, timeout=120)
    bare = time.perf_counter() - t
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import routeval.trec, routeval.rag"],
                         capture_output=True, text=True, check=True, timeout=120).stderr
    cum = [int(line.split("|")[1]) for line in out.splitlines() if line.rstrip().endswith(" routeval")]
    print(f"import routeval: {spawn - bare:.3f} s over a bare interpreter; "
          f"import routeval.trec, routeval.rag (-X importtime): {cum[-1] / 1e6 if cum else float('nan'):.3f} s")

    import pytrec_eval
    import rag_quality_check
    import routeval.rag as rr
    import routeval.trec as rt

    qrels, run = trec_inputs(a.queries, a.docs)
    measures = {"map", "ndcg_cut.10", "P.10", "recall.100", "recip_rank"}
    re_ = rt.RelevanceEvaluator(qrels, measures)
    construction(qrels, measures, a.runs)
    n = a.runs

    # pytrec_eval loses its cut-offs on a second evaluate (pytrec_eval #22): a fresh
    # evaluator per timed call, built untimed, for "evaluate only".
    m = median_of(n, {
        "ref": (lambda: pytrec_eval.RelevanceEvaluator(qrels, measures), lambda pe: pe.evaluate(run)),
        "rv": (none, lambda _: re_.evaluate(run)),
    })
    (t_ref, _), (t_rv, c_rv) = m["ref"], m["rv"]
    print(f"RelevanceEvaluator.evaluate {a.queries}x{a.docs} dicts: pytrec_eval {t_ref:.2f} s, "
          f"routeval {t_rv:.2f} s (CPU {c_rv:.2f} s), {t_ref / t_rv:.1f}x (medians of {n})")
    m = median_of(n, {
        "ref": (none, lambda _: pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)),
        "rv": (none, lambda _: rt.RelevanceEvaluator(qrels, measures).evaluate(run)),
    })
    (t_ref, _), (t_rv, _) = m["ref"], m["rv"]
    print(f"RelevanceEvaluator(...) + evaluate {a.queries}x{a.docs} dicts: pytrec_eval {t_ref:.2f} s, "
          f"routeval {t_rv:.2f} s, {t_ref / t_rv:.1f}x (medians of {n})")

    with tempfile.TemporaryDirectory() as d:
        qp, rp = os.path.join(d, "qrels"), os.path.join(d, "run")
        with open(qp, "w") as f:
            for q, docs in qrels.items():
                for doc, r in docs.items():
                    f.write(f"{q} 0 {doc} {r}\n")
        with open(rp, "w") as f:
            for q, docs in run.items():
                for i, (doc, s) in enumerate(docs.items()):
                    f.write(f"{q} Q0 {doc} {i + 1} {s!r} t\n")

        def ref_files(_):
            pq = pytrec_eval.parse_qrel(open(qp))
            pr = pytrec_eval.parse_run(open(rp))
            pytrec_eval.RelevanceEvaluator(pq, measures).evaluate(pr)

        m = median_of(n, {
            "ref": (none, ref_files),
            "rv": (none, lambda _: rt.evaluate_files(qp, rp, measures)),
        })
        (t_ref, _), (t_rv, c_rv) = m["ref"], m["rv"]
        print(f"files (parse + evaluate) {a.queries}x{a.docs}: pytrec_eval {t_ref:.2f} s, "
              f"routeval evaluate_files {t_rv:.2f} s (CPU {c_rv:.2f} s), "
              f"{t_ref / t_rv:.1f}x (medians of {n})")

    cases = rag_cases(a.cases)
    m = median_of(n, {
        "ref": (none, lambda _: rag_quality_check.evaluate(cases, k=5)),
        "rv": (none, lambda _: rr.evaluate(cases, k=5)),
    })
    (t_ref, _), (t_rv, c_rv) = m["ref"], m["rv"]
    print(f"rag.evaluate {a.cases} cases: rag_quality_check {t_ref:.2f} s, routeval {t_rv:.2f} s "
          f"(CPU {c_rv:.2f} s), {t_ref / t_rv:.1f}x (medians of {n})")


if __name__ == "__main__":
    main()
