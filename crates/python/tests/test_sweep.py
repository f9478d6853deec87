"""routeval.crb.sweep and routeval.gqr.sweep against ``routeval crb sweep`` / ``routeval gqr sweep``
(the CLI's ``--json``, stderr notes and error messages), and the GQR loaders' ``mirror=`` against
``routeval gqr export --from``.

The stored-output comparisons of the CRB sweep on the shipped examples are in
``test_compare_frontier.py`` (``cli_cases.py``); here the live CLI is run on generated inputs.
Tests that need the CLI skip without a built binary, and fail under ``CI=true``.
"""

import json
import os
import random
import subprocess

import pytest
import routeval
import routeval.crb as crb
import routeval.gqr as gqr
from cli_cases import EXAMPLES, find_cli
from conftest import assert_nested_close, shared_dir, require

BANK = EXAMPLES / "crb" / "bank.jsonl"
PROBS = EXAMPLES / "crb" / "tier_probs.jsonl"


def _cli():
    binary = find_cli()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("no built routeval binary (set ROUTEVAL_BIN or run cargo build first)")
        pytest.skip("SKIPPED: no built routeval binary")
    return binary


def _run(args, cwd=EXAMPLES):
    out = subprocess.run([_cli(), *map(str, args)], cwd=cwd, capture_output=True, timeout=600)
    return out.returncode, out.stdout.decode("utf-8"), out.stderr.decode("utf-8")


def _cli_json(args, cwd=EXAMPLES):
    code, out, err = _run([*args, "--json"], cwd)
    assert code == 0, err
    return json.loads(out), err


def _cli_error(args, cwd=EXAMPLES):
    code, _, err = _run(args, cwd)
    assert code == 2, err
    last = [l for l in err.splitlines() if l.startswith("error: ")]
    assert last, err
    return last[-1][len("error: "):]


def _same(got, want):
    assert json.dumps(got) == json.dumps(want)


# --- CommonRouterBench ---------------------------------------------------------------------


def _random_probs(rng, n):
    xs = [rng.random() for _ in range(n)]
    s = sum(xs)
    return [x / s for x in xs]


def _bank_ids():
    return [json.loads(l)["id"] for l in BANK.read_text(encoding="utf-8").splitlines() if l.strip()]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_crb_sweep_equals_cli_on_random_probabilities(seed, tmp_path):
    rng = random.Random(seed)
    recs = [{"id": i, "tier_probs": _random_probs(rng, 4)} for i in _bank_ids()]
    path = tmp_path / "probs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    options = [
        ([], {}),
        (["--pass-rate", "case", "--target-pass-rate", "60"], {"pass_rate": "case", "target_pass_rate": 60}),
        (["--thresholds", "0:1:0.05", "--max-cost-usd", "0.01"], {"thresholds": "0:1:0.05", "max_cost_usd": 0.01}),
        (["--calibrate-fraction", "0.4", "--seed", str(seed), "--target-pass-rate", "50"],
         {"calibrate_fraction": 0.4, "seed": seed, "target_pass_rate": 50}),
        (["--calibrate-on", '{"benchmark": {"ne": "swebench"}}', "--max-cost-usd", "0.02"],
         {"calibrate_on": {"benchmark": {"ne": "swebench"}}, "max_cost_usd": 0.02}),
        # Sub-selected rows: the other score lines are ignored with a warning.
        (["--where", '{"benchmark": ["swebench", "mtrag"]}', "--target-pass-rate", "40"],
         {"where": {"benchmark": ["swebench", "mtrag"]}, "target_pass_rate": 40}),
    ]
    for args, kwargs in options:
        want, err = _cli_json(["crb", "sweep", "--bank", BANK, "--scores", path,
                               "--tokenizer-setup", "all_cl100k", *args])
        report = crb.sweep(path, bank=BANK, tokenizer_setup="all_cl100k", **kwargs)
        _same(report.to_dict(), want)
        assert report.notes == err.splitlines(), (args, err)
        # Records instead of a file: the same report but for the scores' name.
        from_records = crb.sweep(recs, bank=BANK, tokenizer_setup="all_cl100k", **kwargs).to_dict()
        assert from_records.pop("scores") == "<scores>"
        want.pop("scores")
        _same(from_records, want)


@pytest.mark.parametrize("setup", ["native", "hf_offline"])
def test_crb_sweep_tokenizer_fallbacks_equal_cli(setup, tmp_path, monkeypatch):
    # An empty cache: every tier whose native file is missing falls back to cl100k_base, with
    # one warning each, in the CLI's order (after the sweep's own notes).
    monkeypatch.setenv("ROUTEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ROUTEVAL_TOKENIZERS", raising=False)
    args = ["--thresholds", "0.2,0.6", "--target-pass-rate", "50"]
    want, err = _cli_json(["crb", "sweep", "--bank", BANK, "--scores", PROBS, "--tokenizer-setup", setup, *args])
    report = crb.sweep(PROBS, bank=BANK, tokenizer_setup=setup, thresholds="0.2,0.6", target_pass_rate=50)
    _same(report.to_dict(), want)
    assert report.notes == err.splitlines()
    assert want["routeval_tokenizers"]["fallbacks"] and any("tokenizers" in n for n in report.notes)
    # An explicit directory, as --tokenizers.
    empty = tmp_path / "toks"
    empty.mkdir()
    want, err = _cli_json(["crb", "sweep", "--bank", BANK, "--scores", PROBS, "--tokenizer-setup", setup,
                           "--tokenizers", empty, *args])
    report = crb.sweep(PROBS, bank=BANK, tokenizer_setup=setup, tokenizers=empty, thresholds="0.2,0.6",
                       target_pass_rate=50)
    _same(report.to_dict(), want)
    assert report.notes == err.splitlines()


def test_crb_sweep_table_and_typed_report():
    report = crb.sweep(PROBS, bank=BANK, tokenizer_setup="all_cl100k", thresholds="0:1:0.1",
                       target_pass_rate=75, pass_rate="case")
    code, table, _ = _run(["crb", "sweep", "--bank", BANK, "--scores", PROBS, "--tokenizer-setup",
                           "all_cl100k", "--thresholds", "0:1:0.1", "--target-pass-rate", "75",
                           "--pass-rate", "case"])
    assert code == 0
    assert report.table() == table
    assert len(report.points) == 11 and report.thresholds[3] == pytest.approx(0.3)
    assert report.threshold == 0.9 and report.chosen["point"]["threshold"] == 0.9
    assert report.rows == 8 and report.frontier["y"] == "case_pass_rate_percent"
    assert report.aiq == report.to_dict()["frontier"]["aiq"]
    assert report.to_dict() is not report.to_dict()  # a fresh copy each time
    # The headline every face prints: chosen on the same rows, so flagged optimistic.
    assert report.headline == report.to_dict()["headline"]
    assert report.headline[1]["label"] == "case_pass_rate_percent (%), same rows: optimistic"
    assert report.headline[1]["text"] == "87.50"
    assert any("optimistic" in c for c in report.caveats)
    assert all(f"caveat: {c}" in table for c in report.caveats)
    pd = require("pandas")
    frame = report.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 11
    assert "scores_v2.case_pass_rate_percent" in frame.columns


def test_crb_sweep_notes_equal_cli_stderr(tmp_path):
    # Vectors not summing to 1 (noted once), a duplicated step (warned), a split trajectory.
    lines = PROBS.read_text(encoding="utf-8").splitlines()
    recs = [json.loads(l) for l in lines]
    recs[0]["tier_probs"] = [0.9, 0.9, 0.1, 0.1]
    recs[2]["tier_probs"] = [0.5, 0.0, 0.0, 0.0]
    p = tmp_path / "p.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    where = '{"benchmark": "swebench", "step_index": {"lte": 2}}'
    args = ["--calibrate-on", where, "--target-pass-rate", "99.5"]
    want, err = _cli_json(["crb", "sweep", "--bank", BANK, "--scores", p, "--tokenizer-setup",
                           "all_cl100k", *args])
    report = crb.sweep(p, bank=BANK, tokenizer_setup="all_cl100k", calibrate_on=where,
                       target_pass_rate=99.5)
    _same(report.to_dict(), want)
    assert report.notes == err.splitlines()
    assert any("do not sum to 1" in n for n in report.notes)
    assert any("splits 2 row(s)" in n for n in report.notes)


def _crb_bad_case(tmp_path, edit):
    lines = PROBS.read_text(encoding="utf-8").splitlines()
    lines = edit(lines)
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("name,edit", [
    ("three probabilities", lambda ls: ls[:2] + ['{"id": "' + json.loads(ls[2])["id"] + '", "tier_probs": [0.5, 0.25, 0.25]}'] + ls[3:]),
    ("above one", lambda ls: ls[:1] + ['{"id": "' + json.loads(ls[1])["id"] + '", "tier_probs": [0.5, 1.5, 0, 0]}'] + ls[2:]),
    ("no tier_probs", lambda ls: ls[:3] + ['{"id": "' + json.loads(ls[3])["id"] + '"}'] + ls[4:]),
    ("invalid JSON", lambda ls: ls[:4] + ["{not json"] + ls[5:]),
    ("duplicate id", lambda ls: ls + [ls[0]]),
    ("missing row", lambda ls: ls[1:]),
    ("unknown id", lambda ls: ls + ['{"id": "nope", "tier_probs": [1, 0, 0, 0]}']),
])
def test_crb_sweep_bad_scores_raise_the_cli_message(name, edit, tmp_path):
    p = _crb_bad_case(tmp_path, edit)
    want = _cli_error(["crb", "sweep", "--bank", BANK, "--scores", p, "--tokenizer-setup", "all_cl100k"])
    with pytest.raises(routeval.CrbError) as e:
        crb.sweep(p, bank=BANK, tokenizer_setup="all_cl100k")
    assert isinstance(e.value, ValueError)
    assert str(e.value) == want, name


@pytest.mark.parametrize("args,kwargs", [
    (["--calibrate-fraction", "1.5"], {"calibrate_fraction": 1.5}),
    (["--calibrate-on", "{bad"], {"calibrate_on": "{bad"}),
    (["--thresholds", "0:1:0"], {"thresholds": "0:1:0"}),
    (["--thresholds", "0.5,inf"], {"thresholds": [0.5, float("inf")]}),
    (["--tokenizer-setup", "gpt9"], {"tokenizer_setup": "gpt9"}),
    (["--where", '{"benchmark": "none"}'], {"where": {"benchmark": "none"}}),
    (["--benchmark", "none"], {"benchmark": "none"}),
    (["--calibrate-on", '{"benchmark": "none"}'], {"calibrate_on": {"benchmark": "none"}}),
    (["--on-missing-key", "maybe", "--where", "{}"], {"on_missing_key": "maybe", "where": {}}),
    (["--target-pass-rate", "inf"], {"target_pass_rate": float("inf")}),
])
def test_crb_sweep_bad_options_raise_the_cli_message(args, kwargs):
    base = {"tokenizer_setup": "all_cl100k"}
    base.update(kwargs)
    cli_args = ["crb", "sweep", "--bank", BANK, "--scores", PROBS]
    if "tokenizer_setup" not in kwargs:
        cli_args += ["--tokenizer-setup", "all_cl100k"]
    want = _cli_error(cli_args + args)
    with pytest.raises(routeval.CrbError) as e:
        crb.sweep(PROBS, bank=BANK, **base)
    assert str(e.value) == want


def test_crb_sweep_bank_not_found_and_python_only_checks(tmp_path):
    missing = tmp_path / "nope.jsonl"
    want = _cli_error(["crb", "sweep", "--bank", missing, "--scores", PROBS])
    with pytest.raises(routeval.CrbError) as e:
        crb.sweep(PROBS, bank=missing)
    assert str(e.value) == want
    # The CLI's argument parser refuses these combinations; the binding says so itself.
    with pytest.raises(routeval.CrbError, match="one way to choose"):
        crb.sweep(PROBS, bank=BANK, target_pass_rate=50, max_cost_usd=1)
    with pytest.raises(routeval.CrbError, match="one calibration"):
        crb.sweep(PROBS, bank=BANK, calibrate_on={}, calibrate_fraction=0.5)
    with pytest.raises(routeval.CrbError, match="pass_rate"):
        crb.sweep(PROBS, bank=BANK, pass_rate="steps")
    with pytest.raises(routeval.CrbError, match=r"<scores>:2: tier_probs must hold finite"):
        crb.sweep([{"id": "a", "tier_probs": [1, 0, 0, 0]}, {"id": "b", "tier_probs": [float("nan")] * 4}],
                  bank=BANK)


# --- GQR-Bench -----------------------------------------------------------------------------


def _write_build(root, rng):
    """A small GQR build: ID test, three OOD sets, the v1/v2 eval splits, the dev splits
    (without label-3 rows) and two unseen sets; returns (dir, [(id, probs)])."""
    build = root / "build"
    build.mkdir()
    files, scored = [], []
    domains = ["law", "finance", "healthcare"]

    def split(name, rows):
        text = ""
        for i, (dataset, label) in enumerate(rows):
            rid = f"{name}/{dataset}/{i}"
            domain = "ood" if label == 3 else domains[label]
            text += json.dumps({"id": rid, "text": f"text {i} é", "label": label, "domain": domain,
                                "dataset": dataset}) + "\n"
            p = _random_probs(rng, 3)
            if label < 3 and rng.random() < 0.6:
                m = p.index(max(p))
                p[m], p[label] = p[label], p[m]
            scored.append((rid, p))
        (build / f"{name}.jsonl").write_text(text, encoding="utf-8")
        files.append({"path": f"{name}.jsonl", "rows": len(rows), "blake3": "-"})

    id_rows = [(domains[i % 3], i % 3) for i in range(45)]
    split("id_test", id_rows)
    split("ood_test", [(s, 3) for s in ("jigsaw", "olid", "web_questions") for _ in range(12)])
    split("eval_v2", id_rows[:21] + [("wikitext", 3)] * 15)
    split("eval", id_rows[:21])
    split("dev_train", id_rows[:9])
    split("dev_eval", id_rows[9:18])
    split("unseen_id", [(("banking77", 1), ("mmlu_professional_law", 0))[i % 2] for i in range(20)])
    manifest = {"build": "gqr", "registry_blake3": "-", "files": files, "missing": [],
                "datasets": [], "warnings": []}
    (build / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return build, scored


@pytest.fixture()
def gqr_build(tmp_path):
    build, scored = _write_build(tmp_path, random.Random(11))
    probs = tmp_path / "probs.jsonl"
    probs.write_text("".join(json.dumps({"id": i, "probs": p}) + "\n" for i, p in scored), encoding="utf-8")
    return build, probs, scored


@pytest.mark.parametrize("args,kwargs", [
    ([], {}),
    (["--unseen"], {"unseen": True}),
    (["--thresholds", "0,0.3,0.35,0.4,0.5,0.6,1"], {"thresholds": [0, 0.3, 0.35, 0.4, 0.5, 0.6, 1]}),
    (["--thresholds", "0:1:0.125", "--unseen"], {"thresholds": "0:1:0.125", "unseen": True}),
    (["--calibrate-on", "background"], {"calibrate_on": "background"}),
    (["--calibrate-on", "background", "--unseen"], {"calibrate_on": "background", "unseen": True}),
])
def test_gqr_sweep_equals_cli(gqr_build, args, kwargs):
    build, probs, scored = gqr_build
    want, err = _cli_json(["gqr", "sweep", "--scores", probs, "--build-dir", build, *args])
    report = gqr.sweep(probs, build_dir=build, **kwargs)
    _same(report.to_dict(), want)
    assert report.notes == err.splitlines()
    code, table, _ = _run(["gqr", "sweep", "--scores", probs, "--build-dir", build, *args])
    assert code == 0 and report.table() == table
    # Records (a list, then a DataFrame) give the same report but for the scores' name.
    recs = [{"id": i, "probs": p} for i, p in scored]
    got = gqr.sweep(recs, build_dir=build, **kwargs).to_dict()
    assert got.pop("scores") == "<scores>"
    want.pop("scores")
    _same(got, want)
    pd = require("pandas")
    got = gqr.sweep(pd.DataFrame(recs), build_dir=build, **kwargs).to_dict()
    got.pop("scores")
    _same(got, want)


def test_gqr_sweep_typed_report(gqr_build):
    build, probs, _ = gqr_build
    r = gqr.sweep(probs, build_dir=build, calibrate_on="background")
    d = r.to_dict()
    assert r.threshold == d["chosen"]["threshold"]
    assert r.chosen["test"] in r.points
    assert len(r.curve) == len(r.points) == len(r.thresholds)
    assert r.complete is False and "dkhate" in r.missing_sets  # a partial build: 3 of 7 OOD sets
    # Issue 24: a partial score keeps its name (the README's g.points[0]["gqr_score"]).
    assert all(p["gqr_score"] is not None and p["partial"] is True for p in r.points)
    assert all("partial_gqr_score" not in p for p in r.points)
    # Calibrated: the headline quotes the held-out test sets at τ.
    assert any("held-out test sets" in h["label"] for h in r.headline)
    assert any(c.startswith("PARTIAL") for c in r.caveats)


@pytest.mark.parametrize("args,kwargs", [
    (["--calibrate-on", "eval"], {"calibrate_on": "eval"}),
    (["--calibrate-on", "dev"], {"calibrate_on": "dev"}),
    (["--thresholds", "1:0:0.1"], {"thresholds": "1:0:0.1"}),
])
def test_gqr_sweep_bad_options_raise_the_cli_message(gqr_build, args, kwargs):
    build, probs, _ = gqr_build
    want = _cli_error(["gqr", "sweep", "--scores", probs, "--build-dir", build, *args])
    with pytest.raises(routeval.GqrError) as e:
        gqr.sweep(probs, build_dir=build, **kwargs)
    assert isinstance(e.value, ValueError) and str(e.value) == want


@pytest.mark.parametrize("bad", [
    '{"id": "id_test/law/0", "probs": [0.5, 0.5]}',
    '{"id": "id_test/law/0", "probs": [0.5, 2, 0.1]}',
    '{"id": "id_test/law/0", "probs": "0.5"}',
    '{"id": "id_test/law/0"}',
    '{"probs": [1, 0, 0]}',
    '{"id": "id_test/law/999", "probs": [1, 0, 0]}',
    None,  # a text without probabilities
])
def test_gqr_sweep_bad_scores_raise_the_cli_message(gqr_build, bad, tmp_path):
    build, probs, _ = gqr_build
    lines = probs.read_text(encoding="utf-8").splitlines()
    if bad is None:
        lines = lines[1:]
    else:
        lines[0] = bad
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    want = _cli_error(["gqr", "sweep", "--scores", p, "--build-dir", build])
    with pytest.raises(routeval.GqrError) as e:
        gqr.sweep(p, build_dir=build)
    assert str(e.value) == want


def test_gqr_sweep_no_build(tmp_path):
    want = _cli_error(["gqr", "sweep", "--scores", PROBS, "--build-dir", tmp_path])
    with pytest.raises(routeval.GqrError) as e:
        gqr.sweep(PROBS, build_dir=tmp_path)
    assert str(e.value) == want
    with pytest.raises(routeval.GqrError, match="give the data once"):
        gqr.sweep(PROBS, build_dir=tmp_path, mirror=tmp_path)
    with pytest.raises(routeval.GqrError, match="no such directory"):
        gqr.sweep(PROBS, mirror=tmp_path / "absent")


# --- GQR data from a mirror ----------------------------------------------------------------

_EXPORTS = [  # (CLI --split, --data-version, the Python loader and its arguments)
    ("dev", "v1", "load_dev_dataset", {}),
    ("train", "v1", "load_train_dataset", {"version": "v1"}),
    ("train", "v2", "load_train_dataset", {"version": "v2"}),
    ("id_test", "v1", "load_id_test_dataset", {}),
    ("ood_test", "v1", "load_ood_test_dataset", {}),
    ("unseen_id", "v1", "load_unseen_id_test_dataset", {}),
]


def _export(mirror, split, version, tmp_path):
    out = tmp_path / f"{split}_{version}.jsonl"
    code, _, err = _run(["gqr", "export", "--split", split, "--data-version", version, "--from", mirror,
                         "-o", out])
    if code != 0:
        return None, err.strip().splitlines()[-1][len("error: "):]
    return [json.loads(l) for l in out.read_text(encoding="utf-8").splitlines()], None


def _records(frame_or_list):
    if hasattr(frame_or_list, "to_dict"):
        return frame_or_list.to_dict(orient="records")
    return list(frame_or_list)


@pytest.mark.parametrize("split,version,loader,kwargs", _EXPORTS)
def test_mirror_loaders_equal_cli_export(split, version, loader, kwargs, tmp_path):
    mirror = shared_dir("thirdparty", "gqr")
    want, error = _export(mirror, split, version, tmp_path)
    load = getattr(gqr, loader)
    if want is None:
        # The shared mirror holds three sources: the ID splits cannot be built, and both say so.
        with pytest.raises(routeval.GqrError) as e:
            load(mirror=mirror, **kwargs)
        assert str(e.value) == error
        return
    got = load(mirror=mirror, **kwargs)
    parts = got if isinstance(got, tuple) else (got,)
    rows = [r for p in parts for r in _records(p)]
    assert len(rows) == len(want) > 0
    for g, w in zip(rows, want):
        for k in g:
            if k in w:
                assert g[k] == w[k], (k, g, w)
    # The native reader gives the CLI's rows exactly, ids included.
    names = {"dev": ["dev_train", "dev_eval"]}.get(split, [split])
    cols, missing = routeval._native.gqr_read_mirror(str(mirror), names)
    ids = [i for c in cols for i in c[0]]
    assert ids == [w["id"] for w in want]
    assert any(m[0] == "dkhate" for m in missing)


def test_mirror_scoring_equals_cli(tmp_path):
    mirror = shared_dir("thirdparty", "gqr")
    (unseen, ood), _ = routeval._native.gqr_read_mirror(str(mirror), ["unseen_id", "ood_test"])
    rng = random.Random(5)
    recs = [{"id": i, "probs": _random_probs(rng, 3)} for i in unseen[0] + ood[0]]
    p = tmp_path / "probs.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    # The sweep from the mirror, as `gqr sweep --from`.
    want, err = _cli_json(["gqr", "sweep", "--scores", p, "--from", mirror, "--unseen",
                           "--thresholds", "0:1:0.1"])
    report = gqr.sweep(p, mirror=mirror, unseen=True, thresholds="0:1:0.1")
    _same(report.to_dict(), want)
    assert report.complete is False
    # Scoring a router from the mirror, as `gqr score --from --unseen`.
    def route(text):
        t = text.lower()
        return 1 if "card" in t else (0 if "law" in t else 3)

    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"id": i, "label": route(t)}) + "\n"
                             for i, t in zip(unseen[0] + ood[0], unseen[1] + ood[1])), encoding="utf-8")
    cli, _ = _cli_json(["gqr", "score", "--predictions", preds, "--from", mirror, "--unseen"])
    with pytest.warns(UserWarning, match="partial score"):
        got = gqr.score_unseen(route, mirror=mirror)
    for k in ("unseen_id_accuracy", "ood_accuracy", "unseen_id_per_dataset", "ood_per_dataset"):
        assert_nested_close(got[k], cli[k], path=k, tol=0.0)
    assert got["gqr_unseen_score"] == cli["gqr_unseen_score"] and cli["partial"] is True


def test_mirror_errors():
    with pytest.raises(routeval.GqrError, match="no such directory"):
        gqr.load_ood_test_dataset(mirror="/nonexistent/mirror")
    with pytest.raises(routeval.GqrError, match="give the data once"):
        gqr.load_ood_test_dataset("/tmp", mirror="/tmp")
