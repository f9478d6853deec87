//! The `file:PATH` and `cmd:COMMAND` predictors' formats, parsed from bytes and lines (the
//! front end does the reading): a predictions file ([`parse_predictions`]: a JSON object
//! `id → entry` or JSON Lines `{"id", "tier_id"|"pred_tier_id"|"tier", "usage"?}`) and one
//! answer line of a predictor process ([`parse_command_answer`]). Tiers are
//! CommonRouterBench's 0..=3 (`low`..`high`).

use super::records::{PredictionMap, TierPrediction, id_key};
use routeval_core::Tier;
use serde_json::Value;

/// A tier by name (`low`, `mid`, `mid_high`, `high`) or id (`0`..`3`).
pub fn parse_tier(s: &str) -> Option<Tier> {
    Tier::from_name(s).or_else(|| s.parse::<i64>().ok().and_then(Tier::from_id))
}

/// A JSON object's members in file order, repeated keys kept (a `Value` would silently keep
/// only the last one).
struct ObjectEntries(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for ObjectEntries {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ObjectEntries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<ObjectEntries, A::Error> {
                let mut out = Vec::new();
                while let Some(kv) = map.next_entry::<String, Value>()? {
                    out.push(kv);
                }
                Ok(ObjectEntries(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// A problem of a predictions file: the 1-based line (JSON Lines) or none (a JSON object),
/// and the problem (`Display`, without the file's name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PredictionsFileError {
    /// 1-based line, `None` for the JSON-object form.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// Ids given more than once (the last prediction of each wins). `Display`: `N repeated
/// id(s), first ID[ at line L]; the last prediction of each id is used`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepeatedIds {
    /// How many entries repeated an earlier id.
    pub count: usize,
    /// The first repeated id.
    pub first: String,
    /// Its 1-based line (JSON Lines only).
    pub line: Option<usize>,
}

impl std::fmt::Display for RepeatedIds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} repeated id(s), first {}", self.count, self.first)?;
        if let Some(l) = self.line {
            write!(f, " at line {l}")?;
        }
        f.write_str("; the last prediction of each id is used")
    }
}

/// A parsed predictions file.
#[derive(Debug)]
pub struct ParsedPredictions {
    /// The predictor (rows without an entry are predictor errors).
    pub map: PredictionMap,
    /// The ids in file order (JSON Lines: one per line, repeats kept).
    pub ids: Vec<String>,
    /// Repeated ids, when any (a warning for the front end).
    pub repeated: Option<RepeatedIds>,
}

/// One entry: a tier name/id string, else `PredictionMap::parse_entry`'s forms.
fn entry(id: &str, v: &Value) -> Result<Option<TierPrediction>, String> {
    if let Some(s) = v.as_str() {
        return parse_tier(s)
            .map(|t| {
                Some(TierPrediction {
                    tier_id: t.id() as i64,
                    usage: None,
                })
            })
            .ok_or_else(|| format!("prediction for {id:?}: unknown tier {s:?}"));
    }
    PredictionMap::parse_entry(id, v).map_err(|e| e.to_string())
}

/// Parse a predictions file: a JSON object `id → entry`, else JSON Lines
/// `{"id", "tier_id"|"pred_tier_id"|"tier", "usage"?}` (blank lines skipped).
///
/// # Errors
/// The first bad entry or line ([`PredictionsFileError`]).
pub fn parse_predictions(bytes: &[u8]) -> Result<ParsedPredictions, PredictionsFileError> {
    let mut pm = PredictionMap::new("predictor error");
    let mut ids = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut repeated: Option<RepeatedIds> = None;
    let mut repeat = |id: &str, line: Option<usize>| {
        repeated
            .get_or_insert_with(|| RepeatedIds {
                count: 0,
                first: id.to_string(),
                line,
            })
            .count += 1;
    };
    let bad = |line: Option<usize>, message: String| PredictionsFileError { line, message };
    if let Ok(ObjectEntries(m)) = serde_json::from_slice::<ObjectEntries>(bytes) {
        for (k, v) in &m {
            pm.insert(k.clone(), entry(k, v).map_err(|e| bad(None, e))?);
            if seen.insert(k.clone()) {
                ids.push(k.clone());
            } else {
                repeat(k, None);
            }
        }
    } else {
        for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
            let text = String::from_utf8_lossy(line);
            if text.trim().is_empty() {
                continue;
            }
            let at = Some(i + 1);
            let v: Value = serde_json::from_str(text.trim())
                .map_err(|e| bad(at, format!("invalid JSON: {e}")))?;
            let id = v
                .get("id")
                .map(id_key)
                .ok_or_else(|| bad(at, "line has no \"id\"".into()))?;
            let t = v
                .get("tier_id")
                .or_else(|| v.get("pred_tier_id"))
                .or_else(|| v.get("tier"))
                .cloned()
                .unwrap_or(Value::Null);
            let e = match (&t, v.get("usage")) {
                (Value::Number(_), Some(u)) => serde_json::json!({"tier_id": t, "usage": u}),
                _ => t,
            };
            pm.insert(id.clone(), entry(&id, &e).map_err(|e| bad(at, e))?);
            if !seen.insert(id.clone()) {
                repeat(&id, at);
            }
            ids.push(id);
        }
    }
    Ok(ParsedPredictions {
        map: pm,
        ids,
        repeated,
    })
}

/// One answer line of a `cmd:` predictor (trimmed): `0`..`3`, a tier name,
/// `{"tier_id", "usage"}`, or `null`/`error: …` (failed). `Err((why, false))` = the predictor
/// reported a failure; `Err((why, true))` = an unreadable answer (the front end warns, then it
/// also counts as a predictor error, the reference's semantics for failed predictions).
/// `clip` shortens an unreadable answer for the message (the front end's rule).
pub fn parse_command_answer(
    a: &str,
    clip: impl Fn(&str) -> String,
) -> Result<TierPrediction, (String, bool)> {
    if let Some(msg) = a.strip_prefix("error:") {
        return Err((msg.trim().to_string(), false));
    }
    if let Some(t) = parse_tier(a) {
        return Ok(TierPrediction {
            tier_id: t.id() as i64,
            usage: None,
        });
    }
    match serde_json::from_str::<Value>(a) {
        Ok(Value::Null) => Err(("predictor error".into(), false)),
        Ok(v @ Value::Object(_)) => PredictionMap::parse_entry("", &v)
            .map_err(|e| (e.problem, true))?
            .ok_or_else(|| ("predictor error".into(), false)),
        Ok(Value::Number(n)) if n.as_i64().is_some() => Ok(TierPrediction {
            tier_id: n.as_i64().unwrap_or(-1),
            usage: None,
        }),
        _ => Err((format!("unreadable answer {:?}", clip(a)), true)),
    }
}
