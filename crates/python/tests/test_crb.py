"""routeval.crb against CommonRouterBench's golden eval summaries
($ROUTEVAL_SHARED/golden/crb/cases, native tokenizers from thirdparty/tokenizers) and its
metrics vectors (golden/crb/metrics)."""

import json
import math

import pytest
import routeval
import routeval.crb as crb
from conftest import shared_dir
from routeval.crb import metrics


def _expected(v):
    """Golden non-finite floats are strings."""
    if v == "NaN":
        return math.nan
    if v == "Infinity":
        return math.inf
    if v == "-Infinity":
        return -math.inf
    if isinstance(v, dict):
        return {k: _expected(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_expected(x) for x in v]
    return v


def _equal(got, want, path=""):
    if isinstance(want, dict):
        assert isinstance(got, dict), path
        assert list(got) == list(want), f"{path}: keys {list(got)} != {list(want)}"
        for k in want:
            _equal(got[k], want[k], f"{path}/{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want)):
            _equal(g, w, f"{path}[{i}]")
    elif isinstance(want, float):
        assert isinstance(got, (int, float)), f"{path}: {got!r}"
        if math.isnan(want):
            assert math.isnan(got), f"{path}: {got!r} != NaN"
        else:
            assert float(got) == want, f"{path}: {got!r} != {want!r}"  # bit for bit
    else:
        assert got == want and type(got) is type(want), f"{path}: {got!r} != {want!r}"


class _Golden:
    """The goldens' predictor: ``predictions.json`` id → tier (null = raise)."""

    def __init__(self, preds, message):
        self.preds, self.message = preds, message

    def predict(self, row):
        p = self.preds[str(row["id"]) if not isinstance(row["id"], str) else row["id"]]
        if p is None:
            raise RuntimeError(self.message)
        if isinstance(p, dict):
            return crb.TierPrediction(p["tier_id"], p.get("usage"))
        return crb.TierPrediction(p)


@pytest.fixture(scope="module")
def tokenizers():
    return crb.Tokenizers(shared_dir("thirdparty/tokenizers"), "native")


def _cases():
    root = shared_dir("golden/crb/cases")
    return sorted(p for p in root.iterdir() if (p / "case.json").is_file())


def test_golden_eval_summaries(tokenizers, monkeypatch):
    checked = raised = 0
    for case_dir in _cases():
        case = json.loads((case_dir / "case.json").read_text())
        monkeypatch.chdir(case_dir)  # shard "bank.jsonl" as the reference was given it
        preds = json.loads((case_dir / "predictions.json").read_text())
        pred = _Golden(preds, case.get("error_row_message", "predictor error"))
        mode = case["mode"]
        if mode == "expect_raise":
            with pytest.raises(ValueError):
                crb.run_question_bank_eval(pred, predictor_label=case["predictor_label"],
                                           n=case.get("n"), seed=case.get("seed", 42),
                                           shard=case["shard"], tokenizers=tokenizers)
            raised += 1
            continue
        want = _expected(json.loads((case_dir / "expected_summary.json").read_text()))
        if mode == "empty":
            with pytest.raises(crb.CrbError, match="No non-empty rows"):
                crb.select_question_bank_rows(shard=case["shard"])
            got = crb.build_eval_summary(per_row=[], errors=[], correct=0,
                                         predictor_label=case["predictor_label"],
                                         shard=case["shard"], sample_mode="full_bank",
                                         seed=case.get("seed", 42), proportional_quotas=None,
                                         tokenizers=tokenizers)
        elif mode == "select_evaluate_build":
            rows, sm, quotas = crb.select_question_bank_rows(
                n=case["n"], seed=case["seed"], shard=case["shard"], manifest="manifest.json")
            per_row, errors, correct = crb.evaluate_question_bank_rows(pred, rows)
            got = crb.build_eval_summary(
                per_row=per_row, errors=errors, correct=correct,
                predictor_label=case["predictor_label"], shard=case["shard"], sample_mode=sm,
                seed=case["seed"], proportional_quotas=quotas,
                benchmark_counts=crb.rows_per_benchmark(rows), tokenizers=tokenizers)
        else:
            got = crb.run_question_bank_eval(
                pred, predictor_label=case["predictor_label"], n=case.get("n"),
                seed=case.get("seed", 42), shard=case["shard"], tokenizers=tokenizers,
                extra_summary=case.get("extra_summary"))
        _equal(got, want, case_dir.name)
        checked += 1
    assert checked >= 30 and raised >= 4


def test_function_predictor_and_errors(tmp_path, tokenizers):
    bank = tmp_path / "bank.jsonl"
    rows = [{"id": f"r{i}", "benchmark": "bfcl", "target_tier_id": i % 4, "instance_id": f"t{i // 2}",
             "step_index": 1 + i % 2, "messages": [{"role": "user", "content": f"q {i}"}]}
            for i in range(8)]
    bank.write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = crb.run_question_bank_eval(crb.FunctionPredictor(lambda r: r["target_tier_id"]),
                                   predictor_label="oracle", bank=bank, tokenizers=tokenizers)
    assert s["exact_match"] == 8 and s["tier_match_accuracy"] == 1.0 and s["api_errors"] == 0
    assert list(s)[:3] == ["classifier", "shard", "sample_mode"] and s["shard"] == str(bank)
    # A non-int answer is an error row with the reference's message.
    s = crb.run_question_bank_eval(crb.FunctionPredictor(lambda r: "high"),
                                   predictor_label="bad", bank=bank, tokenizers=tokenizers)
    assert s["api_errors"] == 8 and math.isnan(s["tier_match_accuracy"])
    assert s["errors"][0] == {"id": "r0", "error": "predictor function must return int tier_id, got <class 'str'>"}
    # Out-of-range predictions: a clear CrbError (the reference raises KeyError later).
    with pytest.raises(crb.CrbError, match="out of range"):
        crb.run_question_bank_eval(crb.FunctionPredictor(lambda r: 4), bank=bank, tokenizers=tokenizers)
    with pytest.raises(crb.CrbError, match="Question bank not found"):
        crb.select_question_bank_rows(shard=tmp_path / "nope.jsonl")
    with pytest.raises(crb.CrbError, match="n must be positive"):
        crb.select_question_bank_rows(n=0, shard=bank)
    assert issubclass(crb.CrbError, ValueError) and routeval.CrbError is crb.CrbError
    with pytest.raises(crb.CrbError, match="unknown tokenizer setup"):
        crb.Tokenizers(None, "bogus")


def test_aggregate_routerbench_metrics_vectors():
    golden = json.loads(shared_dir("golden/crb/metrics/metrics_vectors.json").read_text())
    vectors = golden["aggregate_routerbench_metrics"]
    assert len(vectors) >= 8
    for name, v in vectors.items():
        cases = v["cases"]
        _equal(metrics.aggregate_routerbench_metrics(cases), _expected(v["result"]), name)
        _equal(metrics.aggregate_routerbench_metrics(cases, cap_cost_score_at_100=True),
               _expected(v["result_cap_cost_score_at_100"]), name + " (capped)")
        objs = [metrics.case_metrics_from_dict(c) for c in cases]
        _equal(metrics.aggregate_routerbench_metrics(objs), _expected(v["result"]), name + " (objects)")
    for name, v in golden["aggregate_routerbench_metrics_errors"].items():
        with pytest.raises(crb.CrbError) as e:
            metrics.aggregate_routerbench_metrics(v["cases"])
        assert v["result"]["error"]["message"] in str(e.value), name


def test_big_integers_keep_their_digits(tmp_path, tokenizers):
    big = 123456789012345678901234567890
    bank = tmp_path / "bank.jsonl"
    bank.write_text(json.dumps({"id": "a", "benchmark": "bfcl", "target_tier_id": 0,
                                "messages": [{"role": "user", "content": "x", "n": big}]}) + "\n")
    rows, mode, quotas = crb.select_question_bank_rows(shard=bank)
    assert rows[0]["messages"][0]["n"] == big and mode == "full_bank" and quotas is None
    s = crb.run_question_bank_eval(crb.FunctionPredictor(lambda r: 0), bank=bank, tokenizers=tokenizers)
    assert s["rows"][0]["messages"][0]["n"] == big
