"""routeval.rag against the real rag_quality_check 0.1.0, in process, on random case files."""

import json
import random

import pytest
import routeval.rag as rr
from conftest import assert_nested_close, require

rqc = require("rag_quality_check")

N_FILES = 520

WORDS = ("reset password account billing invoice refund solar panel power energy "
         "capital france paris river bank money loan the a of and is to in résumé café "
         "naïve 東京 大学 Москва город données").split()


def sentence(rng, n=None):
    n = n or rng.randint(1, 10)
    s = " ".join(rng.choice(WORDS) for _ in range(n))
    return s[0].upper() + s[1:] + rng.choice([".", "!", "?", ""])


def passage(rng):
    return " ".join(sentence(rng) for _ in range(rng.randint(1, 3)))


def random_case(rng):
    ids = [f"p{i}" for i in range(8)] + [1, 2, 3]
    kind = rng.choice(["ids", "passages", "dicts", "mixed"])
    retrieved = []
    for _ in range(rng.randint(0, 7)):
        if kind == "ids" or (kind == "mixed" and rng.random() < 0.3):
            retrieved.append(rng.choice(ids))
        elif kind == "passages" or (kind == "mixed" and rng.random() < 0.5):
            retrieved.append(passage(rng))
        else:
            d = {}
            if rng.random() < 0.8:
                d["id"] = rng.choice(ids)
            if rng.random() < 0.8:
                d["text"] = passage(rng)
            retrieved.append(d)
    case = {"query": rng.choice([sentence(rng), "", "   ", sentence(rng, 3)]), "retrieved": retrieved}
    r = rng.random()
    if r < 0.35:
        case["relevant"] = rng.sample(ids, rng.randint(0, 3))
    elif r < 0.6:
        case["relevant"] = {str(i): rng.choice([0, 1, 2, 3, 0.5]) for i in rng.sample(ids, rng.randint(0, 3))}
    elif r < 0.65:
        case["relevant"] = []
    # else: no 'relevant': estimated relevance
    if rng.random() < 0.5:
        case["answer"] = " ".join(sentence(rng) for _ in range(rng.randint(1, 3)))
    if rng.random() < 0.3:
        case["ground_truth"] = sentence(rng)
    if rng.random() < 0.1:
        case["id"] = rng.randint(0, 99)
    return case


def random_file(seed):
    rng = random.Random(seed)
    cases = [random_case(rng) for _ in range(rng.randint(0, 8))]
    k = rng.randint(1, 6)
    threshold = rng.choice([0.0, 0.25, 0.5, 0.8, 1.0])
    # Round trip through a JSON file's text: both libraries read what a case file holds.
    return json.loads(json.dumps(cases, ensure_ascii=False)), k, threshold


@pytest.mark.parametrize("seed", range(N_FILES))
def test_evaluate_matches_rag_quality_check(seed):
    cases, k, threshold = random_file(seed)
    want = rqc.evaluate(cases, k=k, threshold=threshold)
    got = rr.evaluate(cases, k=k, threshold=threshold)
    assert got.summary() == want.summary()
    assert_nested_close(got.to_dict(), want.to_dict())
    assert_nested_close(got.metrics, want.metrics)
    assert got.support == want.support
    assert got.notes == want.notes and got.failures == want.failures
    assert (got.estimated, got.fully_estimated, got.ok, got.similarity) == (
        want.estimated, want.fully_estimated, want.ok, want.similarity)
    assert [c.index for c in got.weakest(3)] == [c.index for c in want.weakest(3)]
    for g, w in zip(got.per_case, want.per_case):
        assert g.summary() == w.summary()


def toy_embed(texts):
    out = []
    for t in texts:
        v = [0.0] * 16
        for i, ch in enumerate(t):
            v[(ord(ch) * 31 + i) % 16] += 1.0
        out.append(v)
    return out


@pytest.mark.parametrize("seed", range(40))
def test_embed_matches_rag_quality_check(seed):
    cases, k, threshold = random_file(10_000 + seed)
    calls_want, calls_got = [], []

    def spy(calls):
        def f(texts):
            calls.append(list(texts))
            return toy_embed(texts)
        return f

    want = rqc.evaluate(cases, k=k, threshold=threshold, embed=spy(calls_want))
    got = rr.evaluate(cases, k=k, threshold=threshold, embed=spy(calls_got))
    assert calls_got == calls_want
    assert got.summary() == want.summary()
    assert_nested_close(got.to_dict(), want.to_dict())


def test_errors_match():
    for kwargs, cases in [
        ({"k": 0}, []),
        ({"k": True}, []),
        ({"threshold": 2}, []),
        ({"threshold": "x"}, []),
        ({}, {"query": "q", "retrieved": []}),
        ({}, [{"query": "q", "retrieved": "one string"}]),
        ({}, [1]),
    ]:
        with pytest.raises(ValueError) as w:
            rqc.evaluate(cases, **kwargs)
        with pytest.raises(rr.RagError) as g:
            rr.evaluate(cases, **kwargs)
        assert str(g.value) == str(w.value)
    assert issubclass(rr.RagError, ValueError)

    def boom(texts):
        raise KeyError("model down")

    with pytest.raises(KeyError, match="model down"):
        rr.evaluate([{"query": "q", "retrieved": ["a b"]}], embed=boom)


def test_evaluate_case_and_frame():
    kw = dict(relevant=["p1"], answer="Paris is the capital.", k=2)
    got = rr.evaluate_case("capital of France", ["p1", "p2"], **kw)
    want = rqc.evaluate_case("capital of France", ["p1", "p2"], **kw)
    assert got.to_dict() == want.to_dict() and got.summary() == want.summary()
    cases, k, t = random_file(3)
    pd = require("pandas")
    a = rr.evaluate(cases, k=k, threshold=t).to_frame()
    b = rqc.evaluate(cases, k=k, threshold=t).to_frame()
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("seed", range(40))
def test_accumulator_sharded_equals_one_pass(seed):
    import pickle

    rng = random.Random(1000 + seed)
    cases = json.loads(json.dumps([random_case(rng) for _ in range(rng.randint(4, 60))],
                                  ensure_ascii=False))
    k, threshold = rng.randint(1, 6), rng.choice([0.0, 0.25, 0.5, 0.8, 1.0])
    try:
        one = rr.evaluate(cases, k=k, threshold=threshold)
    except rr.RagError:
        with pytest.raises(rr.RagError):
            rr.Accumulator(k=k, threshold=threshold).add(cases).result()
        return
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(cases)), min(3, len(cases) - 1)))
    parts = []
    for a, b in zip([0] + cuts, cuts + [len(cases)]):
        acc = rr.Accumulator(k=k, threshold=threshold).add(cases[a:b], start=a)
        parts.append(pickle.loads(pickle.dumps(acc)))
    rng.shuffle(parts)
    merged = parts[0]
    for p in parts[1:]:
        merged.merge(p)
    got = merged.result()
    assert len(merged) == len(cases)
    assert got.to_dict() == one.to_dict()  # bit for bit, every case and note
    assert got.summary() == one.summary()
    assert got.metrics == one.metrics


def test_accumulator_rejects_a_case_added_twice():
    cases = [{"query": "q", "retrieved": ["a"], "relevant": ["a"]}]
    acc = rr.Accumulator().add(cases)
    with pytest.raises(rr.RagError, match="in both"):
        acc.merge(rr.Accumulator().add(cases, start=0))
    with pytest.raises(rr.RagError, match="different k"):
        acc.merge(rr.Accumulator(k=3).add(cases, start=1))
    assert len(acc) == 1 and acc.result().metrics["hit_rate"] == 1.0
