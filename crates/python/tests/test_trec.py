"""routeval.trec against the real pytrec_eval (pytrec-eval-terrier) on random collections."""

import pathlib
import pickle
import random

import pytest
import routeval.trec as rt
from conftest import assert_nested_close, require

pytrec_eval = require("pytrec_eval")

from trec_cases import MEASURE_SETS, N_COLLECTIONS, case_for_seed, random_collection


@pytest.fixture(scope="module")
def pytrec_results():
    import pytrec_reference

    return pytrec_reference.reference(range(N_COLLECTIONS), str(pathlib.Path(__file__).parent))


@pytest.mark.parametrize("seed", range(N_COLLECTIONS))
def test_evaluate_matches_pytrec_eval(seed, pytrec_results):
    qrels, run, measures, level, judged = case_for_seed(seed)
    want = pytrec_results[seed]
    ev = rt.RelevanceEvaluator(qrels, measures, level, judged)
    got = ev.evaluate(run)
    assert_nested_close(got, want)
    # pytrec_eval #22: the second call must give the same (cut-offs kept)
    assert_nested_close(ev.evaluate(run), want)


def test_empty_retrieved_query_matches_pytrec_eval():
    # trec_eval 9.0.8 divides 0 by 0 for iprec_at_recall_0.00 of a query with no document.
    # pytrec_eval runs in a child process: it crashes on some runs with empty queries.
    import json
    import subprocess
    import sys

    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"a": 1}}
    run = {"q1": {"a": 1.0}, "q2": {}}
    code = (
        "import json, sys, pytrec_eval; q, r = json.loads(sys.argv[1]); "
        "print(json.dumps(pytrec_eval.RelevanceEvaluator(q, {'official'}).evaluate(r)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps([qrels, run])],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    want = json.loads(out.stdout)
    got = rt.RelevanceEvaluator(qrels, {"official"}).evaluate(run)
    assert got["q2"]["iprec_at_recall_0.00"] != got["q2"]["iprec_at_recall_0.00"]  # NaN
    assert_nested_close(got, want)


def test_no_common_query_and_empty_run():
    ev = rt.RelevanceEvaluator({"q1": {"a": 1}}, {"map"})
    assert ev.evaluate({}) == {}
    assert ev.evaluate({"q2": {"a": 1.0}}) == {}


def test_errors_are_value_errors():
    with pytest.raises(rt.TrecError, match="illegal measure 'mapp'"):
        rt.RelevanceEvaluator({"q": {"a": 1}}, {"mapp"})
    assert issubclass(rt.TrecError, ValueError)
    with pytest.raises(ValueError, match="relevance_level"):
        rt.RelevanceEvaluator({"q": {"a": 1}}, {"map"}, relevance_level=0)
    with pytest.raises(ValueError, match="NaN"):
        rt.RelevanceEvaluator({"q": {"a": 1}}, {"map"}).evaluate({"q": {"a": float("nan")}})
    with pytest.raises(TypeError):
        rt.RelevanceEvaluator({"q": {"a": 1.5}}, {"map"})


def test_supported_measures_match_pytrec_eval():
    assert rt.supported_measures == set(pytrec_eval.supported_measures)
    for name in ("official", "all_trec", "set"):
        assert rt.supported_nicknames[name] == pytrec_eval.supported_nicknames[name]


def write_collection(tmp_path, qrels, run):
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    with open(qp, "w", encoding="utf-8") as f:
        for q, docs in qrels.items():
            for d, r in docs.items():
                f.write(f"{q} 0 {d} {r}\n")
    with open(rp, "w", encoding="utf-8") as f:
        for q, docs in run.items():
            for i, (d, s) in enumerate(docs.items()):
                f.write(f"{q} Q0 {d} {i + 1} {s!r} tag\n")
    return qp, rp


@pytest.mark.parametrize("seed", range(40))
def test_files_and_parsers_match_pytrec_eval(tmp_path, seed):
    rng = random.Random(1000 + seed)
    qrels, run = random_collection(rng)
    qrels = {q: d for q, d in qrels.items() if d}
    run = {q: d for q, d in run.items() if d}
    if not qrels or not run:
        return
    qp, rp = write_collection(tmp_path, qrels, run)
    with open(qp, encoding="utf-8") as f:
        assert rt.parse_qrel(f) == pytrec_eval.parse_qrel(open(qp, encoding="utf-8"))
    with open(rp, encoding="utf-8") as f:
        assert rt.parse_run(f) == pytrec_eval.parse_run(open(rp, encoding="utf-8"))
    measures = {"official", "ndcg_cut.3", "recall.5"}
    # The dict path is checked against pytrec_eval above; pytrec_eval itself is not called
    # again in this process (it crashes after a few hundred evaluators).
    want = rt.RelevanceEvaluator(qrels, measures).evaluate(run)
    if not set(qrels) & set(run):
        with pytest.raises(rt.TrecError, match="no query has both"):
            rt.evaluate_files(qp, rp, measures)
        return
    got = rt.evaluate_files(qp, rp, measures, summary=True)
    summary = got.pop("all")
    assert_nested_close(got, want)
    acc = rt.Accumulator(qrels, measures).add(run)
    assert summary == acc.result()  # bit for bit: both sum in qrels order


def test_file_errors_name_file_and_line(tmp_path):
    qp, rp = tmp_path / "q", tmp_path / "r"
    qp.write_text("q1 0 a 1\n")
    rp.write_text("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 x t\n")
    with pytest.raises(rt.TrecError, match=r"r:2: "):
        rt.evaluate_files(qp, rp, ["map"])
    with pytest.raises(rt.TrecError, match="No such file"):
        rt.evaluate_files(tmp_path / "missing", rp, ["map"])


def test_accumulator_shards_pickle_and_merge():
    rng = random.Random(7)
    qrels, run = {}, {}
    for i in range(60):
        docs = [f"d{j}" for j in range(30)]
        qrels[f"q{i:02d}"] = {d: rng.choice([0, 0, 1, 2]) for d in docs}
        run[f"q{i:02d}"] = {d: rng.random() for d in rng.sample(docs, 20)}
    measures = ["official", "ndcg_cut_10", "gm_bpref"]
    one = rt.Accumulator(qrels, measures).add(run)
    items = list(run.items())
    rng.shuffle(items)
    shards = []
    for k in range(0, len(items), 7):
        a = rt.Accumulator(qrels, measures).add(dict(items[k : k + 7]))
        shards.append(pickle.loads(pickle.dumps(a)))
    total = shards[0]
    for s in shards[1:]:
        total.merge(s)
    assert total.result() == one.result()
    assert total.per_query() == one.per_query()
    assert one.per_query() == rt.RelevanceEvaluator(qrels, measures).evaluate(run)
    with pytest.raises(rt.TrecError, match="added twice"):
        one.add({"q00": run["q00"]})


def test_single_precision_ties_match_pytrec_eval(tmp_path):
    # trec_eval (and pytrec_eval) keep scores as C floats: scores equal in single precision
    # tie and are ordered by docno descending, in the dict path and the file path alike.
    import json
    import subprocess
    import sys

    hi, lo = 0.4140936412550752, 0.41409363333403515  # differ as f64, equal as f32
    qrels = {"q": {"d65": 0, "d76": 2, "d1": 1}, "r": {"b": 1, "a": 0, "c": 1}}
    run = {
        "q": {"d65": hi, "d76": lo, "d1": 0.1, "d9": hi},
        "r": {"a": 1.0, "b": 1.0, "c": 1.0, "z": 1},  # exact ties, an int score
    }
    measures = {"map", "recip_rank", "P.1,2", "ndcg_cut.1,2"}
    code = (
        "import json, sys, pytrec_eval; q, r, m = json.loads(sys.argv[1]); "
        "print(json.dumps(pytrec_eval.RelevanceEvaluator(q, set(m)).evaluate(r)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps([qrels, run, sorted(measures)])],
        capture_output=True, text=True, timeout=60, check=True,
    )
    want = json.loads(out.stdout)
    got = rt.RelevanceEvaluator(qrels, measures).evaluate(run)
    assert_nested_close(got, want, tol=0.0)
    # ranking d9 > d76 > d65 (tie broken by docno descending): the relevant d76 is at rank 2
    assert got["q"]["recip_rank"] == 0.5
    qp, rp = tmp_path / "qrels", tmp_path / "run"
    qp.write_text("".join(f"{q} 0 {d} {r}\n" for q, ds in qrels.items() for d, r in ds.items()))
    rp.write_text("".join(f"{q} Q0 {d} 0 {s!r} t\n" for q, ds in run.items() for d, s in ds.items()))
    assert_nested_close(rt.evaluate_files(qp, rp, measures), want, tol=0.0)


def test_run_dict_type_errors_name_the_problem():
    ev = rt.RelevanceEvaluator({"q": {"a": 1}}, {"map"})
    with pytest.raises(TypeError, match="document id must be a str"):
        ev.evaluate({"q": {1: 0.5}})
    with pytest.raises(TypeError, match="query id must be a str"):
        ev.evaluate({1: {"a": 0.5}})
    with pytest.raises(TypeError, match="must be an int or float"):
        ev.evaluate({"q": {"a": "x"}})
    with pytest.raises(TypeError, match="must be a dict"):
        ev.evaluate({"q": [("a", 0.5)]})
    # unjudged queries are checked too
    with pytest.raises(ValueError, match="NaN"):
        ev.evaluate({"q": {"a": 0.5}, "other": {"b": float("nan")}})
    # the qrels given are copied: changing them later does not change the evaluator
    qrels = {"q": {"a": 1}}
    ev = rt.RelevanceEvaluator(qrels, {"map"})
    qrels["q"]["b"] = 1
    assert ev.evaluate({"q": {"a": 1.0, "b": 0.5}}) == {"q": {"map": 1.0}}


def test_qrels_of_str_subclasses_and_int_scores_agree_with_plain_ones():
    # Qrels keyed by `str` subclasses cannot use the borrowed scan's table: the general path
    # joins the run with the judgments by the docno's text (as pytrec_eval's C++ maps do).
    class S(str):
        def __hash__(self):
            return 0  # another hash than the plain str's: the text decides, not the hash

        def __eq__(self, other):
            return str.__eq__(self, other)

    qrels = {"q": {"a": 2, "b": 0, "c": 1}, "r": {"x": 1}}
    run = {"q": {"a": 0.3, "b": 0.9, "c": 0.5, "z": 0.1}, "r": {"x": 2, "y": 3}}
    measures = {"map", "ndcg_cut.3", "P.2", "recip_rank"}
    want = rt.RelevanceEvaluator(qrels, measures).evaluate(run)
    sub = {S(q): {S(d): r for d, r in ds.items()} for q, ds in qrels.items()}
    assert rt.RelevanceEvaluator(sub, measures).evaluate(run) == want
    sub_run = {S(q): {S(d): s for d, s in ds.items()} for q, ds in run.items()}
    plain = lambda res: {str(q): v for q, v in res.items()}  # results keep the run's qid objects
    assert plain(rt.RelevanceEvaluator(qrels, measures).evaluate(sub_run)) == want
    assert plain(rt.RelevanceEvaluator(sub, measures).evaluate(sub_run)) == want
    assert want["q"]["P_2"] == 0.5 and want["r"]["recip_rank"] == 0.5


def test_qrels_read_borrowed_or_safely_agree_and_raise_the_same_errors():
    # Construction reads a query's judgments with borrowed references while every docno is an
    # exact str and every relevance an exact int; one other item (anywhere in the query) sends
    # the whole query to the safe path. Every spelling below must give the plain qrels'
    # results, and the errors must be the safe path's, in dict order.
    class I(int):
        pass

    class S(str):
        pass

    docs = [f"d{i}" for i in range(40)] + ["dé", "d\u4e2d", "d\U0001f600"]
    rels = [i % 3 for i in range(len(docs))]
    plain = {"q": dict(zip(docs, rels)), "r": {"x": 1, "y": 0}}
    run = {"q": {d: 1.0 / (i + 1) for i, d in enumerate(reversed(docs))}, "r": {"y": 0.5, "x": 0.4}}
    measures = {"map", "ndcg_cut.10", "P.5", "recip_rank", "num_rel"}
    want = rt.RelevanceEvaluator(plain, measures).evaluate(run)
    assert want == pytrec_eval.RelevanceEvaluator(plain, measures).evaluate(run)
    last = docs[-1]
    # The odd item last, so that the borrowed scan has read the rest of the query first.
    for odd in (
        {**plain["q"], last: I(plain["q"][last])},
        {S(d) if d == last else d: r for d, r in plain["q"].items()},
        {S(d): r for d, r in plain["q"].items()},
    ):
        assert rt.RelevanceEvaluator({"q": odd, "r": plain["r"]}, measures).evaluate(run) == want
    as_bool = rt.RelevanceEvaluator({"q": {**plain["q"], last: True}, "r": plain["r"]}, measures)
    as_one = rt.RelevanceEvaluator({"q": {**plain["q"], last: 1}, "r": plain["r"]}, measures)
    assert as_bool.evaluate(run) == as_one.evaluate(run)
    # Errors: the safe path's, after a query read in full by the borrowed scan.
    with pytest.raises(TypeError, match="must be an int, got float"):
        rt.RelevanceEvaluator({"q": plain["q"], "r": {"x": 1, "y": 0.5}}, measures)
    with pytest.raises(TypeError, match="relevance of document 'y' for query 'r' must be an int$"):
        rt.RelevanceEvaluator({"q": plain["q"], "r": {"x": 1, "y": 2**64}}, measures)
    with pytest.raises(TypeError, match="document id must be a str"):
        rt.RelevanceEvaluator({"q": plain["q"], "r": {"x": 1, 5: 1}}, measures)
    with pytest.raises(UnicodeEncodeError):
        rt.RelevanceEvaluator({"q": plain["q"], "r": {"x": 1, "\ud800": 1}}, measures)
    # A relevance beyond trec_eval's range read by the borrowed scan: the build refuses it.
    with pytest.raises(rt.TrecError, match="query 'r', document 'x': relevance '1099511627776' out of range"):
        rt.RelevanceEvaluator({"q": plain["q"], "r": {"x": 2**40}}, measures)
    # A type error wins over an out-of-range value met earlier (the scan comes first).
    with pytest.raises(TypeError):
        rt.RelevanceEvaluator({"q": {"a": 2**40}, "r": {"x": "1"}}, measures)


def test_dict_value_types_take_the_same_path_results():
    # `evaluate` reads exact str/float dicts without copying (a borrowed scan) and any other
    # types through the general path: every spelling of one run gives the same values, also
    # when the run's docno strings are other objects than the qrels' (compared by content).
    np = require("numpy")

    class S(str):
        pass

    class F(float):
        pass

    rng = random.Random(7)
    docs = [f"d{i}\u00e9" if i % 7 == 0 else f"d{i}" for i in range(60)]
    qrels = {"q1": {d: rng.choice([0, 1, 2]) for d in rng.sample(docs, 20)},
             "q2": {d: rng.choice([0, 1]) for d in rng.sample(docs, 15)}}
    base = {q: {d: float(rng.choice([0.5, 0.25, rng.random()])) for d in docs} for q in qrels}
    measures = {"map", "ndcg_cut.5,10", "P.5", "recip_rank", "recall.20"}
    want = rt.RelevanceEvaluator(qrels, measures).evaluate(base)
    assert set(want) == {"q1", "q2"}

    def respell(f_key, f_val, only=None):
        return {q: {f_key(d) if only in (None, q) else d: f_val(s) if only in (None, q) else s
                    for d, s in ds.items()} for q, ds in base.items()}

    copies = lambda d: "".join(list(d))  # equal text, another object
    spellings = {
        "new str objects": respell(copies, float),
        "str subclass keys": respell(S, float),
        "numpy float64": respell(str, np.float64),
        "float subclass": respell(str, F),
        "one query mixed": respell(S, np.float64, only="q2"),
    }
    for name, run in spellings.items():
        assert rt.RelevanceEvaluator(qrels, measures).evaluate(run) == want, name
    # int scores: the same ranking as the equal floats
    ints = {q: {d: int(s * 4) for d, s in ds.items()} for q, ds in base.items()}
    floats = {q: {d: float(int(s * 4)) for d, s in ds.items()} for q, ds in base.items()}
    ev = rt.RelevanceEvaluator(qrels, measures)
    assert ev.evaluate(ints) == ev.evaluate(floats)
    # qrels keyed by a str subclass: the judged lookups still match by content
    sub_qrels = {q: {S(d): r for d, r in js.items()} for q, js in qrels.items()}
    assert rt.RelevanceEvaluator(sub_qrels, measures).evaluate(base) == want
    # NaN in the fast path is reported like in the general path
    bad = {q: dict(ds) for q, ds in base.items()}
    bad["q2"][docs[3]] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        ev.evaluate(bad)


def test_a_score_that_changes_the_run_while_read_does_not_crash():
    # Converting this score runs Python code that empties the query's dict: the general path
    # reads a snapshot of the items, so the evaluation ends normally (no panic, no crash).
    run = {"q": {}}

    class Sneaky:
        def __float__(self):
            run["q"].clear()
            return 0.5

    run["q"].update({"a": Sneaky(), "b": 0.25, "c": 0.75})
    got = rt.RelevanceEvaluator({"q": {"a": 1, "c": 0}}, {"map", "P.2"}).evaluate(run)
    assert got == {"q": {"map": 1.0 / 2.0, "P_2": 0.5}}


def test_many_queries_with_ties_across_batches_match_pytrec_eval():
    # More judged queries than one batch of the evaluation pipeline (512), unjudged queries
    # in between, equal scores and scores equal only in single precision spread over the
    # batches, and int scores (the safe path) in some queries: values, keys and order as
    # pytrec_eval's, and the accumulator path agrees.
    rng = random.Random(7)
    qrels, run = {}, {}
    for q in range(1800):
        qid = f"q{q}"
        docs = [f"d{q}_{d}" for d in range(rng.randint(1, 40))]
        if q % 7 != 3:
            qrels[qid] = {d: rng.choice([0, 1, 2]) for d in rng.sample(docs, min(len(docs), 8))}
        scores = {}
        for d in docs:
            kind = rng.random()
            if kind < 0.2:
                scores[d] = 0.5  # exact ties
            elif kind < 0.3:
                scores[d] = 0.4140936412550752 if rng.random() < 0.5 else 0.41409363333403515
            elif kind < 0.35 and q % 5 == 0:
                scores[d] = rng.randint(0, 3)  # int scores: the safe path
            else:
                scores[d] = rng.random()
        run[qid] = scores
    measures = {"map", "ndcg_cut.10", "P.5", "recip_rank", "bpref"}
    want = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    ev = rt.RelevanceEvaluator(qrels, measures)
    got = ev.evaluate(run)
    assert list(got) == list(want)
    assert_nested_close(got, want)
    acc = rt.Accumulator(qrels, measures).add(run)
    assert acc.per_query() == got


def _orders(groups):
    """Every combination of the orders of each group (lists of docnos)."""
    import itertools

    return itertools.product(*(itertools.permutations(g) for g in groups))


def test_ties_match_every_order_through_pytrec_eval():
    # Each tie group's orders are realised for pytrec_eval by distinct score offsets; the
    # ranges of evaluate_ties are the min, max and mean over all of them.
    rng = random.Random(27)
    measures = {"map", "P.1,2,3,5", "recall.3", "recip_rank", "ndcg", "ndcg_cut.3", "bpref",
                "Rprec", "success.1,2", "iprec_at_recall", "gm_map"}
    for case in range(6):
        qrels, groups = {}, {}
        for q in range(4):
            qid = f"c{case}q{q}"
            docs = [f"d{i}" for i in rng.sample(range(30), 8)]
            qrels[qid] = {d: rng.choice([0, 0, 1, 2]) for d in docs[:6]}
            qrels[qid]["never"] = 1  # a relevant document nobody retrieves
            gs, rest = [], docs
            while rest:
                k = min(len(rest), rng.choice([1, 2, 3]))
                gs.append(rest[:k])
                rest = rest[k:]
            groups[qid] = gs
        tied = {q: {d: float(len(gs) - i) for i, g in enumerate(gs) for d in g}
                for q, gs in groups.items()}
        ev = rt.RelevanceEvaluator(qrels, measures, ties=True)
        assert ev.ties is None
        plain = ev.evaluate(tied)
        assert ev.ties == ev.evaluate_ties(tied)
        assert sorted(ev.ties_unsupported) == ["gm_map", "iprec_at_recall"]
        ref = pytrec_eval.RelevanceEvaluator(qrels, measures)
        for qid, gs in groups.items():
            seen = {}
            for combo in _orders(gs):
                run = {qid: {d: len(gs) - i + (len(o) - p) * 1e-6
                             for i, o in enumerate(combo) for p, d in enumerate(o)}}
                for m, v in ref.evaluate(run)[qid].items():
                    seen.setdefault(m, []).append(v)
            got = ev.ties[qid]
            assert not any(m.startswith(("iprec_at_recall", "gm_map")) for m in got)
            for m, (lo, hi, mean) in got.items():
                vs = seen[m]
                assert lo == pytest.approx(min(vs), abs=1e-12), (qid, m)
                assert hi == pytest.approx(max(vs), abs=1e-12), (qid, m)
                assert mean == pytest.approx(sum(vs) / len(vs), rel=1e-12, abs=1e-12), (qid, m)
                assert lo <= plain[qid][m] <= hi
    # Without ties=True nothing is stored; evaluate_ties works anyway.
    ev = rt.RelevanceEvaluator({"q": {"a": 1, "b": 0}}, {"recip_rank"})
    ev.evaluate({"q": {"a": 1.0, "b": 1.0}})
    assert ev.ties is None
    assert ev.evaluate_ties({"q": {"a": 1.0, "b": 1.0}}) == {"q": {"recip_rank": (0.5, 1.0, 0.75)}}


def test_evaluate_files_refuses_qids_that_are_one_key(tmp_path):
    # `q\xff` and `q\xfe` both read as "q\ufffd": one would hide the other's values.
    qp, rp = tmp_path / "qrels", tmp_path / "run"
    qp.write_bytes(b"q\xff 0 d1 1\nq\xfe 0 d2 1\nok 0 d1 1\n")
    rp.write_bytes(b"q\xff Q0 d1 1 0.9 t\nq\xfe Q0 d1 1 0.9 t\nok Q0 d1 1 0.5 t\n")
    with pytest.raises(rt.TrecError, match=r"query ids 'q\\xfe' and 'q\\xff' are one key"):
        rt.evaluate_files(str(qp), str(rp), {"map"})
    # Distinct after the replacement: evaluated, the key spelled with U+FFFD.
    qp.write_bytes(b"q\xff 0 d1 1\nok 0 d1 1\n")
    rp.write_bytes(b"q\xff Q0 d1 1 0.9 t\nok Q0 d1 1 0.5 t\n")
    got = rt.evaluate_files(str(qp), str(rp), {"map"})
    assert got == {"q\ufffd": {"map": 1.0}, "ok": {"map": 1.0}}
