#!/usr/bin/env python3
"""`routeval filter --count` vs the Python model's parse-and-match, per route of
shared/bench/query_bench_gen.py: per side, the wall time of the median run (the lower middle
for an even count) of --runs runs (default 5) and that run's CPU time. After one untimed
warm-up run each, the sides alternate run by run, the model first in even rounds, so a slow
minute of the machine hits both (with an odd count routeval follows the model once more than
the other way round).

usage: python3 benches/dsl_filter_vs_model.py DATADIR [ROUTEVAL_BIN] [--runs N]"""
import argparse, json, os, resource, subprocess, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("datadir")
ap.add_argument("bin", nargs="?", default="target/release/routeval")
ap.add_argument("--runs", type=int, default=5, help="runs per side; medians (default 5)")
a = ap.parse_args()
if not 1 <= a.runs <= 1000:
    ap.error("--runs must be between 1 and 1000")
d, exe = a.datadir, a.bin
shared = os.environ.get("ROUTEVAL_SHARED", "../shared")
sys.path.insert(0, os.path.join(shared, "oracles", "query-dsl"))
from qr_model import compile_where  # noqa: E402

routes = json.load(open(os.path.join(d, "routes.json")))
data = os.path.join(d, "data.jsonl")


def model(w):
    """One run of the model: compile the route, json.loads and match every line."""
    t, c = time.perf_counter(), time.process_time()
    q = compile_where(w)
    n = 0
    with open(data) as f:
        for line in f:
            n += q.matches(json.loads(line), "skip")
    return n, time.perf_counter() - t, time.process_time() - c


def rust(w):
    """One run of `routeval filter --count` (whole process: wall, and its user + sys)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([exe, "filter", "--count", "--where", json.dumps(w), data],
                         capture_output=True, text=True, check=True, timeout=600)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return int(out.stdout), wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def median(runs):
    """The median run by wall time (the lower middle for an even count): (wall, CPU) of it."""
    return sorted(runs)[(len(runs) - 1) // 2]


tot = {"model_wall": 0.0, "model_cpu": 0.0, "rust_wall": 0.0, "rust_cpu": 0.0}
for name, w in routes.items():
    m_runs, r_runs = [], []
    model(w)
    rust(w)
    for i in range(a.runs):
        for side in (("m", "r") if i % 2 == 0 else ("r", "m")):
            if side == "m":
                n_model, mw, mc = model(w)
                m_runs.append((mw, mc))
            else:
                n_rust, rw, rc = rust(w)
                r_runs.append((rw, rc))
        if n_rust != n_model:
            sys.exit(f"dsl_filter_vs_model.py: route {name}: routeval counted {n_rust}, the model {n_model}")
    (mw, mc), best = median(m_runs), median(r_runs)
    tot["model_wall"] += mw; tot["model_cpu"] += mc; tot["rust_wall"] += best[0]; tot["rust_cpu"] += best[1]
    print(f"{name:11s} matches {n_model:6d}  model {mw*1000:7.0f} ms wall {mc*1000:7.0f} ms CPU | "
          f"routeval filter {best[0]*1000:6.0f} ms wall {best[1]*1000:5.0f} ms CPU | "
          f"x{mw/best[0]:.1f} wall x{mc/best[1]:.1f} CPU")
print(f"{'all 5':11s}                 model {tot['model_wall']*1000:7.0f} ms wall {tot['model_cpu']*1000:7.0f} ms CPU | "
      f"routeval filter {tot['rust_wall']*1000:6.0f} ms wall {tot['rust_cpu']*1000:5.0f} ms CPU | "
      f"x{tot['model_wall']/tot['rust_wall']:.1f} wall x{tot['model_cpu']/tot['rust_cpu']:.1f} CPU "
      f"(medians of {a.runs} per side)")
