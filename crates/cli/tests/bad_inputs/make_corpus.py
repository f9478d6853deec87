#!/usr/bin/env python3
"""Writes the bad-input corpus (issue 10, acceptance): one directory per subcommand holding
the bad inputs, the good fixtures they are combined with, and `cases.tsv`:

    FILE <TAB> EXIT <TAB> NEEDLE <TAB> ARG <TAB> ARG ...

`tests/bad_inputs.rs` runs `routeval ARG...` in that directory for every row and asserts
exit status EXIT, no stdout, exactly one stderr line, containing NEEDLE (usually FILE:LINE).
Re-run this script after editing it; the files are committed.
"""
import json, os, shutil

HERE = os.path.dirname(os.path.abspath(__file__))

def sub(name, fixtures, cases):
    d = os.path.join(HERE, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    for fname, content in fixtures.items():
        p = os.path.join(d, fname)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(content if isinstance(content, bytes) else content.encode())
    rows = []
    for fname, content, exit_code, needle, args in cases:
        with open(os.path.join(d, fname), "wb") as f:
            f.write(content if isinstance(content, bytes) else content.encode())
        args = [a.replace("{}", fname) for a in args]
        rows.append("\t".join([fname, str(exit_code), needle.replace("{}", fname)] + args))
    with open(os.path.join(d, "cases.tsv"), "w") as f:
        f.write("\n".join(rows) + "\n")
    assert len(cases) >= 25, name

# ---------------------------------------------------------------------------------------
# trec: bad runs against good qrels, bad qrels against a good run.
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\nq2 0 d4 0\n"
RUN = "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.5 r\nq2 Q0 d3 1 0.7 r\n"
run_cases = [
    ("run_missing_column.txt", "q1 Q0 d1 1 0.9\n", "{}:1"),
    ("run_bad_score.txt", "q1 Q0 d1 1 high r\n", "{}:1"),
    ("run_nan_score.txt", "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 nan r\n", "{}:2"),
    ("run_empty.txt", "", "{}"),
    ("run_only_comments.txt", "# nothing\n\n", "{}"),
    ("run_dup_doc.txt", "q1 Q0 d1 1 0.9 r\nq1 Q0 d1 2 0.5 r\n", "{}"),
    ("run_binary.txt", b"\x00\x01\x02\xff\xfe\n", "{}:1"),
    ("run_one_field.txt", "q1\n", "{}:1"),
    ("run_two_fields.txt", "q1 Q0\n", "{}:1"),
    ("run_score_word_inf_text.txt", "q1 Q0 d1 1 0.9.1 r\n", "{}:1"),
    ("run_no_common_query.txt", "zz Q0 d1 1 0.9 r\n", "{}"),
    ("run_bad_third_line.txt", "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.5 r\nq2 Q0 d3 1 x r\n", "{}:3"),
    ("run_score_empty_hex.txt", "q1 Q0 d1 1 0x10 r\n", "{}:1"),
    ("run_dup_doc_crlf.txt", "q1 Q0 d1 1 0.9 r\r\nq1 Q0 d1 2 0.5 r\r\n", "{}"),
    ("run_nan_upper.txt", "q1 Q0 d1 1 NaN r\n", "{}:1"),
]
qrels_cases = [
    ("qrels_float_rel.txt", "q1 0 d1 1.5\n", "{}:1"),
    ("qrels_word_rel.txt", "q1 0 d1 yes\n", "{}:1"),
    ("qrels_missing_column.txt", "q1 0 d1\n", "{}:1"),
    ("qrels_empty.txt", "", "{}"),
    ("qrels_dup_judgment.txt", "q1 0 d1 1\nq1 0 d1 0\n", "{}"),
    ("qrels_huge_rel.txt", "q1 0 d1 99999999999999999999\n", "{}:1"),
    ("qrels_binary.txt", b"\xff\xfe\x00\n", "{}:1"),
    ("qrels_bad_line_3.txt", "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3\n", "{}:3"),
    ("qrels_five_columns.txt", "q1 0 d1 1 extra\n", "{}:1"),
    ("qrels_only_comments.txt", "# none\n", "{}"),
]
cases = [(f, c, 2, n, ["trec", "qrels.txt", "{}"]) for f, c, n in run_cases]
cases += [(f, c, 2, n, ["trec", "{}", "run.txt"]) for f, c, n in qrels_cases]
sub("trec", {"qrels.txt": QRELS, "run.txt": RUN}, cases)

# ---------------------------------------------------------------------------------------
# rag: input errors exit 1 (rag-quality-check's status), one `routeval rag: error:` line.
def rj(v):
    return json.dumps(v)
Q = {"query": "q", "retrieved": ["a"]}
def qa(**kw):
    c = dict(Q); c.update(kw)
    return c
rag = [
    ("not_json.json", "{not json", "{} line 1 is not valid JSON"),
    ("jsonl_bad_line.jsonl", rj(Q) + "\n{oops\n", "{} line 2 is not valid JSON"),
    ("scalar.json", "42", "{} must hold a list of case objects"),
    ("string.json", '"just a string"', "{} must hold a list of case objects, got str"),
    ("infinity.json", "Infinity", "{} must hold a list of case objects, got float"),
    ("case_not_object.json", rj([Q, 3]), "case 1 is not a JSON object"),
    ("case_is_list.json", rj([Q, []]), "case 1 is not a JSON object"),
    ("retrieved_not_list.json", rj([qa(retrieved=5)]), "case 0: 'retrieved' must be a list"),
    ("retrieved_string.json", rj([qa(retrieved="abc")]), "case 0: 'retrieved' must be a list"),
    ("retrieved_dict.json", rj([qa(retrieved={"a": 1})]), "case 0: 'retrieved' must be a list, got dict"),
    ("relevant_not_list.json", rj([qa(relevant=3)]), "'relevant' must be a list of ids"),
    ("relevant_string.json", rj([qa(relevant="a")]), "'relevant' must be a list of ids"),
    ("relevant_bad_gain.json", rj([qa(relevant={"a": "x"})]), "relevance gain for 'a' is not a number"),
    ("relevant_gain_list.json", rj([qa(relevant={"a": [1]})]), "relevance gain for 'a' is not a number"),
    ("relevant_gain_null.json", rj([qa(relevant={"a": None})]), "relevance gain for 'a' is not a number"),
    ("empty_file.json", "", "{}"),
    ("bom.json", "\ufeff" + rj([Q]), "{}"),
    ("truncated.json", '[{"query": "q", "retrieved": ["a"', "{} line 1 is not valid JSON"),
    ("huge_gain.json", '[{"query": "q", "retrieved": ["a"], "relevant": {"a": 1' + "0" * 400 + '}}]', "case 0"),
    ("jsonl_line_3.jsonl", rj(Q) + "\n" + rj(Q) + "\n[\n", "{} line 3 is not valid JSON"),
    ("trailing_garbage.json", rj([Q]) + " x", "{} line 1 is not valid JSON"),
    ("trailing_comma.json", "[1,]", "{} line 1 is not valid JSON (Expecting value"),
    ("single_quotes.json", "{'a': 1}", "{} line 1 is not valid JSON (Expecting property name"),
    ("bad_escape.json", '["\\x"]', "{} line 1 is not valid JSON (Invalid \\escape"),
    ("unterminated.json", '["abc', "{} line 1 is not valid JSON (Unterminated string"),
    ("missing_colon.json", '{"a" 1}', "{} line 1 is not valid JSON (Expecting ':' delimiter"),
    ("only_whitespace.json", "   \n  \n", "{}"),
]
sub("rag", {}, [(f, c, 1, n, ["rag", "{}"]) for f, c, n in rag])

# ---------------------------------------------------------------------------------------
# filter: bad JSONL lines.
W = '{"x": {">": 1}}'
good = '{"x": 2}\n'
filt = [
    ("bad_json_line_2.jsonl", good + "{oops\n", "{}:2"),
    ("truncated_line_1.jsonl", '{"x": 2', "{}:1"),
    ("not_object.jsonl", good + "[1, 2]\n", "{}:2"),
    ("scalar_line.jsonl", "3\n", "{}:1"),
    ("invalid_utf8.jsonl", b'{"x": "\xff"}\n', "{}:1"),
    ("binary.jsonl", b"\x00\x01\x02\n", "{}:1"),
    ("trailing_garbage.jsonl", '{"x": 2} x\n', "{}:1"),
    ("two_objects_one_line.jsonl", '{"x": 2}{"x": 3}\n', "{}:1"),
    ("bad_line_5.jsonl", good * 4 + "{,}\n", "{}:5"),
    ("single_quotes.jsonl", "{'x': 2}\n", "{}:1"),
    ("nan_bare.jsonl", '{"x": nan}\n', "{}:1"),
    ("unterminated_string.jsonl", '{"x": "abc}\n', "{}:1"),
    ("missing_colon.jsonl", '{"x" 2}\n', "{}:1"),
    ("trailing_comma.jsonl", '{"x": 2,}\n', "{}:1"),
    ("bare_word.jsonl", "hello\n", "{}:1"),
    ("bad_escape.jsonl", '{"x": "\\q"}\n', "{}:1"),
    ("lone_bracket.jsonl", "}\n", "{}:1"),
    ("null_line.jsonl", good + "null\n", "{}:2"),
    ("string_line.jsonl", '"text"\n', "{}:1"),
    ("crlf_bad.jsonl", '{"x": 2}\r\n{oops\r\n', "{}:2"),
    ("deep_bad_line_30.jsonl", good * 29 + "{\n", "{}:30"),
    ("array_line.jsonl", "[]\n", "{}:1"),
    ("number_key.jsonl", "{1: 2}\n", "{}:1"),
    ("bad_unicode_escape.jsonl", '{"x": "\\uZZZZ"}\n', "{}:1"),
    ("control_char.jsonl", '{"x": "a\x01b"}\n', "{}:1"),
]
sub("filter", {}, [(f, c, 2, n, ["filter", "--where", W, "{}"]) for f, c, n in filt])

# ---------------------------------------------------------------------------------------
# route: bad data (against a good config) and bad configs (against good data).
CFG = json.dumps({"routes": [{"name": "all", "where": {}, "metrics": ["exact_match"]}]})
DATA = '{"lm_output": "a", "references": ["a"], "extra_info": {"x": 1}}\n'
rdata = [
    ("data_bad_json.jsonl", DATA + "{oops\n", "{}:2"),
    ("data_not_object.jsonl", "[1]\n", "{}:1"),
    ("data_extra_info_list.jsonl", '{"lm_output": "a", "references": ["a"], "extra_info": [1]}\n', "{}:1"),
    ("data_invalid_utf8.jsonl", b'{"lm_output": "\xff"}\n', "{}"),
    ("data_truncated.jsonl", '{"lm_output": "a"', "{}:1"),
    ("data_scalar.jsonl", DATA + "7\n", "{}:2"),
    ("data_trailing_garbage.jsonl", DATA + DATA.strip() + " x\n", "{}:2"),
    ("data_bad_line_4.jsonl", DATA * 3 + "{,\n", "{}:4"),
    ("data_extra_info_string.jsonl", '{"lm_output": "a", "references": ["a"], "extra_info": "x"}\n', "{}:1"),
    ("data_binary.jsonl", b"\x00\x00\n", "{}:1"),
    ("data_nan.jsonl", '{"lm_output": NaN}\n', "{}:1"),
    ("data_single_quotes.jsonl", "{'lm_output': 'a'}\n", "{}:1"),
]
rcfg = [
    ("cfg_not_json.json", "{routes", "{}"),
    ("cfg_no_routes.json", json.dumps({"foo": []}), "{}"),
    ("cfg_routes_not_list.json", json.dumps({"routes": 3}), "{}"),
    ("cfg_route_not_object.json", json.dumps({"routes": [3]}), "{}"),
    ("cfg_bad_where.json", json.dumps({"routes": [{"name": "a", "where": {"x": {"~~": 1}}, "metrics": ["exact_match"]}]}), "{}"),
    ("cfg_unknown_metric.json", json.dumps({"routes": [{"name": "a", "where": {}, "metrics": ["nope"]}]}), "{}"),
    ("cfg_metrics_string.json", json.dumps({"routes": [{"name": "a", "where": {}, "metrics": "exact_match"}]}), '{}: bad_route: route "a": metrics must be a list, got str'),
    ("cfg_templates_not_object.json", json.dumps({"routes": [{"name": "a", "where": {}, "metrics": ["exact_match"]}], "extra_info_templates": 3}), "{}"),
    ("cfg_template_not_string.json", json.dumps({"routes": [{"name": "a", "where": {}, "metrics": ["exact_match"]}], "extra_info_templates": {"k": 3}}), "{}"),
    ("cfg_bad_template.json", json.dumps({"routes": [{"name": "a", "where": {}, "metrics": ["exact_match"]}], "extra_info_templates": {"k": "{{ x "}}), "{}"),
    ("cfg_bad_on_unmatched.json", json.dumps({"routes": [{"name": "a", "where": {}, "metrics": ["exact_match"]}], "on_unmatched": "explode"}), "{}"),
    ("cfg_invalid_utf8.json", b'{"routes": "\xff"}', "{}"),
    ("cfg_empty.json", "", "{}"),
    ("cfg_bad_jsonnet.jsonnet", "{ routes: [ }", "{}"),
    ("cfg_unknown_route_key.json", '{\n  "routes": [\n    {\n      "name": "a",\n      "wher": {"x": 1},\n      "metrics": ["exact_match"]\n    }\n  ]\n}\n', '{}:5: unknown_key: route "a": unknown key "wher"'),
    ("cfg_unknown_top_key.json", '{\n  "routes": [{"name": "a", "where": {}, "metrics": ["exact_match"]}],\n  "on_unmatch": "error"\n}\n', '{}:3: unknown_key: unknown key "on_unmatch"'),
]
cases = [(f, c, 2, n, ["route", "--config", "routes.json", "--data", "{}"]) for f, c, n in rdata]
cases += [(f, c, 2, n, ["route", "--config", "{}", "--data", "data.jsonl"]) for f, c, n in rcfg]
sub("route", {"routes.json": CFG, "data.jsonl": DATA}, cases)

# ---------------------------------------------------------------------------------------
# crb: bad bank rows (eval, gold predictor) and bad case files (metrics).
ROW = {"id": "b_i_step_1", "benchmark": "b", "instance_id": "i", "step_index": 1, "total_steps": 1,
       "messages": [{"role": "user", "content": "hi"}], "target_tier": "low", "target_tier_id": 0}
def row(**kw):
    r = dict(ROW); r.update(kw)
    return json.dumps(r)
def without(k):
    r = dict(ROW); del r[k]
    return json.dumps(r)
bank = [
    ("bank_bad_json.jsonl", row() + "\n{oops\n", "{}:2"),
    ("bank_not_object.jsonl", "[1]\n", "{}:1"),
    ("bank_tier_id_string.jsonl", row(target_tier_id="x") + "\n", "{}:1"),
    ("bank_messages_not_list.jsonl", row(messages=3) + "\n", "{}:1"),
    ("bank_bad_tier.jsonl", row(target_tier="huge", target_tier_id=9) + "\n", "{}:1"),
    ("bank_no_id.jsonl", without("id") + "\n", "{}:1"),
    ("bank_truncated.jsonl", row()[:-5], "{}:1"),
    ("bank_invalid_utf8.jsonl", b'{"id": "\xff"}\n', "{}"),
    ("bank_empty.jsonl", "", "{}"),
    ("bank_line_3.jsonl", row() + "\n" + row(id="b_i_step_2", step_index=2) + "\n{,\n", "{}:3"),
    ("bank_binary.jsonl", b"\x00\x01\n", "{}:1"),
    ("bank_message_not_object.jsonl", row(messages=[3]) + "\n", "{}:1"),
    ("bank_nan.jsonl", '{"id": NaN}\n', "{}:1"),
    ("bank_scalar.jsonl", "7\n", "{}:1"),
]
CASE = {"case_id": "c1", "task_passed": True, "router_cost": 1.0, "baseline_cost": 2.0}
metrics = [
    ("cases_not_json.json", "[{", "{}"),
    ("cases_not_list.json", json.dumps({"a": 1}), "{}"),
    ("cases_item_not_object.json", json.dumps([3]), "{}"),
    ("cases_empty_file.json", "", "{}"),
    ("cases_invalid_utf8.json", b'[{"case_id": "\xff"}]', "{}"),
    ("cases_truncated.json", json.dumps([CASE])[:-3], "{}"),
    ("cases_trailing.json", json.dumps([CASE]) + " x", "{}"),
    ("cases_binary.json", b"\x00\x01", "{}"),
    ("cases_scalar.json", "3", "{}"),
    ("cases_single_quotes.json", "[{'case_id': 1}]", "{}"),
    ("cases_nan_bare.json", "[nan]", "{}"),
]
cases = [(f, c, 2, n, ["crb", "eval", "--bank", "{}", "--predictor", "gold", "--tokenizer-setup", "all_cl100k"]) for f, c, n in bank]
cases += [(f, c, 2, n, ["crb", "metrics", "--cases", "{}"]) for f, c, n in metrics]
sub("crb", {}, cases)

# ---------------------------------------------------------------------------------------
# gqr score: bad prediction files against a tiny build.
MANIFEST = json.dumps({"build": "gqr", "registry_blake3": "-", "files": [
    {"path": "id_test.jsonl", "rows": 2, "blake3": "-"},
    {"path": "ood_test.jsonl", "rows": 1, "blake3": "-"}],
    "missing": [], "datasets": [], "warnings": []})
ID = ('{"id": "id_test/law/0", "text": "a contract", "label": 0, "domain": "law", "dataset": "law"}\n'
      '{"id": "id_test/finance/0", "text": "a loan", "label": 1, "domain": "finance", "dataset": "finance"}\n')
OOD = '{"id": "ood_test/jigsaw/0", "text": "hi", "label": 3, "domain": "ood", "dataset": "jigsaw"}\n'
P1 = '{"id": "id_test/law/0", "label": 0}\n'
P2 = '{"id": "id_test/finance/0", "label": 1}\n'
P3 = '{"id": "ood_test/jigsaw/0", "label": 3}\n'
preds = [
    ("p_bad_json.jsonl", P1 + "{oops\n", "{}:2"),
    ("p_no_id.jsonl", '{"label": 0}\n', "{}:1"),
    ("p_no_label.jsonl", '{"id": "id_test/law/0"}\n', "{}:1"),
    ("p_label_string.jsonl", P2 + P3 + '{"id": "id_test/law/0", "label": "zero"}\n', "{}:3"),
    ("p_label_float.jsonl", P2 + P3 + '{"id": "id_test/law/0", "label": 0.5}\n', "{}:3"),
    # Repeated ids are a warning, not an error (issue 10 item 6): tests/meanings.rs.
    ("p_label_object.jsonl", P2 + P3 + '{"id": "id_test/law/0", "label": {"v": 0}}\n', "{}:3"),
    ("p_not_object.jsonl", "[1]\n", "{}:1"),
    ("p_id_number.jsonl", '{"id": 3, "label": 0}\n', "{}:1"),
    ("p_truncated.jsonl", '{"id": "id_test/law/0", "label"', "{}:1"),
    ("p_invalid_utf8.jsonl", b'{"id": "\xff", "label": 0}\n', "{}:1"),
    ("p_binary.jsonl", b"\x00\x01\n", "{}:1"),
    ("p_label_null.jsonl", '{"id": "id_test/law/0", "label": null}\n', "{}:1"),
    ("p_label_bool.jsonl", '{"id": "id_test/law/0", "label": true}\n', "{}:1"),
    ("p_nan.jsonl", '{"id": "id_test/law/0", "label": NaN}\n', "{}:1"),
    ("p_label_huge.jsonl", P2 + P3 + '{"id": "id_test/law/0", "label": 1e400}\n', "{}:3"),
    ("p_trailing.jsonl", P1.strip() + " x\n", "{}:1"),
    ("p_scalar.jsonl", "3\n", "{}:1"),
    ("p_single_quotes.jsonl", "{'id': 'x', 'label': 0}\n", "{}:1"),
    ("p_label_list.jsonl", '{"id": "id_test/law/0", "label": [0]}\n', "{}:1"),
    ("p_line_4.jsonl", P1 + P2 + P3 + "{,\n", "{}:4"),
    ("p_label_negative_float.jsonl", P2 + P3 + '{"id": "id_test/law/0", "label": -0.5}\n', "{}:3"),
    ("p_id_list.jsonl", '{"id": ["id_test/law/0"], "label": 0}\n', "{}:1"),
    ("p_label_float_big.jsonl", P2 + P3 + '{"id": "id_test/law/0", "label": 3.7}\n', "{}:3"),
    ("p_control_char.jsonl", '{"id": "a\x01", "label": 0}\n', "{}:1"),
    ("p_crlf_bad.jsonl", P1.replace("\n", "\r\n") + "{oops\r\n", "{}:2"),
]
sub("gqr", {"build/manifest.json": MANIFEST, "build/id_test.jsonl": ID, "build/ood_test.jsonl": OOD},
    [(f, c, 2, n, ["gqr", "score", "--build-dir", "build", "--predictions", "{}"]) for f, c, n in preds])
