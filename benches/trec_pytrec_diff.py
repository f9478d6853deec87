"""Differential check: `routeval trec` vs pytrec-eval-terrier (trec_eval 9.0.8's C code) on random
graded qrels/runs, per query, for -l 1/2 with and without -J.

Usage: python3 benches/trec_pytrec_diff.py target/release/routeval [SEEDS]
Needs `pip install pytrec-eval-terrier`. Measures where trec_eval 9.0.8 and 10.0-rc3 differ
(iprec_at_recall, 11pt_avg, Rprec_mult: fraction-to-count rounding) and the summary-only ones
are skipped; NaN (pytrec) vs null (our JSON) counts as equal."""
import json, math, os, random, subprocess, sys, tempfile
import pytrec_eval
B = sys.argv[1]
TMP = tempfile.mkdtemp()
QF, RF = os.path.join(TMP, 'q'), os.path.join(TMP, 'r')
MEAS = ['map','gm_map','Rprec','bpref','recip_rank','iprec_at_recall','P','recall','infAP','gm_bpref',
        'Rprec_mult','utility','11pt_avg','binG','G','ndcg','ndcg_rel','Rndcg','ndcg_cut','map_cut',
        'relative_P','success','set_P','set_relative_P','set_recall','set_map','set_F','num_nonrel_judged_ret',
        'num_ret','num_rel','num_rel_ret']
bad = 0; checked = 0
for seed in range(int(sys.argv[2]) if len(sys.argv) > 2 else 30):
    rng = random.Random(seed)
    qrels = {}; run = {}
    lines_q = []; lines_r = []
    for qi in range(rng.randint(1, 6)):
        q = f"q{qi}"
        pool = [f"d{rng.randrange(60)}" for _ in range(rng.randint(1, 40))]
        pool = list(dict.fromkeys(pool))
        qrels[q] = {}
        for d in pool:
            rel = rng.choice([0, 0, 1, 2, 3, -1]) if seed % 3 else rng.choice([0, 1])
            qrels[q][d] = rel; lines_q.append(f"{q} 0 {d} {rel}")
        if rng.random() < 0.9:
            docs = list(dict.fromkeys(f"d{rng.randrange(80)}" for _ in range(rng.randint(1, 50))))
            run[q] = {}
            for i, d in enumerate(docs):
                s = round(rng.random() * 3, 1)
                run[q][d] = s; lines_r.append(f"{q} Q0 {d} {i} {s} tag")
    if not lines_r:
        continue
    open(QF, 'w').write("\n".join(lines_q) + "\n")
    open(RF, 'w').write("\n".join(lines_r) + "\n")
    for level in (1, 2):
        for judged in (False, True):
            args = [B, 'trec', '-q', '--json', '-l', str(level), '-m', 'all_trec', QF, RF]
            if judged: args.insert(2, '-J')
            p = subprocess.run(args, capture_output=True, text=True)
            if p.returncode != 0:
                print('ERR', seed, p.stderr); bad += 1; continue
            ours = json.loads(p.stdout)['per_query']
            ev = pytrec_eval.RelevanceEvaluator(qrels, set(MEAS), relevance_level=level, judged_docs_only_flag=judged)
            theirs = ev.evaluate(run)
            for q, vals in theirs.items():
                for k, v in vals.items():
                    if k in ('runid', 'num_q', 'relstring', 'gm_map', 'gm_bpref') or k.startswith(('iprec', 'Rprec_mult', '11pt')):
                        continue
                    o = ours.get(q, {}).get(k)
                    checked += 1
                    if (o is None and isinstance(v, float) and math.isnan(v)):
                        continue
                    if o is None or not (o == v or (isinstance(o, float) and abs(o - v) <= 1e-12 * max(1, abs(v)))):
                        bad += 1
                        if bad < 30:
                            print('MISMATCH seed', seed, 'level', level, 'J', judged, q, k, 'ours', o, 'pytrec', v)
print('checked', checked, 'mismatches', bad)
