//! Every case in `$ROUTEVAL_SHARED/golden/crb/cases/*` (globbed, so held-back cases are picked
//! up): the native summary must equal `expected_summary.json` (floats bit-equal), the
//! `hf_offline` / `all_cl100k` metric blocks their `expected_metrics.*.json`, the walk its
//! `expected_steps.json`, and raising cases must give an error.

use routeval_bench_data::crb::{
    BankReader, Manifest, check_row, manifest_proportional_quotas, proportional_reservoir_sample,
};
use routeval_bench_data::pyrandom::PyRandom;
use routeval_core::Tier;
use routeval_routing_scores::crb::records::{PredictionMap, TierPredictor, make_record};
use routeval_routing_scores::crb::scores::{
    CrbMetrics, Selection, benchmark_counts, build_summary,
};
use routeval_routing_scores::crb::walk::WalkContext;
use routeval_tier_cost::tokens::{
    TierTokenizers, TokenizerFiles, TokenizerSetup, build_tier_tokenizers,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn shared() -> Option<PathBuf> {
    routeval_core::fixtures::shared_dir("crb_cases")
}

fn load(p: &Path) -> Value {
    let b = std::fs::read(p).unwrap_or_else(|e| panic!("missing {}: {e}", p.display()));
    serde_json::from_slice(&b).unwrap()
}

fn toks(setup: TokenizerSetup) -> &'static TierTokenizers {
    static T: OnceLock<Vec<(TokenizerSetup, TierTokenizers)>> = OnceLock::new();
    let all = T.get_or_init(|| {
        let d =
            PathBuf::from(std::env::var("ROUTEVAL_SHARED").unwrap()).join("thirdparty/tokenizers");
        let rd = |p: &str| {
            Some(std::fs::read(d.join(p)).unwrap_or_else(|e| panic!("missing tokenizer {p}: {e}")))
        };
        let files = TokenizerFiles {
            anthropic: rd("anthropic/tokenizer.json"),
            minimax: rd("minimax-text-01/tokenizer.json"),
            deepseek: rd("deepseek-v3/tokenizer.json"),
        };
        [
            TokenizerSetup::Native,
            TokenizerSetup::HfOffline,
            TokenizerSetup::AllCl100k,
        ]
        .into_iter()
        .map(|s| (s, build_tier_tokenizers(s, &files, [true; 4]).unwrap()))
        .collect()
    });
    &all.iter().find(|(s, _)| *s == setup).unwrap().1
}

/// Run a case; Err(message) when our pipeline refuses it.
fn run(
    dir: &Path,
    setup: TokenizerSetup,
) -> Result<(serde_json::Map<String, Value>, CrbMetrics), String> {
    let case = load(&dir.join("case.json"));
    let n = case["n"].as_i64();
    let seed = case["seed"].as_i64().unwrap_or(42);
    let bank = dir.join("bank.jsonl");
    let f = std::io::BufReader::new(std::fs::File::open(&bank).unwrap());
    let (rows, mode, quotas) = match n {
        None => {
            let rows =
                routeval_bench_data::crb::read_bank(f, "bank.jsonl").map_err(|e| e.to_string())?;
            (rows, "full_bank", None)
        }
        Some(n) => {
            let man = if case["mode"] == "select_evaluate_build" {
                Manifest {
                    value: load(&dir.join("manifest.json")),
                }
            } else {
                routeval_bench_data::crb::published_manifest()
            };
            let q = manifest_proportional_quotas(&man, n).map_err(|e| e.to_string())?;
            let mut rng = PyRandom::new(seed as i128);
            let rows =
                proportional_reservoir_sample(BankReader::new(f, "bank.jsonl"), &mut rng, &q)
                    .map_err(|e| e.to_string())?
                    .map_err(|e| e.to_string())?;
            (rows, "proportional_sample", Some(q))
        }
    };
    let preds = load(&dir.join("predictions.json"));
    let mut pm = PredictionMap::new(
        case["error_row_message"]
            .as_str()
            .unwrap_or("predictor error"),
    );
    for (k, v) in preds.as_object().unwrap() {
        pm.insert(k.clone(), PredictionMap::parse_entry(k, v).unwrap());
    }
    let mut records = Vec::new();
    let counts = benchmark_counts(rows.iter().filter_map(|r| r.benchmark()));
    for row in rows {
        let c = check_row(&row, "bank.jsonl").map_err(|e| e.to_string())?;
        let p = pm.predict(&row.value);
        let rec = make_record(
            row.value,
            c.id,
            c.benchmark,
            Tier::from_id(c.gold).unwrap(),
            p,
        )
        .map_err(|e| e.to_string())?;
        records.push(rec);
    }
    let toks = toks(setup);
    let mut ctx = WalkContext::new(&records, toks);
    let metrics = CrbMetrics::compute(&records, &mut ctx).map_err(|e| e.to_string())?;
    let sel = Selection {
        shard: "bank.jsonl".into(),
        sample_mode: mode.into(),
        seed: Value::from(seed),
        quotas,
        benchmark_counts: counts,
    };
    let extra = case["extra_summary"].as_object();
    let s = build_summary(
        case["predictor_label"].as_str().unwrap(),
        &sel,
        &mut records,
        &metrics,
        extra,
        true,
    );
    Ok((s, metrics))
}

/// Compare golden `exp` with `got`: numbers parsed (ints equal, floats bit-equal), "NaN" ⇔ null.
fn compare(exp: &Value, got: &Value, path: &str, diffs: &mut Vec<String>) {
    match (exp, got) {
        (Value::Object(e), Value::Object(g)) => {
            let ek: Vec<&String> = e.keys().collect();
            let gk: Vec<&String> = g.keys().filter(|k| e.contains_key(*k)).collect();
            if ek != gk {
                diffs.push(format!("{path}: keys {ek:?} vs {gk:?}"));
            }
            for (k, v) in e {
                match g.get(k) {
                    Some(gv) => compare(v, gv, &format!("{path}.{k}"), diffs),
                    None => diffs.push(format!("{path}.{k}: missing")),
                }
            }
        }
        (Value::Array(e), Value::Array(g)) => {
            if e.len() != g.len() {
                diffs.push(format!("{path}: len {} vs {}", e.len(), g.len()));
            }
            for (i, (a, b)) in e.iter().zip(g).enumerate() {
                compare(a, b, &format!("{path}[{i}]"), diffs);
            }
        }
        (Value::String(s), Value::Null) if s == "NaN" || s == "Infinity" || s == "-Infinity" => {}
        (Value::Number(a), Value::Number(b)) => {
            let same = if a.is_f64() || b.is_f64() {
                a.is_f64() == b.is_f64()
                    && a.as_f64().unwrap().to_bits() == b.as_f64().unwrap().to_bits()
            } else {
                a == b
            };
            if !same {
                diffs.push(format!("{path}: {a} vs {b}"));
            }
        }
        (a, b) if a == b => {}
        (a, b) => diffs.push(format!("{path}: {a} vs {b}")),
    }
}

fn case_dirs(sh: &Path) -> Vec<PathBuf> {
    let root = sh.join("golden/crb/cases");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("missing {}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn golden_cases_native_summary_and_steps() {
    let Some(sh) = shared() else { return };
    let mut failures = Vec::new();
    let mut ok = 0;
    for dir in case_dirs(&sh) {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let case = load(&dir.join("case.json"));
        let raises = dir.join("expected_error.json").exists();
        let result = run(&dir, TokenizerSetup::Native);
        if raises {
            match result {
                Err(ref e) => {
                    assert!(!e.is_empty());
                    ok += 1;
                }
                Ok(_) => failures.push(format!("{name}: expected an error")),
            }
            if case["mode"] != "empty" {
                continue;
            }
        }
        if case["mode"] == "empty" {
            // The library's summary of zero records equals the reference's empty summary.
            let toks = toks(TokenizerSetup::Native);
            let mut records = Vec::new();
            let mut ctx = WalkContext::new(&records, toks);
            let m = CrbMetrics::compute(&records, &mut ctx).unwrap();
            let sel = Selection {
                shard: "bank.jsonl".into(),
                sample_mode: "full_bank".into(),
                seed: case["seed"].clone(),
                quotas: None,
                benchmark_counts: vec![],
            };
            let s = build_summary(
                case["predictor_label"].as_str().unwrap(),
                &sel,
                &mut records,
                &m,
                None,
                true,
            );
            let mut diffs = Vec::new();
            compare(
                &load(&dir.join("expected_summary.json")),
                &Value::Object(s),
                &name,
                &mut diffs,
            );
            if !diffs.is_empty() {
                failures.push(format!(
                    "{name}: {}",
                    diffs[..diffs.len().min(6)].join("; ")
                ));
            }
            continue;
        }
        let (summary, metrics) = match result {
            Ok(x) => x,
            Err(e) => {
                failures.push(format!("{name}: unexpected error {e}"));
                continue;
            }
        };
        let mut diffs = Vec::new();
        compare(
            &load(&dir.join("expected_summary.json")),
            &Value::Object(summary),
            &name,
            &mut diffs,
        );
        let steps = load(&dir.join("expected_steps.json"));
        let steps = steps.as_array().unwrap();
        if steps.len() != metrics.steps.len() {
            diffs.push(format!("steps: {} vs {}", steps.len(), metrics.steps.len()));
        }
        for (e, g) in steps.iter().zip(&metrics.steps) {
            if e["output_tokens"].as_u64() != Some(g.output_tokens) {
                diffs.push(format!(
                    "step {}: output {} vs {}",
                    e["id"], e["output_tokens"], g.output_tokens
                ));
            }
            for (k, p) in [
                ("baseline", &g.baseline),
                ("gold", &g.gold),
                ("pred", &g.pred),
            ] {
                let ep = &e[k];
                let got = (
                    p.cache_read,
                    p.cache_write,
                    p.cache_expired,
                    p.cost.to_bits(),
                );
                let exp = (
                    ep["cache_read_tokens"].as_u64().unwrap(),
                    ep["cache_write_tokens"].as_u64().unwrap(),
                    ep["cache_expired"].as_bool().unwrap(),
                    ep["cost_usd"].as_f64().unwrap().to_bits(),
                );
                if got != exp {
                    diffs.push(format!("step {} {k}: {got:?} vs {exp:?}", e["id"]));
                }
            }
        }
        if diffs.is_empty() {
            ok += 1;
        } else {
            failures.push(format!(
                "{name}: {}",
                diffs[..diffs.len().min(6)].join("; ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{ok} cases reproduced");
    assert!(ok >= 40, "only {ok} cases checked");
}

#[test]
fn golden_cases_other_tokenizer_setups() {
    let Some(sh) = shared() else { return };
    let mut failures = Vec::new();
    let mut ok = 0;
    for dir in case_dirs(&sh) {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let case = load(&dir.join("case.json"));
        if case["mode"] == "empty" {
            continue;
        }
        for (setup, file) in [
            (TokenizerSetup::HfOffline, "hf_offline"),
            (TokenizerSetup::AllCl100k, "all_cl100k"),
        ] {
            let exp_err = dir.join(format!("expected_error.{file}.json"));
            let result = run(&dir, setup);
            if exp_err.exists() {
                if result.is_ok() {
                    failures.push(format!("{name}/{file}: expected an error"));
                }
                continue;
            }
            let exp = load(&dir.join(format!("expected_metrics.{file}.json")));
            let got = match result {
                Ok((_, m)) => Value::Object(m.blocks_json()),
                Err(e) => {
                    failures.push(format!("{name}/{file}: {e}"));
                    continue;
                }
            };
            let mut diffs = Vec::new();
            compare(&exp, &got, &format!("{name}/{file}"), &mut diffs);
            if diffs.is_empty() {
                ok += 1;
            } else {
                failures.push(diffs[..diffs.len().min(6)].join("; "));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(ok >= 60, "only {ok} checked");
}
