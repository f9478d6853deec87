"""Reference results of the real pytrec_eval, computed in child processes.

pytrec-eval-terrier 0.5.11 keeps global trec_eval state between evaluators and crashes
(segmentation fault) after a few hundred of them in one process, so each batch of
collections is evaluated in a fresh interpreter; it can also hang (a batch of 25 in a fresh
process did, while each of its collections alone passes: the batch of seeds 200-224 hangs on
every run), so a batch that crashes or takes over 10 s is retried one collection per process
(a batch takes about 0.3 s; the 10 s timeout used to be a minute, which that one hang spent on
every run). Output: ``{seed: {qid: {measure: value}}}``.
"""

import json
import subprocess
import sys

_CHILD = r"""
import json, random, sys
sys.path.insert(0, {here!r})
import pytrec_eval
from trec_cases import case_for_seed
out = {{}}
for seed in json.loads(sys.argv[1]):
    qrels, run, measures, level, judged = case_for_seed(seed)
    out[seed] = pytrec_eval.RelevanceEvaluator(qrels, measures, level, judged).evaluate(run)
sys.stdout.write(json.dumps(out))
"""


# Seconds a child may take: about 30 times a batch's usual time.
_TIMEOUT_S = 10


def _run(seeds, here):
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD.format(here=here), json.dumps(list(seeds))],
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0:
        return None
    return {int(k): v for k, v in json.loads(proc.stdout).items()}


def reference(seeds, here, batch=25):
    """pytrec_eval's results for every seed (fresh processes, batches of ``batch``)."""
    seeds = list(seeds)
    out = {}
    for i in range(0, len(seeds), batch):
        chunk = seeds[i : i + batch]
        got = _run(chunk, here)
        if got is None:
            got = {}
            for s in chunk:
                one = _run([s], here)
                if one is None:
                    raise RuntimeError(f"pytrec_eval crashed on collection {s} alone")
                got.update(one)
        out.update(got)
    return out
