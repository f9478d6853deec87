//! rag-quality-check's text processing (spec section 7), on CPython 3.11 / Unicode 14 data.
//!
//! * word characters: Python `re`'s `\w` plus Mn/Mc marks in [U+0300, U+1E950) — not Rust's
//!   `regex` `\w` nor `char::is_alphanumeric`, which differ (No, Other_Alphabetic, marks);
//! * `str.casefold()` (full C+F folding), not `to_lowercase`;
//! * `str.isspace()`, which includes U+001C–U+001F unlike `char::is_whitespace`.
//!
//! The tables are generated from `data/unicode/unicode14_tables.json` by `cargo xtask codegen`.

use super::unicode_tables::{CASEFOLD, MARK_RANGES};
use std::cmp::Ordering;

fn in_ranges(table: &[(u32, u32)], cp: u32) -> bool {
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                Ordering::Less
            } else if lo > cp {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        })
        .is_ok()
}

/// Python `str.isspace()` for one character (one definition, `routeval_core::py::is_space`).
pub use routeval_core::py::is_space;

/// Python `str.strip()` (whitespace as [`is_space`]).
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// A tokenizer word character: Python `\w` or an Mn/Mc mark in [U+0300, U+1E950).
pub fn is_word_char(c: char) -> bool {
    let cp = c as u32;
    if cp < 0x80 {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    // Python `\w` (routeval-core's Unicode 14 table), or a mark (never `\w`) in the range.
    routeval_core::py::is_py_word(c) || ((0x300..0x1E950).contains(&cp) && is_mark(c))
}

/// General category Mn or Mc (any code point).
pub fn is_mark(c: char) -> bool {
    let cp = c as u32;
    cp >= 0x300 && in_ranges(MARK_RANGES, cp)
}

/// Python `str.casefold()` of `word`, appended to `out`.
pub fn casefold_into(word: &str, out: &mut String) {
    for c in word.chars() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
            continue;
        }
        match CASEFOLD.binary_search_by_key(&(c as u32), |&(cp, _)| cp) {
            Ok(i) => out.push_str(CASEFOLD[i].1),
            Err(_) => out.push(c),
        }
    }
}

/// Python `str.casefold()`.
pub fn casefold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    casefold_into(s, &mut out);
    out
}

const CJK_RANGES: [(u32, u32); 5] = [
    (0x3040, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0xAC00, 0xD7AF),
];

const SPACELESS_EXTRA: [(u32, u32); 5] = [
    (0x0E00, 0x0EFF),
    (0x0F00, 0x0FFF),
    (0x1000, 0x109F),
    (0x1780, 0x17FF),
    (0x3000, 0x303F),
];

fn is_cjk(c: char) -> bool {
    let cp = c as u32;
    cp >= 0x3040 && CJK_RANGES.iter().any(|&(lo, hi)| lo <= cp && cp <= hi)
}

fn is_spaceless(c: char) -> bool {
    let cp = c as u32;
    is_cjk(c) || SPACELESS_EXTRA.iter().any(|&(lo, hi)| lo <= cp && cp <= hi)
}

/// rag-quality-check's 70 English stopwords, sorted (compared after casefolding).
pub const STOPWORDS: [&str; 70] = [
    "a", "about", "an", "and", "are", "as", "at", "be", "been", "being", "but", "by", "can",
    "could", "did", "do", "does", "for", "from", "had", "has", "have", "he", "her", "his", "how",
    "i", "if", "in", "into", "is", "it", "its", "may", "might", "must", "no", "not", "of", "on",
    "or", "our", "should", "so", "than", "that", "the", "their", "them", "then", "there", "these",
    "they", "this", "those", "to", "us", "was", "we", "were", "what", "when", "where", "which",
    "who", "will", "with", "would", "you", "your",
];

/// Membership in [`STOPWORDS`] (a `match`, compiled to length + byte comparisons).
pub fn is_stopword(t: &str) -> bool {
    matches!(
        t,
        "a" | "about"
            | "an"
            | "and"
            | "are"
            | "as"
            | "at"
            | "be"
            | "been"
            | "being"
            | "but"
            | "by"
            | "can"
            | "could"
            | "did"
            | "do"
            | "does"
            | "for"
            | "from"
            | "had"
            | "has"
            | "have"
            | "he"
            | "her"
            | "his"
            | "how"
            | "i"
            | "if"
            | "in"
            | "into"
            | "is"
            | "it"
            | "its"
            | "may"
            | "might"
            | "must"
            | "no"
            | "not"
            | "of"
            | "on"
            | "or"
            | "our"
            | "should"
            | "so"
            | "than"
            | "that"
            | "the"
            | "their"
            | "them"
            | "then"
            | "there"
            | "these"
            | "they"
            | "this"
            | "those"
            | "to"
            | "us"
            | "was"
            | "we"
            | "were"
            | "what"
            | "when"
            | "where"
            | "which"
            | "who"
            | "will"
            | "with"
            | "would"
            | "you"
            | "your"
    )
}

/// ASCII bytes that are word characters (`[A-Za-z0-9_]`, as [`is_word_char`] says).
static ASCII_WORD: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 128 {
        t[b] = (b as u8).is_ascii_alphanumeric() || b == b'_' as usize;
        b += 1;
    }
    t
};

/// The interner's key of the ASCII word `bytes[start..start + len]` (`len` ≤ 16) lowercased:
/// its bytes packed little-endian, the rest zero. Where 16 bytes can be read from `start`,
/// they are read at once and lowercased a word at a time (every byte is below 0x80, so adding
/// to one byte never carries into the next).
#[inline]
fn ascii_lower_key(bytes: &[u8], start: usize, len: usize) -> u128 {
    debug_assert!(len <= 16 && bytes[start..start + len].is_ascii());
    const ONES: u128 = u128::MAX / 255;
    if let Some(chunk) = bytes.get(start..start + 16) {
        let mut raw = [0u8; 16];
        raw.copy_from_slice(chunk);
        let keep = if len == 16 {
            u128::MAX
        } else {
            (1u128 << (8 * len)) - 1
        };
        let x = u128::from_le_bytes(raw) & keep;
        // Per byte: at least b'A' (+0x3F reaches 0x80) and at most b'Z' (+0x25 stays below).
        let upper = (x + ONES * 0x3F) & !(x + ONES * 0x25) & (ONES * 0x80);
        return x | (upper >> 2);
    }
    let mut key = 0u128;
    for (j, &b) in bytes[start..start + len].iter().enumerate() {
        key |= u128::from(b.to_ascii_lowercase()) << (8 * j);
    }
    key
}

/// Call `f` with every token of `text` in order (before stopword removal and
/// de-duplication): words (runs of [`is_word_char`]) casefolded, and a word holding any CJK
/// character split into single characters each carrying its following Mn/Mc marks.
/// `buf` is scratch space.
pub fn for_each_token(text: &str, buf: &mut String, mut f: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        // Skip to the next word character.
        let b = bytes[i];
        let (c, len) = if b < 0x80 {
            (b as char, 1)
        } else {
            let c = text[i..].chars().next().unwrap_or('\u{fffd}');
            (c, c.len_utf8())
        };
        if !is_word_char(c) {
            i += len;
            continue;
        }
        let start = i;
        let mut ascii = true;
        while i < bytes.len() {
            let b = bytes[i];
            if b < 0x80 {
                if b.is_ascii_alphanumeric() || b == b'_' {
                    i += 1;
                    continue;
                }
                break;
            }
            let c = text[i..].chars().next().unwrap_or('\u{fffd}');
            if !is_word_char(c) {
                break;
            }
            ascii = false;
            i += c.len_utf8();
        }
        let word = &text[start..i];
        buf.clear();
        if ascii {
            buf.push_str(word);
            buf.make_ascii_lowercase();
            f(buf);
            continue;
        }
        casefold_into(word, buf);
        if buf.chars().any(is_cjk) {
            let folded: &str = buf;
            let mut piece_start: Option<usize> = None;
            for (j, c) in folded.char_indices() {
                match piece_start {
                    Some(_) if is_mark(c) => {}
                    Some(p) => {
                        f(&folded[p..j]);
                        piece_start = Some(j);
                    }
                    None => piece_start = Some(j),
                }
            }
            if let Some(p) = piece_start {
                f(&folded[p..]);
            }
        } else {
            f(buf);
        }
    }
}

/// A distinct set of tokens, stored sorted (the reference's `frozenset`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenSet(Vec<String>);

impl TokenSet {
    /// Number of distinct tokens.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// True when there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The tokens, sorted by code point.
    pub fn tokens(&self) -> &[String] {
        &self.0
    }
    /// `|self ∩ other|`.
    pub fn intersection_len(&self, other: &TokenSet) -> usize {
        sorted_intersection_len(&self.0, &other.0)
    }
}

pub(crate) fn sorted_intersection_len<T: Ord>(a: &[T], b: &[T]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            Ordering::Less => i += 1,
            Ordering::Greater => j += 1,
            Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// rag-quality-check's `tokenize(text)` (spec 7.2): words (runs of [`is_word_char`]),
/// casefolded; a word holding any CJK character (kana, CJK ideographs incl. Ext-A and
/// compatibility, Hangul syllables) is split into single characters each carrying its
/// following Mn/Mc marks; English stopwords dropped unless that leaves nothing; distinct.
/// No Unicode normalisation.
pub fn tokenize(text: &str) -> TokenSet {
    let mut tokens: Vec<String> = Vec::new();
    let mut buf = String::new();
    for_each_token(text, &mut buf, |t| tokens.push(t.to_string()));
    if tokens.iter().any(|t| !is_stopword(t)) {
        tokens.retain(|t| !is_stopword(t));
    }
    tokens.sort_unstable();
    tokens.dedup();
    TokenSet(tokens)
}

/// Interns token strings as dense `u32` ids, so token sets compare as integer sets.
///
/// Tokens of up to 16 bytes (almost all) are keyed by their bytes packed into a `u128`
/// (exact: a token never contains a NUL byte, so zero padding is unambiguous); longer ones by
/// the string.
#[derive(Debug, Default)]
pub struct Interner {
    small: rustc_hash::FxHashMap<u128, u32>,
    map: rustc_hash::FxHashMap<Box<str>, u32>,
    next: u32,
    /// `stop[id]`: whether token `id` is a stopword (decided once, when the id is made).
    stop: Vec<bool>,
    buf: String,
    scratch: Vec<u32>,
}

impl Interner {
    /// Forget every token (keeps the allocation).
    pub fn clear(&mut self) {
        self.small.clear();
        self.map.clear();
        self.stop.clear();
        self.next = 0;
    }

    /// Number of distinct tokens interned.
    pub fn len(&self) -> usize {
        self.next as usize
    }

    /// True when nothing is interned.
    pub fn is_empty(&self) -> bool {
        self.next == 0
    }

    /// The id of the token whose `len` (≤ 16) bytes are packed little-endian in `key`, the
    /// rest zero.
    #[inline]
    fn small_id(&mut self, key: u128, len: usize) -> u32 {
        let next = self.next;
        let id = *self.small.entry(key).or_insert(next);
        if id == next {
            self.next += 1;
            // The key holds a token's bytes, which are UTF-8.
            let k = key.to_le_bytes();
            let s = std::str::from_utf8(&k[..len]).unwrap_or_default();
            self.stop.push(is_stopword(s));
        }
        id
    }

    fn id(&mut self, s: &str) -> u32 {
        let b = s.as_bytes();
        if b.len() <= 16 {
            let mut k = [0u8; 16];
            k[..b.len()].copy_from_slice(b);
            return self.small_id(u128::from_le_bytes(k), b.len());
        }
        if let Some(&i) = self.map.get(s) {
            return i;
        }
        let i = self.next;
        self.next += 1;
        self.stop.push(is_stopword(s));
        self.map.insert(s.into(), i);
        i
    }

    /// [`tokenize`] as a set of interned ids (same set semantics, stopword fallback included).
    pub fn tokenize(&mut self, text: &str) -> IdSet {
        let mut ids = Vec::new();
        self.tokenize_into(text, &mut ids);
        IdSet(ids)
    }

    /// Append the sorted, de-duplicated token ids of `text` (the same set as
    /// [`Interner::tokenize`]) to `out`; returns how many were appended.
    pub fn tokenize_into(&mut self, text: &str, out: &mut Vec<u32>) -> usize {
        self.tokenize_with(text, out, None)
    }

    /// [`tokenize`](Self::tokenize) that also appends the text's token ids before stopword
    /// removal and de-duplication (in text order) to `raw`.
    pub fn tokenize_keeping_raw(&mut self, text: &str, raw: &mut Vec<u32>) -> IdSet {
        let mut ids = Vec::new();
        self.tokenize_with(text, &mut ids, Some(raw));
        IdSet(ids)
    }

    /// Append the set of `text` to `out` (returning its size) and, with `raw`, its token ids
    /// before stopword removal to `raw`.
    fn tokenize_with(
        &mut self,
        text: &str,
        out: &mut Vec<u32>,
        raw: Option<&mut Vec<u32>>,
    ) -> usize {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        self.raw_ids(text, &mut scratch);
        if let Some(raw) = raw {
            raw.extend_from_slice(&scratch);
        }
        let n = self.finish_set(&mut scratch, out);
        self.scratch = scratch;
        n
    }

    /// The token set of a text whose token ids before stopword removal are `raw` (as
    /// [`tokenize_keeping_raw`](Self::tokenize_keeping_raw) collects them; the ids
    /// of several texts together make the set of their concatenation when no token spans two
    /// of them). `raw` is left in an unspecified order.
    pub fn set_from_raw(&self, raw: &mut Vec<u32>) -> IdSet {
        let mut ids = Vec::new();
        self.finish_set(raw, &mut ids);
        IdSet(ids)
    }

    /// The stopword rule (stopwords dropped unless that leaves nothing), then sorted and
    /// distinct: `raw` becomes the set, which is appended to `out`; returns its size.
    fn finish_set(&self, raw: &mut Vec<u32>, out: &mut Vec<u32>) -> usize {
        let stop = &self.stop;
        // Stopwords are dropped by an unconditional write and a conditional step (about a
        // third of a passage's tokens are stopwords, in no pattern a branch predicts).
        if raw.iter().any(|&id| !stop[id as usize]) {
            let mut kept = 0;
            for i in 0..raw.len() {
                let id = raw[i];
                raw[kept] = id;
                kept += usize::from(!stop[id as usize]);
            }
            raw.truncate(kept);
        }
        if raw.len() <= SMALL_SET {
            sort_small(raw);
        } else {
            raw.sort_unstable();
        }
        raw.dedup();
        out.extend_from_slice(raw);
        raw.len()
    }

    /// Append the token ids of `text` in text order (before stopword removal and
    /// de-duplication) to `scratch`.
    fn raw_ids(&mut self, text: &str, scratch: &mut Vec<u32>) {
        let mut buf = std::mem::take(&mut self.buf);
        // ASCII words go straight from the text to their key (lowercased on the way); at
        // the first non-ASCII byte the rest of the text, from the start of the word or gap
        // it is in, goes to the general tokenizer (a word starts after a non-word character,
        // so the tokens are those of one pass over the whole text).
        let bytes = text.as_bytes();
        let mut i = 0;
        let rest = loop {
            while i < bytes.len() && bytes[i] < 0x80 && !ASCII_WORD[bytes[i] as usize] {
                i += 1;
            }
            if i == bytes.len() {
                break None;
            }
            if bytes[i] >= 0x80 {
                break Some(i);
            }
            let start = i;
            while i < bytes.len() && ASCII_WORD[bytes[i] as usize] {
                i += 1;
            }
            if i < bytes.len() && bytes[i] >= 0x80 {
                break Some(start);
            }
            let word = &bytes[start..i];
            let id = if word.len() <= 16 {
                self.small_id(ascii_lower_key(bytes, start, word.len()), word.len())
            } else {
                buf.clear();
                buf.push_str(&text[start..i]);
                buf.make_ascii_lowercase();
                self.id(&buf)
            };
            scratch.push(id);
        };
        if let Some(at) = rest {
            for_each_token(&text[at..], &mut buf, |t| {
                let id = self.id(t);
                scratch.push(id);
            });
        }
        self.buf = buf;
    }
}

/// Token lists up to this length are sorted by [`sort_small`].
const SMALL_SET: usize = 32;

/// Sort at most [`SMALL_SET`] ids below 2^27 by counting, for each, the ids that go before
/// it: that count is its place. Each id is keyed with its position in its five low bits
/// (equal ids then go in list order and every key is distinct), and the counts are
/// compares over the whole list, which the compiler vectorizes, with no branch on the data:
/// an insertion sort of a passage's ~15 ids in random order mispredicts on most of them.
/// Lists with a larger id take `sort_unstable`.
fn sort_small(ids: &mut [u32]) {
    let n = ids.len();
    debug_assert!(n <= SMALL_SET);
    if ids.iter().any(|&x| x >= 1 << 27) {
        ids.sort_unstable();
        return;
    }
    let mut keys = [0u32; SMALL_SET];
    for (i, (k, &x)) in keys.iter_mut().zip(ids.iter()).enumerate() {
        *k = (x << 5) | i as u32;
    }
    let keys = &keys[..n];
    let mut sorted = [0u32; SMALL_SET];
    for &k in keys {
        let place = keys.iter().map(|&j| u32::from(j < k)).sum::<u32>();
        sorted[place as usize] = k >> 5;
    }
    ids.copy_from_slice(&sorted[..n]);
}

/// A token set as sorted, distinct interned ids (see [`Interner`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdSet(Vec<u32>);

impl IdSet {
    /// The sorted token ids.
    pub fn ids(&self) -> &[u32] {
        &self.0
    }
    /// Number of distinct tokens.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// True when there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// `|self ∩ other|` (both from the same [`Interner`]).
    pub fn intersection_len(&self, other: &IdSet) -> usize {
        sorted_intersection_len(&self.0, &other.0)
    }
}

/// [`coverage`] on interned sets.
pub fn coverage_ids(left: &IdSet, right: &IdSet) -> f64 {
    if left.is_empty() {
        return 0.0;
    }
    left.intersection_len(right) as f64 / left.len() as f64
}

/// rag-quality-check's `split_sentences(text)` (spec 7.3): cut right after `。！？`; after
/// `. ! ? ۔ ।` only when whitespace follows; at every `\n`; pieces stripped, empties dropped.
pub fn split_sentences(text: &str) -> Vec<&str> {
    let stripped = py_strip(text);
    if stripped.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut start = 0;
    let mut it = text.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let end = i + c.len_utf8();
        let cut = match c {
            '\u{3002}' | '\u{ff01}' | '\u{ff1f}' | '\n' => true,
            '.' | '!' | '?' | '\u{6d4}' | '\u{964}' => {
                matches!(it.peek(), Some(&(_, n)) if is_space(n))
            }
            _ => false,
        };
        if cut {
            let piece = py_strip(&text[start..end]);
            if !piece.is_empty() {
                out.push(piece);
            }
            start = end;
        }
    }
    let piece = py_strip(&text[start..]);
    if !piece.is_empty() {
        out.push(piece);
    }
    if out.is_empty() {
        out.push(stripped);
    }
    out
}

/// rag-quality-check's `looks_like_passage(text)` (spec 7.4): whether a retrieved string is
/// passage prose (true) or a bare id (false). Decides only which items groundedness and
/// citation coverage can be measured against; never changes a number by itself.
pub fn looks_like_passage(text: &str) -> bool {
    let flat = py_strip(text);
    if flat.is_empty() {
        return false;
    }
    if flat.chars().any(is_space) {
        return true;
    }
    if flat.chars().any(is_spaceless) {
        return true;
    }
    let lowered = flat.to_ascii_lowercase();
    const PREFIXES: [&str; 7] = [
        "http://", "https://", "s3://", "gs://", "file://", "urn:", "doc:",
    ];
    if PREFIXES.iter().any(|p| lowered.starts_with(p)) {
        return false;
    }
    let n = flat.chars().count();
    if n >= 16 && lowered.bytes().all(|b| b.is_ascii_hexdigit()) {
        return false;
    }
    if flat.contains('/') || flat.contains('\\') {
        return false;
    }
    if flat.bytes().filter(|&b| b == b'-' || b == b'_').count() >= 2 {
        return false;
    }
    n > 40
}

/// `coverage(A, B) = |A ∩ B| / |A|`, 0.0 when `A` is empty (asymmetric: how much of the left
/// text the right one accounts for). Spec 7.5.
pub fn coverage(left: &TokenSet, right: &TokenSet) -> f64 {
    if left.is_empty() {
        return 0.0;
    }
    left.intersection_len(right) as f64 / left.len() as f64
}

/// Cosine similarity clipped to [0, 1]: `dot(u,v) / (sqrt(dot(u,u)) * sqrt(dot(v,v)))`,
/// 0.0 when either norm is 0 or the result is NaN (numpy's `norm`/`dot` order: plain
/// left-to-right sums). Vectors of different lengths score over the common prefix.
pub fn cosine(u: &[f64], v: &[f64]) -> f64 {
    let mut uu = 0.0;
    let mut vv = 0.0;
    let mut uv = 0.0;
    for (a, b) in u.iter().zip(v) {
        uv += a * b;
    }
    for a in u {
        uu += a * a;
    }
    for b in v {
        vv += b * b;
    }
    let (nu, nv) = (uu.sqrt(), vv.sqrt());
    if nu == 0.0 || nv == 0.0 {
        return 0.0;
    }
    let value = uv / (nu * nv);
    if value.is_nan() {
        return 0.0;
    }
    value.clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        tokenize(s).tokens().to_vec()
    }

    #[test]
    fn tokenizer_rules() {
        assert_eq!(toks("what is it"), vec!["is", "it", "what"]);
        assert_eq!(toks("xyz中文"), vec!["x", "y", "z", "中", "文"]);
        assert_eq!(toks("I \u{2764}\u{fe0f} it"), vec!["\u{fe0f}"]);
        assert_eq!(toks("Straße STRASSE"), vec!["strasse"]);
        assert_eq!(toks("x² ½"), vec!["x²", "½"]);
        assert_eq!(toks("か\u{3099}"), vec!["か\u{3099}"]);
    }

    #[test]
    fn ascii_keys_are_lowercased_bytes() {
        let text = b"@ABZ[`az{_09 Hello WORLD0123456789abcdef";
        for start in 0..text.len() {
            for len in 0..=16.min(text.len() - start) {
                let mut want = [0u8; 16];
                for j in 0..len {
                    want[j] = text[start + j].to_ascii_lowercase();
                }
                assert_eq!(
                    ascii_lower_key(text, start, len),
                    u128::from_le_bytes(want),
                    "{start} {len}"
                );
            }
        }
    }

    proptest::proptest! {
        /// The small-list sort is a sort: the same order as `sort_unstable`, duplicates
        /// included, at every length up to its limit.
        #[test]
        fn small_sort_sorts(
            mut ids in proptest::collection::vec(
                proptest::prop_oneof![30 => 0u32..40, 1 => (1u32 << 27) - 3..(1 << 27) + 3, 1 => proptest::num::u32::ANY],
                0..=SMALL_SET,
            )
        ) {
            let mut want = ids.clone();
            want.sort_unstable();
            sort_small(&mut ids);
            proptest::prop_assert_eq!(ids, want);
        }
    }

    proptest::proptest! {
        /// The interner's token sets (its ASCII fast path included) are `tokenize`'s.
        #[test]
        fn interned_sets_are_tokenize_sets(
            parts in proptest::collection::vec(proptest::sample::select(vec![
                "the", "Reset", "PASSWORD", "a", " ", "  ", ".", "_x", "9", "é", "Straße",
                "中文", "か\u{3099}", "\u{300}", "x²", "-", "abcdefghijklmnopq",
                "ABCDEFGHIJKLMNOP", "Üniversität", "\n", "İ", "ǅ", "ﬁ", "ok",
            ]), 0..24)
        ) {
            let text: String = parts.concat();
            let mut interner = Interner::default();
            // Intern a few words first, so ids are not simply in order of appearance.
            interner.tokenize("password ok straße");
            let got = interner.tokenize(&text);
            let mut want: Vec<u32> = tokenize(&text).tokens().iter().map(|t| interner.id(t)).collect();
            want.sort_unstable();
            proptest::prop_assert_eq!(got.ids(), &want[..], "{:?}", text);
        }
    }

    proptest::proptest! {
        /// The set of a text is the set of its sentences' raw tokens together (no token spans
        /// a sentence cut), what `Lexical` relies on to skip tokenizing an answer twice.
        #[test]
        fn sentence_raw_tokens_make_the_text_set(
            parts in proptest::collection::vec(proptest::sample::select(vec![
                "the", "Reset", "a", " ", "\t", ".", ". ", "!", "! ", "?", "? ", "\n", "。",
                "！", "？", "\u{6d4}", "\u{6d4} ", "\u{964} ", "中文", "\u{300}", "é", "x²",
                "it", "was", "password", "_", "9", "\u{a0}", "\u{2028}", "\u{1c}", "ok",
            ]), 0..30)
        ) {
            let text: String = parts.concat();
            let mut interner = Interner::default();
            let mut raw = Vec::new();
            for sentence in split_sentences(&text) {
                interner.tokenize_keeping_raw(sentence, &mut raw);
            }
            let joined = interner.set_from_raw(&mut raw);
            let whole = interner.tokenize(&text);
            proptest::prop_assert_eq!(joined, whole, "{:?}", text);
        }
    }

    #[test]
    fn sentences() {
        assert_eq!(
            split_sentences("3.14 is pi. e.g. this"),
            vec!["3.14 is pi.", "e.g.", "this"]
        );
        assert_eq!(split_sentences("Really?No"), vec!["Really?No"]);
        assert_eq!(split_sentences("一。二"), vec!["一。", "二"]);
        assert!(split_sentences(" \u{a0}").is_empty());
    }

    #[test]
    fn passages() {
        assert!(!looks_like_passage("p_reset"));
        assert!(!looks_like_passage("Paris"));
        assert!(looks_like_passage(
            "Supercalifragilisticexpialidociousnessity"
        ));
        assert!(!looks_like_passage("https://x.y/z"));
        assert!(looks_like_passage("中文"));
    }
}
