"""Sharded evaluation on a real distributed engine: a Dask LocalCluster with two worker
processes. Each partition builds an accumulator, the accumulators are merged, and the result
must equal one pass bit for bit (routeval sums in the parity order whatever the sharding)."""

import random

import pytest
import routeval.trec as rt
from conftest import require

distributed = require("dask.distributed")


def _collection(seed, n_queries=120):
    rng = random.Random(seed)
    qrels, run = {}, {}
    for i in range(n_queries):
        docs = [f"d{j}" for j in range(40)]
        qrels[f"q{i:03d}"] = {d: rng.choice([0, 0, 0, 1, 2, 3]) for d in docs}
        run[f"q{i:03d}"] = {d: round(rng.uniform(0, 10), 2) for d in rng.sample(docs, 30)}
    return qrels, run


def _evaluate_partition(qrels, measures, chunk):
    return rt.Accumulator(qrels, measures).add(chunk)


def _merge(a, b):
    return a.merge(b)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_trec_sharded_on_dask_equals_one_pass(client):
    qrels, run = _collection(11)
    measures = ["official", "ndcg_cut.10", "recall.100", "gm_bpref"]
    items = list(run.items())
    random.Random(3).shuffle(items)
    chunks = [dict(items[i : i + 17]) for i in range(0, len(items), 17)]
    qrels_f = client.scatter(qrels, broadcast=True)
    parts = [client.submit(_evaluate_partition, qrels_f, measures, c) for c in chunks]
    while len(parts) > 1:
        parts = [client.submit(_merge, parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)] + (
            [parts[-1]] if len(parts) % 2 else []
        )
    merged = parts[0].result()
    workers = client.run(lambda: __import__("os").getpid())
    assert len(set(workers.values())) == 2
    one = rt.Accumulator(qrels, measures).add(run)
    assert merged.result() == one.result()  # bit for bit
    assert merged.per_query() == rt.RelevanceEvaluator(qrels, measures).evaluate(run)


def _gqr_partition(rows, preds):
    import routeval.gqr as gqr

    return gqr.Accumulator().add(rows, preds)


def test_gqr_sharded_on_dask_equals_one_pass(client):
    import routeval.gqr as gqr

    rng = random.Random(7)
    rows = [{"label": rng.choice([0, 1, 2]), "dataset": "id"} for _ in range(900)]
    for s in gqr.OOD_SETS:
        rows += [{"label": 3, "dataset": s} for _ in range(rng.randint(20, 120))]
    preds = [rng.choice([0, 1, 2, 3, 3]) for _ in rows]
    order = list(range(len(rows)))
    rng.shuffle(order)  # shards mix ID and OOD rows of every set
    chunks = [order[i : i + 97] for i in range(0, len(order), 97)]
    parts = [
        client.submit(_gqr_partition, [rows[i] for i in c], [preds[i] for i in c]) for c in chunks
    ]
    while len(parts) > 1:
        parts = [client.submit(_merge, parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)] + (
            [parts[-1]] if len(parts) % 2 else []
        )
    merged = parts[0].result()
    one = gqr.Accumulator().add(rows, preds)
    assert len(merged) == len(rows)
    assert merged.result() == one.result()  # bit for bit
    assert merged.evaluations() == one.evaluations()


def _rag_partition(cases, start):
    import routeval.rag as rr

    return rr.Accumulator(k=3, threshold=0.5).add(cases, start=start)


def test_rag_sharded_on_dask_equals_one_pass(client):
    import json

    import routeval.rag as rr
    from test_rag import random_case

    rng = random.Random(9)
    cases = json.loads(json.dumps([random_case(rng) for _ in range(300)], ensure_ascii=False))
    parts = [client.submit(_rag_partition, cases[i : i + 41], i) for i in range(0, len(cases), 41)]
    while len(parts) > 1:
        parts = [client.submit(_merge, parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)] + (
            [parts[-1]] if len(parts) % 2 else []
        )
    merged = parts[0].result().result()
    one = rr.evaluate(cases, k=3, threshold=0.5)
    assert merged.to_dict() == one.to_dict() and merged.summary() == one.summary()
