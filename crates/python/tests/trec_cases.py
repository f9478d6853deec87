"""Random TREC collections shared by the tests and the pytrec_eval reference children."""

import random

N_COLLECTIONS = 240

MEASURE_SETS = [
    ["all_trec"],
    ["official"],
    ["map", "ndcg", "P_5", "P.1,3", "recall_10", "ndcg_cut.3,7", "map_cut_2"],
    ["set"],
    ["recip_rank", "success.1,2,3", "Rprec", "bpref", "infAP", "num_rel_ret"],
    ["iprec_at_recall", "11pt_avg", "Rprec_mult", "utility", "gm_bpref", "gm_map"],
]


def random_collection(rng):
    """Random qrels and run dicts: graded and negative judgments, ties, unjudged and
    unranked documents, queries on one side only, unicode ids."""
    n_q = rng.randint(1, 12)
    pool = [f"d{i}" for i in range(rng.randint(3, 40))] + ["dé", "文書", "d-x"]
    qrels, run = {}, {}
    for i in range(n_q):
        qid = rng.choice([f"q{i}", f"{i}", f"q_{i}é"])
        docs = rng.sample(pool, rng.randint(1, min(len(pool), 25)))
        top = rng.choice([1, 2, 3, 4])
        if rng.random() < 0.9:
            qrels[qid] = {d: rng.choice([-1] + [0] * 3 + list(range(1, top + 1))) for d in docs}
        if rng.random() < 0.9:
            ret = rng.sample(pool, rng.randint(1, len(pool)))
            coarse = rng.random() < 0.5
            run[qid] = {
                d: (float(rng.randint(0, 4)) if coarse else rng.uniform(-5, 5)) for d in ret
            }
    if rng.random() < 0.2:
        run["unjudged-query"] = {"d1": 1.0}
    if rng.random() < 0.1 and qrels:
        # integer scores, as pytrec_eval accepts them
        q = next(iter(run), None)
        if q is not None:
            run[q] = {d: int(s * 10) for d, s in run[q].items()}
    return qrels, run


def case_for_seed(seed):
    """Collection, measures, relevance level and -J flag of random test ``seed``."""
    rng = random.Random(seed)
    qrels, run = random_collection(rng)
    measures = set(MEASURE_SETS[seed % len(MEASURE_SETS)])
    level = rng.choice([1, 1, 2])
    judged = rng.random() < 0.25
    return qrels, run, measures, level, judged


