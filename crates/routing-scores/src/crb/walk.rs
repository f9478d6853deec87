//! The shared trajectory walk (`specs/crb.md` §10–§12): per evaluable step, the USD cost of the
//! always-high baseline, the gold path and the predicted path, with prompt caching.
//!
//! Reference order is kept exactly: trajectories in first-appearance order of their key
//! (`instance_id`, default the row id), rows stably sorted by `step_index`, steps yielded in that
//! order. With duplicate `step_index` values the **last** position wins for every row carrying
//! the index (the reference's position map), so the earlier duplicate is costed at the later
//! position (quirk, documented).

use super::records::EvalRecord;
use routeval_core::Tier;
use routeval_tier_cost::cache::{
    CACHE_TTL_STEPS, CountError, FALLBACK_OUTPUT_TOKENS, MessageTable, MsgRef, PreparedMessage,
    is_prefix_ids,
};
use routeval_tier_cost::pricing::{CallTokens, step_full_cost_usd};
use routeval_tier_cost::tokens::TierTokenizers;
use rustc_hash::FxHashMap;
use serde_json::Value;

/// A failure of the walk (the reference raises in the same situations).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WalkError {
    /// Counting a message failed (a `null` tool-call name, a cl100k special token, ...).
    #[error("row {id}: {source}")]
    Count {
        /// Index of the record whose messages were being counted.
        record: usize,
        /// The row whose messages were being counted (JSON text of its id).
        id: String,
        /// Why.
        #[source]
        source: CountError,
    },
    /// `messages` is not a list (record index, row id).
    #[error("row {1}: messages must be a list")]
    MessagesNotList(usize, String),
    /// `step_index` is not a number (record index, row id).
    #[error("row {1}: step_index must be a number")]
    StepIndex(usize, String),
}

impl WalkError {
    /// Index of the record the error is about.
    pub fn record(&self) -> usize {
        match self {
            WalkError::Count { record, .. } => *record,
            WalkError::MessagesNotList(r, _) | WalkError::StepIndex(r, _) => *r,
        }
    }

    /// The problem without the row prefix, on one line (the first line of a counting
    /// error): what `crb eval` and `crb sweep` print after `BANK:LINE: row N: `.
    pub fn problem(&self) -> String {
        match self {
            WalkError::Count { source, .. } => source
                .to_string()
                .lines()
                .next()
                .unwrap_or_default()
                .to_string(),
            WalkError::MessagesNotList(..) => "messages must be a list".to_string(),
            WalkError::StepIndex(..) => "step_index must be a number".to_string(),
        }
    }
}

/// One path's bill for one step (the `expected_steps.json` debugging fields).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathCost {
    /// The tier the path used.
    pub tier: Tier,
    /// The tier the path used on the previous position (None on a first step or after an error row).
    pub prev_tier: Option<Tier>,
    /// Whether the cache had expired (TTL).
    pub cache_expired: bool,
    /// Uncached prompt tokens priced at the INPUT rate: always 0, since the reference's eval
    /// assumes the prompt cache is on and passes `input_tokens = 0` (spec §8).
    pub input_tokens: u64,
    /// Prompt cache-read tokens.
    pub cache_read: u64,
    /// Prompt cache-write tokens.
    pub cache_write: u64,
    /// USD.
    pub cost: f64,
}

/// One evaluable step of the walk.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Index of the record.
    pub record: usize,
    /// Index of the trajectory (first-appearance order within the walked subset).
    pub trajectory: usize,
    /// Whether the whole trajectory passed (no error row, every step pred ≥ gold).
    pub trajectory_passed: bool,
    /// Estimated output tokens of the step.
    pub output_tokens: u64,
    /// Always-high baseline.
    pub baseline: PathCost,
    /// Gold path.
    pub gold: PathCost,
    /// Predicted path.
    pub pred: PathCost,
}

/// Trajectory status (§14): counted over all rows, error rows fail their trajectory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrajectoryStatus {
    /// Rows in the trajectory.
    pub rows: usize,
    /// Any error row.
    pub has_error: bool,
    /// Every evaluable row has pred ≥ gold.
    pub all_pass: bool,
    /// Every evaluable row has pred = gold.
    pub all_exact: bool,
}

impl TrajectoryStatus {
    /// No error and all steps pass.
    pub fn passed(&self) -> bool {
        !self.has_error && self.all_pass
    }
    /// No error and all steps exact.
    pub fn exact(&self) -> bool {
        !self.has_error && self.all_exact
    }
}

/// A hashable trajectory key with Python's equality (`1 == 1.0 == True`).
fn traj_key(v: &Value) -> String {
    match v {
        Value::String(s) => format!("s{s}"),
        Value::Null => "n".into(),
        Value::Bool(b) => format!("f{}", *b as u8 as f64),
        Value::Number(n) => match n.as_i64() {
            Some(i) => format!("f{}", i as f64),
            None => format!("f{}", n.as_f64().unwrap_or(f64::NAN)),
        },
        other => format!("j{other}"),
    }
}

/// Trajectories of `subset` (record indices) with their status, in first-appearance order.
pub fn group(records: &[EvalRecord], subset: &[usize]) -> Vec<(Vec<usize>, TrajectoryStatus)> {
    let mut out: Vec<(Vec<usize>, TrajectoryStatus)> = Vec::new();
    let mut index: FxHashMap<String, usize> = FxHashMap::default();
    for &i in subset {
        let r = &records[i];
        let k = traj_key(&r.instance_id);
        let slot = *index.entry(k).or_insert_with(|| {
            out.push((
                Vec::new(),
                TrajectoryStatus {
                    rows: 0,
                    has_error: false,
                    all_pass: true,
                    all_exact: true,
                },
            ));
            out.len() - 1
        });
        let (rows, st) = &mut out[slot];
        rows.push(i);
        st.rows += 1;
        match r.pred() {
            None => st.has_error = true,
            Some(p) => {
                if p < r.gold {
                    st.all_pass = false;
                }
                if p != r.gold {
                    st.all_exact = false;
                }
            }
        }
    }
    out
}

fn step_value(records: &[EvalRecord], i: usize) -> Result<f64, WalkError> {
    let r = &records[i];
    match &r.step_index {
        Value::Bool(b) => Ok(*b as u8 as f64),
        Value::Number(n) => n
            .as_f64()
            .filter(|f| f.is_finite())
            .map(|f| if f == 0.0 { 0.0 } else { f })
            .ok_or_else(|| WalkError::StepIndex(i, r.id.to_string())),
        _ => Err(WalkError::StepIndex(i, r.id.to_string())),
    }
}

/// Interned messages of every record plus a memo of prompt counts per (record, tier).
#[derive(Debug)]
pub struct WalkContext<'t> {
    /// The message table.
    pub table: MessageTable,
    msgs: Vec<Option<Vec<MsgRef>>>,
    prompt: Vec<[u64; 4]>,
    toks: &'t TierTokenizers,
}

const UNSET: u64 = u64::MAX;

impl<'t> WalkContext<'t> {
    /// Intern the messages of all `records` (texts and fingerprints built in parallel) and
    /// count, in parallel, the (text, tier) pairs every walk will need.
    pub fn new(records: &[EvalRecord], toks: &'t TierTokenizers) -> Self {
        use rayon::prelude::*;
        // Prepare texts and fingerprints in parallel, a chunk of records at a time (bounded
        // memory), and intern them in record order.
        let mut table = MessageTable::new();
        let mut msgs: Vec<Option<Vec<MsgRef>>> = Vec::with_capacity(records.len());
        for chunk in records.chunks(512) {
            let prepared: Vec<Option<Vec<PreparedMessage>>> = chunk
                .par_iter()
                .map(|r| {
                    r.messages
                        .as_array()
                        .map(|ms| ms.iter().map(PreparedMessage::new).collect())
                })
                .collect();
            msgs.extend(
                prepared
                    .into_iter()
                    .map(|p| p.map(|ms| ms.into_iter().map(|m| table.intern(m)).collect())),
            );
        }
        table.seal();
        // Prefill: every evaluable row's prompt under high, its gold and its predicted tier.
        let mut wanted: Vec<(u32, Tier)> = Vec::new();
        for (r, ms) in records.iter().zip(&msgs) {
            let (Some(pred), Some(ms)) = (r.pred(), ms) else {
                continue;
            };
            for m in ms {
                if let Ok(id) = m.text {
                    wanted.push((id, Tier::High));
                    wanted.push((id, r.gold));
                    wanted.push((id, pred));
                }
            }
        }
        table.prefill(&wanted, toks);
        WalkContext {
            table,
            prompt: vec![[UNSET; 4]; records.len()],
            msgs,
            toks,
        }
    }

    /// Count, in parallel, every row's prompt messages under each of `tiers` (the memo every
    /// later walk reads), e.g. all four tiers before a threshold sweep re-walks the same rows
    /// with other predictions. Changes no number: counts are exact and errors surface only
    /// when a walk asks for that (text, tier).
    pub fn prefill_tiers(&mut self, tiers: &[Tier]) {
        let mut wanted: Vec<(u32, Tier)> = Vec::new();
        for m in self.msgs.iter().flatten().flatten() {
            if let Ok(id) = m.text {
                for &t in tiers {
                    wanted.push((id, t));
                }
            }
        }
        self.table.prefill(&wanted, self.toks);
    }

    fn msgs(&self, records: &[EvalRecord], i: usize) -> Result<&[MsgRef], WalkError> {
        self.msgs[i]
            .as_deref()
            .ok_or_else(|| WalkError::MessagesNotList(i, records[i].id.to_string()))
    }

    fn prompt_tokens(
        &mut self,
        records: &[EvalRecord],
        i: usize,
        tier: Tier,
    ) -> Result<u64, WalkError> {
        let cached = self.prompt[i][tier as usize];
        if cached != UNSET {
            return Ok(cached);
        }
        let ms = self.msgs[i]
            .take()
            .ok_or_else(|| WalkError::MessagesNotList(i, records[i].id.to_string()))?;
        let r = self.table.count_messages(&ms, tier, self.toks);
        self.msgs[i] = Some(ms);
        let n = r.map_err(|source| WalkError::Count {
            record: i,
            id: records[i].id.to_string(),
            source,
        })?;
        self.prompt[i][tier as usize] = n;
        Ok(n)
    }

    /// `split_prompt_tokens_for_step` on records: (cache_read, cache_write).
    fn split(
        &mut self,
        records: &[EvalRecord],
        prev: Option<(usize, Tier)>,
        curr: usize,
        tier: Tier,
        expired: bool,
    ) -> Result<(u64, u64), WalkError> {
        let total = self.prompt_tokens(records, curr, tier)?;
        let Some((p, prev_tier)) = prev else {
            return Ok((0, total));
        };
        if prev_tier != tier || expired {
            return Ok((0, total));
        }
        let is_prefix = is_prefix_ids(self.msgs(records, p)?, self.msgs(records, curr)?);
        if !is_prefix {
            return Ok((0, total));
        }
        let prefix = self.prompt_tokens(records, p, tier)?;
        Ok((prefix, total.saturating_sub(prefix)))
    }

    fn output_estimate(
        &mut self,
        records: &[EvalRecord],
        cur: usize,
        next: usize,
    ) -> Result<u64, WalkError> {
        let tier = records[cur].gold;
        let skip = self.msgs(records, cur)?.len();
        let next_msgs: Vec<MsgRef> = self
            .msgs(records, next)?
            .iter()
            .skip(skip)
            .copied()
            .collect();
        let mut total = 0;
        for m in next_msgs {
            if m.assistant {
                total += self
                    .table
                    .message_tokens(m, tier, self.toks)
                    .map_err(|source| WalkError::Count {
                        record: next,
                        id: records[next].id.to_string(),
                        source,
                    })?;
            }
        }
        Ok(total)
    }

    /// Walk the records of `subset` (§12) and return the evaluable steps in walk order, with the
    /// trajectories' statuses (first-appearance order).
    pub fn walk(
        &mut self,
        records: &[EvalRecord],
        subset: &[usize],
    ) -> Result<(Vec<Step>, Vec<TrajectoryStatus>), WalkError> {
        let groups = group(records, subset);
        let mut steps = Vec::new();
        let mut statuses = Vec::with_capacity(groups.len());
        for (t, (mut rows, st)) in groups.into_iter().enumerate() {
            statuses.push(st);
            if rows.iter().all(|&i| records[i].is_error()) {
                continue;
            }
            // Stable sort by step_index.
            let mut keyed: Vec<(f64, usize)> = Vec::with_capacity(rows.len());
            for &i in &rows {
                keyed.push((step_value(records, i)?, i));
            }
            keyed.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
            rows = keyed.iter().map(|(_, i)| *i).collect();
            let n = rows.len();
            // Output tokens per position (§11).
            let mut out = vec![0u64; n];
            for k in 0..n.saturating_sub(1) {
                out[k] = self.output_estimate(records, rows[k], rows[k + 1])?;
            }
            let positives: Vec<u64> = out[..n - 1].iter().copied().filter(|x| *x > 0).collect();
            out[n - 1] = if positives.is_empty() {
                FALLBACK_OUTPUT_TOKENS
            } else {
                (positives.iter().sum::<u64>() as f64 / positives.len() as f64) as u64
            };
            // Position map: last position wins for duplicate step indices.
            let mut posmap: FxHashMap<u64, usize> = FxHashMap::default();
            for (pos, (s, _)) in keyed.iter().enumerate() {
                posmap.insert(s.to_bits(), pos);
            }
            let passed = st.passed();
            // Last evaluable clock per path (baseline, gold, pred) and tier.
            let mut last: [[Option<f64>; 4]; 3] = [[None; 4]; 3];
            for &(clock, i) in &keyed {
                let r = &records[i];
                let Some(pred) = r.pred() else { continue };
                let pos = posmap[&clock.to_bits()];
                let output = out[pos];
                let (prev_idx, prev_gold, prev_pred) = if pos > 0 {
                    let p = rows[pos - 1];
                    (Some(p), Some(records[p].gold), records[p].pred())
                } else {
                    (None, None, None)
                };
                let expired = |path: usize, tier: Tier| {
                    last[path][tier as usize].is_some_and(|p| clock - p > CACHE_TTL_STEPS as f64)
                };
                let paths = [
                    (Tier::High, prev_idx.map(|_| Tier::High)),
                    (r.gold, prev_gold),
                    (pred, prev_pred),
                ];
                let mut costs = [PathCost {
                    tier: Tier::High,
                    prev_tier: None,
                    cache_expired: false,
                    input_tokens: 0,
                    cache_read: 0,
                    cache_write: 0,
                    cost: 0.0,
                }; 3];
                for (k, (tier, prev_tier)) in paths.into_iter().enumerate() {
                    let exp = expired(k, tier);
                    let prev = match (prev_idx, prev_tier) {
                        (Some(p), Some(pt)) => Some((p, pt)),
                        _ => None,
                    };
                    let (cr, cw) = self.split(records, prev, i, tier, exp)?;
                    let input_tokens = 0;
                    let cost = step_full_cost_usd(
                        CallTokens {
                            input: input_tokens,
                            cache_read: cr,
                            cache_write: cw,
                            output,
                        },
                        tier,
                    );
                    costs[k] = PathCost {
                        tier,
                        prev_tier,
                        cache_expired: exp,
                        input_tokens,
                        cache_read: cr,
                        cache_write: cw,
                        cost,
                    };
                }
                last[0][Tier::High as usize] = Some(clock);
                last[1][r.gold as usize] = Some(clock);
                last[2][pred as usize] = Some(clock);
                steps.push(Step {
                    record: i,
                    trajectory: t,
                    trajectory_passed: passed,
                    output_tokens: output,
                    baseline: costs[0],
                    gold: costs[1],
                    pred: costs[2],
                });
            }
        }
        Ok((steps, statuses))
    }
}
