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
