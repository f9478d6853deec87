#!/usr/bin/env python3
"""pytrec-eval-terrier side of benches/trec_vs_pytrec.sh: parse QRELS and RUN, evaluate
P_10 recall_10 recip_rank ndcg_cut_10 success_10 map, print the means (parse + evaluate timed
by the caller as one process, like `routeval trec`)."""
import sys
import pytrec_eval

qrels_path, run_path = sys.argv[1], sys.argv[2]
with open(qrels_path) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(run_path) as f:
    run = pytrec_eval.parse_run(f)
measures = {"P_10", "recall_10", "recip_rank", "ndcg_cut_10", "success_10", "map"}
res = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
for m in sorted(next(iter(res.values())).keys()):
    vals = [q[m] for q in res.values()]
    print(f"{m:<22}\tall\t{sum(vals) / len(vals):.4f}")
