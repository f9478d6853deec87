//! The `Split` pre-tokenizer's regex search, straight through Oniguruma's C API.
//!
//! The `tokenizers` crate compiles a `Split` pattern with the `onig` crate (Ruby syntax, UTF-8,
//! no options) and walks it with `onig::FindMatches`. Two things about that walk matter here:
//!
//! * **It panics on a search error.** `FindMatches` calls `Regex::search_with_options`, which
//!   panics with "Onig: Regex search error" when Oniguruma gives up, e.g. on its retry limit
//!   (`ONIG_DEFAULT_RETRY_LIMIT_IN_MATCH`, 10,000,000 backtracks in one match): a bank message of
//!   twelve million capital letters ends MiniMax-Text-01's pattern that way. Here the error is a
//!   value ([`SearchError`]), so a counter reports it as a `TokenError` naming the text's row.
//! * **It allocates per match.** Every search builds and frees an `OnigMatchParam` on the heap
//!   (the safe API takes it by value) and clears a region; counting a 20,000-row CommonRouterBench
//!   bank runs tens of millions of searches. [`SplitRegex::for_each_match`] calls `onig_search`,
//!   whose match parameter lives on C's stack, with one caller-owned [`Region`].
//!
//! The three tier tokenizer files' own patterns are searched through the `regex` crate's
//! automata instead (`dfa.rs`, same matches, several times faster), except where the searched
//! piece is over 1 MiB.
//!
//! The matches are those of `FindMatches` (the same compiled pattern, the same start positions,
//! the same rule for an empty match right after the previous match: skip one character); the
//! tokens tests compare the counts with the library's own `Tokenizer::encode` on every golden
//! text and on generated tokenizers (`tests/bpe_count.rs`, `tests/tokens_golden.rs`).
//!
//! This is one of the files allowed `unsafe` (`xtask/src/tidy.rs`, `UNSAFE_ALLOWED`); each block
//! says why it is sound.
#![allow(unsafe_code)]

use super::dfa::{self, DfaSplit};
use std::ffi::c_int;
use std::sync::OnceLock;

/// A failed search (not "no match"): Oniguruma's retry or stack limit was reached, or it ran
/// out of memory (`message` is then its own text for `code`); or a library returned match
/// bounds outside the text or inside a character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SearchError {
    /// The library's error code (negative; `ONIGERR_*`), or 0 for match bounds that are not
    /// character boundaries from the `regex` crate's automata (`dfa.rs`).
    pub code: i32,
    /// The library's message for the code (e.g. "retry-limit-in-match over").
    pub message: String,
}

impl std::fmt::Display for SearchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the pre-tokenizer's regex search failed: {}",
            self.message
        )
    }
}

/// A compiled `Split` pattern (owned Oniguruma regex; freed on drop), and for the three tier
/// tokenizer files' patterns the same pattern for the `regex` crate's automata ([`DfaSplit`]),
/// which finds the same matches faster.
pub(super) struct SplitRegex {
    raw: onig_sys::OnigRegex,
    dfa: Option<DfaSplit>,
}

// SAFETY: an Oniguruma `regex_t` is not modified by searching (`onig_search` only reads it;
// every per-search state lives in the caller's region and in C stack frames), so one compiled
// pattern can be searched from several threads at once, as the `onig` crate's own `Regex`
// (`unsafe impl Send/Sync`) and the `tokenizers` crate already do. It is freed only in `drop`.
unsafe impl Send for SplitRegex {}
// SAFETY: see `Send` above: shared references only search.
unsafe impl Sync for SplitRegex {}

/// Done once before this module's first compilation: Oniguruma's one piece of global state
/// written after start-up is its lazy initialisation (`onig_initialize`, not thread-safe).
/// [`SplitRegex::new`] first has the `onig` crate (which guards its own compilations with a
/// mutex) compile a pattern, so the library is initialised before any call here. After that,
/// compiling only reads global state (the encoding and syntax tables), so compilations here
/// may run alongside the `onig` crate's (e.g. the `tokenizers` crate loading a file on
/// another thread).
static INITIALISED: OnceLock<()> = OnceLock::new();

impl SplitRegex {
    /// Compile `pattern` as `onig::Regex::new` does (Ruby syntax, UTF-8, no options); `None` if
    /// Oniguruma rejects it (the caller then falls back to the library's own pipeline). A
    /// pattern listed in [`dfa::PATTERNS`] is also compiled for the `regex` crate's automata,
    /// which then search every text of at most [`dfa::MAX_BYTES`].
    pub(super) fn new(pattern: &str) -> Option<SplitRegex> {
        let mut re = SplitRegex::onig_only(pattern)?;
        re.dfa = DfaSplit::new(pattern);
        Some(re)
    }

    /// Whether texts of at most [`dfa::MAX_BYTES`] are searched through the `regex` crate's
    /// automata.
    pub(super) fn has_automata(&self) -> bool {
        self.dfa.is_some()
    }

    /// [`new`](Self::new) without the automata: every search through Oniguruma.
    pub(super) fn onig_only(pattern: &str) -> Option<SplitRegex> {
        INITIALISED.get_or_init(|| {
            // Through the `onig` crate (behind its mutex): initialises the library once.
            let _ = tokenizers::utils::SysRegex::new("a");
        });
        let mut raw: onig_sys::OnigRegex = std::ptr::null_mut();
        let mut info = onig_sys::OnigErrorInfo {
            enc: std::ptr::null_mut(),
            par: std::ptr::null_mut(),
            par_end: std::ptr::null_mut(),
        };
        let bytes = pattern.as_bytes();
        // SAFETY: the pattern pointers delimit `pattern`'s bytes, alive for the call; `raw` and
        // `info` are valid out-parameters; the encoding and syntax are the library's own static
        // definitions (only read; `&raw mut` because the C prototype is not const); the library
        // is initialised (above), after which compiling writes no global state. On failure
        // `onig_new` frees what it allocated and leaves `raw` null.
        let r = unsafe {
            onig_sys::onig_new(
                &mut raw,
                bytes.as_ptr(),
                bytes.as_ptr().add(bytes.len()),
                onig_sys::ONIG_OPTION_NONE,
                &raw mut onig_sys::OnigEncodingUTF8,
                onig_sys::OnigDefaultSyntax,
                &mut info,
            )
        };
        (r == onig_sys::ONIG_NORMAL as c_int && !raw.is_null())
            .then_some(SplitRegex { raw, dfa: None })
    }

    /// Call `f(start, end)` (byte offsets into `text`, on character boundaries) for every match,
    /// left to right, as `onig::Regex::find_iter` yields them: each search starts where the last
    /// match ended; an empty match ending where the previous match ended is skipped by moving
    /// one character on. Stops at `f`'s first error. `region` is scratch space, reusable across
    /// calls and patterns; `f` gets it back, so it may search again (the bounds it was given are
    /// already read out).
    ///
    /// Errors: Oniguruma's search failure ([`SearchError`]) through `on_error`; a text longer
    /// than `i32::MAX` bytes (Oniguruma's offsets are C `int`s) is such an error too.
    pub(super) fn for_each_match<E>(
        &self,
        text: &str,
        region: &mut Region,
        on_error: impl Fn(SearchError) -> E,
        mut f: impl FnMut(usize, usize, &mut Region) -> Result<(), E>,
    ) -> Result<(), E> {
        let len = text.len();
        if let Some(dfa) = &self.dfa
            && len <= dfa::MAX_BYTES
        {
            let bad_bounds = |start, end| {
                on_error(SearchError {
                    code: 0,
                    message: format!(
                        "the regex library returned the bounds {start}..{end} for a text of {len} bytes"
                    ),
                })
            };
            return dfa.for_each_match(text, bad_bounds, |start, end| f(start, end, region));
        }
        if len > i32::MAX as usize {
            return Err(on_error(SearchError {
                code: onig_sys::ONIGERR_TOO_BIG_NUMBER,
                message: format!("a text of {len} bytes is beyond the regex library's offsets"),
            }));
        }
        let base = text.as_ptr();
        let mut from = 0usize;
        let mut last_match_end: Option<usize> = None;
        while from <= len {
            // SAFETY: `base..base + len` is `text`'s bytes (valid UTF-8, alive for the call) and
            // `from <= len`, so every pointer is within or one past the text; `self.raw` is a
            // compiled regex alive as long as `self`; `region.raw` is a live region owned by
            // `region` and used by no other thread (`&mut`). `onig_search` only reads the text.
            let r = unsafe {
                onig_sys::onig_search(
                    self.raw,
                    base,
                    base.add(len),
                    base.add(from),
                    base.add(len),
                    region.raw,
                    onig_sys::ONIG_OPTION_NONE,
                )
            };
            if r == onig_sys::ONIG_MISMATCH {
                break;
            }
            if r < 0 {
                return Err(on_error(SearchError {
                    code: r,
                    message: error_text(r),
                }));
            }
            let (start, end) = region.whole_match().ok_or_else(|| {
                on_error(SearchError {
                    code: r,
                    message: "the regex library returned a match without its bounds".into(),
                })
            })?;
            if start > end
                || end > len
                || !text.is_char_boundary(start)
                || !text.is_char_boundary(end)
            {
                return Err(on_error(SearchError {
                    code: r,
                    message: format!(
                        "the regex library returned the bounds {start}..{end} for a text of {len} bytes"
                    ),
                }));
            }
            if start == end && last_match_end == Some(end) {
                from += text[from..].chars().next().map_or(1, char::len_utf8);
                continue;
            }
            from = end;
            last_match_end = Some(end);
            f(start, end, region)?;
        }
        Ok(())
    }
}

impl Drop for SplitRegex {
    fn drop(&mut self) {
        // SAFETY: `raw` came from a successful `onig_new` and is freed exactly once, here.
        unsafe { onig_sys::onig_free(self.raw) }
    }
}

/// Oniguruma's match bounds (scratch space for [`SplitRegex::for_each_match`]; freed on drop).
pub(super) struct Region {
    raw: *mut onig_sys::OnigRegion,
}

impl Region {
    /// An empty region (`onig_region_new`); the library sizes it on the first search.
    pub(super) fn new() -> Region {
        // SAFETY: `onig_region_new` takes no arguments and returns a fresh region or null
        // (out of memory); a null region is checked before every use.
        Region {
            raw: unsafe { onig_sys::onig_region_new() },
        }
    }

    /// The bounds of group 0 after a successful search.
    fn whole_match(&self) -> Option<(usize, usize)> {
        if self.raw.is_null() {
            return None;
        }
        // SAFETY: `raw` is a live region; after a successful search the library has sized it
        // to at least one group (`num_regs >= 1`), so `beg[0]` and `end[0]` are initialised.
        unsafe {
            let r = &*self.raw;
            if r.num_regs < 1 || r.beg.is_null() || r.end.is_null() {
                return None;
            }
            let (b, e) = (*r.beg, *r.end);
            (b >= 0 && e >= 0).then_some((b as usize, e as usize))
        }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: `raw` came from `onig_region_new` and is freed exactly once, with its
            // arrays (`free_self = 1`).
            unsafe { onig_sys::onig_region_free(self.raw, 1) }
        }
    }
}

/// Oniguruma's message for an error code (`onig_error_code_to_str`).
fn error_text(code: c_int) -> String {
    let mut buf = [0u8; onig_sys::ONIG_MAX_ERROR_MESSAGE_LEN as usize];
    // SAFETY: the buffer holds ONIG_MAX_ERROR_MESSAGE_LEN bytes, the most the function writes;
    // search errors take no error-info argument (the variadic part is only read for compile
    // errors that name a part of the pattern), and the returned length is bounded below.
    let n = unsafe { onig_sys::onig_error_code_to_str(buf.as_mut_ptr(), code) };
    let n = usize::try_from(n).unwrap_or(0).min(buf.len());
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[cfg(test)]
pub(super) mod tests {
    use super::{Region, SplitRegex, dfa};
    use proptest::prelude::*;
    use tokenizers::utils::SysRegex;

    /// The patterns of the bundled tokenizer files and GPT-2's, plus ones with empty matches
    /// (where the skip-one-character rule decides) and a lookbehind.
    const PATTERNS: &[&str] = &[
        r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
        r"\p{N}{1,3}",
        r"[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
        r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"##,
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        r"a*",
        r"\b",
        r"x?",
        r"(?<=a)b*",
        r"$",
    ];

    /// Every match of `re` in `text` (`dfa.rs`'s tests compare with it too).
    pub(in crate::tokens) fn ours(re: &SplitRegex, text: &str) -> Vec<(usize, usize)> {
        let mut got = Vec::new();
        let mut region = Region::new();
        re.for_each_match(
            text,
            &mut region,
            |e| e,
            |s, e, _| {
                got.push((s, e));
                Ok(())
            },
        )
        .unwrap();
        got
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// The same matches as the `onig` crate's `find_iter` (what the `tokenizers` crate's
        /// `Split` walks), on texts mixing letters of both cases, digits, spaces, line breaks,
        /// punctuation, apostrophes, accents, combining marks, CJK and emoji.
        #[test]
        fn matches_are_find_iter_s(text in "[aAbBxX1 \n\r\t'.,!é\u{301}中あア😀s]{0,40}") {
            for p in PATTERNS.iter().chain(dfa::PATTERNS) {
                let theirs: Vec<(usize, usize)> = SysRegex::new(p).unwrap().find_iter(&text).collect();
                let re = SplitRegex::new(p).unwrap();
                prop_assert_eq!(ours(&re, &text), theirs, "pattern {}", p);
            }
        }
    }

    #[test]
    fn a_search_the_library_gives_up_on_is_an_error_not_a_panic() {
        // Exponential backtracking: Oniguruma stops at its retry limit (10,000,000).
        let re = SplitRegex::new(r"(?:a|a)*$").unwrap();
        let text = "a".repeat(40) + "b";
        let mut region = Region::new();
        let err = re
            .for_each_match(&text, &mut region, |e| e, |_, _, _| Ok(()))
            .unwrap_err();
        assert!(err.code < 0, "{err:?}");
        assert!(
            err.to_string().contains("retry-limit-in-match over"),
            "{err}"
        );
        // The region is still usable afterwards.
        let ok = SplitRegex::new(r"b").unwrap();
        assert!(
            ok.for_each_match(&text, &mut region, |e| e, |_, _, _| Ok(()))
                .is_ok()
        );
    }

    #[test]
    fn a_pattern_the_library_rejects_is_none() {
        assert!(SplitRegex::new(r"(").is_none());
        assert!(SplitRegex::new(r"\p{NoSuchProperty}").is_none());
    }
}
