//! Token counts, texts, prefixes, cache splits and output estimates against
//! `$ROUTEVAL_SHARED/golden/crb/tokens/tokens.<setup>.json`, every count through the fast path
//! and checked against the library's full `encode`.

use routeval_tier_cost::Tier;
use routeval_tier_cost::cache::{
    CountError, count_messages_tokens, estimate_output_tokens_from_delta,
    split_prompt_tokens_for_step,
};
use routeval_tier_cost::message::{MessageError, fingerprint, is_semantic_prefix, message_text};
use routeval_tier_cost::tokens::{
    HfCounter, TierTokenizers, TokenError, TokenizerFiles, TokenizerSetup, build_tier_tokenizers,
};
use serde_json::Value;
use std::path::PathBuf;

fn shared() -> Option<PathBuf> {
    routeval_core::fixtures::shared_dir("tokens_golden")
}

fn read(p: PathBuf) -> Vec<u8> {
    std::fs::read(&p).unwrap_or_else(|e| panic!("missing shared file {}: {e}", p.display()))
}

fn files(shared: &std::path::Path) -> TokenizerFiles {
    let d = shared.join("thirdparty/tokenizers");
    TokenizerFiles {
        anthropic: Some(read(d.join("anthropic/tokenizer.json"))),
        minimax: Some(read(d.join("minimax-text-01/tokenizer.json"))),
        deepseek: Some(read(d.join("deepseek-v3/tokenizer.json"))),
    }
}

fn tier(name: &str) -> Tier {
    Tier::from_name(name).unwrap()
}

fn msgs(v: &Value) -> Vec<Value> {
    v.as_array().cloned().unwrap_or_default()
}

/// Compare a result with a golden `{"value": x}` / `{"error": {"type", "message"}}`.
fn check<T: PartialEq<Value> + std::fmt::Debug>(
    what: &str,
    got: Result<T, CountError>,
    exp: &Value,
) {
    if let Some(v) = exp.get("value") {
        let got = got.unwrap_or_else(|e| panic!("{what}: expected {v}, got error {e}"));
        assert!(got == *v, "{what}: expected {v}, got {got:?}");
    } else {
        let err = got
            .err()
            .unwrap_or_else(|| panic!("{what}: expected an error"));
        let ty = exp["error"]["type"].as_str().unwrap();
        match (&err, ty) {
            (CountError::Message(MessageError::NonStringToolName { .. }), "TypeError") => {}
            (CountError::Token(TokenError::DisallowedSpecial(_)), "ValueError") => {
                let m = exp["error"]["message"].as_str().unwrap();
                assert!(err.to_string().starts_with(m), "{what}: {err} vs {m}");
            }
            _ => panic!("{what}: expected {ty}, got {err:?}"),
        }
    }
}

struct U64(u64);
impl PartialEq<Value> for U64 {
    fn eq(&self, v: &Value) -> bool {
        v.as_u64() == Some(self.0)
    }
}
impl std::fmt::Debug for U64 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Full library tokenizers (Tokenizer::encode), to check the fast path against.
fn references(shared: &std::path::Path) -> Vec<(String, HfCounter)> {
    let d = shared.join("thirdparty/tokenizers");
    ["anthropic", "minimax-text-01", "deepseek-v3"]
        .iter()
        .map(|n| {
            let c =
                HfCounter::from_bytes_with_reference(n, &read(d.join(n).join("tokenizer.json")))
                    .unwrap();
            (n.to_string(), c)
        })
        .collect()
}

fn check_fast(refs: &[(String, HfCounter)], toks: &TierTokenizers, text: &str, tn: &str) {
    let enc = toks.encoder(tier(tn));
    if let Some(hf) = enc.as_hf() {
        assert!(hf.has_fast_path(), "{} has no fast path", enc.name());
        assert!(
            hf.splits_through_automata(),
            "{} splits through Oniguruma",
            enc.name()
        );
        let r = &refs.iter().find(|(n, _)| n == enc.name()).unwrap().1;
        assert_eq!(
            r.count_slow(text).unwrap(),
            toks.count(text, tier(tn)).unwrap(),
            "fast path vs encode: {text:?}/{tn}"
        );
    }
}

fn run_setup(
    shared: &std::path::Path,
    toks: &TierTokenizers,
    setup: &str,
    refs: &[(String, HfCounter)],
) -> usize {
    let path = shared.join(format!("golden/crb/tokens/tokens.{setup}.json"));
    let g: Value = serde_json::from_slice(&read(path)).unwrap();
    let mut checked = 0;
    for case in g["message_lists"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let messages = msgs(&case["messages"]);
        for (m, t) in messages
            .iter()
            .zip(case["message_texts"].as_array().unwrap())
        {
            match (message_text(m), t.get("value")) {
                (Ok(s), Some(v)) => assert_eq!(s, v.as_str().unwrap(), "{name}"),
                (Err(_), None) => {}
                (got, _) => panic!("{name}: text {got:?} vs {t}"),
            }
        }
        for (tn, exp) in case["count_messages_tokens"].as_object().unwrap() {
            let got = count_messages_tokens(&messages, tier(tn), toks).map(U64);
            check(&format!("{setup}/{name}/{tn}"), got, exp);
            checked += 1;
        }
        for (tn, per) in case["per_message_text_tokens"].as_object().unwrap() {
            for (m, exp) in messages.iter().zip(per.as_array().unwrap()) {
                let Ok(text) = message_text(m) else { continue };
                let exp = if exp.is_object() {
                    exp.clone()
                } else {
                    serde_json::json!({"value": exp})
                };
                let got = toks
                    .count(&text, tier(tn))
                    .map(|c| U64(c as u64))
                    .map_err(CountError::from);
                check(&format!("{setup}/{name}/{tn}/per-message"), got, &exp);
                checked += 1;
                check_fast(refs, toks, &text, tn);
            }
        }
    }
    for case in g["raw_texts"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        for (tn, exp) in case["count_text_tokens"].as_object().unwrap() {
            let got = toks
                .count(text, tier(tn))
                .map(|c| U64(c as u64))
                .map_err(CountError::from);
            check(&format!("{setup}/raw {text:?}/{tn}"), got, exp);
            checked += 1;
            if toks.count(text, tier(tn)).is_ok() {
                check_fast(refs, toks, text, tn);
            }
        }
    }
    for case in g["semantic_prefix"].as_array().unwrap() {
        let (s, l) = (msgs(&case["short"]), msgs(&case["long"]));
        assert_eq!(
            Value::Bool(is_semantic_prefix(&s, &l)),
            case["is_semantic_prefix"],
            "{}",
            case["name"]
        );
        for (m, fp) in s.iter().zip(case["fingerprints_short"].as_array().unwrap()) {
            assert_eq!(fingerprint(m), fp.as_str().unwrap(), "{}", case["name"]);
        }
    }
    for case in g["split_prompt_tokens_for_step"].as_array().unwrap() {
        let prev_tier = case["prev_tier"].as_str().map(tier);
        let prev = case["msgs_prev"].as_array().cloned();
        let got = split_prompt_tokens_for_step(
            prev_tier,
            tier(case["curr_tier"].as_str().unwrap()),
            prev.as_deref(),
            &msgs(&case["msgs_curr"]),
            case["cache_expired"].as_bool().unwrap(),
            toks,
        );
        let exp = &case["result_input_cacheread_cachewrite"];
        let got = got.map(|(a, b, c)| serde_json::json!([a, b, c]));
        match got {
            Ok(v) => assert_eq!(&v, &exp["value"], "{}", case["name"]),
            Err(e) => assert!(exp.get("error").is_some(), "{}: {e}", case["name"]),
        }
        checked += 1;
    }
    for case in g["estimate_output_tokens_from_delta"].as_array().unwrap() {
        for (tn, exp) in case["estimate_output_tokens_from_delta"]
            .as_object()
            .unwrap()
        {
            let got = estimate_output_tokens_from_delta(
                &msgs(&case["msgs_curr"]),
                &msgs(&case["msgs_next"]),
                tier(tn),
                toks,
            )
            .map(U64);
            check(&format!("{setup}/{}/{tn}", case["name"]), got, exp);
            checked += 1;
        }
    }
    checked
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn golden_token_vectors_all_setups() {
    let Some(shared) = shared() else { return };
    let files = files(&shared);
    let refs = references(&shared);
    for setup in ["native", "hf_offline", "all_cl100k"] {
        let s = TokenizerSetup::parse(setup).unwrap();
        let toks = build_tier_tokenizers(s, &files, [true; 4]).unwrap();
        assert!(toks.fallbacks.is_empty());
        let n = run_setup(&shared, &toks, setup, &refs);
        assert!(n > 150, "{setup}: only {n} checks");
    }
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn missing_file_falls_back_to_cl100k_and_says_so() {
    let Some(shared) = shared() else { return };
    let mut files = files(&shared);
    files.deepseek = None;
    let toks = build_tier_tokenizers(TokenizerSetup::Native, &files, [true; 4]).unwrap();
    assert_eq!(toks.encoder_names()[0], "cl100k_base");
    assert_eq!(toks.fallbacks.len(), 1);
    assert!(toks.fallbacks[0].starts_with("low: deepseek-v3"));
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn fast_path_equals_encode_on_every_golden_bank_message() {
    let Some(shared) = shared() else { return };
    let refs = references(&shared);
    let fast: Vec<HfCounter> = refs
        .iter()
        .map(|(n, _)| {
            let p = shared
                .join("thirdparty/tokenizers")
                .join(n)
                .join("tokenizer.json");
            HfCounter::from_bytes(n, &read(p)).unwrap()
        })
        .collect();
    let mut texts = std::collections::BTreeSet::new();
    let root = shared.join("golden/crb/cases");
    for e in std::fs::read_dir(&root).unwrap() {
        let bank = e.unwrap().path().join("bank.jsonl");
        let Ok(b) = std::fs::read_to_string(&bank) else {
            continue;
        };
        for line in b.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line.trim()) else {
                continue;
            };
            for m in v["messages"].as_array().into_iter().flatten() {
                if let Ok(t) = message_text(m) {
                    texts.insert(t);
                }
            }
        }
    }
    assert!(texts.len() > 100, "{}", texts.len());
    for ((name, r), f) in refs.iter().zip(&fast) {
        assert!(f.has_fast_path(), "{name}");
        assert!(
            f.counts_bpe_itself(),
            "{name} counts through the library model"
        );
        for t in &texts {
            use routeval_tier_cost::tokens::CountTokens;
            assert_eq!(
                f.count(t).unwrap(),
                r.count_slow(t).unwrap(),
                "{name}: {t:?}"
            );
        }
    }
}

/// The three real tokenizer files: the fast path (with its own BPE count) equals the library's
/// full `encode` on random texts of every character class, on long runs of one character
/// (long pre-tokens: the merge loop's heap) and on runs of alternating characters.
#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn fast_path_equals_encode_on_random_and_long_texts() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    use routeval_tier_cost::tokens::CountTokens;
    let Some(shared) = shared() else { return };
    let refs = references(&shared);
    let mut long: Vec<String> = Vec::new();
    for c in ["a", " ", "\n", "é", "日", "🤖", "9", "=", "\t", "\u{301}"] {
        long.push(c.repeat(3000));
    }
    long.push("ab".repeat(2000));
    long.push("é ".repeat(1500));
    long.push("x1".repeat(1500));
    for (name, r) in &refs {
        for t in &long {
            assert_eq!(
                r.count(t).unwrap(),
                r.count_slow(t).unwrap(),
                "{name}: {:?}",
                &t[..20]
            );
        }
    }
    let mut runner = TestRunner::new(Config::with_cases(64));
    let texts = "([a-zA-Z]{1,10}|[0-9]{1,6}|[ \t\r\n]{1,5}|[.,;:!?'\"(){}<>=_/\\\\-]{1,5}|[éüßñçà]{1,3}|[日本語中文한국어]{1,4}|[🤖🎉👍🏽]{1,2}|\\PC{1,3}){0,30}";
    runner
        .run(&texts, |t| {
            for (name, r) in &refs {
                prop_assert_eq!(
                    r.count(&t).unwrap(),
                    r.count_slow(&t).unwrap(),
                    "{}: {:?}",
                    name,
                    t
                );
            }
            Ok(())
        })
        .unwrap();
}
