"""ranx (the Numba IR-evaluation library) on the `routeval trec` benchmark: parse the qrels and
the run with `Qrels.from_file` / `Run.from_file` (kind "trec") and `evaluate` six measures
matching `benches/trec_vs_pytrec.sh`'s (precision@10, recall@10, mrr, ndcg@10, hit_rate@10,
map). One warm-up call on a two-query input first, so Numba's JIT compilation is not counted.

Usage: python benches/trec_ranx.py QRELS RUN
Prints the six means on stdout and, on stderr, one line
`ranx: wall S s, cpu S s (user+sys of the process during parse + evaluate)`.
ranx's definitions are its own (e.g. its map is over the retrieved list with no cut, its mrr
has no cut): the numbers are printed for reference, not compared with trec_eval's."""

import os
import resource
import sys
import tempfile
import time

from ranx import Qrels, Run, evaluate

METRICS = ["precision@10", "recall@10", "mrr", "ndcg@10", "hit_rate@10", "map"]


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def warm_up():
    with tempfile.TemporaryDirectory() as d:
        q, r = os.path.join(d, "q"), os.path.join(d, "r")
        with open(q, "w") as f:
            f.write("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
        with open(r, "w") as f:
            f.write("1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n2 Q0 c 1 1.0 t\n2 Q0 d 2 0.5 t\n")
        evaluate(Qrels.from_file(q, kind="trec"), Run.from_file(r, kind="trec"), METRICS)


def main():
    qrels_path, run_path = sys.argv[1], sys.argv[2]
    warm_up()
    t0, c0 = time.perf_counter(), cpu()
    qrels = Qrels.from_file(qrels_path, kind="trec")
    run = Run.from_file(run_path, kind="trec")
    scores = evaluate(qrels, run, METRICS)
    wall, used = time.perf_counter() - t0, cpu() - c0
    for m in METRICS:
        print(f"{m}\t{scores[m]:.4f}")
    print(f"ranx: wall {wall:.3f} s, cpu {used:.3f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
