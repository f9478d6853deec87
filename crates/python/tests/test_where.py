"""routeval.where on the shared query-dsl goldens (every case: match, no match or error)."""

import json

import pytest
import routeval.where as rw
from conftest import shared_dir


def test_where_goldens():
    path = shared_dir("golden", "query-dsl", "cases.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
    assert len(rows) >= 600
    for r in rows:
        mode = r.get("on_missing_key", "skip")
        if r["expect"] == "error":
            with pytest.raises(rw.WhereError):
                rw.compile(r["where"]).matches(r["extra_info"], on_missing_key=mode)
        else:
            assert rw.compile(r["where"]).matches(r["extra_info"], on_missing_key=mode) is r["expect"], r["id"]


def test_filter_and_errors():
    rows = [{"a": 1}, {"a": 2}, {"b": 1}]
    assert rw.filter(rows, {"a": {"gt": 1}}) == [{"a": 2}]
    with pytest.raises(rw.WhereError):
        rw.filter(rows, {"a": {"gt": 1}}, on_missing_key="error")
    assert issubclass(rw.WhereError, ValueError)


def _same(a, b):
    """Structural equality with number types (1 != 1.0) and float bits."""
    if isinstance(b, dict):
        return isinstance(a, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in b)
    if isinstance(b, list):
        return isinstance(a, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _stub_routes(routes, stubs):
    """The goldens' ``mean_stub`` metrics as callables reading ``record["scores"][name]``."""
    if not isinstance(routes, list):
        return routes
    out = []
    for r in routes:
        if isinstance(r, dict) and isinstance(r.get("metrics"), list):
            r = dict(r, metrics=[(lambda rec, n=m: rec["scores"][n]) if isinstance(m, str) and m in stubs else m
                                 for m in r["metrics"]])
        out.append(r)
    return out


def test_query_routed_metric_route_goldens():
    path = shared_dir("golden/query-dsl/route_cases.jsonl")
    cases = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert len(cases) >= 34
    for case in cases:
        stubs = case["metrics"]
        assert all(m["kind"] == "mean_stub" for m in stubs.values())
        config = case["config"]
        try:
            routes = _stub_routes(config.get("routes"), stubs)
            qr = rw.QueryRoutedMetric(routes, on_unmatched=config.get("on_unmatched", "skip"),
                                      on_missing_key=config.get("on_missing_key", "skip"))
            got = qr(case["instances"])
        except rw.WhereError as e:
            assert case["expect"] == "error", (case["id"], str(e))
            assert case["error_kind"] in str(e), (case["id"], case["error_kind"], str(e))
            continue
        assert case["expect"] != "error", (case["id"], got)
        assert _same(got, case["expect"]), (case["id"], got, case["expect"])


def test_query_routed_metric_builtins_and_errors():
    records = [
        {"lm_output": " Paris ", "references": ["Paris"], "extra_info": {"lang": "en", "level": 1}},
        {"lm_output": "Lyon", "references": ["Paris"], "extra_info": {"lang": "en", "level": 2}},
        {"lm_output": "東京", "references": ["東京"], "extra_info": {"lang": "ja", "level": 1}},
    ]
    qr = rw.QueryRoutedMetric([
        {"name": "en", "where": {"lang": "en"}, "metrics": ["exact_match", {"class_path": "CharF1"}]},
        {"name": "all", "metrics": ["exact_match"], "group_by": "lang"},
    ])
    r = qr.evaluate(records)
    assert r["summary"]["en/exact_match"] == 0.5
    assert r["summary"]["all/exact_match"] == 2 / 3
    assert r["summary"]["all/ja/exact_match"] == 1.0
    assert r["instance_details"][2] == {"all/exact_match": True}
    with pytest.raises(rw.WhereError, match="unmatched"):
        rw.QueryRoutedMetric([{"name": "ja", "where": {"lang": "ja"}, "metrics": ["exact_match"]}],
                             on_unmatched="error")(records)
    with pytest.raises(rw.WhereError, match="bad_metric"):
        rw.QueryRoutedMetric([{"name": "x", "metrics": ["bleu"]}])
    with pytest.raises(rw.WhereError, match="duplicate_route_name"):
        rw.QueryRoutedMetric([{"name": "x", "metrics": ["exact_match"]}] * 2)
    with pytest.raises(rw.WhereError, match="bad_instance"):
        rw.QueryRoutedMetric([{"name": "x", "metrics": [lambda rec: 1 / 0]}])(records)
