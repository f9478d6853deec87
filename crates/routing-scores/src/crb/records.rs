//! Evaluation records and tier predictors (`specs/crb.md` §6, §7).

use routeval_core::Tier;
use serde_json::{Map, Value};

/// What a predictor returned for one row: a tier id and optional provider usage.
#[derive(Debug, Clone, PartialEq)]
pub struct TierPrediction {
    /// The predicted tier id (0..=3 to be scored; others are rejected by [`make_record`]).
    pub tier_id: i64,
    /// Provider usage (token counts etc.) copied to the record's `usage` when present.
    pub usage: Option<Value>,
}

/// A router under evaluation: given a question-bank row, predict its tier.
///
/// `Err(message)` marks the row as a predictor error (the reference's error rows: they count
/// as `api_errors` and fail their trajectory). Implementations may batch and parallelise by
/// overriding [`predict_batch`](TierPredictor::predict_batch).
pub trait TierPredictor {
    /// Predict the tier of one row (a question-bank JSON object).
    fn predict(&mut self, row: &Value) -> Result<TierPrediction, String>;

    /// Predict every row, in order (default: one [`predict`](TierPredictor::predict) per row).
    fn predict_batch(&mut self, rows: &[&Value]) -> Vec<Result<TierPrediction, String>> {
        rows.iter().map(|r| self.predict(r)).collect()
    }
}

/// Always the same tier (e.g. `tier:high`, the always-high baseline).
#[derive(Debug, Clone, Copy)]
pub struct ConstantPredictor(pub Tier);

impl TierPredictor for ConstantPredictor {
    fn predict(&mut self, _row: &Value) -> Result<TierPrediction, String> {
        Ok(TierPrediction {
            tier_id: self.0.id() as i64,
            usage: None,
        })
    }
}

/// The gold oracle: predicts each row's own `target_tier_id` (scores: 100 % pass/exact).
#[derive(Debug, Clone, Copy, Default)]
pub struct GoldPredictor;

impl TierPredictor for GoldPredictor {
    fn predict(&mut self, row: &Value) -> Result<TierPrediction, String> {
        match row.get("target_tier_id") {
            Some(Value::Bool(b)) => Ok(TierPrediction {
                tier_id: *b as i64,
                usage: None,
            }),
            Some(v) => v
                .as_i64()
                .map(|t| TierPrediction {
                    tier_id: t,
                    usage: None,
                })
                .ok_or_else(|| "target_tier_id is not an integer".to_string()),
            None => Err("row has no target_tier_id".into()),
        }
    }
}

/// Predictions looked up by row id (a `predictions.json` file: id → tier id, or
/// `{"tier_id", "usage"}`, or `null` = the predictor failed on that row).
#[derive(Debug, Clone, Default)]
pub struct PredictionMap {
    map: rustc_hash::FxHashMap<String, Option<TierPrediction>>,
    /// The message of error rows (`null` entries).
    pub error_message: String,
}

/// A malformed predictions entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("prediction for {id:?}: {problem}")]
pub struct PredictionParseError {
    /// The row id.
    pub id: String,
    /// What is wrong.
    pub problem: String,
}

fn parse_tier_value(v: &Value) -> Option<i64> {
    match v {
        Value::Bool(b) => Some(*b as i64),
        Value::Number(n) => n.as_i64(),
        _ => None,
    }
}

impl PredictionMap {
    /// Parse one entry: an int (bool = 0/1), `{"tier_id": int, "usage": {...}}`, or `null`.
    pub fn parse_entry(
        id: &str,
        v: &Value,
    ) -> Result<Option<TierPrediction>, PredictionParseError> {
        let err = |p: &str| PredictionParseError {
            id: id.to_string(),
            problem: p.to_string(),
        };
        match v {
            Value::Null => Ok(None),
            Value::Object(o) => {
                let t = o
                    .get("tier_id")
                    .and_then(parse_tier_value)
                    .ok_or_else(|| err("object without an integer \"tier_id\""))?;
                let usage = o.get("usage").filter(|u| !u.is_null()).cloned();
                Ok(Some(TierPrediction { tier_id: t, usage }))
            }
            other => parse_tier_value(other)
                .map(|t| {
                    Some(TierPrediction {
                        tier_id: t,
                        usage: None,
                    })
                })
                .ok_or_else(|| err("expected an integer tier id, an object or null")),
        }
    }

    /// Build from `(id, entry)` pairs; `error_message` is used for `null` entries.
    pub fn new(error_message: impl Into<String>) -> Self {
        PredictionMap {
            map: Default::default(),
            error_message: error_message.into(),
        }
    }

    /// Add one parsed entry.
    pub fn insert(&mut self, id: String, p: Option<TierPrediction>) {
        self.map.insert(id, p);
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// The text of a row id used as a lookup key (strings as is, other JSON as its text).
pub fn id_key(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl TierPredictor for PredictionMap {
    fn predict(&mut self, row: &Value) -> Result<TierPrediction, String> {
        let id = row.get("id").map(id_key).unwrap_or_default();
        match self.map.get(&id) {
            Some(Some(p)) => Ok(p.clone()),
            Some(None) => Err(self.error_message.clone()),
            None => Err(format!("no prediction for row id {id:?}")),
        }
    }
}

/// What happened to one row.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The predictor returned a tier.
    Predicted {
        /// The predicted tier (validated to be 0..=3).
        pred: Tier,
        /// Usage reported by the predictor.
        usage: Option<Value>,
    },
    /// The predictor failed; the message is kept in `errors` and the record.
    Error(String),
}

/// One evaluated row (`evaluate_question_bank_rows`'s per-row record).
#[derive(Debug, Clone, PartialEq)]
pub struct EvalRecord {
    /// The row id.
    pub id: Value,
    /// The row's benchmark.
    pub benchmark: String,
    /// The gold tier (`target_tier_id`).
    pub gold: Tier,
    /// `target_tier_id` as written (an int, or a bool Python accepts as one).
    pub gold_raw: Value,
    /// Prediction or error.
    pub outcome: Outcome,
    /// `row.get("instance_id", id)` (the trajectory key).
    pub instance_id: Value,
    /// `row.get("step_index", 1)`.
    pub step_index: Value,
    /// `row.get("total_steps", 1)` (copied; never used in any computation).
    pub total_steps: Value,
    /// `row.get("messages", [])`.
    pub messages: Value,
}

impl EvalRecord {
    /// The predicted tier, if the row is evaluable.
    pub fn pred(&self) -> Option<Tier> {
        match &self.outcome {
            Outcome::Predicted { pred, .. } => Some(*pred),
            Outcome::Error(_) => None,
        }
    }

    /// Whether the predictor failed on this row.
    pub fn is_error(&self) -> bool {
        matches!(self.outcome, Outcome::Error(_))
    }

    /// `pred == gold` (false on error rows).
    pub fn is_match(&self) -> bool {
        self.pred() == Some(self.gold)
    }

    /// `pred >= gold` (false on error rows).
    pub fn is_passed(&self) -> bool {
        self.pred().is_some_and(|p| p >= self.gold)
    }

    /// The record as the reference writes it in `rows` (keys in the reference's order).
    /// Moves `messages` out of the record.
    pub fn to_json(&mut self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), self.id.clone());
        m.insert("benchmark".into(), Value::String(self.benchmark.clone()));
        m.insert("gold_tier_id".into(), self.gold_raw.clone());
        match &self.outcome {
            Outcome::Predicted { pred, .. } => {
                m.insert("pred_tier_id".into(), Value::from(pred.id()));
                m.insert("match".into(), Value::Bool(self.is_match()));
                m.insert("passed".into(), Value::Bool(self.is_passed()));
            }
            Outcome::Error(e) => {
                m.insert("error".into(), Value::String(e.clone()));
            }
        }
        m.insert("instance_id".into(), self.instance_id.clone());
        m.insert("step_index".into(), self.step_index.clone());
        m.insert("total_steps".into(), self.total_steps.clone());
        m.insert("messages".into(), std::mem::take(&mut self.messages));
        if let Outcome::Predicted { usage: Some(u), .. } = &self.outcome {
            m.insert("usage".into(), u.clone());
        }
        Value::Object(m)
    }
}

/// A prediction outside 0..=3 (the reference crashes with `KeyError` while building the summary).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "row {id}: predicted tier id {tier_id} is out of range (expected 0..3: low, mid, mid_high, high; the reference raises KeyError: {tier_id})"
)]
pub struct PredOutOfRange {
    /// The row id (JSON text).
    pub id: String,
    /// The prediction.
    pub tier_id: i64,
}

/// Build the record of one validated row from the predictor's result.
///
/// `row` is the bank object (its `messages` are moved into the record); `id`, `benchmark`,
/// `gold` come from the row validation.
pub fn make_record(
    mut row: Value,
    id: Value,
    benchmark: String,
    gold: Tier,
    result: Result<TierPrediction, String>,
) -> Result<EvalRecord, PredOutOfRange> {
    let outcome = match result {
        Ok(p) => match Tier::from_id(p.tier_id) {
            Some(t) => Outcome::Predicted {
                pred: t,
                usage: p.usage,
            },
            None => {
                return Err(PredOutOfRange {
                    id: id.to_string(),
                    tier_id: p.tier_id,
                });
            }
        },
        Err(e) => Outcome::Error(e),
    };
    let take = |k: &str| row.get(k).cloned();
    let gold_raw = take("target_tier_id").unwrap_or(Value::from(gold.id()));
    let instance_id = take("instance_id").unwrap_or_else(|| id.clone());
    let step_index = take("step_index").unwrap_or(Value::from(1));
    let total_steps = take("total_steps").unwrap_or(Value::from(1));
    let messages = row
        .as_object_mut()
        .and_then(|o| o.get_mut("messages"))
        .map(std::mem::take)
        .unwrap_or(Value::Array(Vec::new()));
    Ok(EvalRecord {
        id,
        benchmark,
        gold,
        gold_raw,
        outcome,
        instance_id,
        step_index,
        total_steps,
        messages,
    })
}
