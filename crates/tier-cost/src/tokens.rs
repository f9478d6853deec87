//! Per-tier token counting (`specs/crb.md` §9.1).
//!
//! CommonRouterBench counts prompt and completion tokens with one tokenizer per tier:
//!
//! | tier | `native` setup | `hf_offline` | `all_cl100k` |
//! |---|---|---|---|
//! | high | Anthropic `tokenizer.json` | Anthropic | cl100k_base |
//! | mid_high | tiktoken cl100k_base | cl100k_base | cl100k_base |
//! | mid | MiniMax-Text-01 `tokenizer.json` | cl100k_base | cl100k_base |
//! | low | DeepSeek-V3 `tokenizer.json` | cl100k_base | cl100k_base |
//!
//! A count is the number of ids of `encode(text)` (Hugging Face: `add_special_tokens=True`, added
//! tokens written literally in the text match as one token; tiktoken: `encode` with its default
//! `disallowed_special="all"`, so a text containing a cl100k special-token string is an error, as
//! in the reference).
//!
//! This crate is pure: [`HfCounter::from_bytes`] takes the bytes of a `tokenizer.json`; reading
//! files is the caller's business.
//!
//! ## Speed
//! [`HfCounter`] counts without building an `Encoding`: for the tokenizer configurations used
//! here (NFC/NFKC/no normalizer; `Split` regexes + `ByteLevel` pre-tokenizers; BPE; added
//! tokens without strip/single-word flags; no post-processor that adds tokens) it runs its own
//! pipeline (added-token split with the same leftmost-longest automaton, the same Unicode
//! normalisation crate, the same onig regexes) and memoises the BPE count per pre-token, which
//! is exact because BPE works on each pre-token independently. Any other configuration falls
//! back to `Tokenizer::encode`. Tests check the fast path against `encode` on every golden text.

use daachorse::{DoubleArrayAhoCorasick, DoubleArrayAhoCorasickBuilder, MatchKind};
use routeval_core::Tier;
use rustc_hash::FxHashMap;
use serde_json::Value;
use std::sync::Mutex;
use tokenizers::utils::SysRegex;
use tokenizers::{Model, Tokenizer};
use unicode_normalization_alignments::UnicodeNormalization;

/// A token-counting failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The text contains a cl100k special-token string; tiktoken's default `encode` raises
    /// `ValueError` (the reference's whole eval then aborts). The message is tiktoken's.
    #[error("{}", disallowed_special_message(.0))]
    DisallowedSpecial(String),
    /// The Hugging Face tokenizer failed.
    #[error("tokenizer error: {0}")]
    Tokenizer(String),
    /// A `tokenizer.json` could not be loaded.
    #[error("cannot load tokenizer {name}: {message}")]
    Load {
        /// Which tokenizer (`anthropic`, `deepseek-v3`, ...).
        name: String,
        /// What went wrong.
        message: String,
    },
}

/// tiktoken's `ValueError` text for a disallowed special token.
fn disallowed_special_message(token: &str) -> String {
    let r = crate::pyjson::py_repr_str(token);
    format!(
        "Encountered text corresponding to disallowed special token {r}.\n\
         If you want this text to be encoded as a special token, pass it to `allowed_special`, e.g. `allowed_special={{{r}, ...}}`.\n\
         If you want this text to be encoded as normal text, disable the check for this token by passing `disallowed_special=(enc.special_tokens_set - {{{r}}})`.\n\
         To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )
}

impl TokenError {
    /// The one-line form (tiktoken's message has newlines; the first line says it all).
    pub fn one_line(&self) -> String {
        self.to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    }
}

/// Anything that counts tokens of a text.
pub trait CountTokens: Send + Sync {
    /// The number of tokens of `text`.
    fn count(&self, text: &str) -> Result<usize, TokenError>;
    /// A short name of the encoder (`anthropic`, `cl100k_base`, ...).
    fn name(&self) -> &str;
    /// The Hugging Face counter behind this encoder, if it is one (for memoised batch counting).
    fn as_hf(&self) -> Option<&HfCounter> {
        None
    }
}

// ------------------------------------------------------------------------------------ cl100k

/// The five cl100k_base special-token strings tiktoken refuses by default.
pub const CL100K_SPECIALS: [&str; 5] = [
    "<|endoftext|>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|endofprompt|>",
];

/// tiktoken `cl100k_base` (the vocabulary embedded in `tiktoken-rs`, byte-identical to the
/// official file), with Python tiktoken's default special-token check.
pub struct Cl100kCounter {
    bpe: tiktoken_rs::CoreBPE,
}

impl std::fmt::Debug for Cl100kCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cl100kCounter")
    }
}

impl Cl100kCounter {
    /// Build the encoder (≈0.1 s).
    pub fn new() -> Result<Self, TokenError> {
        let bpe = tiktoken_rs::cl100k_base().map_err(|e| TokenError::Load {
            name: "cl100k_base".into(),
            message: e.to_string(),
        })?;
        Ok(Cl100kCounter { bpe })
    }
}

impl CountTokens for Cl100kCounter {
    fn count(&self, text: &str) -> Result<usize, TokenError> {
        if text.contains("<|") {
            // Leftmost special token wins, as tiktoken's regex search reports it.
            let first = CL100K_SPECIALS
                .iter()
                .filter_map(|s| text.find(s).map(|p| (p, *s)))
                .min();
            if let Some((_, s)) = first {
                return Err(TokenError::DisallowedSpecial(s.to_string()));
            }
        }
        Ok(self.bpe.encode_ordinary(text).len())
    }
    fn name(&self) -> &str {
        "cl100k_base"
    }
}

// ------------------------------------------------------------------------------ Hugging Face

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Norm {
    None,
    Nfc,
    Nfkc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Matches and gaps (`Isolated`).
    All,
    /// Gaps only (`Removed`, not inverted).
    Gaps,
    /// Matches only (`Removed`, inverted).
    Matches,
}

struct SplitStep {
    regex: SysRegex,
    keep: Keep,
}

/// The GPT-2 regex of the `ByteLevel` pre-tokenizer (`use_regex: true`).
const GPT2_PATTERN: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

struct FastPath {
    raw_trie: Option<DoubleArrayAhoCorasick<u32>>,
    norm_trie: Option<DoubleArrayAhoCorasick<u32>>,
    norm: Norm,
    steps: Vec<SplitStep>,
    byte_level: bool,
    bytes_char: [char; 256],
}

fn bytes_char_table() -> [char; 256] {
    let mut bs: Vec<u8> = (b'!'..=b'~')
        .chain(0xA1..=0xAC)
        .chain(0xAE..=0xFF)
        .collect();
    let mut cs: Vec<u32> = bs.iter().map(|b| *b as u32).collect();
    let mut n = 0;
    for b in 0..=255u8 {
        if !bs.contains(&b) {
            bs.push(b);
            cs.push(256 + n);
            n += 1;
        }
    }
    let mut table = ['\0'; 256];
    for (b, c) in bs.into_iter().zip(cs) {
        table[b as usize] = char::from_u32(c).unwrap_or('\0');
    }
    table
}

fn normalize_with(norm: Norm, s: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    // NFC and NFKC leave ASCII unchanged.
    if s.is_ascii() {
        return Cow::Borrowed(s);
    }
    match norm {
        Norm::None => Cow::Borrowed(s),
        Norm::Nfc => Cow::Owned(s.nfc().map(|(c, _)| c).collect()),
        Norm::Nfkc => Cow::Owned(s.nfkc().map(|(c, _)| c).collect()),
    }
}

/// The parts of a `tokenizer.json` the fast path reads (parsed without buffering).
#[derive(serde::Deserialize)]
struct FileSpec {
    #[serde(default)]
    added_tokens: Vec<AddedSpec>,
    #[serde(default)]
    normalizer: Value,
    #[serde(default)]
    pre_tokenizer: Value,
    #[serde(default)]
    post_processor: Value,
    #[serde(default)]
    truncation: Value,
    #[serde(default)]
    padding: Value,
    model: ModelSpec,
}

#[derive(serde::Deserialize)]
struct AddedSpec {
    id: u32,
    content: String,
    #[serde(default)]
    single_word: bool,
    #[serde(default)]
    lstrip: bool,
    #[serde(default)]
    rstrip: bool,
    #[serde(default)]
    normalized: bool,
}

#[derive(serde::Deserialize)]
struct ModelSpec {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    dropout: Option<f32>,
    #[serde(default)]
    unk_token: Option<String>,
    #[serde(default)]
    continuing_subword_prefix: Option<String>,
    #[serde(default)]
    end_of_word_suffix: Option<String>,
    #[serde(default)]
    fuse_unk: Option<bool>,
    #[serde(default)]
    byte_fallback: Option<bool>,
    #[serde(default)]
    ignore_merges: Option<bool>,
    vocab: tokenizers::models::bpe::Vocab,
    merges: Vec<MergeItem>,
}

/// One merge: `"a b"` (legacy) or `["a", "b"]`.
struct MergeItem(Option<(String, String)>);

impl<'de> serde::Deserialize<'de> for MergeItem {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = MergeItem;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a merge: \"a b\" or [\"a\", \"b\"]")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<MergeItem, E> {
                if v.starts_with("#version") {
                    return Ok(MergeItem(None));
                }
                let mut parts = v.split(' ');
                match (parts.next(), parts.next(), parts.next()) {
                    (Some(a), Some(b), None) => Ok(MergeItem(Some((a.to_string(), b.to_string())))),
                    _ => Err(E::custom(format!("bad merge {v:?}"))),
                }
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<MergeItem, A::Error> {
                let a: String = seq
                    .next_element()?
                    .ok_or_else(|| serde::de::Error::custom("merge pair"))?;
                let b: String = seq
                    .next_element()?
                    .ok_or_else(|| serde::de::Error::custom("merge pair"))?;
                Ok(MergeItem(Some((a, b))))
            }
        }
        d.deserialize_any(V)
    }
}

fn build_bpe(m: ModelSpec) -> Option<tokenizers::models::bpe::BPE> {
    if m.kind.as_deref().is_some_and(|k| k != "BPE") {
        return None;
    }
    let merges: Vec<(String, String)> = m.merges.into_iter().filter_map(|x| x.0).collect();
    let mut b = tokenizers::models::bpe::BPE::builder().vocab_and_merges(m.vocab, merges);
    if let Some(x) = m.dropout {
        b = b.dropout(x);
    }
    if let Some(x) = m.unk_token {
        b = b.unk_token(x);
    }
    if let Some(x) = m.continuing_subword_prefix {
        b = b.continuing_subword_prefix(x);
    }
    if let Some(x) = m.end_of_word_suffix {
        b = b.end_of_word_suffix(x);
    }
    if let Some(x) = m.fuse_unk {
        b = b.fuse_unk(x);
    }
    if let Some(x) = m.byte_fallback {
        b = b.byte_fallback(x);
    }
    if let Some(x) = m.ignore_merges {
        b = b.ignore_merges(x);
    }
    b.build().ok()
}

/// Recognise a supported configuration and build the fast pipeline, or `None`.
fn build_fast_path(spec: &FileSpec) -> Option<FastPath> {
    if !spec.truncation.is_null() || !spec.padding.is_null() {
        return None;
    }
    if !spec.post_processor.is_null()
        && spec.post_processor.get("type").and_then(Value::as_str) != Some("ByteLevel")
    {
        return None;
    }
    let norm = if spec.normalizer.is_null() {
        Norm::None
    } else {
        norm_of(&spec.normalizer)?
    };
    let mut steps = Vec::new();
    let mut byte_level = false;
    let mut gpt2 = false;
    if !spec.pre_tokenizer.is_null() {
        let v = spec.pre_tokenizer.clone();
        let items: Vec<Value> = match v.get("type").and_then(Value::as_str) {
            Some("Sequence") => v.get("pretokenizers")?.as_array()?.clone(),
            _ => vec![v],
        };
        for (i, item) in items.iter().enumerate() {
            match item.get("type").and_then(Value::as_str)? {
                "Split" if !byte_level => {
                    let pat = item.get("pattern")?;
                    let re = if let Some(r) = pat.get("Regex").and_then(Value::as_str) {
                        r.to_string()
                    } else {
                        escape_regex(pat.get("String").and_then(Value::as_str)?)
                    };
                    let invert = item.get("invert").and_then(Value::as_bool)?;
                    let keep = match (item.get("behavior").and_then(Value::as_str)?, invert) {
                        ("Isolated", _) => Keep::All,
                        ("Removed", false) => Keep::Gaps,
                        ("Removed", true) => Keep::Matches,
                        _ => return None,
                    };
                    steps.push(SplitStep {
                        regex: SysRegex::new(&re).ok()?,
                        keep,
                    });
                }
                "ByteLevel" if i + 1 == items.len() => {
                    if item.get("add_prefix_space").and_then(Value::as_bool) != Some(false) {
                        return None;
                    }
                    byte_level = true;
                    gpt2 = item
                        .get("use_regex")
                        .and_then(Value::as_bool)
                        .unwrap_or(true);
                }
                _ => return None,
            }
        }
    }
    if gpt2 {
        steps.push(SplitStep {
            regex: SysRegex::new(GPT2_PATTERN).ok()?,
            keep: Keep::All,
        });
    }
    // Added tokens: same two automata as `AddedVocabulary` (leftmost-longest).
    let mut raw: Vec<(String, u32)> = Vec::new();
    let mut normed: Vec<(String, u32)> = Vec::new();
    for t in &spec.added_tokens {
        if t.lstrip || t.rstrip || t.single_word {
            return None;
        }
        if t.normalized {
            normed.push((normalize_with(norm, &t.content).into_owned(), t.id));
        } else {
            raw.push((t.content.clone(), t.id));
        }
    }
    let build = |pairs: Vec<(String, u32)>| -> Option<Option<DoubleArrayAhoCorasick<u32>>> {
        if pairs.is_empty() {
            return Some(None);
        }
        DoubleArrayAhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .build_with_values(pairs)
            .ok()
            .map(Some)
    };
    Some(FastPath {
        raw_trie: build(raw)?,
        norm_trie: build(normed)?,
        norm,
        steps,
        byte_level,
        bytes_char: bytes_char_table(),
    })
}

fn norm_of(v: &Value) -> Option<Norm> {
    match v.get("type").and_then(Value::as_str)? {
        "NFC" => Some(Norm::Nfc),
        "NFKC" => Some(Norm::Nfkc),
        "Sequence" => {
            let items = v.get("normalizers")?.as_array()?;
            match items.as_slice() {
                [] => Some(Norm::None),
                [one] => norm_of(one),
                _ => None,
            }
        }
        _ => None,
    }
}

fn escape_regex(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) || c.is_whitespace() {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Split `s` by the automaton: calls `on_gap` for unmatched pieces and counts matches.
fn split_added<'a>(
    trie: Option<&DoubleArrayAhoCorasick<u32>>,
    s: &'a str,
    mut on_gap: impl FnMut(&'a str) -> Result<(), TokenError>,
) -> Result<usize, TokenError> {
    let Some(trie) = trie else {
        on_gap(s)?;
        return Ok(0);
    };
    let mut n = 0;
    let mut prev = 0;
    for m in trie.leftmost_find_iter(s) {
        if m.start() > prev {
            on_gap(&s[prev..m.start()])?;
        }
        n += 1;
        prev = m.end();
    }
    if prev < s.len() {
        on_gap(&s[prev..])?;
    }
    Ok(n)
}

/// A Hugging Face `tokenizer.json` tokenizer with a count-only fast path and a per-pre-token memo.
pub struct HfCounter {
    name: String,
    /// The full library tokenizer: loaded only when the fast path does not apply (or on request).
    tokenizer: Option<Tokenizer>,
    fast: Option<(FastPath, tokenizers::models::bpe::BPE)>,
    memo: Mutex<FxHashMap<Box<str>, u32>>,
}

impl std::fmt::Debug for HfCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HfCounter")
            .field("name", &self.name)
            .field("fast_path", &self.fast.is_some())
            .finish()
    }
}

impl HfCounter {
    /// Load a tokenizer from the bytes of its `tokenizer.json`; `name` labels it in messages.
    ///
    /// Supported configurations (see the module docs) load only what counting needs (the BPE
    /// model, the added tokens, the normaliser and pre-tokenizer settings), which is several
    /// times faster than `Tokenizer::from_bytes`; others load the full library tokenizer.
    pub fn from_bytes(name: &str, bytes: &[u8]) -> Result<Self, TokenError> {
        let load_err = |message: String| TokenError::Load {
            name: name.to_string(),
            message,
        };
        let spec: Option<FileSpec> = serde_json::from_slice(bytes).ok();
        let fast = spec.and_then(|mut spec| {
            let model = std::mem::replace(
                &mut spec.model,
                ModelSpec {
                    kind: None,
                    dropout: None,
                    unk_token: None,
                    continuing_subword_prefix: None,
                    end_of_word_suffix: None,
                    fuse_unk: None,
                    byte_fallback: None,
                    ignore_merges: None,
                    vocab: Default::default(),
                    merges: Vec::new(),
                },
            );
            let fp = build_fast_path(&spec)?;
            Some((fp, build_bpe(model)?))
        });
        let tokenizer = match fast {
            Some(_) => None,
            None => Some(Tokenizer::from_bytes(bytes).map_err(|e| load_err(e.to_string()))?),
        };
        Ok(HfCounter {
            name: name.to_string(),
            tokenizer,
            fast,
            memo: Mutex::new(FxHashMap::default()),
        })
    }

    /// Like [`from_bytes`](Self::from_bytes) but also load the full library tokenizer, so
    /// [`count_slow`](Self::count_slow) can check the fast path.
    pub fn from_bytes_with_reference(name: &str, bytes: &[u8]) -> Result<Self, TokenError> {
        let mut c = Self::from_bytes(name, bytes)?;
        if c.tokenizer.is_none() {
            c.tokenizer = Some(Tokenizer::from_bytes(bytes).map_err(|e| TokenError::Load {
                name: name.to_string(),
                message: e.to_string(),
            })?);
        }
        Ok(c)
    }

    /// Whether the count-only fast path is used (else every count is a full `encode`).
    pub fn has_fast_path(&self) -> bool {
        self.fast.is_some()
    }

    /// The count through the library's full `encode(text, add_special_tokens=true)`; an error
    /// if the full tokenizer was not loaded (see [`from_bytes_with_reference`](Self::from_bytes_with_reference)).
    pub fn count_slow(&self, text: &str) -> Result<usize, TokenError> {
        let tok = self
            .tokenizer
            .as_ref()
            .ok_or_else(|| TokenError::Tokenizer("the full tokenizer was not loaded".into()))?;
        tok.encode(text, true)
            .map(|e| e.len())
            .map_err(|e| TokenError::Tokenizer(e.to_string()))
    }

    /// Count with a caller-owned pre-token memo (no locking; for batch counting on threads).
    pub fn count_with_memo(
        &self,
        text: &str,
        memo: &mut FxHashMap<Box<str>, u32>,
    ) -> Result<usize, TokenError> {
        let Some((fp, model)) = &self.fast else {
            return self.count_slow(text);
        };
        if text.is_empty() {
            return Ok(0);
        }
        let mut total = 0usize;
        let mut mapped = String::new();
        let mut count_piece = |piece: &str| -> Result<(), TokenError> {
            if let Some(c) = memo.get(piece) {
                total += *c as usize;
                return Ok(());
            }
            let c = if fp.byte_level {
                mapped.clear();
                mapped.extend(piece.bytes().map(|b| fp.bytes_char[b as usize]));
                model.tokenize(&mapped)
            } else {
                model.tokenize(piece)
            }
            .map_err(|e| TokenError::Tokenizer(e.to_string()))?
            .len();
            memo.insert(piece.into(), c as u32);
            total += c;
            Ok(())
        };
        let mut added = 0usize;
        added += split_added(fp.raw_trie.as_ref(), text, |gap| {
            let normalized = normalize_with(fp.norm, gap);
            added += split_added(fp.norm_trie.as_ref(), &normalized, |piece| {
                pre_tokenize(&fp.steps, piece, 0, &mut count_piece)
            })?;
            Ok(())
        })?;
        Ok(total + added)
    }
}

/// Apply split steps `steps[i..]` to `s`, calling `f` on every final non-empty piece.
fn pre_tokenize(
    steps: &[SplitStep],
    s: &str,
    i: usize,
    f: &mut dyn FnMut(&str) -> Result<(), TokenError>,
) -> Result<(), TokenError> {
    if s.is_empty() {
        return Ok(());
    }
    let Some(step) = steps.get(i) else {
        return f(s);
    };
    let mut prev = 0;
    for (start, end) in step.regex.find_iter(s) {
        if start > prev && step.keep != Keep::Matches {
            pre_tokenize(steps, &s[prev..start], i + 1, f)?;
        }
        if step.keep != Keep::Gaps {
            pre_tokenize(steps, &s[start..end], i + 1, f)?;
        }
        prev = end;
    }
    if prev < s.len() && step.keep != Keep::Matches {
        pre_tokenize(steps, &s[prev..], i + 1, f)?;
    }
    Ok(())
}

impl CountTokens for HfCounter {
    fn count(&self, text: &str) -> Result<usize, TokenError> {
        if self.fast.is_none() {
            return self.count_slow(text);
        }
        let mut memo = std::mem::take(&mut *self.memo.lock().unwrap_or_else(|e| e.into_inner()));
        let r = self.count_with_memo(text, &mut memo);
        *self.memo.lock().unwrap_or_else(|e| e.into_inner()) = memo;
        r
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn as_hf(&self) -> Option<&HfCounter> {
        Some(self)
    }
}

// ------------------------------------------------------------------------------- setups

/// The reference's three tokenizer setups (golden variants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenizerSetup {
    /// high = Anthropic, mid_high = cl100k, mid = MiniMax-Text-01, low = DeepSeek-V3 (online reference).
    Native,
    /// The Hugging Face hub unreachable: high = Anthropic, every other tier cl100k.
    HfOffline,
    /// The `tokenizers` package missing: every tier cl100k.
    AllCl100k,
}

impl TokenizerSetup {
    /// Parse `native`, `hf_offline` or `all_cl100k`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "native" => Some(Self::Native),
            "hf_offline" => Some(Self::HfOffline),
            "all_cl100k" => Some(Self::AllCl100k),
            _ => None,
        }
    }

    /// The setup's name as accepted by [`parse`](Self::parse).
    pub fn name(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::HfOffline => "hf_offline",
            Self::AllCl100k => "all_cl100k",
        }
    }

    /// Which encoder the setup uses for `tier`.
    pub fn encoder_for(self, tier: Tier) -> EncoderKind {
        match (self, tier) {
            (Self::AllCl100k, _) | (_, Tier::MidHigh) => EncoderKind::Cl100k,
            (_, Tier::High) => EncoderKind::Anthropic,
            (Self::HfOffline, _) => EncoderKind::Cl100k,
            (Self::Native, Tier::Mid) => EncoderKind::MiniMaxText01,
            (Self::Native, Tier::Low) => EncoderKind::DeepSeekV3,
        }
    }
}

/// The four encoders CommonRouterBench uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EncoderKind {
    /// Anthropic's BPE (`anthropic/tokenizer.json`, from PyPI `anthropic==0.34.2`).
    Anthropic,
    /// tiktoken `cl100k_base`.
    Cl100k,
    /// MiniMax-Text-01 (`minimax-text-01/tokenizer.json`).
    MiniMaxText01,
    /// DeepSeek-V3 (`deepseek-v3/tokenizer.json`).
    DeepSeekV3,
}

impl EncoderKind {
    /// The folder name under a tokenizers directory (`DIR/<dir>/tokenizer.json`).
    pub fn dir_name(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::Cl100k => "cl100k_base",
            Self::MiniMaxText01 => "minimax-text-01",
            Self::DeepSeekV3 => "deepseek-v3",
        }
    }
}

/// One encoder per tier, plus a record of any fallback taken.
pub struct TierTokenizers {
    encoders: [std::sync::Arc<dyn CountTokens>; 4],
    /// Human-readable notes of fallbacks (`"low: deepseek-v3 tokenizer.json missing, using cl100k_base"`).
    pub fallbacks: Vec<String>,
    /// The setup requested.
    pub setup: TokenizerSetup,
}

impl std::fmt::Debug for TierTokenizers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TierTokenizers")
            .field("setup", &self.setup)
            .field(
                "encoders",
                &self
                    .encoders
                    .iter()
                    .map(|e| e.name().to_string())
                    .collect::<Vec<_>>(),
            )
            .field("fallbacks", &self.fallbacks)
            .finish()
    }
}

impl TierTokenizers {
    /// Build from per-tier encoders (index = tier id).
    pub fn new(
        setup: TokenizerSetup,
        encoders: [std::sync::Arc<dyn CountTokens>; 4],
        fallbacks: Vec<String>,
    ) -> Self {
        TierTokenizers {
            encoders,
            fallbacks,
            setup,
        }
    }

    /// The encoder of `tier`.
    pub fn encoder(&self, tier: Tier) -> &dyn CountTokens {
        &*self.encoders[tier as usize]
    }

    /// `count_text_tokens(text, tier)`.
    pub fn count(&self, text: &str, tier: Tier) -> Result<usize, TokenError> {
        self.encoders[tier as usize].count(text)
    }

    /// The encoder name used for each tier, in tier-id order.
    pub fn encoder_names(&self) -> [String; 4] {
        std::array::from_fn(|i| self.encoders[i].name().to_string())
    }
}

/// Bytes of the three Hugging Face tokenizer files (any may be missing → cl100k fallback).
#[derive(Debug, Default, Clone)]
pub struct TokenizerFiles {
    /// `anthropic/tokenizer.json`.
    pub anthropic: Option<Vec<u8>>,
    /// `minimax-text-01/tokenizer.json`.
    pub minimax: Option<Vec<u8>>,
    /// `deepseek-v3/tokenizer.json`.
    pub deepseek: Option<Vec<u8>>,
}

/// Build the tier encoders for `setup`, loading only the encoders the `needed` tiers use
/// (in parallel). A missing file makes that tier fall back to cl100k_base (as the reference
/// does), noted in [`TierTokenizers::fallbacks`]. Tiers not marked `needed` are not loaded and
/// point at cl100k_base: callers must mark every tier they will count with.
pub fn build_tier_tokenizers(
    setup: TokenizerSetup,
    files: &TokenizerFiles,
    needed: [bool; 4],
) -> Result<TierTokenizers, TokenError> {
    use std::sync::Arc;
    let mut kinds: Vec<EncoderKind> = Vec::new();
    let mut fallbacks = Vec::new();
    let mut plan = [EncoderKind::Cl100k; 4];
    for t in Tier::ALL {
        let mut k = setup.encoder_for(t);
        let bytes = match k {
            EncoderKind::Anthropic => files.anthropic.as_ref(),
            EncoderKind::MiniMaxText01 => files.minimax.as_ref(),
            EncoderKind::DeepSeekV3 => files.deepseek.as_ref(),
            EncoderKind::Cl100k => None,
        };
        if k != EncoderKind::Cl100k && bytes.is_none() {
            if needed[t as usize] {
                fallbacks.push(format!(
                    "{}: {}/tokenizer.json not available, counting with cl100k_base instead",
                    t.name(),
                    k.dir_name()
                ));
            }
            k = EncoderKind::Cl100k;
        }
        plan[t as usize] = k;
        if needed[t as usize] && !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    if !kinds.contains(&EncoderKind::Cl100k) {
        // Tiers not needed point at cl100k; built only if someone asks (cheap enough anyway).
        kinds.push(EncoderKind::Cl100k);
    }
    type Loaded = Result<Arc<dyn CountTokens>, TokenError>;
    let loaded: Vec<(EncoderKind, Loaded)> = {
        use rayon::prelude::*;
        kinds
            .par_iter()
            .map(|k| {
                let r: Loaded = match k {
                    EncoderKind::Cl100k => Cl100kCounter::new().map(|c| Arc::new(c) as _),
                    EncoderKind::Anthropic => HfCounter::from_bytes(
                        "anthropic",
                        files.anthropic.as_deref().unwrap_or_default(),
                    )
                    .map(|c| Arc::new(c) as _),
                    EncoderKind::MiniMaxText01 => HfCounter::from_bytes(
                        "minimax-text-01",
                        files.minimax.as_deref().unwrap_or_default(),
                    )
                    .map(|c| Arc::new(c) as _),
                    EncoderKind::DeepSeekV3 => HfCounter::from_bytes(
                        "deepseek-v3",
                        files.deepseek.as_deref().unwrap_or_default(),
                    )
                    .map(|c| Arc::new(c) as _),
                };
                (*k, r)
            })
            .collect()
    };
    let mut by_kind: Vec<(EncoderKind, Arc<dyn CountTokens>)> = Vec::new();
    for (k, r) in loaded {
        by_kind.push((k, r?));
    }
    let get = |k: EncoderKind| -> Arc<dyn CountTokens> {
        by_kind
            .iter()
            .find(|(kk, _)| *kk == k)
            .or_else(|| by_kind.iter().find(|(kk, _)| *kk == EncoderKind::Cl100k))
            .map(|(_, e)| e.clone())
            .expect("cl100k is always loaded")
    };
    let encoders = std::array::from_fn(|i| get(plan[i]));
    Ok(TierTokenizers::new(setup, encoders, fallbacks))
}
