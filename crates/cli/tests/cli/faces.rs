//! Every face tells the same story (issue 24): for each subcommand the text table, `--json`,
//! `--format md` (where it exists) and `--html` are made from the same inputs, and every
//! headline number, every caveat and every extra block (a `--baseline` comparison, the
//! tokenizer fallbacks) must appear in each of them.
//!
//! * The headline cards of the HTML equal the Markdown's headline table.
//! * Each headline value appears in the text output; `--json` holds it (the sweeps' top-level
//!   `"headline"` block, label for label; elsewhere the JSON value the card is made from).
//! * Each caveat (HTML `p.caveat`, Markdown `> **Caveat:**`) appears in the text (`caveat:`
//!   lines), in `--json`'s `"caveats"` and in both reports; a sweep that chose τ without
//!   calibration must carry the "optimistic" caveat, a calibrated one must headline the
//!   held-out rows.
//! * `Must` strings (baseline deltas, fallbacks) appear in every face.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `(stdout, stderr)` of routeval run in the repository root; panics unless it exits 0.
fn routeval(args: &[&str]) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_routeval"))
        .args(args)
        .current_dir(root())
        .env("SOURCE_DATE_EPOCH", "1796140800")
        .output()
        .unwrap();
    assert!(
        out.status.code() == Some(0),
        "routeval {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A GQR build directory (manifest + id_test + ood_test) from `examples/data/gqr/rows.jsonl`
/// (as `reports.rs` makes it).
fn gqr_build(dir: &Path) -> String {
    routeval_test_support::gqr::example_build(dir, &[])
}

/// How a JSON number is printed in a headline.
#[derive(Clone, Copy)]
enum Fmt {
    F4,
    P2,
    Pct,
    Int,
}

fn fmt(v: &Value, f: Fmt) -> String {
    let x = match v {
        Value::Array(a) => a.len() as f64,
        v => v.as_f64().unwrap_or_else(|| panic!("not a number: {v}")),
    };
    match f {
        Fmt::F4 => format!("{x:.4}"),
        Fmt::P2 => format!("{x:.2}"),
        Fmt::Pct => format!("{:.2}", x * 100.0),
        Fmt::Int => format!("{}", x as i64),
    }
}

/// Strings every face must show, computed from `--json`.
type MustFn = fn(&Value) -> Vec<String>;

struct Case {
    name: &'static str,
    args: Vec<String>,
    /// Headline label → JSON pointer (for outputs without a `"headline"` block).
    pointers: Vec<(&'static str, &'static str, Fmt)>,
    md: bool,
    /// Extra strings each face must show (e.g. the baseline's deltas).
    must: MustFn,
    /// `Some(true)`: a sweep whose τ was chosen on held-out rows; `Some(false)`: chosen on
    /// the rows it reports (must be flagged optimistic).
    calibrated: Option<bool>,
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn nothing(_: &Value) -> Vec<String> {
    Vec::new()
}

/// Every `(label, value)` headline card of an HTML report.
fn html_headline(html: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find("<dt>") {
        rest = &rest[i + 4..];
        let Some(j) = rest.find("</dt>") else { break };
        let label = rest[..j].to_string();
        let (Some(k), Some(l)) = (rest.find("<dd>"), rest.find("</dd>")) else {
            break;
        };
        out.push((unescape(&label), unescape(&rest[k + 4..l])));
        rest = &rest[l..];
    }
    out
}

/// The texts of `<tag class="...">` elements (`open` = the opening tag up to its `>`).
fn html_elements(html: &str, open: &str, close: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(open) {
        rest = &rest[i + open.len()..];
        let Some(j) = rest.find(close) else { break };
        let inner = &rest[..j];
        // Drop inner tags (`<strong>Caveat:</strong>`).
        let mut text = String::new();
        let mut in_tag = false;
        for c in inner.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => text.push(c),
                _ => {}
            }
        }
        out.push(unescape(text.trim()));
        rest = &rest[j..];
    }
    out
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#x2f;", "/")
        .replace("&amp;", "&")
}

/// Markdown text with its escapes undone (`\|` → `|`, `&lt;` → `<`).
fn md_plain(md: &str) -> String {
    unescape(
        &md.replace("\\|", "|")
            .replace("\\*", "*")
            .replace("\\`", "`")
            .replace("\\\\", "\\"),
    )
}

/// The Markdown headline table's `(label, value)` rows.
fn md_headline(md: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = md.lines().skip_while(|l| *l != "| headline | value |");
    lines.next();
    lines.next();
    for l in lines {
        let Some(inner) = l.strip_prefix("| ").and_then(|l| l.strip_suffix(" |")) else {
            break;
        };
        let plain = md_plain(inner);
        if let Some((a, b)) = plain.rsplit_once(" | ") {
            out.push((a.to_string(), b.to_string()));
        }
    }
    out
}

fn md_caveats(md: &str) -> Vec<String> {
    md.lines()
        .filter_map(|l| l.strip_prefix("> **Caveat:** "))
        .map(md_plain)
        .collect()
}

/// Whether `text` shows the headline `value`: the same string, or (for a number) a number
/// that agrees with it at the coarser of the two precisions with at least 2 decimals (the
/// `rag` table keeps rag-quality-check's 3 decimals, `frontier`'s shows 6, the reports 4).
fn number_in(text: &str, value: &str) -> bool {
    if text.contains(value) {
        return true;
    }
    let decimals = |t: &str| t.split_once('.').map_or(0, |(_, d)| d.len());
    let Ok(v) = value.parse::<f64>() else {
        return false;
    };
    let dv = decimals(value);
    text.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .filter(|t| !t.is_empty())
        .any(|t| {
            let Ok(x) = t.parse::<f64>() else {
                return false;
            };
            let d = dv.min(decimals(t));
            d >= 2 && format!("{v:.d$}") == format!("{x:.d$}")
        })
}

/// The four faces of one case.
struct Faces {
    text: String,
    stderr: String,
    json: Value,
    json_text: String,
    md: Option<String>,
    html: String,
}

fn faces(case: &Case, dir: &Path) -> Faces {
    let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
    let (text, stderr) = routeval(&args);
    let mut j = args.clone();
    j.push("--json");
    let (json_text, _) = routeval(&j);
    let json: Value = serde_json::from_str(&json_text)
        .unwrap_or_else(|e| panic!("{}: --json: {e}: {json_text}", case.name));
    let md = case.md.then(|| {
        let mut m = args.clone();
        m.extend(["--format", "md"]);
        routeval(&m).0
    });
    let path = dir.join(format!("{}.html", case.name));
    let p = path.to_string_lossy().into_owned();
    let mut h = args.clone();
    h.extend(["--html", &p]);
    routeval(&h);
    let html = std::fs::read_to_string(&path).unwrap();
    Faces {
        text,
        stderr,
        json,
        json_text,
        md,
        html,
    }
}

/// Every problem of one case (empty = every face tells the same story).
fn check(case: &Case, f: &Faces) -> Vec<String> {
    let mut bad = Vec::new();
    let name = case.name;
    let html_text = unescape(&f.html);
    let head = html_headline(&f.html);
    if head.is_empty() {
        bad.push(format!("{name}: the HTML has no headline"));
    }
    let md = f.md.as_deref().map(md_plain);
    if let Some(m) = &f.md {
        let mh = md_headline(m);
        if mh != head {
            bad.push(format!(
                "{name}: Markdown headline {mh:?} != HTML headline {head:?}"
            ));
        }
    }
    // The headline in the text and the JSON.
    let json_head: Option<Vec<(String, String)>> =
        f.json.get("headline").and_then(Value::as_array).map(|a| {
            a.iter()
                .map(|h| {
                    (
                        h["label"].as_str().unwrap_or_default().to_string(),
                        h["text"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        });
    if case.calibrated.is_some() {
        match &json_head {
            Some(jh) if *jh == head => {}
            other => bad.push(format!(
                "{name}: --json \"headline\" {other:?} != the reports' {head:?}"
            )),
        }
    }
    for (label, value) in &head {
        if !number_in(&f.text, value) {
            bad.push(format!(
                "{name}: headline {label} = {value} is not in the text output"
            ));
        }
        if json_head.is_none() {
            match case.pointers.iter().find(|(l, _, _)| l == label) {
                Some((_, ptr, fm)) => match f.json.pointer(ptr) {
                    Some(v) if fmt(v, *fm) == *value => {}
                    other => bad.push(format!(
                        "{name}: headline {label} = {value} but --json {ptr} = {other:?}"
                    )),
                },
                None => bad.push(format!(
                    "{name}: headline {label} = {value} has no JSON counterpart in the test"
                )),
            }
        }
    }
    // Caveats: the same list in every face.
    let html_caveats = html_elements(&f.html, "<p class=\"caveat\">", "</p>")
        .into_iter()
        .map(|c| c.trim_start_matches("Caveat:").trim().to_string())
        .collect::<Vec<_>>();
    if let Some(m) = &f.md {
        let mc = md_caveats(m);
        if mc != html_caveats {
            bad.push(format!(
                "{name}: Markdown caveats {mc:?} != HTML caveats {html_caveats:?}"
            ));
        }
    }
    let json_caveats: Option<Vec<String>> =
        f.json.get("caveats").and_then(Value::as_array).map(|a| {
            a.iter()
                .map(|c| c.as_str().unwrap_or_default().to_string())
                .collect()
        });
    if let Some(jc) = &json_caveats
        && *jc != html_caveats
    {
        bad.push(format!(
            "{name}: --json caveats {jc:?} != HTML caveats {html_caveats:?}"
        ));
    }
    for c in &html_caveats {
        if !f.text.contains(&format!("caveat: {c}")) {
            bad.push(format!("{name}: caveat {c:?} is not in the text output"));
        }
        if json_caveats.is_none() && !f.json_text.contains(c.as_str()) {
            bad.push(format!("{name}: caveat {c:?} is not in --json"));
        }
    }
    let optimistic = html_caveats.iter().any(|c| c.contains("optimistic"))
        && head.iter().any(|(l, _)| l.contains("optimistic"));
    let held_out = head.iter().any(|(l, _)| l.contains("held-out"));
    match case.calibrated {
        Some(false) if !optimistic => bad.push(format!(
            "{name}: τ chosen on the rows it reports, but no headline or caveat says optimistic ({head:?}, {html_caveats:?})"
        )),
        Some(true) if !held_out => bad.push(format!(
            "{name}: calibrated, but the headline does not quote the held-out rows: {head:?}"
        )),
        _ => {}
    }
    // Notes of the reports: in the other report and in the text output or on stderr.
    let html_notes = html_elements(&f.html, "<li>", "</li>");
    for n in &html_notes {
        if let Some(m) = &md
            && !m.contains(n.as_str())
        {
            bad.push(format!("{name}: HTML note {n:?} is not in the Markdown"));
        }
    }
    // Extra blocks (computed from --json, so held there by construction).
    for want in (case.must)(&f.json) {
        for (face, text) in [
            ("text", Some(f.text.as_str())),
            ("Markdown", md.as_deref()),
            ("HTML", Some(html_text.as_str())),
        ] {
            if let Some(t) = text
                && !t.contains(want.as_str())
            {
                bad.push(format!("{name}: {want:?} is not in the {face}"));
            }
        }
    }
    let _ = &f.stderr;
    bad
}

/// The crb baseline block's numbers (percent, 2 decimals, signed deltas).
fn crb_baseline(j: &Value) -> Vec<String> {
    let b = &j["baseline"];
    let mut out = vec![format!("vs baseline {}", b["predictor"].as_str().unwrap())];
    for m in b["metrics"].as_array().unwrap() {
        out.push(format!("{:.2}", m["baseline"].as_f64().unwrap()));
        out.push(format!("{:+.2}", m["delta"].as_f64().unwrap()));
    }
    out
}

/// The crb tokenizer fallbacks (`routeval_tokenizers.fallbacks`) the reports must list; the
/// text output counts them in its header.
fn crb_fallbacks(j: &Value) -> Vec<String> {
    j["routeval_tokenizers"]["fallbacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            // `--json` escapes nothing here; the text shows "(fallback: cl100k for TIER)".
            let f = f.as_str().unwrap();
            f.split(':').next().unwrap().to_string()
        })
        .collect()
}

fn crb_eval_baseline_must(j: &Value) -> Vec<String> {
    let mut v = crb_baseline(j);
    v.extend(crb_fallbacks(j));
    v.push("cl100k for low, mid, high".into());
    v
}

/// `gqr score --baseline`: each set's and metric's delta in percentage points.
fn gqr_baseline(j: &Value) -> Vec<String> {
    let b = &j["baseline"];
    let mut out = vec![format!(
        "vs baseline {}",
        b["predictions"].as_str().unwrap()
    )];
    for s in b["sets"].as_array().unwrap() {
        out.push(format!("{:+.2} pp", 100.0 * s["delta"].as_f64().unwrap()));
    }
    for m in b["metrics"].as_array().unwrap() {
        out.push(format!("{:+.2} pp", 100.0 * m["delta"].as_f64().unwrap()));
    }
    out
}

/// `rag --baseline`: each metric's baseline mean and delta (4 decimals).
fn rag_baseline(j: &Value) -> Vec<String> {
    let b = &j["baseline"];
    let mut out = vec![format!("vs baseline {}", b["cases_file"].as_str().unwrap())];
    for (_, m) in b["metrics"].as_object().unwrap() {
        if let Some(d) = m["delta"].as_f64() {
            out.push(format!("{:.4}", m["baseline"].as_f64().unwrap()));
            out.push(format!("{d:+.4}"));
        }
    }
    out
}

fn cases(gqr: &str, tmp: &Path) -> Vec<Case> {
    // rag baseline: the shipped cases with every retrieved list reversed.
    let mut cases: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("examples/data/rag/cases.json")).unwrap(),
    )
    .unwrap();
    for c in cases.as_array_mut().unwrap() {
        if let Some(Value::Array(r)) = c.get_mut("retrieved") {
            r.reverse();
        }
    }
    let rag_base = tmp.join("rag_base.json");
    std::fs::write(&rag_base, cases.to_string()).unwrap();
    // gqr baseline: every text rejected (label 3).
    let preds =
        std::fs::read_to_string(root().join("examples/data/gqr/predictions.jsonl")).unwrap();
    let base: String = preds
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v["label"] = Value::from(3);
            format!("{v}\n")
        })
        .collect();
    let gqr_base = tmp.join("gqr_base.jsonl");
    std::fs::write(&gqr_base, base).unwrap();
    let empty_tok = tmp.join("no-tokenizers");
    std::fs::create_dir_all(&empty_tok).unwrap();
    let p = |x: &Path| x.to_string_lossy().into_owned();
    let crb_sweep = |extra: &[&str]| {
        let mut a = s(&[
            "crb",
            "sweep",
            "--bank",
            "examples/data/crb/bank.jsonl",
            "--scores",
            "examples/data/crb/tier_probs.jsonl",
            "--tokenizer-setup",
            "all_cl100k",
            "--thresholds",
            "0:1:0.1",
            "--target-pass-rate",
            "75",
            "--pass-rate",
            "case",
        ]);
        a.extend(s(extra));
        a
    };
    vec![
        Case {
            name: "trec",
            args: s(&[
                "trec",
                "-m",
                "official",
                "-m",
                "ndcg_cut.10",
                "examples/data/trec/qrels.txt",
                "examples/data/trec/run.txt",
            ]),
            pointers: vec![
                ("map", "/all/map", Fmt::F4),
                ("ndcg_cut_10", "/all/ndcg_cut_10", Fmt::F4),
                ("P_10", "/all/P_10", Fmt::F4),
                ("num_q", "/all/num_q", Fmt::Int),
                ("recip_rank", "/all/recip_rank", Fmt::F4),
                ("Rprec", "/all/Rprec", Fmt::F4),
            ],
            md: true,
            must: nothing,
            calibrated: None,
        },
        Case {
            name: "compare",
            args: s(&[
                "compare",
                "examples/data/compare/qrels",
                "examples/data/compare/base.run",
                "examples/data/compare/better.run",
                "examples/data/compare/noisy.run",
            ]),
            pointers: vec![
                ("map base", "/runs/0/means/map", Fmt::F4),
                ("map better", "/runs/1/means/map", Fmt::F4),
                ("map noisy", "/runs/2/means/map", Fmt::F4),
            ],
            md: false,
            must: nothing,
            calibrated: None,
        },
        Case {
            name: "rag",
            args: s(&["rag", "examples/data/rag/cases.json", "--k", "2"]),
            pointers: vec![
                ("cases", "/n_cases", Fmt::Int),
                ("precision_at_k", "/metrics/precision_at_k", Fmt::F4),
                ("recall_at_k", "/metrics/recall_at_k", Fmt::F4),
                ("mrr", "/metrics/mrr", Fmt::F4),
                ("ndcg_at_k", "/metrics/ndcg_at_k", Fmt::F4),
            ],
            md: true,
            must: nothing,
            calibrated: None,
        },
        Case {
            name: "rag_baseline",
            args: s(&[
                "rag",
                "examples/data/rag/cases.json",
                "--k",
                "2",
                "--baseline",
                &p(&rag_base),
            ]),
            pointers: vec![
                ("cases", "/n_cases", Fmt::Int),
                ("precision_at_k", "/metrics/precision_at_k", Fmt::F4),
                ("recall_at_k", "/metrics/recall_at_k", Fmt::F4),
                ("mrr", "/metrics/mrr", Fmt::F4),
                ("ndcg_at_k", "/metrics/ndcg_at_k", Fmt::F4),
            ],
            md: true,
            must: rag_baseline,
            calibrated: None,
        },
        Case {
            name: "route",
            args: s(&[
                "route",
                "--config",
                "examples/data/dsl/routes.json",
                "--data",
                "examples/data/dsl/outputs.jsonl",
            ]),
            pointers: vec![("instances", "/instances", Fmt::Int)],
            md: true,
            must: nothing,
            calibrated: None,
        },
        Case {
            name: "crb_eval",
            args: s(&[
                "crb",
                "eval",
                "--bank",
                "examples/data/crb/bank.jsonl",
                "--predictor",
                "file:examples/data/crb/predictions.json",
                "--tokenizer-setup",
                "all_cl100k",
            ]),
            pointers: crb_eval_pointers(),
            md: true,
            must: nothing,
            calibrated: None,
        },
        Case {
            name: "crb_eval_baseline",
            args: s(&[
                "crb",
                "eval",
                "--bank",
                "examples/data/crb/bank.jsonl",
                "--predictor",
                "file:examples/data/crb/predictions.json",
                "--tokenizers",
                &p(&empty_tok),
                "--baseline-predictor",
                "tier:mid",
            ]),
            pointers: crb_eval_pointers(),
            md: true,
            must: crb_eval_baseline_must,
            calibrated: None,
        },
        Case {
            name: "crb_sweep",
            args: crb_sweep(&[]),
            pointers: vec![],
            md: true,
            must: nothing,
            calibrated: Some(false),
        },
        Case {
            name: "crb_sweep_calibrated",
            args: crb_sweep(&["--calibrate-on", r#"{"benchmark": "swebench"}"#]),
            pointers: vec![],
            md: true,
            // The held-out figures the README tells users to quote.
            must: |j| {
                let r = &j["chosen"]["report"];
                vec![
                    format!(
                        "{:.2}",
                        r["scores_v2"]["case_pass_rate_percent"].as_f64().unwrap()
                    ),
                    format!("{:.6}", r["cost_usd"].as_f64().unwrap()),
                ]
            },
            calibrated: Some(true),
        },
        Case {
            name: "gqr_score",
            args: s(&[
                "gqr",
                "score",
                "--predictions",
                "examples/data/gqr/predictions.jsonl",
                "--build-dir",
                gqr,
                "--ci",
                "0.95",
            ]),
            pointers: gqr_pointers(),
            md: true,
            must: nothing,
            calibrated: None,
        },
        Case {
            name: "gqr_score_baseline",
            args: s(&[
                "gqr",
                "score",
                "--predictions",
                "examples/data/gqr/predictions.jsonl",
                "--build-dir",
                gqr,
                "--baseline",
                &p(&gqr_base),
            ]),
            pointers: gqr_pointers(),
            md: true,
            must: gqr_baseline,
            calibrated: None,
        },
        Case {
            name: "gqr_sweep",
            args: s(&[
                "gqr",
                "sweep",
                "--scores",
                "examples/data/gqr/probs.jsonl",
                "--build-dir",
                gqr,
            ]),
            pointers: vec![],
            md: true,
            must: nothing,
            calibrated: Some(false),
        },
        Case {
            name: "frontier",
            args: s(&["frontier", "examples/data/frontier/points.jsonl"]),
            pointers: vec![
                ("AIQ knn-router", "/systems/0/aiq", Fmt::F4),
                ("AIQ mlp-router", "/systems/1/aiq", Fmt::F4),
            ],
            md: true,
            must: nothing,
            calibrated: None,
        },
    ]
}

fn crb_eval_pointers() -> Vec<(&'static str, &'static str, Fmt)> {
    vec![
        (
            "case pass rate (%)",
            "/scores_v2/case_pass_rate_percent",
            Fmt::P2,
        ),
        (
            "case exact match (%)",
            "/scores_v2/case_exact_match_percent",
            Fmt::P2,
        ),
        (
            "trajectory pass rate (%)",
            "/scores_v2/trajectory_pass_rate_percent",
            Fmt::P2,
        ),
        (
            "cost savings vs always-high (%)",
            "/scores_v2/cost_savings_score_percent",
            Fmt::P2,
        ),
        (
            "combined score (%)",
            "/scores_v2/combined_score_percent",
            Fmt::P2,
        ),
    ]
}

fn gqr_pointers() -> Vec<(&'static str, &'static str, Fmt)> {
    vec![
        ("ID accuracy (%)", "/id_accuracy", Fmt::Pct),
        ("OOD accuracy (%)", "/ood_accuracy", Fmt::Pct),
        ("PARTIAL GQR score (%)", "/gqr_score", Fmt::Pct),
        ("GQR score (%)", "/gqr_score", Fmt::Pct),
    ]
}

#[test]
fn every_face_shows_the_same_headline_caveats_and_blocks() {
    let d = tempfile::tempdir().unwrap();
    let g = tempfile::tempdir().unwrap();
    let gqr = gqr_build(g.path());
    let mut bad = Vec::new();
    for case in cases(&gqr, d.path()) {
        let f = faces(&case, d.path());
        bad.extend(check(&case, &f));
    }
    assert!(
        bad.is_empty(),
        "{} problems:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// The SVG plots of a report: `(font sizes, texts with their y, polylines)`.
struct Svg {
    /// `(font-size, y, text)` of every `<text>`.
    texts: Vec<(f64, f64, String)>,
    /// Points of every `<polyline>`.
    polylines: Vec<Vec<(f64, f64)>>,
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    let j = tag[i..].find('"')?;
    Some(tag[i..i + j].to_string())
}

fn svgs(html: &str) -> Vec<Svg> {
    let mut out = Vec::new();
    for part in html.split("<svg").skip(1) {
        let body = part.split("</svg>").next().unwrap_or_default();
        let mut texts = Vec::new();
        for t in body.split("<text").skip(1) {
            let (tag, rest) = t.split_once('>').unwrap_or((t, ""));
            let text = rest.split("</text>").next().unwrap_or_default().trim();
            let size = attr(tag, "font-size")
                .and_then(|v| v.parse().ok())
                .unwrap_or(f64::NAN);
            let y = attr(tag, "y")
                .and_then(|v| v.parse().ok())
                .unwrap_or(f64::NAN);
            texts.push((size, y, unescape(text)));
        }
        let polylines = body
            .split("<polyline")
            .skip(1)
            .filter_map(|p| attr(p.split('>').next().unwrap_or_default(), "points"))
            .map(|pts| {
                pts.split_whitespace()
                    .filter_map(|xy| {
                        let (x, y) = xy.split_once(',')?;
                        Some((x.parse().ok()?, y.parse().ok()?))
                    })
                    .collect()
            })
            .collect();
        out.push(Svg { texts, polylines });
    }
    out
}

/// The plots people read: every text ≥ 11 px, no float noise on a tick, the legend below the
/// plot area (every legend entry under the x axis title), step lines in `gqr sweep`, τ labels
/// next to the sweep points.
#[test]
fn plots_are_readable() {
    let d = tempfile::tempdir().unwrap();
    let g = tempfile::tempdir().unwrap();
    let gqr = gqr_build(g.path());
    let mut bad = Vec::new();
    let all = cases(&gqr, d.path());
    for case in &all {
        let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
        let path = d.path().join(format!("{}.html", case.name));
        let p = path.to_string_lossy().into_owned();
        let mut h = args.clone();
        h.extend(["--html", &p]);
        routeval(&h);
        let html = std::fs::read_to_string(&path).unwrap();
        for (k, svg) in svgs(&html).iter().enumerate() {
            for (size, _, text) in &svg.texts {
                if size.is_nan() || *size < 11.0 {
                    bad.push(format!(
                        "{} plot {k}: text {text:?} at {size} px",
                        case.name
                    ));
                }
                if text.contains("e-1")
                    || text.contains("e-2")
                    || text.starts_with("-0.0")
                        && text.trim_start_matches("-0.").chars().all(|c| c == '0')
                {
                    bad.push(format!("{} plot {k}: tick label {text:?}", case.name));
                }
            }
        }
    }
    // Legends: in the crb sweep report, every legend entry lies below the x axis title.
    let html = std::fs::read_to_string(d.path().join("crb_sweep.html")).unwrap();
    let plots = svgs(&html);
    let curve = &plots[0];
    let axis_y = curve
        .texts
        .iter()
        .find(|t| t.2 == "cost of the predicted path (USD)")
        .map(|t| t.1)
        .expect("x axis title");
    for name in ["thresholds", "chosen τ = 0.9"] {
        match curve.texts.iter().find(|t| t.2.starts_with(name)) {
            Some(t) if t.1 > axis_y => {}
            other => bad.push(format!(
                "crb sweep: legend entry {name:?} at {other:?} is not below the plot (x axis title at y = {axis_y})"
            )),
        }
    }
    // τ labels next to the sweep points.
    for want in ["τ = 0.5", "τ = 0.9"] {
        if !curve.texts.iter().any(|t| t.2 == want) {
            bad.push(format!("crb sweep: no point label {want:?}"));
        }
    }
    // gqr sweep: the accuracies over τ are staircases (every segment horizontal or vertical).
    let html = std::fs::read_to_string(d.path().join("gqr_sweep.html")).unwrap();
    let plots = svgs(&html);
    let long: Vec<&Vec<(f64, f64)>> = plots[0].polylines.iter().filter(|p| p.len() >= 4).collect();
    if long.is_empty() {
        bad.push("gqr sweep: no series line in the first plot".into());
    }
    for line in long {
        for w in line.windows(2) {
            if w[0].0 != w[1].0 && w[0].1 != w[1].1 {
                bad.push(format!(
                    "gqr sweep: a sloped segment {:?} -> {:?}",
                    w[0], w[1]
                ));
                break;
            }
        }
    }
    if !plots[1].texts.iter().any(|t| t.2.starts_with("τ = ")) {
        bad.push("gqr sweep: no τ label in the ID-vs-OOD plot".into());
    }
    assert!(
        bad.is_empty(),
        "{} problems:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
