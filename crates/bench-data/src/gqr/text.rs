//! GQR-Bench text primitives with Python 3 `str`/`re` semantics (`specs/gqr.md` §4.2).
//!
//! Python's `\w` is general category `L*`/`N*` or `_`, and its `\s` is an explicit list of
//! code points; Rust's `regex` `\w`/`\s` and `char::is_alphanumeric`/`is_whitespace` differ
//! (combining marks, `Pc`, `No`, U+001C–U+001F, newer Unicode versions), so this module uses
//! explicit tables (`\w`: CPython 3.11's Unicode 14 table in `routeval_core::py`).
//! Verified against `golden/gqr/helpers/`.

use blake2::digest::{Update, VariableOutput};
use sha2::Digest;
use std::collections::HashSet;
use std::sync::OnceLock;

/// Python `str.isspace()` / `re` `\s` for `str` patterns (one definition, in
/// `routeval_core::py`).
pub use routeval_core::py::is_space as is_py_space;

/// Python `re` `\w` for `str` patterns: general category `L*` or `N*`, or `_` (CPython 3.11,
/// Unicode 14; one table shared with rag, in routeval-core).
pub use routeval_core::py::is_py_word;

/// Python `str.strip()` (strips [`is_py_space`] characters; `routeval_core::py::strip`).
pub use routeval_core::py::strip as py_strip;

/// The first `n` code points of `s` (Python `s[:n]`).
pub fn truncate_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Python `str.lower()`: full Unicode lowercase mapping with the final-sigma rule
/// (`İ` → `i` + U+0307). Rust's `str::to_lowercase` implements the same algorithm; the
/// tables may differ for code points changed after Unicode 14 (CPython 3.11).
pub fn py_lower(s: &str) -> String {
    s.to_lowercase()
}

/// GQR's `normalize(t)`: lowercase, every non-`\w`-non-`\s` char becomes a space, runs of
/// `\s` collapse to one space, the ends are stripped.
pub fn normalize(t: &str) -> String {
    if t.is_ascii() {
        // Fast path: ASCII lowercase is the whole of `str.lower()` here.
        let mut out = String::with_capacity(t.len());
        let mut pending = false;
        for b in t.bytes() {
            if b.is_ascii_alphanumeric() || b == b'_' {
                if pending && !out.is_empty() {
                    out.push(' ');
                }
                pending = false;
                out.push(b.to_ascii_lowercase() as char);
            } else {
                pending = true;
            }
        }
        return out;
    }
    let lower = py_lower(t);
    let mut out = String::with_capacity(lower.len());
    let mut pending = false;
    for c in lower.chars() {
        if is_py_word(c) {
            if pending && !out.is_empty() {
                out.push(' ');
            }
            pending = false;
            out.push(c);
        } else {
            pending = true;
        }
    }
    out
}

const PY_SPACE_CLASS: &str = r"\t\n\x0B\x0C\r\x1C-\x1F \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}";

struct Detok {
    at: regex::Regex,
    quotes: regex::Regex,
    open: regex::Regex,
    close: regex::Regex,
    space: regex::Regex,
}

fn detok() -> &'static Detok {
    static D: OnceLock<Detok> = OnceLock::new();
    D.get_or_init(|| {
        let s = PY_SPACE_CLASS;
        let re = |p: &str| regex::Regex::new(p).expect("static regex");
        Detok {
            at: re(&format!(r" @([^{s}])@ ")),
            quotes: re(&format!(r#""[{s}]*([^"]*?)[{s}]*""#)),
            open: re(r"([(\[$#]) "),
            close: re(r" (\.\.\.|[.,;:!?%)\]]|'(?:s|t|re|ve|ll|d|m))"),
            space: re(&format!(r"[{s}]+")),
        }
    })
}

/// GQR's `detokenize_wikitext(t)`: undo wikitext-103's tokenisation (` @-@ ` → `-`, spaced
/// quotes, brackets, punctuation and contractions), collapse whitespace, strip.
pub fn detokenize_wikitext(t: &str) -> String {
    let d = detok();
    let t = d.at.replace_all(t, "$1");
    let t = d.quotes.replace_all(&t, "\"$1\"");
    let t = d.open.replace_all(&t, "$1");
    // ` (...|[.,;:!?%)\]]|'(?:s|t|re|ve|ll|d|m)\b)` → the token: the contraction branch needs
    // Python's `\b` (next char not `\w`). A rejected match holds no space after its first
    // char, so resuming after it finds every match Python finds.
    let mut out = String::with_capacity(t.len());
    let mut last = 0;
    for caps in d.close.captures_iter(&t) {
        let m = caps.get(0).expect("whole match");
        let tok = caps.get(1).expect("group 1").as_str();
        if tok.starts_with('\'') && t[m.end()..].chars().next().is_some_and(is_py_word) {
            continue;
        }
        out.push_str(&t[last..m.start()]);
        out.push_str(tok);
        last = m.end();
    }
    out.push_str(&t[last..]);
    let t = d.space.replace_all(&out, " ");
    py_strip(&t).to_string()
}

/// GQR's `shingles(t, k)`: the set of k-word windows of `normalize(t)` joined by single
/// spaces; a text with fewer than k words gives its whole normalized text (none if empty).
pub fn shingles(t: &str, k: usize) -> HashSet<String> {
    shingles_of_normalized(&normalize(t), k)
}

/// [`shingles`] of an already normalized text.
pub fn shingles_of_normalized(n: &str, k: usize) -> HashSet<String> {
    let mut out = HashSet::new();
    for_each_shingle(n, k, |s| {
        out.insert(s.to_string());
    });
    out
}

/// Call `f` on every k-word shingle of the normalized text `n` (windows may repeat).
fn for_each_shingle(n: &str, k: usize, mut f: impl FnMut(&str)) {
    any_shingle(n, k, |s| {
        f(s);
        false
    });
}

/// Whether `f` returns true for some k-word shingle of `n` (stops at the first).
fn any_shingle(n: &str, k: usize, mut f: impl FnMut(&str) -> bool) -> bool {
    if n.is_empty() {
        return false;
    }
    // Byte offsets of word starts; words are separated by exactly one space.
    let mut starts = vec![0usize];
    for (i, b) in n.bytes().enumerate() {
        if b == b' ' {
            starts.push(i + 1);
        }
    }
    let words = starts.len();
    if words < k {
        return f(n);
    }
    (0..=words - k).any(|w| {
        let start = starts[w];
        let end = if w + k < words {
            starts[w + k] - 1
        } else {
            n.len()
        };
        f(&n[start..end])
    })
}

/// A pass-through hasher for sets of BLAKE2b-64 digests (already uniformly distributed).
#[derive(Debug, Clone, Copy, Default)]
pub struct DigestHasher(u64);

impl std::hash::Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// A set of digests keyed by their own value.
pub type DigestSet = HashSet<u64, std::hash::BuildHasherDefault<DigestHasher>>;

/// GQR's `_digest(s)`: BLAKE2b with digest size 8 (parameter block, not a truncation),
/// unkeyed, over UTF-8 `s`, read as a big-endian u64.
pub fn digest(s: &str) -> u64 {
    let mut h = blake2::Blake2bVar::new(8).expect("8 is a valid BLAKE2b output size");
    h.update(s.as_bytes());
    let mut out = [0u8; 8];
    h.finalize_variable(&mut out)
        .expect("buffer has the output size");
    u64::from_be_bytes(out)
}

/// GQR's `rank_key(text, seed, salt)` = `_digest(f"{seed}\0{salt}\0{text}")`.
pub fn rank_key(text: &str, seed: u64, salt: &str) -> u64 {
    let mut h = blake2::Blake2bVar::new(8).expect("8 is a valid BLAKE2b output size");
    h.update(seed.to_string().as_bytes());
    h.update(b"\0");
    h.update(salt.as_bytes());
    h.update(b"\0");
    h.update(text.as_bytes());
    let mut out = [0u8; 8];
    h.finalize_variable(&mut out)
        .expect("buffer has the output size");
    u64::from_be_bytes(out)
}

/// GQR's `fingerprint(texts)`: SHA-256 over `utf8(t) + b"\0"` for each text, lowercase hex.
pub fn fingerprint<S: AsRef<str>>(texts: &[S]) -> String {
    let mut h = sha2::Sha256::new();
    for t in texts {
        sha2::Digest::update(&mut h, t.as_ref().as_bytes());
        sha2::Digest::update(&mut h, b"\0");
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The three ID keyword patterns of `background.py` (`ID_TOPIC_PATTERNS`), verbatim, in the
/// order `id_topic_hit` tries them.
pub const ID_TOPIC_PATTERNS: [(&str, &str); 3] = [
    (
        "finance",
        r"\b(stocks?|invest\w*|bank\w*|loans?|tax\w*|mortgage|credit|insurance|salary|401k|ira|dividends?|mutual funds?|hedge funds?|budget\w*|debts?|interest rates?|currenc\w*|bitcoin|crypto\w*|accounting|revenue|profits?|inflation|portfolio|equity|bonds?|shares?|trading|broker\w*|pension|retire\w*|payroll|wages?|financ\w*|econom\w*|gdp|paycheck|refinanc\w*|fico|debit|money|price\w*|cost\w*|pay\w*|income|fund\w*|cash|dollars?|euros?)\b",
    ),
    (
        "healthcare",
        r"\b(doctors?|symptoms?|pain|diseases?|medic\w*|hospital\w*|patients?|diagnos\w*|treatments?|pills?|drugs?|cancer|diabet\w*|infection\w*|blood|surger\w*|pregnan\w*|health\w*|therap\w*|vaccin\w*|virus\w*|fever|rash|heart|tumou?r|clinic\w*|prescri\w*|dosage|antibiotic\w*|allerg\w*|asthma|injur\w*|nurse\w*|physician\w*|pharmac\w*|disorder\w*|anxiety|depress\w*|ache|cough|flu|covid|dental|dentist|kidney|liver|lungs?|skin|stomach|bones?|muscles?|diet|weight loss|obes\w*|sick\w*|ill\w*|headache|migraine|cholesterol|pressure|vitamin\w*|supplement\w*|sleep\w*|insomnia|periods?|menstru\w*|sex\w*|std|hiv|aids|body|brain|nerv\w*|swell\w*|bleed\w*|eye|ear|throat|nose|chest|back pain|knee|hip|shoulder|bowel|urin\w*|penis|vagina|breast|testicle\w*)\b",
    ),
    (
        "law",
        r"\b(laws?|legal\w*|courts?|judges?|attorney\w*|lawyers?|sue[ds]?|lawsuits?|contracts?|police|arrest\w*|crim\w*|illegal|statute\w*|copyright\w*|patents?|tenants?|landlords?|custody|divorce\w*|visas?|immigration|constitution\w*|jurisdiction|liabilit\w*|plaintiff|defendant|felony|misdemeanor|prosecut\w*|warrant|legislat\w*|regulation\w*|rights|leases?|evict\w*|trademark\w*|licens\w*|fine[ds]?|penalt\w*|jail|prison|bail|charges?|charged|testif\w*|witness\w*|notary|will|inherit\w*|estate|trust|alimony|harass\w*|discriminat\w*|employer|fired|terminated|hoa|dui|dwi|ticket\w*|speeding|permit\w*|zoning|lawful|unlawful|agreement\w*|clause\w*|terms of service|gdpr|privacy)\b",
    ),
];

/// Translate a `\b(alternatives)\b` Python pattern (alternatives start and end with a word
/// character) into a Rust regex whose `is_match` agrees with Python's `re.search`: Python's
/// `\w` becomes `[\p{L}\p{N}_]` and each `\b` a consumed non-word char or a text end.
fn translate_keyword_pattern(p: &str) -> String {
    const W: &str = r"[\p{L}\p{N}_]";
    let inner = p
        .strip_prefix(r"\b")
        .and_then(|s| s.strip_suffix(r"\b"))
        .unwrap_or(p)
        .replace(r"\w", W);
    format!(r"(?i)(?:^|[^\p{{L}}\p{{N}}_]){inner}(?:$|[^\p{{L}}\p{{N}}_])")
}

fn topic_regexes() -> &'static [(&'static str, regex::Regex); 3] {
    static R: OnceLock<[(&'static str, regex::Regex); 3]> = OnceLock::new();
    R.get_or_init(|| {
        ID_TOPIC_PATTERNS.map(|(name, p)| {
            (
                name,
                regex::Regex::new(&translate_keyword_pattern(p)).expect("static pattern"),
            )
        })
    })
}

/// Python `re.IGNORECASE` compares characters by their *simple* lowercase mapping (so `İ`
/// matches `i`, the Kelvin sign matches `k`); Rust's `(?i)` uses simple case folding, which
/// lacks `İ`. Mapping the text to simple lowercase first makes the two agree (word-ness is
/// unchanged, and `is_match` does not depend on positions).
fn simple_lower(t: &str) -> std::borrow::Cow<'_, str> {
    if t.is_ascii() {
        return std::borrow::Cow::Borrowed(t);
    }
    std::borrow::Cow::Owned(
        t.chars()
            .map(|c| {
                if c == '\u{130}' {
                    return 'i';
                }
                let mut l = c.to_lowercase();
                match (l.next(), l.next()) {
                    (Some(x), None) => x,
                    _ => c,
                }
            })
            .collect(),
    )
}

/// GQR's `id_topic_hit(t)`: the first of finance, healthcare, law whose case-insensitive
/// keyword pattern matches anywhere in `t`, or `None`.
pub fn id_topic_hit(t: &str) -> Option<&'static str> {
    let t = simple_lower(t);
    topic_regexes()
        .iter()
        .find(|(_, re)| re.is_match(&t))
        .map(|(name, _)| *name)
}

/// GQR-unseen's `is_finance_question(q)`: the finance keyword pattern matches the raw text.
pub fn is_finance_question(q: &str) -> bool {
    topic_regexes()[0].1.is_match(&simple_lower(q))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignorecase_follows_python() {
        // re.search(r"\b(ira|...)\b", "İra", re.I) matches in CPython.
        assert_eq!(id_topic_hit("İra account"), Some("finance"));
        assert_eq!(id_topic_hit("\u{17f}tock tips"), Some("finance"));
        assert_eq!(id_topic_hit("\u{212a}nee surgery"), Some("healthcare"));
        assert_eq!(id_topic_hit("STOCKS"), Some("finance"));
        assert_eq!(id_topic_hit("taxonomy of ferns"), Some("finance"));
        assert_eq!(id_topic_hit("ﬁnance"), None);
        assert!(is_py_word('½') && !is_py_word('\u{301}') && is_py_space('\u{1c}'));
        assert_eq!(normalize("İstanbul"), "i stanbul");
    }

    #[test]
    fn html_unescape_follows_python() {
        // Outputs of CPython 3.11 `html.unescape`.
        for (i, o) in [
            ("&amp", "&"),
            ("&ampx", "&x"),
            ("&#39", "'"),
            ("&#0;", "\u{fffd}"),
            ("&#128;", "€"),
            ("&notit;", "¬it;"),
            ("&#xD800;", "\u{fffd}"),
            ("&#1;", ""),
            ("&#x0B;x", "x"),
            ("&#x110000;", "\u{fffd}"),
            ("&amp;amp;", "&amp;"),
            ("&Amp;", "&Amp;"),
            ("&lt3", "<3"),
            ("&#65abc", "Aabc"),
            ("&nbsp", "\u{a0}"),
            ("&unknown;", "&unknown;"),
            ("&#x;", "&#x;"),
            ("&#x81;", "\u{81}"),
            ("&#xFFFF;", ""),
            ("&#13;", "\r"),
        ] {
            assert_eq!(html_unescape(i), o, "{i:?}");
        }
    }
}

/// GQR's `OverlapIndex`: the exact set of non-empty normalized texts, plus the BLAKE2b-64
/// digests of every indexed text's 8-word shingles. A 64-bit digest collision counts as a hit,
/// as upstream.
#[derive(Debug, Clone, Default)]
pub struct OverlapIndex {
    exact: HashSet<String>,
    shingles: DigestSet,
}

/// Shingle width of the overlap screens (`SHINGLE_WORDS`).
pub const SHINGLE_WORDS: usize = 8;

impl OverlapIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Index every text of `texts`.
    pub fn from_texts<I, S>(texts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut ix = Self::new();
        for t in texts {
            ix.add(t.as_ref());
        }
        ix
    }

    /// Index one text.
    pub fn add(&mut self, t: &str) {
        let n = normalize(t);
        for_each_shingle(&n, SHINGLE_WORDS, |s| {
            self.shingles.insert(digest(s));
        });
        if !n.is_empty() {
            self.exact.insert(n);
        }
    }

    /// Merge another index into this one.
    pub fn extend(&mut self, other: OverlapIndex) {
        self.exact.extend(other.exact);
        self.shingles.extend(other.shingles);
    }

    /// Is `q` an exact (normalized) or 8-word-shingle overlap with an indexed text?
    pub fn hit(&self, q: &str) -> bool {
        self.hit_normalized(&normalize(q))
    }

    /// [`hit`](Self::hit) for an already normalized query.
    pub fn hit_normalized(&self, n: &str) -> bool {
        if self.exact.contains(n) {
            return true;
        }
        any_shingle(n, SHINGLE_WORDS, |s| self.shingles.contains(&digest(s)))
    }

    /// The normalized texts held (unordered).
    pub fn exact_texts(&self) -> impl Iterator<Item = &str> {
        self.exact.iter().map(String::as_str)
    }

    /// The shingle digests held (unordered).
    pub fn shingle_digests(&self) -> impl Iterator<Item = u64> + '_ {
        self.shingles.iter().copied()
    }
}

fn bot_thread() -> &'static regex::Regex {
    static R: OnceLock<regex::Regex> = OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(
            r"(?i)\b(?:daily|weekly|weekend)\b.*\b(?:discussion|thread)\b|\b(?:premarket|pre-market|market open|after hours|afterhours)\b.*\bthread\b|\bmegathread\b|\bdaily stonk\b",
        )
        .expect("static regex")
    })
}

/// Python's `html.unescape` (HTML5 named and numeric character references), via `htmlize`
/// (WHATWG rules, which agree with Python's), plus Python's one difference: numeric references
/// to its `_invalid_codepoints` (U+0001–0008, 000B, 000E–001F, 007F, FDD0–FDEF, and the
/// U+xFFFE/xFFFF non-characters) become the empty string instead of the character.
fn html_unescape(s: &str) -> String {
    static NUMERIC: OnceLock<regex::Regex> = OnceLock::new();
    const DROP: &str = "\u{E000}\u{E0FF}\u{E000}";
    if !s.contains("&#") {
        return htmlize::unescape(s).into_owned();
    }
    let re = NUMERIC.get_or_init(|| {
        regex::Regex::new(r"&#(?:[xX]([0-9a-fA-F]+)|([0-9]+));?").expect("static regex")
    });
    let marked = re.replace_all(s, |c: &regex::Captures<'_>| {
        let num = match (c.get(1), c.get(2)) {
            (Some(h), _) => u64::from_str_radix(h.as_str(), 16).ok(),
            (_, Some(d)) => d.as_str().parse::<u64>().ok(),
            _ => None,
        };
        let invalid = num.is_some_and(|n| {
            matches!(n, 0x1..=0x8 | 0xb | 0xe..=0x1f | 0x7f | 0xfdd0..=0xfdef)
                || (n <= 0x10ffff && (n & 0xfffe) == 0xfffe)
        });
        if invalid {
            DROP.to_string()
        } else {
            c[0].to_string()
        }
    });
    htmlize::unescape(marked.as_ref()).replace(DROP, "")
}

/// GQR-unseen's `reddit_post(title, body)`: `None` for bot threads (daily/weekly discussion,
/// premarket/after-hours threads, megathreads, "daily stonk"), else `"{title}\n{body}"`
/// HTML-unescaped up to 3 times until stable, zero-width chars (U+200B/C/D, U+FEFF) removed,
/// stripped. Missing title/body count as empty.
pub fn reddit_post(title: Option<&str>, body: Option<&str>) -> Option<String> {
    let title = title.unwrap_or("");
    if bot_thread().is_match(title) {
        return None;
    }
    let mut s = format!("{title}\n{}", body.unwrap_or(""));
    for _ in 0..3 {
        let u = html_unescape(&s);
        if u == s {
            break;
        }
        s = u;
    }
    let s: String = s
        .chars()
        .filter(|c| !matches!(c, '\u{200b}' | '\u{200c}' | '\u{200d}' | '\u{feff}'))
        .collect();
    Some(py_strip(&s).to_string())
}

/// GQR-unseen's `legal_qa_question(q)`: the stripped text after a leading `Q:`, else `None`.
pub fn legal_qa_question(q: Option<&str>) -> Option<String> {
    let q = py_strip(q.unwrap_or(""));
    q.strip_prefix("Q:").map(|r| py_strip(r).to_string())
}
