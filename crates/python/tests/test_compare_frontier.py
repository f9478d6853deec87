"""routeval.compare and routeval.frontier against ``routeval compare/frontier --json`` on the
shipped examples (``cli_cases.py``): the stored CLI outputs always, the CLI itself when a built
binary is found (``cargo test --workspace`` builds one; under ``CI=true`` it must be there)."""

import importlib
import json
import math
import os

import pytest
import routeval.compare as rc
import routeval.frontier as rf
from cli_cases import CASES, EXAMPLES, FIXTURES, find_cli, run_cli
from conftest import assert_nested_close, require


def _python_dict(case, monkeypatch):
    _, (module, func, args, kwargs) = CASES[case]
    monkeypatch.chdir(EXAMPLES)  # the CLI reports paths as given: same relative paths
    report = getattr(importlib.import_module(f"routeval.{module}"), func)(*args, **kwargs)
    return report, report.to_dict()


@pytest.mark.parametrize("case", sorted(CASES))
def test_to_dict_equals_stored_cli_json(case, monkeypatch):
    want = json.loads((FIXTURES / f"{case}.json").read_text(encoding="utf-8"))
    _, got = _python_dict(case, monkeypatch)
    assert list(got) == list(want)
    assert_nested_close(got, want, tol=0.0)


@pytest.mark.parametrize("case", sorted(CASES))
def test_to_dict_equals_live_cli_json(case, monkeypatch):
    binary = find_cli()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("no built routeval binary (set ROUTEVAL_BIN or run cargo build first)")
        pytest.skip("SKIPPED: no built routeval binary")
    want = json.loads(run_cli(binary, CASES[case][0]))
    _, got = _python_dict(case, monkeypatch)
    assert json.dumps(got) == json.dumps(want)


def test_compare_report_is_typed(monkeypatch):
    report, d = _python_dict("compare_default", monkeypatch)
    assert report.measures == ["map", "recip_rank", "P_10", "recall_100", "ndcg_cut_10"]
    assert [r.name for r in report.runs] == ["base", "better", "noisy"]
    assert report.runs[0].vs_baseline is None
    c = report.runs[1].vs_baseline["map"]
    assert isinstance(c, rc.Comparison)
    assert c.delta == d["runs"][1]["vs_baseline"]["map"]["delta"]
    assert c.wins + c.ties + c.losses == report.queries == 12
    assert c.ci[0] <= c.delta <= c.ci[1]
    assert len(report.notes) == 4 and "1 query without judgments ignored" in report.notes[0]
    assert "no results for 1 of 12 judged queries (q003)" in report.notes[1]
    assert report.ok == (report.significantly_worse() == [])


def test_significantly_worse_is_the_cli_gate(monkeypatch, tmp_path):
    # better.run as the baseline: base.run is significantly worse on map (the CLI exits 3).
    monkeypatch.chdir(EXAMPLES)
    report = rc.compare_runs("compare/qrels", "compare/better.run", ["compare/base.run"], ["map"])
    assert report.significantly_worse() == [("base", "map")]
    assert not report.ok
    binary = find_cli()
    if binary is not None:
        import subprocess

        out = subprocess.run(
            [binary, "compare", "compare/qrels", "compare/better.run", "compare/base.run", "-m", "map", "--fail-if-worse"],
            cwd=EXAMPLES, capture_output=True, timeout=300,
        )
        assert out.returncode == 3
        assert b"base is significantly worse than better on map" in out.stderr


def test_compare_scores_matches_compare_runs(monkeypatch):
    # The per-query values of routeval.trec (trec_eval 10.0, -c) fed to compare_scores give the
    # compare_runs report (means: compare_runs uses trec_eval's summary, the mean here).
    import routeval.trec as rt

    monkeypatch.chdir(EXAMPLES)
    want = rc.compare_runs("compare/qrels", "compare/base.run", ["compare/better.run"], ["map", "P.10"])
    scores = {}
    for name, path in (("base", "compare/base.run"), ("better", "compare/better.run")):
        per_q = rt.evaluate_files("compare/qrels", path, ["map", "P.10"], complete=True, trec_eval_version="10.0")
        qids = sorted(per_q)
        scores[name] = {m: [per_q[q][m] for q in qids] for m in ("map", "P_10")}
    got = rc.compare_scores(scores, paths={"base": "compare/base.run", "better": "compare/better.run"})
    g, w = got.to_dict(), want.to_dict()
    assert_nested_close(g, w, tol=1e-12)


def test_compare_errors_are_value_errors(monkeypatch):
    monkeypatch.chdir(EXAMPLES)
    assert issubclass(rc.CompareError, ValueError)
    with pytest.raises(rc.CompareError, match="unknown test|test"):
        rc.compare_runs("compare/qrels", "compare/base.run", ["compare/better.run"], test="z")
    with pytest.raises(rc.CompareError, match="no per-query values"):
        rc.compare_runs("compare/qrels", "compare/base.run", ["compare/better.run"], ["gm_map"])
    with pytest.raises(rc.CompareError, match="missing.run: cannot read"):
        rc.compare_runs("compare/qrels", "compare/base.run", ["missing.run"])
    with pytest.raises(rc.CompareError, match="alpha"):
        rc.compare_runs("compare/qrels", "compare/base.run", ["compare/better.run"], alpha=1.5)
    with pytest.raises(rc.CompareError, match="NaN"):
        rc.compare_scores({"a": {"m": [1.0, 2.0]}, "b": {"m": [1.0, float("nan")]}})
    with pytest.raises(rc.CompareError):
        rc.compare_scores({"a": {"m": [1.0, 2.0]}, "b": {"m": [1.0]}})


def test_many_systems_fields_and_errors(monkeypatch):
    monkeypatch.chdir(EXAMPLES)
    runs = ["compare/better.run", "compare/noisy.run"]
    r = rc.compare_runs("compare/qrels", "compare/base.run", runs, ["map"], test="tukey", anova=True,
                        risk=[1, 5])
    assert r.test == "tukey" and r.correction == "tukey"
    assert set(r.anova["map"]) == {"f", "p_value", "df_systems", "df_queries", "df_residual", "mse",
                                   "ss_systems", "ss_queries", "ss_residual"}
    assert r.anova["map"]["df_residual"] == 22
    assert [v["alpha"] for v in r.runs[1].risk["map"]] == [1.0, 5.0]
    assert r.runs[0].risk["map"][0]["urisk"] is None
    assert r.runs[1].letters["map"] == "a"
    assert len(r.pairs) == 3
    for p in r.pairs:
        assert p.vs["map"].p_value == p.vs["map"].p_adjusted
    # The same statistics on per-unit scores.
    s = rc.compare_scores({"a": {"m": [0.1, 0.4, 0.2, 0.5]}, "b": {"m": [0.3, 0.5, 0.2, 0.9]},
                           "c": {"m": [0.2, 0.1, 0.3, 0.4]}}, test="randomized-tukey", iterations=999, risk=1)
    assert s.test == "randomized-tukey"
    assert all(round(p.vs["m"].p_value * 1000, 9) == int(round(p.vs["m"].p_value * 1000)) for p in s.pairs)
    with pytest.raises(rc.CompareError, match="family-wise"):
        rc.compare_runs("compare/qrels", "compare/base.run", runs, test="tukey", correction="holm")
    with pytest.raises(rc.CompareError, match="at least 3 runs"):
        rc.compare_runs("compare/qrels", "compare/base.run", runs[:1], anova=True)
    with pytest.raises(rc.CompareError, match="alpha"):
        rc.compare_runs("compare/qrels", "compare/base.run", runs, risk=[-1])
    with pytest.raises(rc.CompareError, match="alpha"):
        rc.compare_runs("compare/qrels", "compare/base.run", runs, risk=[float("inf")])
    with pytest.raises(rc.CompareError, match="iterations"):
        rc.compare_runs("compare/qrels", "compare/base.run", runs, test="randomized-tukey", iterations=0)


def test_frontier_report_is_typed_and_in_memory_points_agree(monkeypatch):
    report, d = _python_dict("frontier_hull", monkeypatch)
    pts = [json.loads(line) for line in (EXAMPLES / "frontier" / "points.jsonl").read_text().splitlines() if line.strip()]
    mem = rf.frontier(pts)
    assert mem.to_dict() == d
    s = report.systems[0]
    assert isinstance(s, rf.SystemFrontier) and s.system == d["systems"][0]["system"]
    assert s.aiq == d["systems"][0]["aiq"]
    # The building blocks give the report's numbers.
    by_sys = {}
    for p in pts:
        by_sys.setdefault(p["system"], []).append((p["cost"], p["quality"]))
    hulls = [rf.ndch(v) for v in by_sys.values()]
    assert [list(map(tuple, h)) for h in hulls] == [x.ndch for x in report.systems]
    max_cost, aiqs = rf.aiq(hulls)
    assert max_cost == report.max_cost and aiqs == [x.aiq for x in report.systems]
    first = list(by_sys.values())[0]
    assert rf.pareto(first) == report.systems[0].pareto
    assert [first[i] for i in rf.pareto_indices(first)] == report.systems[0].pareto
    # ndch and pareto return the same shape: (cost, quality) points.
    assert all(isinstance(p, tuple) and len(p) == 2 for p in rf.pareto(first) + rf.ndch(first))


def test_strong_share_report_is_typed(monkeypatch):
    report, d = _python_dict("frontier_strong_share", monkeypatch)
    assert report.weak == 0.5 and report.strong == 0.8
    assert set(report.systems[0].cpt) == {20, 50, 80}
    assert report.systems[0].auc == d["systems"][0]["auc"]
    pd = require("pandas")
    frame = report.to_frame()
    assert list(frame.columns) == ["system", "auc", "apgr", "cpt_20", "cpt_50", "cpt_80"]
    assert len(frame) == len(d["systems"])
    for row, s in zip(frame.itertuples(index=False), d["systems"]):
        assert row.system == s["system"] and row.auc == s["auc"]
        for x in ("20", "50", "80"):
            want = s["cpt"][x]
            got = getattr(row, f"cpt_{x}")
            assert (want is None and pd.isna(got)) or got == want


def test_frontier_errors_name_the_point():
    assert issubclass(rf.FrontierError, ValueError)
    with pytest.raises(rf.FrontierError, match=r"<points>:2: cost -1 is negative"):
        rf.frontier([{"system": "a", "cost": 1, "quality": 0.5}, {"system": "a", "cost": -1, "quality": 0.5}])
    with pytest.raises(rf.FrontierError, match=r"<points>:1: \"quality\" must be a finite number"):
        rf.frontier([{"system": "a", "cost": 1, "quality": math.nan}])
    with pytest.raises(rf.FrontierError, match="no points"):
        rf.frontier([])
    with pytest.raises(rf.FrontierError, match="method"):
        rf.frontier([{"system": "a", "cost": 1, "quality": 0.5}], method="x")
    assert rf.ndch([(1.0, 0.5), (2.0, 0.6)], method="routerbench") is None
    with pytest.raises(rf.FrontierError, match="negative"):
        rf.pareto([(-1.0, 0.5)])


def test_frontier_missing_file_is_a_frontier_error(tmp_path):
    # Issue 24: the documented FrontierError (a ValueError), not FileNotFoundError.
    with pytest.raises(rf.FrontierError, match="cannot read"):
        rf.frontier(tmp_path / "nope.jsonl")
    with pytest.raises(rf.FrontierError, match="cannot read"):
        rf.strong_share(str(tmp_path), 0.5, 0.8)


def test_compare_report_to_frame_is_the_csv_face(monkeypatch):
    monkeypatch.chdir(EXAMPLES)
    r = rc.compare_runs("compare/qrels", "compare/base.run", ["compare/better.run", "compare/noisy.run"],
                        ["map", "P.10"])
    df = r.to_frame()
    assert list(df.columns)[:6] == ["baseline", "run", "measure", "baseline_mean", "run_mean", "delta"]
    assert len(df) == 4
    row = df[(df.run == "better") & (df.measure == "map")].iloc[0]
    assert row.p_value == r.runs[1].vs_baseline["map"].p_value
    assert row.ci_low == r.runs[1].vs_baseline["map"].ci[0]
    t = rc.compare_runs("compare/qrels", "compare/base.run", ["compare/better.run", "compare/noisy.run"],
                        ["map"], test="tukey")
    assert len(t.to_frame()) == 3  # every pair
    # The notes of tests and intervals without evidence are columns, as in the CSV.
    assert list(df.columns)[-2:] == ["note", "ci_degenerate"]
    d = rc.compare_scores({"base": {"acc": [0.1, 0.2, 0.3]}, "new": {"acc": [0.2, 0.3, 0.4]}})
    c = d.runs[1].vs_baseline["acc"]
    want = d.to_dict()["runs"][1]["vs_baseline"]["acc"]
    assert c.note == want["note"] and c.ci_degenerate == want["ci_degenerate"]
    row = d.to_frame().iloc[0]
    assert row.note == c.note and row.ci_degenerate == c.ci_degenerate and not row.significant


def _without_provenance(html):
    # The provenance block names the call (a Python call here, the command line there) and
    # the version (also in the head's generator tag); the body before it is the report.
    start, cut = html.find("<body"), html.find('<footer id="provenance">')
    assert 0 < start < cut, "no body or no provenance block"
    return html[start:cut]


def test_compare_report_faces_are_the_cli_faces(monkeypatch, tmp_path):
    """The table, Markdown and HTML of a Python ComparisonReport are rendered by the CLI's
    presentation crate from the same typed report: the table equals ``routeval compare``'s
    stdout in each format, and the HTML report equals ``--html``'s up to the provenance."""
    monkeypatch.chdir(EXAMPLES)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    args = ("compare/qrels", "compare/base.run", ["compare/better.run", "compare/noisy.run"])
    r = rc.compare_runs(*args, ["map", "P.10"])
    text = r.table()
    assert "12 queries; mean (difference from run a)" in text
    assert "no results for 1 of 12 judged queries (q003)" in r.to_markdown()
    html = r.to_html(tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == html
    assert "routeval.compare_runs(" in html
    for fmt in ("md", "latex", "csv"):
        assert r.table(fmt) != text
    with pytest.raises(rc.CompareError, match="unknown table format"):
        r.table("xlsx")
    # A degenerate comparison names its reason in every face.
    d = rc.compare_scores({"base": {"acc": [0.1, 0.2, 0.3]}, "new": {"acc": [0.2, 0.3, 0.4]}})
    reason = d.runs[1].vs_baseline["acc"].ci_degenerate
    for face in (d.table(), d.table("md"), d.table("latex"), d.to_markdown()):
        assert reason in face, face
    binary = find_cli()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("no built routeval binary (set ROUTEVAL_BIN or run cargo build first)")
        pytest.skip("SKIPPED: no built routeval binary")
    import subprocess

    cli = [binary, "compare", args[0], args[1], *args[2], "-m", "map", "-m", "P.10"]
    env = dict(os.environ, SOURCE_DATE_EPOCH="0")
    for fmt in ("text", "md", "latex", "csv"):
        out = subprocess.run(cli + ["--format", fmt], cwd=EXAMPLES, capture_output=True,
                             timeout=300, env=env, check=True)
        assert out.stdout.decode() == r.table(fmt), fmt
    out_html = tmp_path / "cli.html"
    subprocess.run(cli + ["--html", str(out_html)], cwd=EXAMPLES, capture_output=True,
                   timeout=300, env=env, check=True)
    assert _without_provenance(out_html.read_text(encoding="utf-8")) == _without_provenance(html)
