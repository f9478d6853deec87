//! Python `re` patterns on the `fancy-regex` engine.
//!
//! The `regex` operator of the where language uses Python 3.11's `re` dialect (str patterns,
//! `re.search`, no default flags; `specs/query-dsl.md` §B6). Neither `regex` nor `fancy-regex`
//! speaks that dialect, so [`PyRegex::new`] parses the pattern with Python's own grammar
//! (`re/_parser.py` of CPython 3.11, read for its rules), rejects everything Python rejects
//! (with Python's message), and emits an equivalent `fancy-regex` pattern:
//!
//! | Python | emitted | why |
//! |---|---|---|
//! | `$` (no `m`) | `(?=\n?\z)`, or `\n?\z` at the end of a top-level branch | Python's `$` also matches before a final `\n` |
//! | `^` (no `m`) / `\A` / `\Z` | `\A` / `\A` / `\z` | `\Z` is Python's absolute end |
//! | `.` | `[^\n]` or `(?s:.)` | flags are tracked by the translator |
//! | `\d` `\w` `\s` (Unicode) | `\p{Nd}`, `[\p{L}\p{N}_]`, Python's `str.isspace()` set | Python's `\w` is `isalnum()` or `_`; its `\s` includes `\x1c`–`\x1f` |
//! | `(?a)` | ASCII classes and ASCII-only case folding | the Rust engines have no ASCII mode |
//! | `\b` `\B` | lookarounds over Python's `\w` (plain `\b` on ASCII text) | Rust's `\w` differs on marks, `No`, `Pc` |
//! | `[[:alpha:]]`, `[a&&b]`, `[a--b]` | every class member escaped | Python reads these literally |
//! | `{,n}`, `a{,}`, `a{` | `{0,n}`, `*`, a literal `{` | Python quantifier grammar |
//! | `a++`, `(?>…)` | atomic groups | Python 3.11 possessive quantifiers |
//! | `(?P<n>…)`, `(?P=n)`, `\1` | numbered groups and `(?:\1)` | names resolved here |
//! | `\N{NAME}` | the code point | Unicode name lookup (`unicode_names2`) |
//! | `(?x)` | whitespace and comments removed | verbose mode is resolved here |
//!
//! Rejected with a clear error although Python accepts them: the `(?t)` flag, case-insensitive
//! backreferences under `(?a)`, and anything the engine refuses (variable-width lookbehind is
//! rejected by Python too; very large repetition counts exceed the engine's size limit).
//! Known approximations (documented in the README): case-insensitive matching uses the
//! engine's simple case folding (Python also uses simple folding, with a few extra pairs), and
//! the Unicode tables are Unicode 16 (Python 3.11 uses 14).

use std::collections::HashMap;

/// Python's `MAXREPEAT` (repetition counts must be below it).
const MAXREPEAT: u64 = 4_294_967_295;
/// An unbounded width or repetition.
const INF: u64 = u64::MAX;

// Markers for word boundaries, replaced per haystack kind (see `Variants`). They are private-use
// characters; literal private-use characters in a pattern are always emitted as `\x{..}` escapes,
// so a raw marker in the emitted text is never ambiguous.
const M_WB: char = '\u{F8F0}';
const M_NWB: char = '\u{F8F1}';
const M_WBA: char = '\u{F8F2}';
const M_NWBA: char = '\u{F8F3}';
/// Opens an atomic group (`(?>`; `(?:` in the relaxed prefilter, see [`PyRegex::search`]).
const M_ATOM: char = '\u{F8F4}';

/// Longest haystack (bytes) searched with a pattern holding an atomic group or a possessive
/// quantifier when the linear prefilter cannot rule a match out: the backtracking engine
/// retries the group at every start position, so its time grows with the square of the text
/// length (as Python's does).
pub const ATOMIC_HAYSTACK_LIMIT: usize = 10_000;

/// The backtracking engine's limit per search (backtracks); beyond it the search fails with
/// a `regex_limit` error instead of running for ever.
pub const BACKTRACK_LIMIT: usize = 1_000_000;

/// Python's `str.isspace()` set, as the inside of a regex class.
const PY_SPACE: &str = r"\x{9}-\x{D}\x{1C}-\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}";
/// Python's Unicode `\w` (`str.isalnum()` or `_`), as the inside of a regex class.
const PY_WORD: &str = r"\p{L}\p{N}_";
/// Python's `\w` as a class (for the boundary lookarounds).
const PY_WORD_CLASS: &str = r"[\p{L}\p{N}_]";

/// A compiled Python `re` pattern, searched (not anchored) like `re.search`.
#[derive(Debug, Clone)]
pub struct PyRegex {
    pattern: String,
    /// Used when the haystack is non-empty and ASCII (or the pattern has no `\b`/`\B`).
    fast: fancy_regex::Regex,
    /// Used for non-ASCII haystacks when the pattern has Unicode `\b`/`\B`.
    exact: Option<fancy_regex::Regex>,
    /// Used for the empty haystack when the pattern has `\B` (Python 3.11's `\B` never matches
    /// in an empty string).
    empty: Option<fancy_regex::Regex>,
    /// Plain literal patterns (`abc`, `^abc`): searched without the engine.
    literal: Option<(bool, String)>,
    /// With atomic groups or possessive quantifiers: the pattern with them made ordinary, in
    /// the linear engine when it can take it. It matches whenever the pattern does (atomic
    /// groups only remove matches), so "no match" there is final.
    relaxed: Option<regex::Regex>,
    /// Whether the pattern holds an atomic group or a possessive quantifier.
    atomic: bool,
}

impl PartialEq for PyRegex {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern
    }
}

impl PyRegex {
    /// Compile Python pattern `pattern`.
    ///
    /// # Errors
    /// A message (Python's own wording where Python rejects the pattern, otherwise a sentence
    /// saying which construct cannot be honoured) when the pattern is invalid or unsupported.
    pub fn new(pattern: &str) -> Result<PyRegex, String> {
        let t = translate(pattern)?;
        let compile = |text: &str| {
            fancy_regex::RegexBuilder::new(text)
                .delegate_size_limit(50 << 20)
                .backtrack_limit(BACKTRACK_LIMIT)
                .build()
                .map_err(|e| format!("the regex engine cannot honour this pattern: {e}"))
        };
        let has_wb = t.text.contains([M_WB, M_NWB, M_WBA, M_NWBA]);
        let has_nwb = t.text.contains([M_NWB, M_NWBA]);
        let fast = compile(&t.variant(Variant::Fast))?;
        let exact = if has_wb {
            Some(compile(&t.variant(Variant::Exact))?)
        } else {
            None
        };
        let empty = if has_nwb {
            Some(compile(&t.variant(Variant::Empty))?)
        } else {
            None
        };
        // A pattern without any metacharacter is a literal substring (or prefix after `^`).
        let body = pattern.strip_prefix('^').unwrap_or(pattern);
        let literal = (!body.is_empty()
            && body
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' ' | '/' | ':' | ',')))
        .then(|| (pattern.starts_with('^'), body.to_string()));
        let atomic = t.text.contains(M_ATOM);
        let relaxed = if atomic {
            regex::RegexBuilder::new(&t.relaxed(Variant::Fast))
                .size_limit(50 << 20)
                .build()
                .ok()
        } else {
            None
        };
        Ok(PyRegex {
            pattern: pattern.to_string(),
            fast,
            exact,
            empty,
            literal,
            relaxed,
            atomic,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// `re.search(pattern, haystack) is not None`.
    ///
    /// # Errors
    /// The engine's message when its backtracking limit ([`BACKTRACK_LIMIT`]) is exceeded
    /// (Python would keep going), and a message naming the limit when a pattern with an
    /// atomic group or possessive quantifier would search more than [`ATOMIC_HAYSTACK_LIMIT`]
    /// bytes in quadratic time.
    pub fn search(&self, haystack: &str) -> Result<bool, String> {
        if let Some((anchored, lit)) = &self.literal {
            return Ok(if *anchored {
                haystack.starts_with(lit.as_str())
            } else {
                haystack.contains(lit.as_str())
            });
        }
        let re = if haystack.is_empty() {
            self.empty.as_ref().unwrap_or(&self.fast)
        } else if haystack.is_ascii() {
            &self.fast
        } else {
            self.exact.as_ref().unwrap_or(&self.fast)
        };
        if self.atomic {
            if std::ptr::eq(re, &self.fast)
                && let Some(pre) = &self.relaxed
                && !pre.is_match(haystack)
            {
                return Ok(false);
            }
            if haystack.len() > ATOMIC_HAYSTACK_LIMIT {
                return Err(format!(
                    "an atomic group or possessive quantifier searched over {} bytes (limit {ATOMIC_HAYSTACK_LIMIT}): the search time grows with the square of the length",
                    haystack.len()
                ));
            }
        }
        re.is_match(haystack).map_err(|e| e.to_string())
    }
}

#[derive(Clone, Copy)]
enum Variant {
    Fast,
    Exact,
    Empty,
}

struct Translated {
    text: String,
}

impl Translated {
    /// [`Translated::variant`] with atomic groups made ordinary groups.
    fn relaxed(&self, v: Variant) -> String {
        Translated {
            text: self.text.replace(M_ATOM, "(?:"),
        }
        .variant(v)
    }

    fn variant(&self, v: Variant) -> String {
        const ASCII_WORD: &str = "[0-9A-Za-z_]";
        let boundary = |w: &str, negated: bool| {
            if negated {
                format!("(?:(?<={w})(?={w})|(?<!{w})(?!{w}))")
            } else {
                format!("(?:(?<={w})(?!{w})|(?<!{w})(?={w}))")
            }
        };
        let mut out = String::with_capacity(self.text.len() + 16);
        for c in self.text.chars() {
            match (c, v) {
                (M_WB, Variant::Exact) => out.push_str(&boundary(PY_WORD_CLASS, false)),
                (M_NWB, Variant::Exact) => out.push_str(&boundary(PY_WORD_CLASS, true)),
                (M_WBA, Variant::Exact) => out.push_str(&boundary(ASCII_WORD, false)),
                (M_NWBA, Variant::Exact) => out.push_str(&boundary(ASCII_WORD, true)),
                // On ASCII text (and the empty string) the engine's \b agrees with Python's.
                (M_WB | M_WBA, _) => out.push_str(r"\b"),
                (M_NWB | M_NWBA, Variant::Empty) => out.push_str(r"[^\s\S]"),
                (M_NWB | M_NWBA, _) => out.push_str(r"\B"),
                (M_ATOM, _) => out.push_str("(?>"),
                _ => out.push(c),
            }
        }
        out
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Flags {
    i: bool,
    m: bool,
    s: bool,
    x: bool,
    a: bool,
}

impl Flags {
    /// Whether the engine's own case-insensitive flag is on (ASCII-mode folding is done here).
    fn rust_i(self) -> bool {
        self.i && !self.a
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    /// An anchor (`^ $ \A \Z \b \B`): cannot be repeated.
    At,
    /// A non-multiline `$` (an anchor).
    Dollar,
    /// A repetition: cannot be repeated again.
    Repeat,
    /// A lookaround assertion (Python lets it be repeated; the engine does not).
    Look,
    Other,
}

struct Item {
    text: String,
    lo: u64,
    hi: u64,
    kind: Kind,
}

#[derive(Clone, Copy, PartialEq, Debug)]
struct Tok {
    ch: char,
    esc: bool,
}

#[derive(Clone, Copy)]
enum ClassItem {
    Range(u32, u32),
    Cat(char),
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    /// Number of capturing groups opened so far (Python's `state.groups - 1`).
    groups: usize,
    names: HashMap<String, usize>,
    /// Width of each closed group (index = group number - 1); `None` while open.
    widths: Vec<Option<(u64, u64)>>,
    lookbehind_groups: Option<usize>,
    cond_refs: Vec<usize>,
    global: Flags,
    global_u: bool,
}

fn err<T>(msg: impl Into<String>) -> Result<T, String> {
    Err(msg.into())
}

fn translate(pattern: &str) -> Result<Translated, String> {
    let mut p = Parser {
        chars: pattern.chars().collect(),
        pos: 0,
        groups: 0,
        names: HashMap::new(),
        widths: Vec::new(),
        lookbehind_groups: None,
        cond_refs: Vec::new(),
        global: Flags::default(),
        global_u: false,
    };
    let body = p.parse_sub(0, Flags::default())?;
    if p.peek()?.is_some() {
        return err("unbalanced parenthesis");
    }
    if p.global.a && p.global_u {
        return err("ASCII and UNICODE flags are incompatible");
    }
    for &g in &p.cond_refs {
        if g > p.groups {
            return err(format!("invalid group reference {g}"));
        }
    }
    let text = if p.global.rust_i() {
        format!("(?i){}", body.text)
    } else {
        body.text
    };
    Ok(Translated { text })
}

fn hex(c: u32) -> String {
    format!("\\x{{{c:X}}}")
}

fn is_identifier(s: &str) -> bool {
    let mut it = s.chars();
    match it.next() {
        Some(c) if c == '_' || c.is_alphabetic() => {}
        _ => return false,
    }
    it.all(|c| c == '_' || c.is_alphanumeric())
}

/// One literal code point as engine syntax.
fn literal(c: u32, flags: Flags) -> String {
    if (0xD800..=0xDFFF).contains(&c) {
        // A lone surrogate can never occur in valid UTF-8 text.
        return r"[^\s\S]".to_string();
    }
    if let Some(ch) = char::from_u32(c) {
        if flags.i && flags.a && ch.is_ascii_alphabetic() {
            return format!("[{}{}]", ch.to_ascii_lowercase(), ch.to_ascii_uppercase());
        }
        if ch.is_ascii_alphanumeric() {
            return ch.to_string();
        }
    }
    hex(c)
}

fn category_inner(c: char, ascii: bool) -> String {
    match (c, ascii) {
        ('d', false) => r"\p{Nd}".into(),
        ('D', false) => r"\P{Nd}".into(),
        ('w', false) => PY_WORD.into(),
        ('W', false) => format!("[^{PY_WORD}]"),
        ('s', false) => PY_SPACE.into(),
        ('S', false) => format!("[^{PY_SPACE}]"),
        ('d', true) => "0-9".into(),
        ('D', true) => "[^0-9]".into(),
        ('w', true) => "0-9A-Za-z_".into(),
        ('W', true) => "[^0-9A-Za-z_]".into(),
        ('s', true) => r"\x{9}-\x{D}\x{20}".into(),
        _ => r"[^\x{9}-\x{D}\x{20}]".into(),
    }
}

impl Parser {
    fn peek(&self) -> Result<Option<Tok>, String> {
        match self.chars.get(self.pos) {
            None => Ok(None),
            Some('\\') => match self.chars.get(self.pos + 1) {
                None => err("bad escape (end of pattern)"),
                Some(&ch) => Ok(Some(Tok { ch, esc: true })),
            },
            Some(&ch) => Ok(Some(Tok { ch, esc: false })),
        }
    }

    fn next_tok(&mut self) -> Result<Option<Tok>, String> {
        let t = self.peek()?;
        if let Some(t) = t {
            self.pos += if t.esc { 2 } else { 1 };
        }
        Ok(t)
    }

    /// Consume the plain (unescaped) character `c` if it comes next.
    fn match_char(&mut self, c: char) -> Result<bool, String> {
        if self.peek()? == Some(Tok { ch: c, esc: false }) {
            self.pos += 1;
            return Ok(true);
        }
        Ok(false)
    }

    fn next_is_in(&self, set: impl Fn(char) -> bool) -> Result<Option<char>, String> {
        Ok(match self.peek()? {
            Some(Tok { ch, esc: false }) if set(ch) => Some(ch),
            _ => None,
        })
    }

    /// Up to `n` more characters of `set` (Python's `getwhile`).
    fn get_while(&mut self, n: usize, set: impl Fn(char) -> bool) -> Result<String, String> {
        let mut s = String::new();
        for _ in 0..n {
            match self.next_is_in(&set)? {
                Some(c) => {
                    s.push(c);
                    self.pos += 1;
                }
                None => break,
            }
        }
        Ok(s)
    }

    /// Text up to `term` (Python's `getuntil`).
    fn get_until(&mut self, term: char, name: &str) -> Result<String, String> {
        let mut s = String::new();
        loop {
            match self.next_tok()? {
                None => {
                    if s.is_empty() {
                        return err(format!("missing {name}"));
                    }
                    return err(format!("missing {term}, unterminated name"));
                }
                Some(Tok { ch, esc: false }) if ch == term => {
                    if s.is_empty() {
                        return err(format!("missing {name}"));
                    }
                    return Ok(s);
                }
                Some(t) => {
                    if t.esc {
                        s.push('\\');
                    }
                    s.push(t.ch);
                }
            }
        }
    }

    fn check_group(&self, gid: usize) -> bool {
        gid >= 1 && gid <= self.groups && self.widths[gid - 1].is_some()
    }

    fn check_lookbehind_group(&self, gid: usize) -> Result<(), String> {
        if let Some(lb) = self.lookbehind_groups {
            if !self.check_group(gid) {
                return err("cannot refer to an open group");
            }
            if gid >= lb {
                return err("cannot refer to group defined in the same lookbehind subpattern");
            }
        }
        Ok(())
    }

    fn backref(&self, gid: usize, flags: Flags) -> Result<Item, String> {
        if flags.i && flags.a {
            return err(
                "case-insensitive backreferences under (?a) cannot be honoured by the regex engine",
            );
        }
        let (lo, hi) = self.widths[gid - 1].unwrap_or((0, INF));
        Ok(Item {
            text: format!("(?:\\{gid})"),
            lo,
            hi,
            kind: Kind::Other,
        })
    }

    /// An alternation `a|b|c`.
    fn parse_sub(&mut self, nested: usize, flags: Flags) -> Result<Item, String> {
        let mut texts = Vec::new();
        let (mut lo, mut hi) = (INF, 0u64);
        loop {
            let f = if nested == 0 { self.global } else { flags };
            let first = nested == 0 && texts.is_empty();
            let item = self.parse_seq(nested + 1, first, f)?;
            lo = lo.min(item.lo);
            hi = hi.max(item.hi);
            texts.push(item.text);
            if !self.match_char('|')? {
                break;
            }
        }
        Ok(Item {
            text: texts.join("|"),
            lo,
            hi,
            kind: Kind::Other,
        })
    }

    /// A sequence of items up to `|`, `)` or the end.
    fn parse_seq(&mut self, nested: usize, first: bool, mut flags: Flags) -> Result<Item, String> {
        let mut items: Vec<Item> = Vec::new();
        while let Some(tok) = self.peek()? {
            if !tok.esc && (tok.ch == '|' || tok.ch == ')') {
                break;
            }
            self.next_tok()?;
            if flags.x && !tok.esc {
                if matches!(tok.ch, ' ' | '\t' | '\n' | '\r' | '\u{b}' | '\u{c}') {
                    continue;
                }
                if tok.ch == '#' {
                    while let Some(t) = self.next_tok()? {
                        if t == (Tok {
                            ch: '\n',
                            esc: false,
                        }) {
                            break;
                        }
                    }
                    continue;
                }
            }
            if tok.esc {
                let item = self.escape(tok.ch, flags)?;
                items.push(item);
                continue;
            }
            let unit = |text: String| Item {
                text,
                lo: 1,
                hi: 1,
                kind: Kind::Other,
            };
            match tok.ch {
                '[' => {
                    let text = self.class(flags)?;
                    items.push(unit(text));
                }
                '.' => items.push(unit(if flags.s {
                    "(?s:.)".into()
                } else {
                    r"[^\n]".into()
                })),
                '^' => items.push(Item {
                    text: if flags.m {
                        "(?m:^)".into()
                    } else {
                        r"\A".into()
                    },
                    lo: 0,
                    hi: 0,
                    kind: Kind::At,
                }),
                '$' => items.push(if flags.m {
                    Item {
                        text: "(?m:$)".into(),
                        lo: 0,
                        hi: 0,
                        kind: Kind::At,
                    }
                } else {
                    Item {
                        text: r"(?=\n?\z)".into(),
                        lo: 0,
                        hi: 0,
                        kind: Kind::Dollar,
                    }
                }),
                '*' | '+' | '?' | '{' => {
                    let (min, max) = match tok.ch {
                        '?' => (0, 1),
                        '*' => (0, INF),
                        '+' => (1, INF),
                        _ => {
                            if self.peek()?
                                == Some(Tok {
                                    ch: '}',
                                    esc: false,
                                })
                            {
                                items.push(unit(literal('{' as u32, flags)));
                                continue;
                            }
                            let here = self.pos;
                            let lo_s = self.get_while(usize::MAX, |c| c.is_ascii_digit())?;
                            let hi_s = if self.match_char(',')? {
                                self.get_while(usize::MAX, |c| c.is_ascii_digit())?
                            } else {
                                lo_s.clone()
                            };
                            if !self.match_char('}')? {
                                items.push(unit(literal('{' as u32, flags)));
                                self.pos = here;
                                continue;
                            }
                            let parse = |s: &str| -> Result<u64, String> {
                                let v = s.parse::<u64>().unwrap_or(u64::MAX);
                                if v >= MAXREPEAT {
                                    return err("the repetition number is too large");
                                }
                                Ok(v)
                            };
                            let min = if lo_s.is_empty() { 0 } else { parse(&lo_s)? };
                            let max = if hi_s.is_empty() { INF } else { parse(&hi_s)? };
                            if max < min {
                                return err("min repeat greater than max repeat");
                            }
                            (min, max)
                        }
                    };
                    let Some(last) = items.pop() else {
                        return err("nothing to repeat");
                    };
                    match last.kind {
                        Kind::At | Kind::Dollar => return err("nothing to repeat"),
                        Kind::Repeat => return err("multiple repeat"),
                        Kind::Other | Kind::Look => {}
                    }
                    let lazy = self.match_char('?')?;
                    let possessive = !lazy && self.match_char('+')?;
                    if last.kind == Kind::Look {
                        // Repeating a zero-width assertion: once when required, otherwise
                        // optional (tried first when greedy), as Python's matcher does.
                        let text = match (min, lazy, possessive) {
                            (0, true, _) => format!("(?:|{})", last.text),
                            (0, _, true) => format!("{M_ATOM}{}|)", last.text),
                            (0, _, _) => format!("(?:{}|)", last.text),
                            _ => last.text,
                        };
                        items.push(Item {
                            text,
                            lo: 0,
                            hi: 0,
                            kind: Kind::Repeat,
                        });
                        continue;
                    }
                    let quant = match (min, max) {
                        (0, INF) => "*".to_string(),
                        (1, INF) => "+".to_string(),
                        (0, 1) => "?".to_string(),
                        (m, INF) => format!("{{{m},}}"),
                        (m, n) if m == n => format!("{{{m}}}"),
                        (m, n) => format!("{{{m},{n}}}"),
                    };
                    let base = format!("(?:{}){}", last.text, quant);
                    let text = if lazy {
                        format!("{base}?")
                    } else if possessive {
                        format!("{M_ATOM}{base})")
                    } else {
                        base
                    };
                    let lo = last.lo.saturating_mul(min);
                    let hi = if max == INF && last.hi > 0 {
                        INF
                    } else {
                        last.hi.saturating_mul(max)
                    };
                    items.push(Item {
                        text,
                        lo,
                        hi,
                        kind: Kind::Repeat,
                    });
                }
                '(' => {
                    if let Some(item) = self.group(nested, first, items.is_empty(), &mut flags)? {
                        items.push(item);
                    }
                }
                c => items.push(unit(literal(c as u32, flags))),
            }
        }
        // A `$` ending a top-level branch may consume the final newline: the search result is
        // the same, and the pattern stays lookaround-free (fast).
        if nested == 1
            && let Some(last) = items.last_mut()
            && last.kind == Kind::Dollar
        {
            last.text = r"(?:\n?\z)".into();
        }
        let mut text = String::new();
        let (mut lo, mut hi) = (0u64, 0u64);
        for it in &items {
            text.push_str(&it.text);
            lo = lo.saturating_add(it.lo);
            hi = hi.saturating_add(it.hi);
        }
        Ok(Item {
            text,
            lo,
            hi,
            kind: Kind::Other,
        })
    }

    /// After `(`: a group, or `None` for comments and global flags.
    fn group(
        &mut self,
        nested: usize,
        first: bool,
        seq_empty: bool,
        flags: &mut Flags,
    ) -> Result<Option<Item>, String> {
        let mut capture = true;
        let mut atomic = false;
        let mut name: Option<String> = None;
        let mut sub_flags = *flags;
        if self.match_char('?')? {
            let Some(t) = self.next_tok()? else {
                return err("unexpected end of pattern");
            };
            let c = if t.esc { '\\' } else { t.ch };
            match c {
                'P' => {
                    if self.match_char('<')? {
                        let n = self.get_until('>', "group name")?;
                        if !is_identifier(&n) {
                            return err(format!("bad character in group name '{n}'"));
                        }
                        name = Some(n);
                    } else if self.match_char('=')? {
                        let n = self.get_until(')', "group name")?;
                        if !is_identifier(&n) {
                            return err(format!("bad character in group name '{n}'"));
                        }
                        let Some(&gid) = self.names.get(&n) else {
                            return err(format!("unknown group name '{n}'"));
                        };
                        if !self.check_group(gid) {
                            return err("cannot refer to an open group");
                        }
                        self.check_lookbehind_group(gid)?;
                        return Ok(Some(self.backref(gid, *flags)?));
                    } else {
                        return match self.next_tok()? {
                            None => err("unexpected end of pattern"),
                            Some(t) => err(format!("unknown extension ?P{}", t.ch)),
                        };
                    }
                }
                ':' => capture = false,
                '#' => loop {
                    match self.next_tok()? {
                        None => return err("missing ), unterminated comment"),
                        Some(Tok {
                            ch: ')',
                            esc: false,
                        }) => return Ok(None),
                        Some(_) => {}
                    }
                },
                '=' | '!' | '<' => {
                    let mut kind = c;
                    let behind = c == '<';
                    if behind {
                        match self.next_tok()? {
                            None => return err("unexpected end of pattern"),
                            Some(Tok { ch, esc: false }) if ch == '=' || ch == '!' => kind = ch,
                            Some(t) => return err(format!("unknown extension ?<{}", t.ch)),
                        }
                    }
                    let saved = self.lookbehind_groups;
                    if behind && saved.is_none() {
                        self.lookbehind_groups = Some(self.groups + 1);
                    }
                    let inner = self.parse_sub(nested + 1, *flags)?;
                    if behind && saved.is_none() {
                        self.lookbehind_groups = None;
                    }
                    if !self.match_char(')')? {
                        return err("missing ), unterminated subpattern");
                    }
                    if behind && inner.lo != inner.hi {
                        return err("look-behind requires fixed-width pattern");
                    }
                    let open = match (behind, kind) {
                        (false, '=') => "(?=",
                        (false, _) => "(?!",
                        (true, '=') => "(?<=",
                        (true, _) => "(?<!",
                    };
                    return Ok(Some(Item {
                        text: format!("{open}{})", inner.text),
                        lo: 0,
                        hi: 0,
                        kind: Kind::Look,
                    }));
                }
                '(' => {
                    let cond = self.get_until(')', "group name")?;
                    let gid = if is_identifier(&cond) {
                        match self.names.get(&cond) {
                            Some(&g) => g,
                            None => return err(format!("unknown group name '{cond}'")),
                        }
                    } else {
                        if cond.is_empty() || !cond.chars().all(|c| c.is_ascii_digit()) {
                            return err(format!("bad character in group name '{cond}'"));
                        }
                        let g: usize = cond.parse().unwrap_or(usize::MAX);
                        if g == 0 {
                            return err("bad group number");
                        }
                        if g >= 1 << 30 {
                            return err(format!("invalid group reference {cond}"));
                        }
                        self.cond_refs.push(g);
                        g
                    };
                    self.check_lookbehind_group(gid)?;
                    let yes = self.parse_seq(nested + 1, false, *flags)?;
                    let no = if self.match_char('|')? {
                        let no = self.parse_seq(nested + 1, false, *flags)?;
                        if self.peek()?
                            == Some(Tok {
                                ch: '|',
                                esc: false,
                            })
                        {
                            return err("conditional backref with more than two branches");
                        }
                        Some(no)
                    } else {
                        None
                    };
                    if !self.match_char(')')? {
                        return err("missing ), unterminated subpattern");
                    }
                    let (lo, hi, no_text) = match &no {
                        Some(n) => (yes.lo.min(n.lo), yes.hi.max(n.hi), n.text.clone()),
                        None => (0, yes.hi, String::new()),
                    };
                    return Ok(Some(Item {
                        text: format!("(?({gid}){}|{})", yes.text, no_text),
                        lo,
                        hi,
                        kind: Kind::Other,
                    }));
                }
                '>' => {
                    capture = false;
                    atomic = true;
                }
                c if "iLmsxatu-".contains(c) && !t.esc => match self.parse_flags(c)? {
                    None => {
                        if !first || !seq_empty {
                            return err("global flags not at the start of the expression");
                        }
                        *flags = self.global;
                        return Ok(None);
                    }
                    Some((add, del)) => {
                        capture = false;
                        sub_flags = apply_scoped(*flags, &add, &del);
                    }
                },
                _ => return err(format!("unknown extension ?{}", t.ch)),
            }
        }
        let gid = if capture {
            if let Some(n) = &name
                && let Some(&old) = self.names.get(n)
            {
                return err(format!(
                    "redefinition of group name '{n}' as group {}; was group {old}",
                    self.groups + 1
                ));
            }
            self.groups += 1;
            self.widths.push(None);
            if let Some(n) = name {
                self.names.insert(n, self.groups);
            }
            Some(self.groups)
        } else {
            None
        };
        let inner = self.parse_sub(nested + 1, sub_flags)?;
        if !self.match_char(')')? {
            return err("missing ), unterminated subpattern");
        }
        let text = if let Some(g) = gid {
            self.widths[g - 1] = Some((inner.lo, inner.hi));
            format!("({})", inner.text)
        } else if atomic {
            format!("{M_ATOM}{})", inner.text)
        } else {
            let open = match (flags.rust_i(), sub_flags.rust_i()) {
                (false, true) => "(?i:",
                (true, false) => "(?-i:",
                _ => "(?:",
            };
            format!("{open}{})", inner.text)
        };
        Ok(Some(Item {
            text,
            lo: inner.lo,
            hi: inner.hi,
            kind: Kind::Other,
        }))
    }

    /// Inline flags after `(?`; `None` for global flags (already applied), or the scoped
    /// (added, removed) flag letters.
    #[allow(clippy::type_complexity)]
    fn parse_flags(&mut self, first: char) -> Result<Option<(Vec<char>, Vec<char>)>, String> {
        const FLAGS: &str = "iLmsxatu";
        let mut add = Vec::new();
        let mut del = Vec::new();
        let mut c = first;
        if c != '-' {
            loop {
                if c == 'L' {
                    return err("bad inline flags: cannot use 'L' flag with a str pattern");
                }
                add.push(c);
                if matches!(c, 'a' | 'u') && add.iter().any(|f| *f != c && matches!(f, 'a' | 'u')) {
                    return err("bad inline flags: flags 'a', 'u' and 'L' are incompatible");
                }
                match self.next_tok()? {
                    None => return err("missing -, : or )"),
                    Some(Tok { ch, esc: false }) if ")-:".contains(ch) => {
                        c = ch;
                        break;
                    }
                    Some(Tok { ch, esc: false }) if FLAGS.contains(ch) => c = ch,
                    Some(t) => {
                        return err(if t.ch.is_alphabetic() && !t.esc {
                            "unknown flag"
                        } else {
                            "missing -, : or )"
                        });
                    }
                }
            }
        }
        if c == ')' {
            if add.contains(&'t') {
                return err("the TEMPLATE flag (?t) is not supported");
            }
            for f in &add {
                match f {
                    'i' => self.global.i = true,
                    'm' => self.global.m = true,
                    's' => self.global.s = true,
                    'x' => self.global.x = true,
                    'a' => self.global.a = true,
                    _ => self.global_u = true,
                }
            }
            return Ok(None);
        }
        if add.contains(&'t') {
            return err("bad inline flags: cannot turn on global flag");
        }
        if c == '-' {
            match self.next_tok()? {
                None => return err("missing flag"),
                Some(Tok { ch, esc: false }) if FLAGS.contains(ch) => c = ch,
                Some(t) => {
                    return err(if t.ch.is_alphabetic() && !t.esc {
                        "unknown flag"
                    } else {
                        "missing flag"
                    });
                }
            }
            loop {
                if matches!(c, 'a' | 'u' | 'L') {
                    return err("bad inline flags: cannot turn off flags 'a', 'u' and 'L'");
                }
                del.push(c);
                match self.next_tok()? {
                    None => return err("missing :"),
                    Some(Tok {
                        ch: ':',
                        esc: false,
                    }) => break,
                    Some(Tok { ch, esc: false }) if FLAGS.contains(ch) => c = ch,
                    Some(t) => {
                        return err(if t.ch.is_alphabetic() && !t.esc {
                            "unknown flag"
                        } else {
                            "missing :"
                        });
                    }
                }
            }
        }
        if del.contains(&'t') {
            return err("bad inline flags: cannot turn off global flag");
        }
        if add.iter().any(|f| del.contains(f)) {
            return err("bad inline flags: flag turned on and off");
        }
        Ok(Some((add, del)))
    }

    fn escape(&mut self, c: char, flags: Flags) -> Result<Item, String> {
        let unit = |text: String| Item {
            text,
            lo: 1,
            hi: 1,
            kind: Kind::Other,
        };
        let at = |text: String| Item {
            text,
            lo: 0,
            hi: 0,
            kind: Kind::At,
        };
        Ok(match c {
            'A' => at(r"\A".into()),
            'Z' => at(r"\z".into()),
            'b' => at(if flags.a { M_WBA } else { M_WB }.to_string()),
            'B' => at(if flags.a { M_NWBA } else { M_NWB }.to_string()),
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => unit(format!("[{}]", category_inner(c, flags.a))),
            '0' => {
                let digits = self.get_while(2, |c| ('0'..='7').contains(&c))?;
                let v = u32::from_str_radix(&format!("0{digits}"), 8).unwrap_or(0);
                unit(literal(v, flags))
            }
            '1'..='9' => {
                let mut digits = c.to_string();
                if let Some(d) = self.next_is_in(|c| c.is_ascii_digit())? {
                    self.pos += 1;
                    digits.push(d);
                    let octal = |c: char| ('0'..='7').contains(&c);
                    if octal(c)
                        && octal(d)
                        && let Some(e) = self.next_is_in(octal)?
                    {
                        self.pos += 1;
                        digits.push(e);
                        let v = u32::from_str_radix(&digits, 8).unwrap_or(u32::MAX);
                        if v > 0o377 {
                            return err(format!(
                                "octal escape value \\{digits} outside of range 0-0o377"
                            ));
                        }
                        return Ok(unit(literal(v, flags)));
                    }
                }
                let gid: usize = digits.parse().unwrap_or(usize::MAX);
                if gid <= self.groups {
                    if !self.check_group(gid) {
                        return err("cannot refer to an open group");
                    }
                    self.check_lookbehind_group(gid)?;
                    self.backref(gid, flags)?
                } else {
                    return err(format!("invalid group reference {gid}"));
                }
            }
            _ => unit(literal(self.common_escape(c)?, flags)),
        })
    }

    /// Escapes shared by both contexts that stand for one code point.
    fn common_escape(&mut self, c: char) -> Result<u32, String> {
        Ok(match c {
            'a' => 7,
            'f' => 0xC,
            'n' => 0xA,
            'r' => 0xD,
            't' => 9,
            'v' => 0xB,
            '\\' => '\\' as u32,
            'x' | 'u' | 'U' => {
                let n = match c {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let digits = self.get_while(n, |c| c.is_ascii_hexdigit())?;
                if digits.len() != n {
                    return err(format!("incomplete escape \\{c}{digits}"));
                }
                let v = u32::from_str_radix(&digits, 16).unwrap_or(u32::MAX);
                if v > 0x10FFFF {
                    return err(format!("bad escape \\{c}{digits}"));
                }
                v
            }
            'N' => {
                if !self.match_char('{')? {
                    return err("missing {");
                }
                let name = self.get_until('}', "character name")?;
                match unicode_names2::character(&name) {
                    Some(ch) => ch as u32,
                    None => return err(format!("undefined character name '{name}'")),
                }
            }
            c if c.is_ascii_alphabetic() || c.is_ascii_digit() => {
                return err(format!("bad escape \\{c}"));
            }
            c => c as u32,
        })
    }

    /// After `[`: a character class, as engine syntax.
    fn class(&mut self, flags: Flags) -> Result<String, String> {
        let mut set: Vec<ClassItem> = Vec::new();
        let negate = self.match_char('^')?;
        loop {
            let Some(this) = self.next_tok()? else {
                return err("unterminated character set");
            };
            if this
                == (Tok {
                    ch: ']',
                    esc: false,
                })
                && !set.is_empty()
            {
                break;
            }
            let code1 = if this.esc {
                self.class_escape(this.ch)?
            } else {
                ClassItem::Range(this.ch as u32, this.ch as u32)
            };
            if self.match_char('-')? {
                let Some(that) = self.next_tok()? else {
                    return err("unterminated character set");
                };
                if that
                    == (Tok {
                        ch: ']',
                        esc: false,
                    })
                {
                    set.push(code1);
                    set.push(ClassItem::Range('-' as u32, '-' as u32));
                    break;
                }
                let code2 = if that.esc {
                    self.class_escape(that.ch)?
                } else {
                    ClassItem::Range(that.ch as u32, that.ch as u32)
                };
                let bad = || {
                    let show = |t: Tok| {
                        if t.esc {
                            format!("\\{}", t.ch)
                        } else {
                            t.ch.to_string()
                        }
                    };
                    format!("bad character range {}-{}", show(this), show(that))
                };
                match (code1, code2) {
                    (ClassItem::Range(lo, a), ClassItem::Range(b, hi)) if lo == a && b == hi => {
                        if hi < lo {
                            return Err(bad());
                        }
                        set.push(ClassItem::Range(lo, hi));
                    }
                    _ => return Err(bad()),
                }
            } else {
                set.push(code1);
            }
        }
        let mut out = String::from("[");
        if negate {
            out.push('^');
        }
        let push_range = |out: &mut String, lo: u32, hi: u32| {
            // Surrogates never occur in UTF-8 text; drop them from ranges.
            let parts: Vec<(u32, u32)> = if hi < 0xD800 || lo > 0xDFFF {
                vec![(lo, hi)]
            } else {
                let mut v = Vec::new();
                if lo < 0xD800 {
                    v.push((lo, 0xD7FF));
                }
                if hi > 0xDFFF {
                    v.push((0xE000, hi));
                }
                v
            };
            for (lo, hi) in parts {
                if lo == hi {
                    out.push_str(&hex(lo));
                } else {
                    out.push_str(&format!("{}-{}", hex(lo), hex(hi)));
                }
            }
        };
        let mut any = false;
        for item in &set {
            match *item {
                ClassItem::Range(lo, hi) => {
                    push_range(&mut out, lo, hi);
                    if flags.i && flags.a {
                        // ASCII-only case folding: add the other case of ASCII letters.
                        for (a, b, delta) in [(0x61u32, 0x7Au32, -32i64), (0x41, 0x5A, 32)] {
                            let l = lo.max(a);
                            let h = hi.min(b);
                            if l <= h {
                                push_range(
                                    &mut out,
                                    (l as i64 + delta) as u32,
                                    (h as i64 + delta) as u32,
                                );
                            }
                        }
                    }
                    any = true;
                }
                ClassItem::Cat(c) => {
                    out.push_str(&category_inner(c, flags.a));
                    any = true;
                }
            }
        }
        if !any || out.len() == 1 + usize::from(negate) {
            // Only surrogates: a set that matches nothing.
            out.push_str(r"[^\s\S]");
        }
        out.push(']');
        Ok(out)
    }

    fn class_escape(&mut self, c: char) -> Result<ClassItem, String> {
        let lit = |v: u32| ClassItem::Range(v, v);
        Ok(match c {
            'b' => lit(8),
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => ClassItem::Cat(c),
            '0'..='7' => {
                let digits = self.get_while(2, |c| ('0'..='7').contains(&c))?;
                let v = u32::from_str_radix(&format!("{c}{digits}"), 8).unwrap_or(u32::MAX);
                if v > 0o377 {
                    return err(format!(
                        "octal escape value \\{c}{digits} outside of range 0-0o377"
                    ));
                }
                lit(v)
            }
            '8' | '9' => return err(format!("bad escape \\{c}")),
            _ => lit(self.common_escape(c)?),
        })
    }
}

fn apply_scoped(mut f: Flags, add: &[char], del: &[char]) -> Flags {
    for c in add {
        match c {
            'i' => f.i = true,
            'm' => f.m = true,
            's' => f.s = true,
            'x' => f.x = true,
            'a' => f.a = true,
            'u' => f.a = false,
            _ => {}
        }
    }
    for c in del {
        match c {
            'i' => f.i = false,
            'm' => f.m = false,
            's' => f.s = false,
            'x' => f.x = false,
            _ => {}
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_groups_on_long_strings_are_bounded() {
        // No match possible: the linear prefilter answers at once, at any length.
        let long = "a".repeat(200_000);
        for p in ["(?>a+)b", "a++b", "x(?>a*)", "(?>a|ab)+c"] {
            let re = PyRegex::new(p).unwrap();
            let t = std::time::Instant::now();
            assert_eq!(re.search(&long), Ok(false), "{p}");
            assert!(t.elapsed().as_secs_f64() < 5.0, "{p}");
        }
        // The prefilter cannot decide (`a+a` matches, `(?>a+)a` never does): short texts are
        // searched, long ones are a clear error instead of quadratic time.
        let re = PyRegex::new("(?>a+)a").unwrap();
        assert_eq!(re.search(&"a".repeat(1000)), Ok(false));
        let e = re.search(&long).unwrap_err();
        assert!(e.contains("200000 bytes (limit 10000)"), "{e}");
        // Where the prefilter finds a candidate, a long text is refused too (the engine's
        // time cannot be bounded beforehand); short ones are searched, atomic semantics kept.
        let re = PyRegex::new("(?>a+)b").unwrap();
        assert!(re.search(&format!("{long}b")).is_err());
        assert_eq!(re.search(&format!("{}b", &long[..9000])), Ok(true));
        assert_eq!(PyRegex::new("a++").unwrap().search(&long[..5000]), Ok(true));
        assert!(search("(?>ab|a)c", "abc"));
        assert!(!search("(?>a|ab)c", "abc"));
        assert!(!search("a*+a", "aaa"));
        assert!(search("[(?>]", ">"));
    }

    fn search(p: &str, s: &str) -> bool {
        PyRegex::new(p)
            .unwrap_or_else(|e| panic!("{p}: {e}"))
            .search(s)
            .unwrap()
    }

    #[test]
    fn python_specific_semantics() {
        assert!(search("abc$", "abc\n"));
        assert!(!search("abc$", "abc\n\n"));
        assert!(search(r"a$\n", "a\n"));
        assert!(search(r"\Aabc\n\Z", "abc\n"));
        assert!(!search(r"abc\Z", "abc\n"));
        assert!(search("[[:alpha:]]+", "a]]"));
        assert!(!search("[[:alpha:]]+", "abc"));
        assert!(search("^a{,2}b$", "aab"));
        assert!(!search("^a{,2}b$", "aaab"));
        assert!(search("a{", "a{"));
        assert!(search("a{1", "a{1"));
        assert!(search(r"^\d$", "３"));
        assert!(search(r"\w", "²"));
        assert!(search(r"\s", "\u{1c}"));
        assert!(!search(r"(?a)\w", "é"));
        assert!(search(r"\bfoo\b", "a foo b"));
        assert!(!search(r"\bfoo\b", "afoo b"));
        assert!(search(r"\bfoo\b", "é foo"));
        assert!(!search(r"\B", ""));
        assert!(search(r"\B", "ab"));
        assert!(search("^(a)?(?(1)b|c)$", "c"));
        assert!(!search("^(a)?(?(1)b|c)$", "ac"));
        assert!(search("(?P<x>a)(?P=x)", "aa"));
        assert!(search(r"^(ab)\1$", "abab"));
        assert!(search("(?x) a b c  # comment", "abc"));
        assert!(search(r"\N{LATIN SMALL LETTER E WITH ACUTE}", "é"));
        assert!(!search("^a++a", "aaa"));
        assert!(search("(?i)K", "\u{212A}"));
        assert!(!search("(?ai)K", "\u{212A}"));
        assert!(search("(?ai)k", "K"));
        assert!(search("(?ai)[a-c]", "B"));
        assert!(!search("(?ai)[^a-c]", "B"));
        assert!(search("(?i:A)b", "ab"));
        assert!(!search("(?i:A)b", "aB"));
        assert!(search(r"[\]]", "]"));
        assert!(search("[]a]", "]"));
        assert!(search(r"\x41\101\0", "AA\0"));
    }

    #[test]
    fn rejects_what_python_rejects() {
        for p in [
            "(",
            "[z-a]",
            "*a",
            r"\q",
            "(?<name>a)",
            "(?<=a+)b",
            r"\p{L}",
            "(?L)a",
            r"\z",
            "a{2,1}",
            r"(a)\2",
            r"\h",
            "a**",
            "a(?i)b",
            "(?P<1>a)",
            "^*",
            "a)",
            r"(a\1)",
            "[a",
            r"\x4",
            "(?au)a",
            "(?a)(?u)a",
        ] {
            assert!(PyRegex::new(p).is_err(), "{p} should be rejected");
        }
    }
}
