//! The fast path's own BPE count against the `tokenizers` library's full `encode`, on small
//! generated models where merge order matters (overlapping pairs, repeated characters, ties
//! between positions, characters outside the vocabulary), byte-level and not.

use proptest::prelude::*;
use routeval_tier_cost::tokens::{CountTokens, HfCounter};
use serde_json::{Value, json};

/// GPT-2's byte-to-character table of the `ByteLevel` pre-tokenizer.
fn byte_chars() -> Vec<char> {
    let mut bs: Vec<u32> = (u32::from(b'!')..=u32::from(b'~'))
        .chain(0xA1..=0xAC)
        .chain(0xAE..=0xFF)
        .collect();
    let mut cs = bs.clone();
    let mut n = 0;
    for b in 0..=255u32 {
        if !bs.contains(&b) {
            bs.push(b);
            cs.push(256 + n);
            n += 1;
        }
    }
    let mut table = vec!['\0'; 256];
    for (b, c) in bs.into_iter().zip(cs) {
        table[b as usize] = char::from_u32(c).unwrap();
    }
    table
}

/// A `tokenizer.json` with the given base tokens and merges (each merge picks two existing
/// tokens by index; its concatenation joins the vocabulary). `byte_level` adds the ByteLevel
/// pre-tokenizer (no regex split, so a whole text is one pre-token) over all 256 byte tokens.
fn model(base: &[String], picks: &[(usize, usize)], byte_level: bool) -> Vec<u8> {
    let mut tokens: Vec<String> = base.to_vec();
    let mut merges: Vec<Value> = Vec::new();
    for &(i, j) in picks {
        let (a, b) = (
            tokens[i % tokens.len()].clone(),
            tokens[j % tokens.len()].clone(),
        );
        let joined = format!("{a}{b}");
        if !tokens.contains(&joined) {
            tokens.push(joined);
        }
        merges.push(json!([a, b]));
    }
    let vocab: serde_json::Map<String, Value> = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), json!(i)))
        .collect();
    let pre = if byte_level {
        json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false})
    } else {
        Value::Null
    };
    serde_json::to_vec(&json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": null, "pre_tokenizer": pre, "post_processor": null, "decoder": null,
        "model": {"type": "BPE", "dropout": null, "unk_token": null,
                  "continuing_subword_prefix": null, "end_of_word_suffix": null,
                  "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
                  "vocab": vocab, "merges": merges}
    }))
    .unwrap()
}

fn check(bytes: &[u8], text: &str) -> Result<(), TestCaseError> {
    let c = HfCounter::from_bytes_with_reference("generated", bytes).unwrap();
    prop_assert!(c.has_fast_path() && c.counts_bpe_itself());
    prop_assert_eq!(
        c.count(text).unwrap(),
        c.count_slow(text).unwrap(),
        "{:?}",
        text
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Byte-level: base tokens are the 256 byte characters; merges over the characters of
    /// "abc é" (é is two bytes, so two byte tokens).
    #[test]
    fn byte_level_counts_equal_encode(
        picks in prop::collection::vec((0usize..24, 0usize..24), 0..40),
        text in "[abc é]{0,48}",
    ) {
        let table = byte_chars();
        let base: Vec<String> = table.iter().map(|c| c.to_string()).collect();
        // Indices below 24 pick among these characters first (then earlier merges).
        let mut order: Vec<String> = "abc é".bytes().map(|b| table[b as usize].to_string()).collect();
        let rest: Vec<String> = base.iter().filter(|t| !order.contains(t)).cloned().collect();
        order.extend(rest);
        let picks: Vec<(usize, usize)> = picks
            .into_iter()
            .map(|(i, j)| (remap(i, order.len()), remap(j, order.len())))
            .collect();
        check(&model(&order, &picks, true), &text)?;
    }

    /// Not byte-level: the characters' own tokens; `d` and `é` are outside the vocabulary and
    /// dropped, as the library drops them without an unknown token.
    #[test]
    fn char_level_counts_equal_encode(
        picks in prop::collection::vec((0usize..12, 0usize..12), 0..30),
        text in "[abcdé]{0,40}",
    ) {
        let base: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        check(&model(&base, &picks, false), &text)?;
    }
}

/// Small indices stay among the first tokens (the text's characters and early merges).
fn remap(i: usize, n_base: usize) -> usize {
    if i < 6 { i } else { n_base + (i - 6) }
}

/// A vocabulary object with a repeated token (the later id wins, as when the library reads it)
/// and merges whose tokens' ids do not follow the merge order: counts still equal `encode`.
#[test]
fn repeated_tokens_and_irregular_ids_count_like_encode() {
    let text = r#"{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],
        "normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null,
        "model":{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":null,
        "end_of_word_suffix":null,"fuse_unk":false,"byte_fallback":false,"ignore_merges":false,
        "vocab":{"a":0,"b":1,"c":2,"ab":7,"bc":3,"abc":4,"ab":5,"ca":6,"\u0061a":8},
        "merges":["a b","b c","ab c","c a","a a"]}}"#;
    let c = HfCounter::from_bytes_with_reference("irregular", text.as_bytes()).unwrap();
    assert!(c.has_fast_path() && c.counts_bpe_itself());
    for t in [
        "",
        "a",
        "ab",
        "abc",
        "abcab",
        "cabca",
        "aaaa",
        "bcbcab",
        "cccaaab",
        "abcabcabc",
    ] {
        assert_eq!(c.count(t).unwrap(), c.count_slow(t).unwrap(), "{t:?}");
    }
}

/// A minimal `tokenizer.json` without merges: `vocab` and `added` are JSON fragments.
fn with_added(vocab: &str, added: &[(&str, bool)], normalizer: &str) -> Vec<u8> {
    let added: Vec<String> = added
        .iter()
        .map(|(c, n)| {
            format!(
                r#"{{"id":9,"content":"{c}","single_word":false,"lstrip":false,"rstrip":false,"normalized":{n},"special":true}}"#
            )
        })
        .collect();
    format!(
        r#"{{"version":"1.0","truncation":null,"padding":null,"added_tokens":[{}],"normalizer":{normalizer},"pre_tokenizer":null,"post_processor":null,"decoder":null,"model":{{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":null,"end_of_word_suffix":null,"fuse_unk":false,"byte_fallback":false,"vocab":{{{vocab}}},"merges":[]}}}}"#,
        added.join(",")
    )
    .into_bytes()
}

/// Added-token cases where the fast path once counted differently from the library (found by
/// an adversarial review): an empty content (the library skips it), an added token outside a
/// vocabulary whose ids are not `0..n` (the library's new id collides), and one content added
/// twice with different `normalized` flags (the library keeps the later entry).
#[test]
fn added_token_edge_cases_count_like_encode() {
    let cases: Vec<(&str, Vec<u8>, Vec<String>)> = vec![
        (
            "empty",
            with_added(r#""a":0"#, &[("", false)], "null"),
            vec!["a".into(), "aa".into(), "a".repeat(1000)],
        ),
        (
            "empty normalized",
            with_added(r#""a":0"#, &[("", true)], "null"),
            vec!["a".into(), "aaa".into()],
        ),
        (
            "colliding id",
            with_added(r#""a":0,"c":2"#, &[("<x>", false), ("c", false)], "null"),
            vec!["<x>".into(), "a<x>c".into(), "c".into()],
        ),
        (
            "colliding id, gap",
            with_added(
                r#""a":0,"b":1,"c":3"#,
                &[("<x>", false), ("c", false)],
                "null",
            ),
            vec!["<x>".into(), "a<x>b".into(), "<x>c".into()],
        ),
        (
            "same content twice",
            with_added(
                r#""f":0,"i":1,"ﬁ":2"#,
                &[("ﬁ", true), ("ﬁ", false)],
                r#"{"type":"NFKC"}"#,
            ),
            vec!["fi".into(), "ffii".into(), "ﬁ".into(), "fﬁi".into()],
        ),
    ];
    for (name, bytes, texts) in cases {
        let c = HfCounter::from_bytes_with_reference(name, &bytes).unwrap();
        for t in &texts {
            assert_eq!(
                c.count(t).unwrap(),
                c.count_slow(t).unwrap(),
                "{name}: {t:?}"
            );
        }
    }
}

/// A `Split` pattern Oniguruma gives up on (exponential backtracking hits its retry limit):
/// both the fast path and the library's own `encode` (whose regex step panics) report a
/// tokenizer error instead of panicking; other texts still count.
#[test]
fn a_regex_the_library_gives_up_on_is_a_tokenizer_error() {
    let bytes = serde_json::to_vec(&json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": null,
        "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(?:a|a)*$"},
                          "behavior": "Isolated", "invert": false},
        "post_processor": null, "decoder": null,
        "model": {"type": "BPE", "dropout": null, "unk_token": null,
                  "continuing_subword_prefix": null, "end_of_word_suffix": null,
                  "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
                  "vocab": {"a": 0, "b": 1, "aa": 2}, "merges": ["a a"]}
    }))
    .unwrap();
    let c = HfCounter::from_bytes_with_reference("backtracking", &bytes).unwrap();
    assert!(c.has_fast_path());
    assert_eq!(c.count("aab").unwrap(), c.count_slow("aab").unwrap());
    let text = "a".repeat(40) + "b";
    let fast = c.count(&text).unwrap_err().to_string();
    assert!(fast.contains("retry-limit-in-match over"), "{fast}");
    let slow = c.count_slow(&text).unwrap_err().to_string();
    assert!(slow.contains("retry-limit-in-match over"), "{slow}");
}
