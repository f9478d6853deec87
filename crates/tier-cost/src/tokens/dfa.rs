//! The tier tokenizers' `Split` patterns through the `regex` crate's automata instead of
//! Oniguruma's backtracking search, with the same matches.
//!
//! Oniguruma starts every search with a fresh backtrack stack and copies it to the heap after
//! the first attempt; at 20,000 CommonRouterBench rows that set-up was about 40 % of the regex
//! time (`benches/crb.md`). `regex-automata`'s lazy DFA finds the same matches 3–5× faster here,
//! for patterns where the two engines agree, which is checked rather than assumed:
//!
//! * **Only listed patterns** ([`PATTERNS`]): the split patterns of the three tier
//!   `tokenizer.json` files `crb` loads from `--tokenizers DIR` (Anthropic's `ByteLevel` GPT-2
//!   pattern, DeepSeek-V3's three, MiniMax-Text-01's). Any other pattern stays on Oniguruma.
//! * **Same character classes.** Both libraries' Unicode tables give the same members for every
//!   class these patterns use (and `char::is_whitespace` is `\s` in both): a test compares all
//!   1,112,064 scalar values, so a dependency update that changes a table fails it.
//! * **Same preference.** Without lookaround, the `regex` crate's leftmost-first semantics are
//!   a backtracking engine's. The one lookaround, the tail `\s+(?!\S)|\s+`, is searched as
//!   `\s+` and then applied: a match of that last alternative of two or more characters,
//!   followed by a character that is not whitespace, gives its last character back (that is
//!   what `\s+(?!\S)` matches; with one character only the final `\s+` matches). Whether that
//!   alternative matched is decided by searching the alternatives before it at the match's
//!   start: the preference order makes them win wherever they match.
//! * **Same failures.** Oniguruma stops a match attempt after 10,000,000 backtracks
//!   (`retry-limit-in-match over`, an error for the row). These patterns backtrack about once
//!   per character of a run (MiniMax-Text-01's on capital letters and DeepSeek-V3's and
//!   MiniMax-Text-01's on spaces first fail at about ten million characters), so a searched
//!   piece longer than [`MAX_BYTES`] stays on Oniguruma, which fails where it did, and a
//!   shorter one cannot reach the limit.
//!
//! The tests compare the matches with Oniguruma's on generated texts over every class boundary
//! (`tests` below and in `split.rs`), and the tokenizer tests compare counts with the
//! `tokenizers` library's `encode`.

use regex_automata::{Anchored, Input, meta};

/// The patterns searched here: the `Split` patterns of the three tier `tokenizer.json` files
/// (Anthropic, DeepSeek-V3, MiniMax-Text-01; `$ROUTEVAL_SHARED/thirdparty/tokenizers`).
pub(super) const PATTERNS: &[&str] = &[
    // GPT-2's, the `ByteLevel` pre-tokenizer's own (Anthropic).
    super::GPT2_PATTERN,
    // DeepSeek-V3's three (the third with line-feed and carriage-return characters themselves,
    // as its file has them, where MiniMax-Text-01's has `\r` and `\n`).
    r"\p{N}{1,3}",
    "[\u{4e00}-\u{9fa5}\u{3040}-\u{309f}\u{30a0}-\u{30ff}]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
    // MiniMax-Text-01's.
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
];

/// The longest piece of text (bytes) searched here; longer ones go to Oniguruma, so its retry
/// limit fails them as before (see the module docs). About a tenth of the shortest text that
/// reaches the limit with these patterns (about ten million characters of one class).
pub(super) const MAX_BYTES: usize = 1 << 20;

/// The lookahead tail searched as `\s+` (see the module docs).
const TAIL: &str = r"|\s+(?!\S)|\s+";

/// One listed pattern, compiled for the `regex` crate's engines.
pub(super) struct DfaSplit {
    /// The whole pattern, with [`TAIL`] searched as `\s+`.
    whole: meta::Regex,
    /// The alternatives before [`TAIL`], if the pattern ends with it. Those patterns match at
    /// every character (an alternative takes whitespace, letters, numbers and the rest), so
    /// their searches try an anchored match first.
    head: Option<meta::Regex>,
}

impl DfaSplit {
    /// The pattern compiled here, if it is one of [`PATTERNS`] and compiles; else `None` (the
    /// caller keeps Oniguruma).
    pub(super) fn new(pattern: &str) -> Option<DfaSplit> {
        if !PATTERNS.contains(&pattern) {
            return None;
        }
        match pattern.strip_suffix(TAIL) {
            Some(head) => Some(DfaSplit {
                whole: meta::Regex::new(&format!(r"{head}|\s+")).ok()?,
                head: Some(meta::Regex::new(head).ok()?),
            }),
            None => Some(DfaSplit {
                whole: meta::Regex::new(pattern).ok()?,
                head: None,
            }),
        }
    }

    /// Call `f(start, end)` for every match, left to right, as Oniguruma's walk does (each search
    /// starts where the last match ended; an empty match ending where the previous one ended
    /// is skipped by moving one character on). Stops at `f`'s first error. `text` should be at
    /// most [`MAX_BYTES`] long (the caller checks; longer texts are searched all the same).
    ///
    /// Errors: `bad_bounds(start, end)` for a match whose bounds are not character boundaries
    /// of `text` (the automata of a UTF-8 pattern never return one; checked rather than sliced
    /// into).
    pub(super) fn for_each_match<E>(
        &self,
        text: &str,
        bad_bounds: impl Fn(usize, usize) -> E,
        mut f: impl FnMut(usize, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        let len = text.len();
        let mut from = 0usize;
        let mut last_match_end: Option<usize> = None;
        while from <= len {
            // A pattern with the tail matches at every character, so its next match starts
            // where the last one ended: an anchored search needs only the forward automaton.
            // The others (DeepSeek-V3's numbers and CJK) search ahead.
            let anchored = match &self.head {
                Some(_) => self
                    .whole
                    .search_half(&Input::new(text).range(from..).anchored(Anchored::Yes))
                    .map(|m| (from, m.offset())),
                None => None,
            };
            let (start, mut end) = match anchored {
                Some(m) => m,
                None => match self.whole.find(Input::new(text).range(from..)) {
                    Some(m) => (m.start(), m.end()),
                    None => break,
                },
            };
            if start > end || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
                return Err(bad_bounds(start, end));
            }
            if let Some(head) = &self.head {
                end = lookahead_end(head, text, start, end);
            }
            if start == end && last_match_end == Some(end) {
                from += text[from..].chars().next().map_or(1, char::len_utf8);
                continue;
            }
            from = end;
            last_match_end = Some(end);
            f(start, end)?;
        }
        Ok(())
    }
}

/// The end of the match `start..end` of the whole pattern once `\s+(?!\S)` is applied: one
/// character earlier if the match is the final `\s+` alternative's (`head` does not match at
/// `start`), spans two or more characters and is not at the end of the text; else `end`.
/// Such a match is a whole run of whitespace, so the character after it is not whitespace.
/// The checks on the first and the next character only spare the `head` search for matches
/// that cannot be that alternative's.
fn lookahead_end(head: &meta::Regex, text: &str, start: usize, end: usize) -> usize {
    let mut run = text[start..end].chars();
    let (Some(first), Some(last)) = (run.next(), run.next_back()) else {
        return end; // fewer than two characters
    };
    let followed_by_non_space = text[end..]
        .chars()
        .next()
        .is_some_and(|c| !c.is_whitespace());
    if !first.is_whitespace() || !followed_by_non_space {
        return end;
    }
    let at_start = Input::new(text).range(start..).anchored(Anchored::Yes);
    if head.is_match(at_start) {
        end
    } else {
        end - last.len_utf8()
    }
}

#[cfg(test)]
mod tests {
    use super::{DfaSplit, MAX_BYTES, PATTERNS};
    use crate::tokens::split::{Region, SplitRegex};
    use proptest::prelude::*;
    use regex_automata::meta;

    /// Oniguruma's matches (through [`SplitRegex`] without its DFA).
    fn onig_matches(p: &str, text: &str) -> Vec<(usize, usize)> {
        crate::tokens::split::tests::ours(&SplitRegex::onig_only(p).unwrap(), text)
    }

    /// This module's matches.
    fn dfa_matches(p: &str, text: &str) -> Vec<(usize, usize)> {
        let mut got = Vec::new();
        DfaSplit::new(p)
            .unwrap()
            .for_each_match(
                text,
                |_, _| (),
                |s, e| {
                    got.push((s, e));
                    Ok(())
                },
            )
            .unwrap();
        got
    }

    /// Every character class and case-insensitive letter the listed patterns use: the same
    /// members in both libraries for all 1,112,064 Unicode scalar values (one text holding
    /// them all, each class searched for one character at a time, so its matches are its
    /// members), and `\s` is `char::is_whitespace`, which [`DfaSplit`] uses for the lookahead.
    #[test]
    fn both_libraries_give_every_class_the_same_members() {
        let classes = [
            r"\p{L}",
            r"\p{N}",
            r"\p{P}",
            r"\p{S}",
            r"\p{M}",
            r"\p{Lu}",
            r"\p{Lt}",
            r"\p{Lm}",
            r"\p{Lo}",
            r"\p{Ll}",
            r"\s",
            r"[^\s\p{L}\p{N}]",
            r"[^\r\n\p{L}\p{P}\p{S}]",
            r"[^\r\n\p{L}\p{N}]",
            "[\u{4e00}-\u{9fa5}\u{3040}-\u{309f}\u{30a0}-\u{30ff}]",
            r"[A-Za-z]",
            r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]"##,
            r"[\p{L}\p{M}]",
            r"[\p{P}\p{S}]",
            r"[\r\n]",
            r"[\r\n/]",
            r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]",
            r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]",
            r"(?i:s)",
            r"(?i:t)",
            r"(?i:r)",
            r"(?i:e)",
            r"(?i:v)",
            r"(?i:m)",
            r"(?i:l)",
            r"(?i:d)",
            r"(?i:')",
        ];
        let all: String = (0..=0x10FFFFu32).filter_map(char::from_u32).collect();
        assert_eq!(all.chars().count(), 1_112_064);
        for class in classes {
            let dfa: Vec<(usize, usize)> = meta::Regex::new(class)
                .unwrap()
                .find_iter(&all)
                .map(|m| (m.start(), m.end()))
                .collect();
            let onig = onig_matches(class, &all);
            assert!(!dfa.is_empty(), "{class}");
            assert_eq!(dfa.len(), onig.len(), "{class}: member counts differ");
            if let Some((d, o)) = dfa.iter().zip(&onig).find(|(d, o)| d != o) {
                panic!(
                    "{class}: the libraries differ at {:?} / {:?}",
                    all[d.0..].chars().next(),
                    all[o.0..].chars().next()
                );
            }
        }
        let spaces: Vec<(usize, usize)> = all
            .char_indices()
            .filter(|(_, c)| c.is_whitespace())
            .map(|(i, c)| (i, i + c.len_utf8()))
            .collect();
        assert_eq!(
            spaces,
            onig_matches(r"\s", &all),
            "char::is_whitespace is not \\s"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// The same matches as Oniguruma's on texts mixing every class boundary the patterns
        /// have: letters of each category (Lu, Ll, Lt, Lm, Lo), marks (Mn, Mc), numbers (Nd,
        /// Nl, No), punctuation, symbols, apostrophes and the contraction letters in both cases
        /// (and `ſ`, which folds to `s`), CJK and kana, every kind of whitespace (ASCII, NBSP,
        /// NEL, ideographic space, line separator), a control character, a zero-width space
        /// and `/`.
        #[test]
        fn matches_are_oniguruma_s(
            text in "[aAbzZsStTrReEvVmMlLdDſKǅʰ中اก\u{301}\u{903}1٣Ⅻ½.,!«\\-$+€😀'/あア \t\n\r\u{a0}\u{85}\u{3000}\u{2028}\u{b}\u{c}\u{1}\u{200b}ﬆ]{0,60}"
        ) {
            for p in PATTERNS {
                prop_assert_eq!(dfa_matches(p, &text), onig_matches(p, &text), "pattern {}", p);
            }
        }

        /// The same on texts of long runs (whitespace, letters of one case, digits), where the
        /// lookahead and the backtracking alternatives decide.
        #[test]
        fn runs_match_as_in_oniguruma(
            parts in proptest::collection::vec(("[ \t\n\u{3000}aA1.'ſ]", 1usize..40), 0..8)
        ) {
            let text: String = parts.iter().map(|(c, n)| c.repeat(*n)).collect();
            for p in PATTERNS {
                prop_assert_eq!(dfa_matches(p, &text), onig_matches(p, &text), "pattern {}", p);
            }
        }
    }

    /// A text of several thousand sentences (mixed scripts, numbers, code, runs of spaces and
    /// line breaks; over the automata's cache sizes), then the same text cut to just under,
    /// at and just over [`MAX_BYTES`], where the search moves to Oniguruma: the same matches
    /// as Oniguruma's everywhere.
    #[test]
    fn long_texts_and_the_size_limit_match_as_in_oniguruma() {
        let unit = concat!(
            "Tomorrow's release: fix the parser's 12345 rows!\n    if x == 7:\t\treturn ",
            "     \"d'Artagnan\" 中文テキスト あいう ÉCOLE élève ǅemal ʰ 😀 ٣٤ ½  \r\n\n  ",
        );
        let mut text = String::new();
        let mut i = 0u32;
        while text.len() <= MAX_BYTES + 64 {
            text.push_str(unit);
            text.push_str(&" ".repeat((i % 7) as usize));
            text.push_str(&i.to_string());
            i += 1;
        }
        for p in PATTERNS {
            let re = SplitRegex::new(p).unwrap();
            for n in [
                200_000,
                MAX_BYTES - 3,
                MAX_BYTES,
                MAX_BYTES + 1,
                MAX_BYTES + 40,
            ] {
                let mut n = n;
                while !text.is_char_boundary(n) {
                    n -= 1;
                }
                let t = &text[..n];
                assert_eq!(
                    crate::tokens::split::tests::ours(&re, t),
                    onig_matches(p, t),
                    "pattern {p}, {n} bytes"
                );
            }
        }
    }

    #[test]
    fn only_listed_patterns_are_compiled() {
        for p in PATTERNS {
            assert!(DfaSplit::new(p).is_some(), "{p}");
        }
        assert!(DfaSplit::new(r"\p{N}{1,4}").is_none());
        assert!(DfaSplit::new(r"\s+(?!\S)|\s+").is_none());
    }

    /// Texts longer than `MAX_BYTES` go to Oniguruma, which still stops at its retry limit: a
    /// run of capital letters makes MiniMax-Text-01's pattern backtrack once per letter.
    #[test]
    fn a_text_oniguruma_gives_up_on_is_still_an_error() {
        let minimax = PATTERNS[4];
        let text = "A".repeat(12_000_000);
        assert!(text.len() > MAX_BYTES);
        let re = SplitRegex::new(minimax).unwrap();
        let err = re
            .for_each_match(&text, &mut Region::new(), |e| e, |_, _, _| Ok(()))
            .unwrap_err();
        assert!(
            err.to_string().contains("retry-limit-in-match over"),
            "{err}"
        );
    }
}
