#!/usr/bin/env python3
"""`routeval crb eval` against CommonRouterBench's own evaluation, side by side (issue 26
target 4): after one untimed warm-up run each, both run --runs times per bank (default 5),
alternated run by run (the reference first in even rounds: with an odd count routeval follows
the reference once more than the other way round) so that a slow minute of the machine hits
both. Prints the medians (the lower middle for an even count; wall time, whole-process CPU
time (user + sys) and peak RSS each on its own), the ratios, and whether the two summaries
agree. A routeval run right after a reference run can pay the kernel's huge-page compaction
(benches/crb.md), so each side's CPU times are printed too.

usage: ROUTEVAL_SHARED=../shared python3 benches/crb_side_by_side.py REF_DIR
           [--sizes 970 20000] [--runs 5] [--bin target/release/routeval] [--python python3]
           [--timeout 3600]

REF_DIR is a fetched copy of CommonstackAI/LLMRouterBench at df000711a56b, kept outside this
repository and never committed; the reference runs through `benches/crb_reference.py` (see
there: `pip install tiktoken tokenizers requests`, nothing downloaded). Banks come from
`$ROUTEVAL_SHARED/bench/crb/crb_bank_gen.py N` and are kept in $TMPDIR/routeval-crb-bench,
with the last summaries of both sides (`side_routevalN.json`, `side_referenceN.json`).
The reference takes minutes per run at 20,000 rows (about 5.5 min on the project's VM).
Each run goes through the regression guard's runner (`guard.run`): a run still going after
--timeout seconds (default 3600) is killed and the script stops.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import guard  # noqa: E402  (benches/guard.py: the timed-child runner)


def timed(cmd, env, timeout):
    """One run of `cmd` through the regression guard's runner (`guard.run`: its own process's
    wall, user + sys and peak RSS, killed after `timeout` seconds, a failure ends the script
    with its stderr): (wall s, CPU s, peak RSS MB)."""
    m = guard.run(cmd, timeout, env)
    return m.wall, m.cpu, m.rss_mb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ref_dir", type=Path)
    ap.add_argument("--sizes", type=int, nargs="+", default=[970, 20000])
    ap.add_argument("--runs", type=int, default=5, help="runs per side and bank; medians (default 5)")
    ap.add_argument("--bin", default=str(HERE.parent / "target" / "release" / "routeval"))
    ap.add_argument("--python", default=sys.executable, help="the interpreter for the reference")
    ap.add_argument("--timeout", type=float, default=3600.0,
                    help="seconds before one run is killed and the script stops (default 3600)")
    a = ap.parse_args()
    if not 1 <= a.timeout <= 86_400:
        ap.error("--timeout must be between 1 and 86,400 seconds")
    if not 1 <= a.runs <= 1000:
        ap.error("--runs must be between 1 and 1000")
    if any(not 1 <= n <= 10_000_000 for n in a.sizes):
        ap.error("--sizes must be between 1 and 10,000,000 rows")
    shared = os.environ.get("ROUTEVAL_SHARED")
    if not shared:
        sys.exit("crb_side_by_side.py: set ROUTEVAL_SHARED")
    work = Path(tempfile.gettempdir()) / "routeval-crb-bench"
    work.mkdir(exist_ok=True)
    env = dict(os.environ, ROUTEVAL_SHARED=shared)
    print(f"machine: {os.cpu_count()} cores, load average {' '.join(open('/proc/loadavg').read().split()[:3])}; "
          f"medians of {a.runs} per side, alternated")
    for n in a.sizes:
        bank = work / f"bank{n}.jsonl"
        if not bank.exists():
            # Generated beside its final name and renamed into place once complete, so an
            # interrupted generation is never reused as a bank.
            part = bank.with_name(bank.name + f".part{os.getpid()}")
            try:
                subprocess.run([sys.executable, f"{shared}/bench/crb/crb_bank_gen.py", str(n), str(part)],
                               check=True, stdout=subprocess.DEVNULL)
                os.replace(part, bank)
            finally:
                part.unlink(missing_ok=True)
        out_rv, out_ref = work / f"side_routeval{n}.json", work / f"side_reference{n}.json"
        cmds = {
            "routeval": [a.bin, "crb", "eval", "--bank", str(bank), "--predictor", "gold",
                         "--tokenizers", f"{shared}/thirdparty/tokenizers", "--json", "-o", str(out_rv)],
            "reference": [a.python, str(HERE / "crb_reference.py"), str(a.ref_dir), str(bank), str(out_ref)],
        }
        runs = {k: [] for k in cmds}
        for k in ("reference", "routeval"):
            timed(cmds[k], env, a.timeout)
        for i in range(a.runs):
            for k in (["reference", "routeval"] if i % 2 == 0 else ["routeval", "reference"]):
                runs[k].append(timed(cmds[k], env, a.timeout))
        med = {k: [statistics.median_low(r[j] for r in v) for j in range(3)] for k, v in runs.items()}
        for k in cmds:
            cpus = ", ".join(f"{r[1]:.2f}" for r in runs[k])
            print(f"{n:>7} rows  {k:9s}  wall {med[k][0]:8.2f} s  CPU {med[k][1]:8.2f} s  "
                  f"peak RSS {med[k][2]:6.0f} MB  (CPU runs: {cpus})")
        # CPU time is counted in clock ticks: never divide by a zero reading.
        rv_wall, rv_cpu = (max(x, 0.01) for x in med["routeval"][:2])
        print(f"{n:>7} rows  ratio  CPU {med['reference'][1] / rv_cpu:.1f}x  "
              f"wall {med['reference'][0] / rv_wall:.1f}x")
        rv, ref = json.loads(out_rv.read_text()), json.loads(out_ref.read_text())
        differ = sorted(k for k in set(rv) | set(ref)
                        if k not in ("shard", "routeval_tokenizers") and rv.get(k) != ref.get(k))
        print(f"{n:>7} rows  summaries: " + ("agree" if not differ else f"DIFFER on {differ}"))
        if differ:
            sys.exit(1)


if __name__ == "__main__":
    main()
