#!/usr/bin/env python3
"""`routeval filter --count` (median of 5 runs) vs the Python model's parse-and-match, per route of
shared/bench/query_bench_gen.py (wall and CPU time; the machine may be shared, so CPU time
is the fairer figure). usage: python3 benches/dsl_filter_vs_model.py DATADIR [ROUTEVAL_BIN]"""
import json, os, resource, subprocess, sys, time

d = sys.argv[1]
exe = sys.argv[2] if len(sys.argv) > 2 else "target/release/routeval"
shared = os.environ.get("ROUTEVAL_SHARED", "../shared")
sys.path.insert(0, os.path.join(shared, "oracles", "query-dsl"))
from qr_model import compile_where  # noqa: E402

routes = json.load(open(os.path.join(d, "routes.json")))
data = os.path.join(d, "data.jsonl")
tot = {"model_wall": 0.0, "model_cpu": 0.0, "rust_wall": 0.0, "rust_cpu": 0.0}
for name, w in routes.items():
    t, c = time.perf_counter(), time.process_time()
    q = compile_where(w)
    n_model = 0
    with open(data) as f:
        for line in f:
            n_model += q.matches(json.loads(line), "skip")
    mw, mc = time.perf_counter() - t, time.process_time() - c
    runs = []
    for _ in range(5):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        out = subprocess.run([exe, "filter", "--count", "--where", json.dumps(w), data],
                             capture_output=True, text=True, check=True)
        rw = time.perf_counter() - t
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        rc = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        runs.append((rw, rc))
    assert int(out.stdout) == n_model, (name, out.stdout, n_model)
    best = sorted(runs)[len(runs) // 2]  # the median run (by wall time) of 5
    tot["model_wall"] += mw; tot["model_cpu"] += mc; tot["rust_wall"] += best[0]; tot["rust_cpu"] += best[1]
    print(f"{name:11s} matches {n_model:6d}  model {mw*1000:7.0f} ms wall {mc*1000:7.0f} ms CPU | "
          f"routeval filter {best[0]*1000:6.0f} ms wall {best[1]*1000:5.0f} ms CPU | "
          f"x{mw/best[0]:.1f} wall x{mc/best[1]:.1f} CPU")
print(f"{'all 5':11s}                 model {tot['model_wall']*1000:7.0f} ms wall {tot['model_cpu']*1000:7.0f} ms CPU | "
      f"routeval filter {tot['rust_wall']*1000:6.0f} ms wall {tot['rust_cpu']*1000:5.0f} ms CPU | "
      f"x{tot['model_wall']/tot['rust_wall']:.1f} wall x{tot['model_cpu']/tot['rust_cpu']:.1f} CPU")
