//! Prompt-cache accounting and output-token estimation (`specs/crb.md` §9.2, §10, §11).
//!
//! Two layers:
//! * plain functions on message lists ([`count_messages_tokens`], [`split_prompt_tokens_for_step`],
//!   [`estimate_output_tokens_from_delta`]) that mirror the reference one to one;
//! * [`MessageTable`], which interns every distinct message text and fingerprint once, memoises
//!   token counts per (text, tier), and answers the same questions on message-id lists. Because
//!   `count_messages_tokens = Σ (count(text_i) + 4) + 2` is additive per message, this gives the
//!   same integers while tokenising each distinct message once per tier instead of re-tokenising
//!   every growing prefix (the reference's quadratic cost).

use crate::message::{MessageError, fingerprint, is_assistant, is_semantic_prefix, message_text};
use crate::tokens::{TierTokenizers, TokenError};
use routeval_core::Tier;
use rustc_hash::FxHashMap;
use serde_json::Value;

/// How many trajectory steps a cached prompt stays valid (`_CACHE_TTL_STEPS`): a step's cache
/// on a path is expired iff its tier was last used on that path at step `p` and
/// `step_index - p > CACHE_TTL_STEPS`.
pub const CACHE_TTL_STEPS: i64 = 3;

/// Tokens added per message (`+ 4`) by `count_messages_tokens`.
pub const PER_MESSAGE_TOKENS: u64 = 4;
/// Priming tokens added once per message list (`+ 2`).
pub const PRIMING_TOKENS: u64 = 2;

/// Output tokens assumed when a trajectory has no positive delta (`fallback_output_tokens`).
pub const FALLBACK_OUTPUT_TOKENS: u64 = 500;

/// A failure while counting a message list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CountError {
    /// A message's text cannot be built.
    #[error(transparent)]
    Message(#[from] MessageError),
    /// The tokenizer refused the text.
    #[error(transparent)]
    Token(#[from] TokenError),
}

/// `count_messages_tokens(messages, tier)`: `Σ (count(text_i) + 4) + 2` (so `[]` → 2).
pub fn count_messages_tokens(
    messages: &[Value],
    tier: Tier,
    toks: &TierTokenizers,
) -> Result<u64, CountError> {
    let mut total = 0u64;
    for m in messages {
        total += toks.count(&message_text(m)?, tier)? as u64 + PER_MESSAGE_TOKENS;
    }
    Ok(total + PRIMING_TOKENS)
}

/// Prompt tokens of one call split for billing: (input, cache_read, cache_write).
pub type PromptSplit = (u64, u64, u64);

/// `split_prompt_tokens_for_step`: cold start `(0, 0, total)` on the first step, a tier switch,
/// an expired cache or a non-prefix history; else `(0, prefix, max(total − prefix, 0))` with the
/// previous prompt counted by the **current** tier's tokenizer.
pub fn split_prompt_tokens_for_step(
    prev_tier: Option<Tier>,
    curr_tier: Tier,
    msgs_prev: Option<&[Value]>,
    msgs_curr: &[Value],
    cache_expired: bool,
    toks: &TierTokenizers,
) -> Result<PromptSplit, CountError> {
    let total = count_messages_tokens(msgs_curr, curr_tier, toks)?;
    let warm = match (prev_tier, msgs_prev) {
        (Some(p), Some(prev)) => {
            p == curr_tier && !cache_expired && is_semantic_prefix(prev, msgs_curr)
        }
        _ => false,
    };
    if !warm {
        return Ok((0, 0, total));
    }
    let prefix = count_messages_tokens(msgs_prev.unwrap_or_default(), curr_tier, toks)?;
    Ok((0, prefix, total.saturating_sub(prefix)))
}

/// `estimate_output_tokens_from_delta`: Σ over the messages of `msgs_next` beyond
/// `len(msgs_curr)` whose role is `assistant` of `count(text) + 4` (no prefix check).
pub fn estimate_output_tokens_from_delta(
    msgs_curr: &[Value],
    msgs_next: &[Value],
    tier: Tier,
    toks: &TierTokenizers,
) -> Result<u64, CountError> {
    let mut total = 0;
    for m in msgs_next.iter().skip(msgs_curr.len()) {
        if is_assistant(m) {
            total += toks.count(&message_text(m)?, tier)? as u64 + PER_MESSAGE_TOKENS;
        }
    }
    Ok(total)
}

/// `int(Σ positives / count positives)` over the positive estimates, or
/// [`FALLBACK_OUTPUT_TOKENS`] when there are none (float division then truncation, as Python).
pub fn average_positive_output(estimates: &[u64]) -> u64 {
    let pos: Vec<u64> = estimates.iter().copied().filter(|x| *x > 0).collect();
    if pos.is_empty() {
        return FALLBACK_OUTPUT_TOKENS;
    }
    let sum: u64 = pos.iter().sum();
    (sum as f64 / pos.len() as f64) as u64
}

// ----------------------------------------------------------------------------- MessageTable

/// One interned message: its text id (or why it has none), fingerprint id and role flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MsgRef {
    /// Index into the table's texts, or into its errors (`Err`).
    pub text: Result<u32, u32>,
    /// Fingerprint id: equal ids ⇔ equal fingerprints.
    pub fp: u32,
    /// `role == "assistant"`.
    pub assistant: bool,
}

/// The precomputed form of one message (built off the table, e.g. on worker threads).
#[derive(Debug, Clone)]
pub struct PreparedMessage {
    text: Result<String, MessageError>,
    fp: String,
    assistant: bool,
}

impl PreparedMessage {
    /// Compute the text, fingerprint and role flag of `msg`.
    pub fn new(msg: &Value) -> Self {
        PreparedMessage {
            text: message_text(msg),
            fp: fingerprint(msg),
            assistant: is_assistant(msg),
        }
    }
}

/// Interned messages with memoised per-tier token counts.
#[derive(Debug, Default)]
pub struct MessageTable {
    texts: Vec<std::sync::Arc<str>>,
    text_ids: FxHashMap<std::sync::Arc<str>, u32>,
    fp_ids: FxHashMap<Box<str>, u32>,
    next_fp: u32,
    errors: Vec<MessageError>,
    counts: Vec<[Option<Result<u32, TokenError>>; 4]>,
}

impl MessageTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Intern one prepared message.
    pub fn intern(&mut self, p: PreparedMessage) -> MsgRef {
        let text = match p.text {
            Ok(t) => Ok(match self.text_ids.get(t.as_str()) {
                Some(id) => *id,
                None => {
                    let id = self.texts.len() as u32;
                    let b: std::sync::Arc<str> = t.into();
                    self.texts.push(b.clone());
                    self.text_ids.insert(b, id);
                    self.counts.push([None, None, None, None]);
                    id
                }
            }),
            Err(e) => {
                self.errors.push(e);
                Err(self.errors.len() as u32 - 1)
            }
        };
        let n = self.next_fp;
        let fp = *self.fp_ids.entry(p.fp.into()).or_insert(n);
        if fp == n {
            self.next_fp += 1;
        }
        MsgRef {
            text,
            fp,
            assistant: p.assistant,
        }
    }

    /// Forget the fingerprint and text lookup maps to free memory once every message is in.
    /// Ids stay valid; a message interned after this gets fresh ids (it never compares equal
    /// to an earlier one), so seal only when interning is complete.
    pub fn seal(&mut self) {
        self.fp_ids = FxHashMap::default();
        self.text_ids = FxHashMap::default();
    }

    /// Number of distinct texts.
    pub fn text_count(&self) -> usize {
        self.texts.len()
    }

    /// The text with id `id`.
    pub fn text(&self, id: u32) -> &str {
        &self.texts[id as usize]
    }

    /// Count every `(text id, tier)` pair of `wanted` not yet counted, in parallel, and memoise
    /// the results (errors included; they surface when [`count`](Self::count) asks).
    pub fn prefill(&mut self, wanted: &[(u32, Tier)], toks: &TierTokenizers) {
        use rayon::prelude::*;
        let mut todo: Vec<(u32, Tier)> = wanted
            .iter()
            .copied()
            .filter(|(id, t)| self.counts[*id as usize][*t as usize].is_none())
            .collect();
        todo.sort_unstable_by_key(|(id, t)| (*t as u8, *id));
        todo.dedup();
        let texts = &self.texts;
        let results: Vec<((u32, Tier), Result<u32, TokenError>)> = todo
            .par_chunks(256.max(todo.len() / 64 + 1))
            .flat_map_iter(|chunk| {
                let mut memo: FxHashMap<Box<str>, u32> = FxHashMap::default();
                let mut last_tier = None;
                chunk
                    .iter()
                    .map(|&(id, tier)| {
                        if last_tier != Some(tier) {
                            memo.clear();
                            last_tier = Some(tier);
                        }
                        let text = &texts[id as usize];
                        let r = match toks.encoder(tier).as_hf() {
                            Some(hf) => hf.count_with_memo(text, &mut memo),
                            None => toks.count(text, tier),
                        };
                        ((id, tier), r.map(|c| c as u32))
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        for ((id, tier), r) in results {
            self.counts[id as usize][tier as usize] = Some(r);
        }
    }

    /// Tokens of text `id` under `tier` (memoised).
    pub fn count(&mut self, id: u32, tier: Tier, toks: &TierTokenizers) -> Result<u64, CountError> {
        let slot = &mut self.counts[id as usize][tier as usize];
        if slot.is_none() {
            *slot = Some(toks.count(&self.texts[id as usize], tier).map(|c| c as u32));
        }
        match slot.as_ref() {
            Some(Ok(c)) => Ok(*c as u64),
            Some(Err(e)) => Err(e.clone().into()),
            None => unreachable!("slot filled above"),
        }
    }

    /// `count(text) + 4` of one message (its text error if it has none).
    pub fn message_tokens(
        &mut self,
        m: MsgRef,
        tier: Tier,
        toks: &TierTokenizers,
    ) -> Result<u64, CountError> {
        match m.text {
            Ok(id) => Ok(self.count(id, tier, toks)? + PER_MESSAGE_TOKENS),
            Err(e) => Err(self.errors[e as usize].clone().into()),
        }
    }

    /// [`count_messages_tokens`] on interned messages.
    pub fn count_messages(
        &mut self,
        msgs: &[MsgRef],
        tier: Tier,
        toks: &TierTokenizers,
    ) -> Result<u64, CountError> {
        let mut total = 0;
        for m in msgs {
            total += self.message_tokens(*m, tier, toks)?;
        }
        Ok(total + PRIMING_TOKENS)
    }
}

/// `is_semantic_prefix` on interned messages (fingerprint ids).
pub fn is_prefix_ids(short: &[MsgRef], long: &[MsgRef]) -> bool {
    short.len() <= long.len() && short.iter().zip(long).all(|(a, b)| a.fp == b.fp)
}
