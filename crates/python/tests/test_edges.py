"""Issue 24 in the Python package: honest statistics and refusals at the edges."""

import pickle
import time
import warnings

import pytest
import routeval.compare as rc
import routeval.frontier as rf
import routeval.rag as rr
import routeval.trec as rt


def test_trec_accumulators_on_different_qrels_do_not_merge():
    run = {"q1": {"d1": 2.0, "d2": 1.0}}
    a = rt.Accumulator({"q1": {"d1": 1, "d2": 0}}, ["map"]).add(run)
    b = rt.Accumulator({"q1": {"d1": 0, "d2": 1}}, ["map"])  # same shape, other judgments
    with pytest.raises(rt.TrecError, match="different qrels"):
        a.merge(b)
    # Same qrels (in another order) still merge, also after pickling.
    same = pickle.loads(pickle.dumps(rt.Accumulator({"q1": {"d2": 0, "d1": 1}}, ["map"])))
    a.merge(same)
    assert a.result()["map"] == 1.0


def test_trec_evaluate_none_raises():
    ev = rt.RelevanceEvaluator({"q1": {"d1": 1}}, {"map"})
    with pytest.raises(TypeError, match="mapping"):
        ev.evaluate(None)
    assert ev.evaluate({}) == {}


def test_rag_accumulator_names_a_gap():
    cases = [{"query": "q", "retrieved": ["a"], "relevant": ["a"]}] * 2
    acc = rr.Accumulator().add(cases, start=0).merge(rr.Accumulator().add(cases, start=5))
    assert acc.missing_positions() == [(2, 5)]
    with pytest.warns(UserWarning, match="3 case position"):
        report = acc.result()
    assert any("2..4" in n for n in report.notes), report.notes
    whole = rr.Accumulator().add(cases * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert whole.missing_positions() == [] and whole.result().n_cases == 4


@pytest.mark.parametrize("bad", [
    [1.0, float("inf")],
    [1.0, "0.5"],
    [1.0, None],
    [1.0, True],
    [],
])
def test_compare_scores_refuses_non_numbers(bad):
    with pytest.raises(rc.CompareError):
        rc.compare_scores({"a": {"m": [1.0, 2.0][: len(bad)]}, "b": {"m": bad}})


def test_compare_one_unit_and_constant_shift_are_not_significant():
    for scores in ({"a": {"m": [0.1]}, "b": {"m": [0.9]}},
                   {"a": {"m": [0.1, 0.2, 0.3]}, "b": {"m": [0.3, 0.4, 0.5]}}):
        for test in ("t", "wilcoxon", "fisher", "bootstrap"):
            c = rc.compare_scores(scores, test=test, correction="none").to_dict()
            c = c["runs"][1]["vs_baseline"]["m"]
            assert c["significant"] is False and c["p_value"] is None, (test, c)
            assert c["note"], c


def test_compare_replicates_are_bounded():
    s = {"a": {"m": [0.1, 0.2, 0.4]}, "b": {"m": [0.2, 0.2, 0.5]}}
    for kw in ({"bootstrap": 10**12}, {"iterations": 10**8}, {"bootstrap": 0}):
        with pytest.raises(rc.CompareError, match="1..=10000000"):
            rc.compare_scores(s, **kw)


def test_compare_default_seed_is_42():
    s = {"a": {"m": [0.1, 0.2, 0.4, 0.3, 0.9]}, "b": {"m": [0.2, 0.2, 0.5, 0.1, 0.8]}}
    assert rc.compare_scores(s).to_dict() == rc.compare_scores(s, seed=42).to_dict()


def test_aiq_of_nothing_raises():
    with pytest.raises(rf.FrontierError):
        rf.aiq([])
    with pytest.raises(rf.FrontierError):
        rf.aiq([[]])


def test_long_compare_is_interruptible():
    # A SIGINT during a long call raises KeyboardInterrupt promptly (it was ignored).
    import _thread
    import signal
    import threading

    s = {"a": {"m": [float(i % 7) for i in range(400)]},
         "b": {"m": [float((i * 3) % 7) for i in range(400)]}}
    # interrupt_main does nothing when SIGINT is ignored, as it is in a job a non-interactive
    # shell started with `&`: Python's own handler is installed for the test.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Timer(0.5, _thread.interrupt_main).start()
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            rc.compare_scores(s, test="bootstrap", iterations=3_000_000, bootstrap=3_000_000)
        assert time.monotonic() - t0 < 5.0
    finally:
        signal.signal(signal.SIGINT, previous)
