//! The count-only cl100k_base encoder against tiktoken-rs's own `encode_ordinary`, and a clear
//! error where tiktoken-rs panics.

use proptest::prelude::*;
use routeval_tier_cost::tokens::{Cl100kCounter, CountTokens, TokenError};
use std::sync::OnceLock;

fn counter() -> &'static Cl100kCounter {
    static C: OnceLock<Cl100kCounter> = OnceLock::new();
    C.get_or_init(|| Cl100kCounter::new().unwrap())
}

#[test]
fn known_texts_count_like_tiktoken() {
    let c = counter();
    for t in [
        "",
        "hello world",
        "  leading and trailing  ",
        "It's 12345 o'clock, isn't it?",
        "tab\tnew\nline\r\nend\n\n\n",
        "über naïve café — 日本語のテキスト 🤖🤖",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "fn main() { println!(\"{}\", x.iter().map(|y| y * 2).sum::<i64>()); }",
        "QmFzZTY0IGRhdGEgd2l0aG91dCBzcGFjZXMgYW5kIHNvbWUgbW9yZSBieXRlcyBoZXJlCg==",
    ] {
        assert_eq!(c.count(t).unwrap(), c.count_reference(t).unwrap(), "{t:?}");
    }
    // Long pieces (over 100 bytes: tiktoken's heap-based merge) of every kind.
    let long_word = "x".repeat(5000);
    let long_punct = "=-".repeat(3000);
    let long_digits = "9".repeat(4000);
    let mixed = "Ab1 .".repeat(2000);
    for t in [&long_word, &long_punct, &long_digits, &mixed] {
        assert_eq!(
            c.count(t).unwrap(),
            c.count_reference(t).unwrap(),
            "{} bytes",
            t.len()
        );
    }
}

/// The rank table embedded at build time (`build.rs`) is tiktoken-rs's vocabulary: every id's
/// bytes, read from tiktoken-rs's encoder here at run time, have that id as rank; the special
/// tokens' strings and byte strings that are not tokens have none.
#[test]
fn embedded_ranks_are_tiktoken_rs_vocabulary() {
    let c = counter();
    let bpe = tiktoken_rs::cl100k_base().unwrap();
    let specials = [100257u32, 100258, 100259, 100260, 100276];
    let mut checked = 0;
    for id in 0..=100_276u32 {
        if specials.contains(&id) {
            continue;
        }
        if let Ok(bytes) = bpe.decode_bytes(&[id]) {
            assert_eq!(c.rank(&bytes), Some(id), "id {id}: {bytes:?}");
            checked += 1;
        }
    }
    assert_eq!(checked, 100_256);
    for s in ["<|endoftext|>", "<|endofprompt|>"] {
        assert_eq!(c.rank(s.as_bytes()), None, "{s}");
    }
    assert_eq!(c.rank(b"qqqqqqqqqqqqqqqqqqqqqqqqq"), None);
    assert_eq!(c.rank(b""), None);
}

#[test]
fn a_text_the_pattern_gives_up_on_is_an_error_not_a_panic() {
    let text = format!("{}x", " ".repeat(3_000_000));
    match counter().count(&text) {
        Err(TokenError::Tokenizer(m)) => assert!(m.contains("cl100k_base"), "{m}"),
        other => panic!("expected a tokenizer error, got {other:?}"),
    }
}

#[test]
fn special_tokens_are_still_refused() {
    assert_eq!(
        counter().count("a <|endoftext|> b"),
        Err(TokenError::DisallowedSpecial("<|endoftext|>".into()))
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Random texts over letters, digits, punctuation, apostrophes, whitespace of every kind
    /// and multi-byte characters: the same count as tiktoken-rs.
    #[test]
    fn counts_equal_tiktoken(text in "([a-zA-Z]{1,12}|[0-9]{1,7}|[ \t\r\n]{1,4}|['.,;:!?(){}=_-]{1,6}|'s|'ll|[éü日本🤖ß]{1,3}){0,40}") {
        let c = counter();
        prop_assert_eq!(c.count(&text).unwrap(), c.count_reference(&text).unwrap(), "{:?}", text);
    }

    /// Arbitrary strings (any characters).
    #[test]
    fn arbitrary_strings_count_like_tiktoken(text in any::<String>()) {
        let c = counter();
        prop_assume!(!text.contains("<|"));
        prop_assert_eq!(c.count(&text).unwrap(), c.count_reference(&text).unwrap(), "{:?}", text);
    }
}
