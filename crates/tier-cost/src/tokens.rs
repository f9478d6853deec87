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
//! is exact because BPE works on each pre-token independently. The BPE count itself is its own
//! (`BpeCount`: the library's merge rules over a table of merge ranks keyed by token-id pairs,
//! built from the file's strings without copying them), for models without dropout, unknown
//! token, byte fallback or subword affixes; other BPE settings use the library's model. Any
//! other configuration falls back to `Tokenizer::encode`. Tests check the fast path against
//! `encode` on every golden text and on generated models (`tests/bpe_count.rs`).

use daachorse::{DoubleArrayAhoCorasick, DoubleArrayAhoCorasickBuilder, MatchKind};
use routeval_core::Tier;
use rustc_hash::FxHashMap;
use serde_json::Value;
use std::sync::Mutex;
use tokenizers::{Model, Tokenizer};

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

mod norm;
use norm::{Norm, normalize_with};
mod dfa;
mod split;
use split::{Region, SplitRegex};

// ------------------------------------------------------------------------------------ cl100k

/// The five cl100k_base special-token strings tiktoken refuses by default.
pub const CL100K_SPECIALS: [&str; 5] = [
    "<|endoftext|>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|endofprompt|>",
];

/// tiktoken's `cl100k_base` pre-tokenizer pattern (tiktoken-rs 0.12's, the same as Python
/// tiktoken's), run by the same fancy-regex release tiktoken-rs uses.
const CL100K_PATTERN: &str = "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";

/// tiktoken `cl100k_base` (the vocabulary embedded in `tiktoken-rs`, byte-identical to the
/// official file), with Python tiktoken's default special-token check.
///
/// Counts are tiktoken's `encode_ordinary(text)` length, computed here without building the
/// token list: the same pattern splits the text; a piece that is a token counts 1, any other
/// piece is merged by tiktoken's byte-pair rule (the adjacent pair whose joined bytes have the
/// lowest rank, leftmost first, until no joined pair is a token). A text the pattern's
/// backtracking gives up on (fancy-regex's step or stack limit, for example millions of
/// spaces) is a [`TokenError::Tokenizer`], where tiktoken itself panics.
pub struct Cl100kCounter {
    regex: fancy_regex_tiktoken::Regex,
    /// Token bytes → rank (id).
    ranks: Ranks,
    /// tiktoken-rs's own encoder, built again on the first [`Cl100kCounter::count_reference`]
    /// (the one the ranks were read from is dropped: ≈ 20 MB).
    reference: std::sync::OnceLock<Option<tiktoken_rs::CoreBPE>>,
}

impl std::fmt::Debug for Cl100kCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cl100kCounter")
    }
}

impl Cl100kCounter {
    /// Build the encoder (≈ 5 ms): tiktoken-rs's cl100k_base ranks, read back from its
    /// encoder when this crate was built (`build.rs`) and embedded, plus the pattern.
    ///
    /// # Errors
    /// [`TokenError::Load`] if the embedded table is malformed or lacks a single-byte token
    /// (neither happens with a table `build.rs` wrote), or the pattern does not compile.
    pub fn new() -> Result<Self, TokenError> {
        let load = |message: String| TokenError::Load {
            name: "cl100k_base".into(),
            message,
        };
        let regex =
            fancy_regex_tiktoken::Regex::new(CL100K_PATTERN).map_err(|e| load(e.to_string()))?;
        let ranks =
            Ranks::from_table(CL100K_RANKS).ok_or_else(|| load("malformed rank table".into()))?;
        if (0..=255u8).any(|b| ranks.get(&[b]).is_none()) {
            return Err(load("a single byte is not a token".into()));
        }
        Ok(Cl100kCounter {
            regex,
            ranks,
            reference: std::sync::OnceLock::new(),
        })
    }

    /// The rank of `token` (its id), `None` for a byte string that is not a cl100k_base token
    /// (the five special tokens are not byte strings here).
    pub fn rank(&self, token: &[u8]) -> Option<u32> {
        self.ranks.get(token)
    }

    /// The count through tiktoken-rs's own `encode_ordinary` (no special-token check; panics
    /// where tiktoken-rs panics), to check [`CountTokens::count`] against; `None` if
    /// tiktoken-rs's encoder cannot be built.
    pub fn count_reference(&self, text: &str) -> Option<usize> {
        self.reference
            .get_or_init(|| tiktoken_rs::cl100k_base().ok())
            .as_ref()
            .map(|bpe| bpe.encode_ordinary(text).len())
    }

    /// Tokens of one piece the pattern cut: 1 if it is a token, else the byte-pair merge count.
    fn piece_count(&self, piece: &[u8], scratch: &mut SpanScratch) -> usize {
        if piece.len() < 2 || self.ranks.get(piece).is_some() {
            return usize::from(!piece.is_empty());
        }
        let rank = |a: usize, b: usize| self.ranks.get(&piece[a..b]);
        // Parts as a linked list over byte offsets: part i starts at byte i (a part keeps the
        // index of its first byte) and ends at `end[i]`; `next[i]` is the next part's index
        // (-1: last, -2: merged into its left neighbour).
        let n = piece.len();
        let SpanScratch {
            end,
            prev,
            next,
            heap,
        } = scratch;
        end.clear();
        end.extend(1..=n);
        prev.clear();
        prev.extend((0..n as isize).map(|i| i - 1));
        next.clear();
        next.extend(1..=n as isize);
        next[n - 1] = -1;
        heap.clear();
        for i in 0..n - 1 {
            if let Some(r) = rank(i, i + 2) {
                heap.push(std::cmp::Reverse((r, i, i + 2)));
            }
        }
        let mut left = n;
        // A candidate (rank, start, end of its right part) is current while the part at
        // `start` is alive and its right neighbour still ends there: the same bytes, as
        // tiktoken's merge ranks byte spans (`BpeCount::count` keeps the `tokenizers` crate's
        // merged-id rule instead).
        while let Some(std::cmp::Reverse((_, start, right_end))) = heap.pop() {
            let nx = next[start];
            if nx < 0 || end[nx as usize] != right_end {
                continue;
            }
            let nx = nx as usize;
            end[start] = end[nx];
            next[start] = next[nx];
            next[nx] = -2;
            if next[start] >= 0 {
                prev[next[start] as usize] = start as isize;
            }
            left -= 1;
            let p = prev[start];
            if p >= 0
                && let Some(r) = rank(p as usize, end[start])
            {
                heap.push(std::cmp::Reverse((r, p as usize, end[start])));
            }
            if next[start] >= 0
                && let Some(r) = rank(start, end[next[start] as usize])
            {
                heap.push(std::cmp::Reverse((r, start, end[next[start] as usize])));
            }
        }
        left
    }
}

/// Byte strings → rank, the strings kept in one buffer (no allocation per token).
struct Ranks {
    bytes: Vec<u8>,
    /// (start, end, rank) into `bytes`.
    table: hashbrown::HashTable<(u32, u32, u32)>,
}

/// cl100k_base's rank table as `build.rs` wrote it (format in its module note).
static CL100K_RANKS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_ranks.bin"));

impl Ranks {
    /// Read a table in `build.rs`'s format; `None` if it is cut short or mislabelled.
    fn from_table(table: &[u8]) -> Option<Ranks> {
        let rest = table.strip_prefix(b"RVCL")?;
        let (count, mut rest) = rest.split_first_chunk::<4>()?;
        let count = u32::from_le_bytes(*count) as usize;
        let mut ranks = Ranks::with_capacity(count.min(1 << 20), rest.len());
        for _ in 0..count {
            let (id, r) = rest.split_first_chunk::<4>()?;
            let (len, r) = r.split_first_chunk::<2>()?;
            let len = usize::from(u16::from_le_bytes(*len));
            let bytes = r.get(..len)?;
            ranks.insert(bytes, u32::from_le_bytes(*id));
            rest = &r[len..];
        }
        rest.is_empty().then_some(ranks)
    }

    fn with_capacity(entries: usize, bytes: usize) -> Ranks {
        Ranks {
            bytes: Vec::with_capacity(bytes),
            table: hashbrown::HashTable::with_capacity(entries),
        }
    }

    fn hash(key: &[u8]) -> u64 {
        use std::hash::BuildHasher;
        rustc_hash::FxBuildHasher.hash_one(key)
    }

    /// Add `key` with `rank`; a key already present keeps its first rank. Keys past 4 GiB of
    /// token bytes are not added (cl100k_base has 1 MB).
    fn insert(&mut self, key: &[u8], rank: u32) {
        let (Ok(start), Ok(end)) = (
            u32::try_from(self.bytes.len()),
            u32::try_from(self.bytes.len() + key.len()),
        ) else {
            return;
        };
        let h = Self::hash(key);
        let bytes = &self.bytes;
        if self
            .table
            .find(h, |&(s, e, _)| &bytes[s as usize..e as usize] == key)
            .is_some()
        {
            return;
        }
        self.bytes.extend_from_slice(key);
        let bytes = &self.bytes;
        self.table
            .insert_unique(h, (start, end, rank), |&(s, e, _)| {
                Self::hash(&bytes[s as usize..e as usize])
            });
    }

    #[inline]
    fn get(&self, key: &[u8]) -> Option<u32> {
        self.table
            .find(Self::hash(key), |&(s, e, _)| {
                &self.bytes[s as usize..e as usize] == key
            })
            .map(|&(_, _, r)| r)
    }
}

/// Reused buffers of [`Cl100kCounter`]'s merge loop: part ends, links, and the candidates
/// (rank, start of the left part, end of the right part), smallest first.
#[derive(Default)]
struct SpanScratch {
    end: Vec<usize>,
    prev: Vec<isize>,
    next: Vec<isize>,
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(u32, usize, usize)>>,
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
        let mut scratch = SpanScratch::default();
        let mut total = 0;
        for m in self.regex.find_iter(text) {
            let m = m.map_err(|e| {
                TokenError::Tokenizer(format!(
                    "cl100k_base: the pre-tokenizer pattern gave up on a text of {} bytes ({e}); \
                     tiktoken itself panics on such a text",
                    text.len()
                ))
            })?;
            total += self.piece_count(m.as_str().as_bytes(), &mut scratch);
        }
        Ok(total)
    }
    fn name(&self) -> &str {
        "cl100k_base"
    }
}

// ------------------------------------------------------------------------------ Hugging Face

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
    regex: SplitRegex,
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

/// The parts of a `tokenizer.json` the fast path reads (parsed without buffering).
#[derive(serde::Deserialize)]
struct FileSpec<'a> {
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
    #[serde(borrow)]
    model: ModelSpec<'a>,
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
struct ModelSpec<'a> {
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
    /// `(token, id)` in file order; tokens borrowed from the file where they have no escapes.
    #[serde(borrow)]
    vocab: VocabList<'a>,
    #[serde(borrow)]
    merges: Vec<MergeItem<'a>>,
}

/// A JSON string, borrowed from the input unless it had escapes.
#[derive(PartialEq, Eq, Hash)]
struct Text<'a>(std::borrow::Cow<'a, str>);

impl std::borrow::Borrow<str> for Text<'_> {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Text<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(std::borrow::Cow::Owned(v.to_string())))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text(std::borrow::Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// A vocabulary object read as a list (no hashing while parsing; the map is built once with
/// its final size).
struct VocabList<'a>(Vec<(Text<'a>, u32)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for VocabList<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = VocabList<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a vocabulary object {token: id}")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<VocabList<'de>, A::Error> {
                let mut list = Vec::with_capacity(map.size_hint().unwrap_or(0).min(1 << 20));
                while let Some(entry) = map.next_entry::<Text<'de>, u32>()? {
                    list.push(entry);
                }
                Ok(VocabList(list))
            }
        }
        d.deserialize_map(V)
    }
}

/// One merge: `"a b"` (legacy) or `["a", "b"]`; `None` for a `#version` line.
struct MergeItem<'a>(Option<(Text<'a>, Text<'a>)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for MergeItem<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use std::borrow::Cow;
        fn split<E: serde::de::Error>(v: &str) -> Result<Option<(&str, &str)>, E> {
            if v.starts_with("#version") {
                return Ok(None);
            }
            let mut parts = v.split(' ');
            match (parts.next(), parts.next(), parts.next()) {
                (Some(a), Some(b), None) => Ok(Some((a, b))),
                _ => Err(E::custom(format!("bad merge {v:?}"))),
            }
        }
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = MergeItem<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a merge: \"a b\" or [\"a\", \"b\"]")
            }
            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                v: &'de str,
            ) -> Result<MergeItem<'de>, E> {
                Ok(MergeItem(split(v)?.map(|(a, b)| {
                    (Text(Cow::Borrowed(a)), Text(Cow::Borrowed(b)))
                })))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<MergeItem<'de>, E> {
                Ok(MergeItem(split(v)?.map(|(a, b)| {
                    (Text(Cow::Owned(a.into())), Text(Cow::Owned(b.into())))
                })))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<MergeItem<'de>, A::Error> {
                let a: Text<'de> = seq
                    .next_element()?
                    .ok_or_else(|| serde::de::Error::custom("merge pair"))?;
                let b: Text<'de> = seq
                    .next_element()?
                    .ok_or_else(|| serde::de::Error::custom("merge pair"))?;
                Ok(MergeItem(Some((a, b))))
            }
        }
        d.deserialize_any(V)
    }
}

/// Count-only byte-pair encoding: the number of tokens the `tokenizers` crate's `BPE` model
/// (0.23) gives a pre-token, without building tokens.
///
/// Built only for the configuration the tier tokenizers use: no dropout, no unknown token, no
/// byte fallback, `ignore_merges` off, empty or absent subword prefix and word suffix (anything
/// else uses the library's model). Same rules as the library: every character of the
/// pre-token starts as its single-character token (a character outside the vocabulary is
/// dropped, as the library drops it without an unknown token), then the adjacent pair of
/// lowest merge rank is merged, leftmost first, until no adjacent pair has a merge; merges are
/// ranked by their index in the file, a repeated pair keeping its last index.
struct BpeCount {
    /// The token id of each byte's `ByteLevel` character (byte-level models).
    byte_ids: [Option<u32>; 256],
    /// Single-character token ids (models without `ByteLevel`).
    char_ids: FxHashMap<char, u32>,
    /// `left << 32 | right` → (rank, merged id).
    merges: FxHashMap<u64, (u32, u32)>,
}

/// A merge candidate: (rank, left symbol's position, merged id); the smallest pops first.
type Candidate = std::cmp::Reverse<(u32, usize, u32)>;

impl BpeCount {
    /// Build from the model, or `None` when its options are not the supported ones or a merge
    /// names a token outside the vocabulary (the library refuses those; its error is kept).
    fn new(m: &ModelSpec<'_>, byte_level: bool, bytes_char: &[char; 256]) -> Option<BpeCount> {
        let empty = |o: &Option<String>| o.as_deref().is_none_or(str::is_empty);
        if m.kind.as_deref().is_some_and(|k| k != "BPE")
            || m.dropout.is_some_and(|d| d != 0.0)
            || m.unk_token.is_some()
            || m.byte_fallback == Some(true)
            || m.ignore_merges == Some(true)
            || !empty(&m.continuing_subword_prefix)
            || !empty(&m.end_of_word_suffix)
        {
            return None;
        }
        // Token → id, a later duplicate winning (as in a JSON object read into a map).
        let mut vocab: FxHashMap<&str, u32> = FxHashMap::default();
        vocab.reserve(m.vocab.0.len());
        for (k, id) in &m.vocab.0 {
            vocab.insert(&k.0, *id);
        }
        // Id → token, from the map (so `by_id[x] == t` implies `vocab[t] == x`), when the ids
        // are dense enough for a table.
        let max_id = vocab.values().copied().max().unwrap_or(0) as usize;
        let mut by_id: Vec<Option<&str>> = Vec::new();
        if max_id <= 4 * vocab.len() + 1024 {
            by_id = vec![None; max_id + 1];
            for (&k, &id) in &vocab {
                by_id[id as usize] = Some(k);
            }
        }
        let mut merges = FxHashMap::default();
        merges.reserve(m.merges.len());
        let mut joined = String::new();
        // Files usually give merge i's token the id i + c: that id is tried first and checked
        // against the table, the map answers otherwise.
        let mut offset: i64 = 0;
        for (rank, (a, b)) in m.merges.iter().filter_map(|x| x.0.as_ref()).enumerate() {
            let a_id = *vocab.get(&*a.0)?;
            let b_id = *vocab.get(&*b.0)?;
            joined.clear();
            joined.push_str(&a.0);
            joined.push_str(&b.0);
            let guess = usize::try_from(rank as i64 + offset).ok();
            let new_id = match guess.and_then(|g| by_id.get(g).copied().flatten()) {
                Some(t) if t == joined => guess? as u32,
                _ => {
                    let id = *vocab.get(joined.as_str())?;
                    offset = i64::from(id) - rank as i64;
                    id
                }
            };
            let rank = u32::try_from(rank).ok()?;
            merges.insert((u64::from(a_id) << 32) | u64::from(b_id), (rank, new_id));
        }
        // A pre-token starts as byte tokens (byte-level) or as character tokens: only one of
        // the two tables is built.
        let mut byte_ids = [None; 256];
        let mut char_ids = FxHashMap::default();
        if byte_level {
            let mut buf = [0u8; 4];
            for (b, id) in byte_ids.iter_mut().enumerate() {
                *id = vocab.get(&*bytes_char[b].encode_utf8(&mut buf)).copied();
            }
        } else {
            char_ids = vocab
                .iter()
                .filter_map(|(k, &id)| {
                    let mut cs = k.chars();
                    match (cs.next(), cs.next()) {
                        (Some(c), None) => Some((c, id)),
                        _ => None,
                    }
                })
                .collect();
        }
        Some(BpeCount {
            byte_ids,
            char_ids,
            merges,
        })
    }

    /// The merge of `left` then `right`, if any: (rank, merged id).
    #[inline]
    fn merge(&self, left: u32, right: u32) -> Option<(u32, u32)> {
        self.merges
            .get(&((u64::from(left) << 32) | u64::from(right)))
            .copied()
    }

    /// The number of tokens of `piece`: its bytes through the `ByteLevel` alphabet when
    /// `byte_level`, else its characters. `syms` and `heap` are scratch space.
    fn count(
        &self,
        piece: &str,
        byte_level: bool,
        syms: &mut Vec<(u32, isize, isize)>,
        heap: &mut std::collections::BinaryHeap<Candidate>,
    ) -> usize {
        syms.clear();
        let mut push = |id: u32| {
            let i = syms.len() as isize;
            syms.push((id, i - 1, i + 1));
        };
        if byte_level {
            piece
                .bytes()
                .filter_map(|b| self.byte_ids[b as usize])
                .for_each(&mut push);
        } else {
            piece
                .chars()
                .filter_map(|c| self.char_ids.get(&c).copied())
                .for_each(&mut push);
        }
        let n = syms.len();
        if n < 2 {
            return n;
        }
        if let Some(last) = syms.last_mut() {
            last.2 = -1;
        }
        // Symbols form a linked list (id, prev, next): next is -1 for the last symbol and -2
        // for one merged into its left neighbour.
        heap.clear();
        for i in 0..n - 1 {
            if let Some((rank, id)) = self.merge(syms[i].0, syms[i + 1].0) {
                heap.push(std::cmp::Reverse((rank, i, id)));
            }
        }
        let mut left = n;
        while let Some(std::cmp::Reverse((_, pos, new_id))) = heap.pop() {
            let (id, prev, next) = syms[pos];
            if next < 0 {
                continue;
            }
            let next = next as usize;
            // An expired candidate: the pair at `pos` no longer merges into `new_id`. This is
            // the `tokenizers` crate's own rule (it compares the merged id, so a changed pair
            // that happens to merge into the same token is still taken at the queued rank);
            // `Cl100kCounter::piece_count` has the same loop with tiktoken's rule instead (the
            // pair's bytes unchanged), which is why the two loops are not one.
            if self
                .merge(id, syms[next].0)
                .is_none_or(|(_, m)| m != new_id)
            {
                continue;
            }
            let after = syms[next].2;
            syms[pos] = (new_id, prev, after);
            syms[next].2 = -2;
            if after >= 0 {
                syms[after as usize].1 = pos as isize;
            }
            left -= 1;
            if prev >= 0
                && let Some((rank, id)) = self.merge(syms[prev as usize].0, new_id)
            {
                heap.push(std::cmp::Reverse((rank, prev as usize, id)));
            }
            if after >= 0
                && let Some((rank, id)) = self.merge(new_id, syms[after as usize].0)
            {
                heap.push(std::cmp::Reverse((rank, pos, id)));
            }
        }
        left
    }
}

/// The library's BPE model from the same settings (for configurations [`BpeCount`] does not
/// cover).
fn build_bpe(m: ModelSpec<'_>) -> Option<tokenizers::models::bpe::BPE> {
    if m.kind.as_deref().is_some_and(|k| k != "BPE") {
        return None;
    }
    let merges: Vec<(String, String)> = m
        .merges
        .into_iter()
        .filter_map(|x| x.0)
        .map(|(a, b)| (a.0.into_owned(), b.0.into_owned()))
        .collect();
    let vocab: tokenizers::models::bpe::Vocab = m
        .vocab
        .0
        .into_iter()
        .map(|(k, v)| (k.0.into_owned(), v))
        .collect();
    let mut b = tokenizers::models::bpe::BPE::builder()
        .vocab_and_merges(vocab, merges)
        .cache_capacity(0);
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

/// Whether every added token is in the vocabulary, or the vocabulary's ids are exactly
/// `0..n` (then the ids the library hands out to the others cannot collide with them).
fn added_ids_are_safe(added: &[AddedSpec], vocab: &VocabList<'_>) -> bool {
    // FxHash: every vocabulary token is looked up here (SipHash made this 1.6 % of a 970-row
    // `crb eval`).
    let mut outside: rustc_hash::FxHashSet<&str> = added
        .iter()
        .map(|t| t.content.as_str())
        .filter(|c| !c.is_empty())
        .collect();
    if outside.is_empty() {
        return true;
    }
    let n = vocab.0.len();
    let mut seen = vec![false; n];
    let mut dense = true;
    for (k, id) in &vocab.0 {
        if outside.is_empty() {
            return true;
        }
        outside.remove(&*k.0);
        match seen.get_mut(*id as usize) {
            Some(s) if !*s => *s = true,
            _ => dense = false,
        }
    }
    outside.is_empty() || dense
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
                        regex: SplitRegex::new(&re)?,
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
            regex: SplitRegex::new(GPT2_PATTERN)?,
            keep: Keep::All,
        });
    }
    // Added tokens: same two automata as `AddedVocabulary` (leftmost-longest).
    let mut raw: Vec<(String, u32)> = Vec::new();
    let mut normed: Vec<(String, u32)> = Vec::new();
    // As the library's added vocabulary: an empty content is skipped, and of two entries with
    // the same content only the later one counts.
    let mut last: FxHashMap<&str, usize> = FxHashMap::default();
    for (i, t) in spec.added_tokens.iter().enumerate() {
        last.insert(&t.content, i);
    }
    for (i, t) in spec.added_tokens.iter().enumerate() {
        if t.content.is_empty() || last.get(t.content.as_str()) != Some(&i) {
            continue;
        }
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

/// The BPE model of the fast path: [`BpeCount`] where it applies, else the library's.
enum BpeModel {
    Own(Box<BpeCount>),
    Library(Box<tokenizers::models::bpe::BPE>),
}

/// A Hugging Face `tokenizer.json` tokenizer with a count-only fast path and a per-pre-token memo.
pub struct HfCounter {
    name: String,
    /// The full library tokenizer: loaded only when the fast path does not apply (or on request).
    tokenizer: Option<Tokenizer>,
    fast: Option<(FastPath, BpeModel)>,
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
                    vocab: VocabList(Vec::new()),
                    merges: Vec::new(),
                },
            );
            // An added token outside the vocabulary gets a new id from the library, which can
            // collide with a vocabulary id when the ids are not 0..n (a later entry then
            // replaces an earlier one): such files take the library's path.
            if !added_ids_are_safe(&spec.added_tokens, &model.vocab) {
                return None;
            }
            let fp = build_fast_path(&spec)?;
            let bpe = match BpeCount::new(&model, fp.byte_level, &fp.bytes_char) {
                Some(own) => BpeModel::Own(Box::new(own)),
                None => BpeModel::Library(Box::new(build_bpe(model)?)),
            };
            Some((fp, bpe))
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

    /// Whether the count-only fast path has `Split` patterns and searches every one through the
    /// `regex` crate's automata (true for the three tier tokenizer files, `tokens/dfa.rs`)
    /// rather than through Oniguruma; false without a fast path or without a pattern.
    pub fn splits_through_automata(&self) -> bool {
        self.fast.as_ref().is_some_and(|(fp, _)| {
            !fp.steps.is_empty() && fp.steps.iter().all(|s| s.regex.has_automata())
        })
    }

    /// Whether the count-only fast path is used (else every count is a full `encode`).
    pub fn has_fast_path(&self) -> bool {
        self.fast.is_some()
    }

    /// Whether the fast path counts BPE merges itself (no dropout, no unknown token, no byte
    /// fallback, no subword prefix or word suffix) rather than through the library's model.
    pub fn counts_bpe_itself(&self) -> bool {
        matches!(self.fast, Some((_, BpeModel::Own(_))))
    }

    /// The count through the library's full `encode(text, add_special_tokens=true)`; an error
    /// if the full tokenizer was not loaded (see [`from_bytes_with_reference`](Self::from_bytes_with_reference))
    /// or if the library fails on the text, including a panic inside it (its regex step panics
    /// when Oniguruma gives up on a text; that is a [`TokenError::Tokenizer`] here).
    pub fn count_slow(&self, text: &str) -> Result<usize, TokenError> {
        let tok = self
            .tokenizer
            .as_ref()
            .ok_or_else(|| TokenError::Tokenizer("the full tokenizer was not loaded".into()))?;
        // The library's regex step panics when Oniguruma gives up on a text (its retry limit):
        // that is an error here, as on the fast path.
        routeval_core::contain::contained(|| tok.encode(text, true))
            .map_err(|what| TokenError::Tokenizer(format!("the tokenizer failed: {what}")))?
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
        let mut syms = Vec::new();
        let mut heap = std::collections::BinaryHeap::new();
        let mut count_piece = |piece: &str| -> Result<(), TokenError> {
            if let Some(c) = memo.get(piece) {
                total += *c as usize;
                return Ok(());
            }
            let c = match model {
                BpeModel::Own(bpe) => bpe.count(piece, fp.byte_level, &mut syms, &mut heap),
                BpeModel::Library(model) => if fp.byte_level {
                    mapped.clear();
                    mapped.extend(piece.bytes().map(|b| fp.bytes_char[b as usize]));
                    model.tokenize(&mapped)
                } else {
                    model.tokenize(piece)
                }
                .map_err(|e| TokenError::Tokenizer(e.to_string()))?
                .len(),
            };
            memo.insert(piece.into(), c as u32);
            total += c;
            Ok(())
        };
        let mut added = 0usize;
        let mut region = Region::new();
        added += split_added(fp.raw_trie.as_ref(), text, |gap| {
            let normalized = normalize_with(fp.norm, gap);
            added += split_added(fp.norm_trie.as_ref(), &normalized, |piece| {
                pre_tokenize(&fp.steps, piece, 0, &mut region, &mut count_piece)
            })?;
            Ok(())
        })?;
        Ok(total + added)
    }
}

/// Apply split steps `steps[i..]` to `s`, calling `f` on every final non-empty piece.
/// `region` is the regex search's scratch space (see [`split`]); a search failure is a
/// [`TokenError::Tokenizer`].
fn pre_tokenize(
    steps: &[SplitStep],
    s: &str,
    i: usize,
    region: &mut Region,
    f: &mut dyn FnMut(&str) -> Result<(), TokenError>,
) -> Result<(), TokenError> {
    if s.is_empty() {
        return Ok(());
    }
    let Some(step) = steps.get(i) else {
        return f(s);
    };
    let mut prev = 0;
    step.regex.for_each_match(
        s,
        region,
        |e| TokenError::Tokenizer(e.to_string()),
        |start, end, region| {
            if start > prev && step.keep != Keep::Matches {
                pre_tokenize(steps, &s[prev..start], i + 1, region, f)?;
            }
            if step.keep != Keep::Gaps {
                pre_tokenize(steps, &s[start..end], i + 1, region, f)?;
            }
            prev = end;
            Ok(())
        },
    )?;
    if prev < s.len() && step.keep != Keep::Matches {
        pre_tokenize(steps, &s[prev..], i + 1, region, f)?;
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
