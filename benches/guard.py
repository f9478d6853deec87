#!/usr/bin/env python3
"""Speed and memory regression guard: the four main benchmarks at a reduced size, side by side
with their Python references, in one command.

    python3 benches/guard.py                 # build --release, run, compare with benches/guard.json
    python3 benches/guard.py --record        # run and write the figures as the new record
    python3 benches/guard.py --only trec,rag --runs 3 --bin target/release/routeval

For each benchmark the guard runs routeval RUNS times (median) and the reference REF_RUNS times
(median), measures wall time, CPU time (user + sys of the whole child process, from wait4) and
peak RSS (ru_maxrss; every child is started by a bare ~5 MB spawner process, since a child's
ru_maxrss also counts the process it was forked from), checks that both printed the same
answer, and prints the ratios
reference / routeval. It exits 1 when a wall or CPU ratio falls more than 20 % below the recorded
one, or routeval's peak RSS grows more than 20 % above the recorded figure (the trec path once grew
46 % unnoticed); 2 on bad usage or a missing reference; 0 otherwise.

| benchmark | input (reduced size) | routeval | reference |
|---|---|---|---|
| trec | gen_trec.py 20000 100 1 | `trec` with 6 measures | pytrec-eval-terrier parse + evaluate (benches/trec_pytrec.py) |
| filter | query_bench_gen.py, first 20,000 instances, 5 routes | `filter --count` per route | the where-language model (shared/oracles/query-dsl/qr_model.py) |
| rag | rag_bench_gen.py --sizes 5000 (ids and texts) | `rag --k 10 --json` | rag-quality-check 0.1.0 (`rag-quality-check FILE --k 10 --json`) |
| crb | crb_bank_gen.py 970 | `crb eval --predictor gold --json` | the CRB clean-room model (shared/oracles/crb/cleanroom.py) |

`--scaling 1,2,4` runs routeval alone at 1x, 2x and 4x those sizes (three to five multiples
in 1..=5) and prints wall, CPU, cores used, peak RSS and CPU per unit of input, and whether the
CPU added per unit of input stays level (linear growth with a fixed start-up cost); exit 1 when
it is more than 25 % higher over the upper half of the sizes than over the lower half.

Reference set-up (once): a venv with `pip install pytrec-eval-terrier==0.5.11
rag-quality-check==0.1.0 tiktoken tokenizers`, passed as `--python VENV/bin/python`.
Ratios are noisy on a shared machine (±15 % run to run on the 2-core VM): run it on a quiet
machine; CPU time and peak RSS are the steadier figures. Not part of `cargo test`.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "benches" / "guard.json"
TOLERANCE = 0.20
TREC_MEASURES = ["P.10", "recall.10", "recip_rank", "ndcg_cut.10", "success.10", "map"]


class Measured:
    """One child process: wall seconds, CPU seconds (user + sys), peak RSS in MB, stdout."""

    def __init__(self, wall: float, cpu: float, rss_mb: float, out: str):
        self.wall, self.cpu, self.rss_mb, self.out = wall, cpu, rss_mb, out


# The process that starts every measured child. A child's peak RSS as wait4 reports it
# (ru_maxrss) includes the RSS of the process it was forked from (Linux records the old
# address space's peak when the child execs), so children started by the guard itself would
# show the guard's memory, which grows with the outputs it keeps. This spawner is a bare
# interpreter (-S -I, four stdlib modules, about 5 MB: the floor of every RSS figure) that
# forks and execs each command, waits for it and reports its resource use.
SPAWNER = r"""
import json, os, signal, sys, time
signal.signal(signal.SIGALRM, lambda *_: os.kill(pid, signal.SIGKILL))
for line in sys.stdin:
    req = json.loads(line)
    out = os.open(req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(req["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(out, 1)
            os.dup2(err, 2)
            env = req["env"]
            if env is None:
                os.execvp(req["cmd"][0], req["cmd"])
            os.execvpe(req["cmd"][0], req["cmd"], env)
        finally:
            os._exit(127)
    os.close(out)
    os.close(err)
    signal.setitimer(signal.ITIMER_REAL, req["timeout"])
    _, status, ru = os.wait4(pid, 0)
    signal.setitimer(signal.ITIMER_REAL, 0)
    wall = time.perf_counter() - t0
    print(json.dumps({"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_kb": ru.ru_maxrss,
                      "code": os.waitstatus_to_exitcode(status)}), flush=True)
"""

_spawner: subprocess.Popen | None = None


def spawner() -> subprocess.Popen:
    """The spawner process, started on first use (and ended with the guard: its stdin closes)."""
    global _spawner
    if _spawner is None:
        _spawner = subprocess.Popen([sys.executable, "-S", "-I", "-c", SPAWNER],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return _spawner


def run(cmd: list[str], timeout: float, env: dict | None = None) -> Measured:
    """Run CMD (through the spawner) with stdout and stderr to temporary files, kill it after
    TIMEOUT seconds, and return its resource use as wait4 reports it (this child only)."""
    with tempfile.TemporaryDirectory() as tmp:
        out_path, err_path = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        sp = spawner()
        sp.stdin.write(json.dumps({"cmd": cmd, "env": env, "out": out_path, "err": err_path,
                                   "timeout": timeout}) + "\n")
        sp.stdin.flush()
        reply = sp.stdout.readline()
        if not reply:
            sys.exit("guard: the spawner process ended unexpectedly")
        r = json.loads(reply)
        with open(err_path, "rb") as f:
            err = f.read().decode(errors="replace")
        if r["code"] != 0:
            sys.exit(f"guard: {' '.join(cmd)} exited {r['code']}: {err.strip()[:500]}")
        with open(out_path, "rb") as f:
            text = f.read().decode(errors="replace")
    return Measured(r["wall"], r["cpu"], r["rss_kb"] / 1024.0, text)


def median_of(cmds: list[list[str]], runs: int, timeout: float, env=None) -> Measured:
    """Run the command list (one benchmark may be several processes, e.g. one per route) RUNS
    times; sum within a round, median over rounds of each figure (peak RSS: the max within a
    round)."""
    rounds = []
    for _ in range(runs):
        ms = [run(c, timeout, env) for c in cmds]
        rounds.append(Measured(sum(m.wall for m in ms), sum(m.cpu for m in ms),
                               max(m.rss_mb for m in ms), "\n".join(m.out for m in ms)))
    return Measured(statistics.median(r.wall for r in rounds),
                    statistics.median(r.cpu for r in rounds),
                    statistics.median(r.rss_mb for r in rounds), rounds[-1].out)


def gen(cmd: list[str], marker: Path) -> None:
    if not marker.exists():
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, timeout=1800)


def scaled(data: Path, name: str, scale: int) -> Path:
    """The input directory of benchmark NAME at SCALE times the reduced size (1: the guard's)."""
    return data / (name if scale == 1 else f"{name}-x{scale}")


def bench_trec(a, data: Path, shared: Path, scale: int = 1, with_ref: bool = True):
    d = scaled(data, "trec", scale)
    gen([a.python, str(shared / "bench/gen_trec.py"), str(20000 * scale), "100", "1", str(d)],
        d / "run.txt")
    meas = [x for m in TREC_MEASURES for x in ("-m", m)]
    ours = median_of([[a.bin, "trec", *meas, str(d / "qrels.txt"), str(d / "run.txt")]],
                     a.runs, a.timeout)
    if not with_ref:
        return ours, None, None
    ref = median_of([[a.python, str(ROOT / "benches/trec_pytrec.py"), str(d / "qrels.txt"),
                      str(d / "run.txt")]], a.ref_runs, a.timeout)
    same = sorted(ours.out.split("\n")) == sorted(ref.out.split("\n"))
    return ours, ref, same


def bench_filter(a, data: Path, shared: Path, scale: int = 1, with_ref: bool = True):
    d = scaled(data, "filter", scale)
    full = data / "filter-full"
    gen([a.python, str(shared / "bench/query_bench_gen.py"), str(full)], full / "data.jsonl")
    d.mkdir(parents=True, exist_ok=True)
    if not (d / "data.jsonl").exists():
        # The generator writes 100,000 instances: up to 5x the reduced size.
        with open(full / "data.jsonl") as src, open(d / "data.jsonl", "w") as dst:
            for i, line in enumerate(src):
                if i == 20000 * scale:
                    break
                dst.write(line)
    routes = json.loads((full / "routes.json").read_text())
    ours = median_of([[a.bin, "filter", "--count", "--where", json.dumps(w), str(d / "data.jsonl")]
                      for w in routes.values()], a.runs, a.timeout)
    if not with_ref:
        return ours, None, None
    script = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(shared / 'oracles' / 'query-dsl')!r})\n"
        "from qr_model import compile_where\n"
        "q = compile_where(json.loads(sys.argv[1]))\n"
        "n = 0\n"
        "with open(sys.argv[2]) as f:\n"
        "    for line in f:\n"
        "        n += q.matches(json.loads(line), 'skip')\n"
        "print(n)\n")
    ref = median_of([[a.python, "-c", script, json.dumps(w), str(d / "data.jsonl")]
                     for w in routes.values()], a.ref_runs, a.timeout)
    same = ours.out.split() == ref.out.split()
    return ours, ref, same


def bench_rag(a, data: Path, shared: Path, scale: int = 1, with_ref: bool = True):
    d = scaled(data, "rag", scale)
    n = 5000 * scale
    gen([a.python, str(shared / "bench/rag_bench_gen.py"), "--out", str(d), "--sizes", str(n),
         "--trec-queries", "1"], d / f"rqc_text_{n}.json")
    files = [str(d / f"rqc_ids_{n}.json"), str(d / f"rqc_text_{n}.json")]
    ours = median_of([[a.bin, "rag", f, "--k", "10", "--json"] for f in files], a.runs, a.timeout)
    if not with_ref:
        return ours, None, None
    rqc = shutil.which("rag-quality-check", path=str(Path(a.python).parent)) or \
        shutil.which("rag-quality-check")
    if rqc is None:
        print("guard: rag-quality-check not found next to --python or on PATH "
              "(pip install rag-quality-check==0.1.0)", file=sys.stderr)
        sys.exit(2)
    ref = median_of([[rqc, f, "--k", "10", "--json"] for f in files], a.ref_runs, a.timeout)
    return ours, ref, ours.out == ref.out


def bench_crb(a, data: Path, shared: Path, scale: int = 1, with_ref: bool = True):
    d = scaled(data, "crb", scale)
    d.mkdir(parents=True, exist_ok=True)
    bank = d / f"bank{970 * scale}.jsonl"
    gen([a.python, str(shared / "bench/crb/crb_bank_gen.py"), str(970 * scale), str(bank)], bank)
    cmd = [a.bin, "crb", "eval", "--bank", str(bank), "--predictor", "gold", "--tokenizers",
           str(shared / "thirdparty/tokenizers"), "--json"]
    ours = median_of([cmd], a.runs, a.timeout)
    if not with_ref:
        return ours, None, None
    # The clean-room model reads a case directory and checks routeval's summary against its own.
    case = d / "cases" / "gold"
    case.mkdir(parents=True, exist_ok=True)
    shutil.copy(bank, case / "bank.jsonl")
    s = json.loads(ours.out)
    s.pop("routeval_tokenizers", None)
    (case / "predictions.json").write_text(json.dumps({r["id"]: r["gold_tier_id"] for r in s["rows"]}))
    s["classifier"] = "gold"
    s["shard"] = "bank.jsonl"
    (case / "expected_summary.json").write_text(json.dumps(s))
    (case / "case.json").write_text(json.dumps({
        "mode": "run_question_bank_eval", "predictor_label": "gold", "n": None, "seed": 42,
        "manifest_used_for_sampling": "none", "extra_summary": None,
        "error_row_message": "predictor error"}))
    env = dict(os.environ, ROUTEVAL_SHARED=str(shared))
    try:
        ref = median_of([[a.python, str(shared / "oracles/crb/cleanroom.py"), str(d / "cases")]],
                        a.ref_runs, a.timeout, env)
        same = True  # cleanroom.py exits non-zero when routeval's summary differs from its own
    except SystemExit as e:
        print(str(e), file=sys.stderr)
        return ours, None, False
    return ours, ref, same


BENCHES = {"trec": bench_trec, "filter": bench_filter, "rag": bench_rag, "crb": bench_crb}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", help="routeval binary (default: build target/release/routeval)")
    p.add_argument("--python", default=sys.executable,
                   help="Python with the references installed (default: this interpreter)")
    p.add_argument("--runs", type=int, default=5, help="routeval runs per benchmark (median)")
    p.add_argument("--ref-runs", type=int, default=1, help="reference runs per benchmark (median)")
    p.add_argument("--only", default=",".join(BENCHES), help="comma-separated subset")
    p.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "routeval-guard"),
                   help="where the generated inputs are kept between runs")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per process")
    p.add_argument("--record", action="store_true", help="write the figures to benches/guard.json")
    p.add_argument("--scaling", metavar="SCALES",
                   help="instead of the comparison: routeval alone at these multiples of the "
                        "reduced sizes (e.g. 1,2,4; each in 1..=5, the filter generator's "
                        "100,000 instances bound it), printing how time and memory grow")
    a = p.parse_args()
    scales = None
    if a.scaling is not None:
        try:
            scales = [int(x) for x in a.scaling.split(",") if x]
        except ValueError:
            p.error(f"--scaling {a.scaling!r}: comma-separated integers expected")
        if len(scales) < 3 or any(not 1 <= x <= 5 for x in scales) or scales != sorted(set(scales)):
            p.error("--scaling needs at least three increasing multiples in 1..=5")
        if a.record:
            p.error("--scaling and --record cannot be combined (the record is the comparison)")
    if not 1 <= a.runs <= 50 or not 1 <= a.ref_runs <= 50:
        p.error("--runs and --ref-runs must be in 1..=50")
    if not 1.0 <= a.timeout <= 86400.0:
        p.error("--timeout must be in 1..=86400 seconds")
    only = [b for b in a.only.split(",") if b]
    if not only:
        p.error(f"--only names no benchmark (known: {', '.join(BENCHES)})")
    for b in only:
        if b not in BENCHES:
            p.error(f"unknown benchmark {b!r} (known: {', '.join(BENCHES)})")
    shared = Path(os.environ.get("ROUTEVAL_SHARED", ROOT.parent / "shared")).resolve()
    if not (shared / "bench").is_dir():
        p.error(f"{shared}/bench not found: set ROUTEVAL_SHARED")
    if a.bin is not None and not os.access(a.bin, os.X_OK):
        p.error(f"--bin {a.bin}: not an executable file")
    if a.bin is None:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "routeval-cli"], cwd=ROOT,
                       check=True)
        a.bin = str(Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release/routeval")
    data = Path(a.data)
    data.mkdir(parents=True, exist_ok=True)
    recorded = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    rec_b = recorded.get("benchmarks", {})
    load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else ["?"]
    if scales is not None:
        return scaling(a, only, scales, data, shared, load)
    print(f"machine: {os.cpu_count()} cores, load average {' '.join(load)}; "
          f"routeval {a.runs} runs, reference {a.ref_runs} (medians)")
    print(f"{'bench':7} {'routeval wall/CPU/RSS':>26} {'reference wall/CPU/RSS':>27} "
          f"{'x wall':>7} {'x CPU':>7} {'recorded x wall/CPU, RSS':>26} verdict")
    failed = False
    new = {}
    for b in only:
        ours, ref, same = BENCHES[b](a, data, shared)
        if ref is None or not same:
            print(f"{b:7} outputs differ from the reference: FAIL")
            failed = True
            continue
        xw, xc = ref.wall / ours.wall, ref.cpu / max(ours.cpu, 1e-9)
        new[b] = {"wall_ratio": round(xw, 2), "cpu_ratio": round(xc, 2),
                  "routeval_rss_mb": round(ours.rss_mb, 1), "routeval_wall_s": round(ours.wall, 3),
                  "routeval_cpu_s": round(ours.cpu, 3), "reference_wall_s": round(ref.wall, 3),
                  "reference_cpu_s": round(ref.cpu, 3), "reference_rss_mb": round(ref.rss_mb, 1)}
        r = rec_b.get(b)
        verdict = "no record"
        if r and not a.record:
            bad = []
            if xw < r["wall_ratio"] * (1 - TOLERANCE):
                bad.append(f"wall ratio {xw:.1f} < {r['wall_ratio'] * (1 - TOLERANCE):.1f}")
            if xc < r["cpu_ratio"] * (1 - TOLERANCE):
                bad.append(f"CPU ratio {xc:.1f} < {r['cpu_ratio'] * (1 - TOLERANCE):.1f}")
            if ours.rss_mb > r["routeval_rss_mb"] * (1 + TOLERANCE):
                bad.append(f"RSS {ours.rss_mb:.0f} MB > {r['routeval_rss_mb'] * (1 + TOLERANCE):.0f} MB")
            verdict = "REGRESSION: " + "; ".join(bad) if bad else "ok"
            if bad and (xw < r["wall_ratio"] * (1 - TOLERANCE) or xc < r["cpu_ratio"] * (1 - TOLERANCE)):
                verdict += " [" + moved(ours, ref, r) + "]"
            failed |= bool(bad)
        rec = f"{r['wall_ratio']:.1f}/{r['cpu_ratio']:.1f}, {r['routeval_rss_mb']:.0f} MB" if r else "-"
        print(f"{b:7} {ours.wall:7.3f}s {ours.cpu:7.3f}s {ours.rss_mb:6.0f}MB "
              f"{ref.wall:7.2f}s {ref.cpu:7.2f}s {ref.rss_mb:6.0f}MB {xw:7.1f} {xc:7.1f} "
              f"{rec:>26} {verdict}")
    if a.record:
        merged = dict(rec_b)
        merged.update(new)
        # Atomically: a temporary file beside the record, then a rename over it.
        tmp = RECORD.with_name(RECORD.name + ".tmp")
        tmp.write_text(json.dumps({
            "recorded": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load_average": " ".join(load),
            "command": "python3 benches/guard.py --record " + " ".join(sys.argv[1:]).replace("--record", "").strip(),
            "benchmarks": merged}, indent=2) + "\n")
        os.replace(tmp, RECORD)
        print(f"recorded in {RECORD.relative_to(ROOT)}")
    return 1 if failed else 0


def moved(ours, ref, r) -> str:
    """Which side a fallen ratio moved on: routeval's CPU time against its recorded CPU time, and
    the reference's against its own. A ratio can fall because the reference ran faster on the
    day (the machine's state moves Python and routeval differently), which this names; the
    guard still fails on the ratio, as its rule says."""
    mine = ours.cpu / max(r["routeval_cpu_s"], 1e-9)
    theirs = ref.cpu / max(r["reference_cpu_s"], 1e-9)
    what = []
    what.append(f"routeval CPU {ours.cpu:.3f} s vs recorded {r['routeval_cpu_s']:.3f} s ({mine:.2f}x)")
    what.append(f"reference CPU {ref.cpu:.2f} s vs recorded {r['reference_cpu_s']:.2f} s ({theirs:.2f}x)")
    if mine <= 1 + TOLERANCE and theirs < 1 - TOLERANCE:
        what.append("the reference got faster, routeval did not get slower")
    elif mine > 1 + TOLERANCE:
        what.append("routeval got slower")
    return "; ".join(what)


def scaling(a, only: list[str], scales: list[int], data: Path, shared: Path, load) -> int:
    """Run routeval alone at each multiple of the reduced sizes and print, per benchmark and
    size: wall, CPU, cores used (CPU / wall), peak RSS, and CPU time per unit of input relative
    to the smallest size. Linear growth with a fixed start-up cost shows as equal increments:
    the 'increment ratio' compares the CPU added per unit of input over the upper half of the
    sizes with that over the lower half, split at the middle size (with three sizes: the last
    step against the first; 1.0 = linear; above 1.25 is reported as superlinear).
    Exit 1 when a benchmark grows superlinearly, 0 otherwise."""
    print(f"machine: {os.cpu_count()} cores, load average {' '.join(load)}; "
          f"routeval {a.runs} runs per size (medians), sizes x{', x'.join(map(str, scales))}")
    print(f"{'bench':7} {'size':>5} {'wall':>8} {'CPU':>8} {'cores':>6} {'RSS':>8} "
          f"{'CPU/unit':>9}")
    failed = False
    for b in only:
        got = [(k, BENCHES[b](a, data, shared, k, False)[0]) for k in scales]
        k0, m0 = got[0]
        for k, m in got:
            print(f"{b:7} {'x' + str(k):>5} {m.wall:7.3f}s {m.cpu:7.3f}s "
                  f"{m.cpu / max(m.wall, 1e-9):6.2f} {m.rss_mb:6.0f}MB "
                  f"{(m.cpu / k) / max(m0.cpu / k0, 1e-9):9.2f}")
        # Slopes of the lower and the upper half of the sizes, split at the middle size (with
        # three sizes: the first step and the last step); a half spans at least one step, so
        # one noisy run moves the ratio less when more sizes are given.
        (ka, ma), (kb, mb), (kc, mc) = got[0], got[(len(got) - 1) // 2], got[-1]
        first = (mb.cpu - ma.cpu) / (kb - ka)
        last = (mc.cpu - mb.cpu) / (kc - kb)
        ratio = last / first if first > 0 else float("inf")
        verdict = "linear" if ratio <= 1.25 else "SUPERLINEAR"
        failed |= ratio > 1.25
        print(f"{b:7} increment ratio {ratio:.2f} (CPU per added unit, upper half of the sizes "
              f"/ lower half, split at x{kb}): {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
