//! `crb metrics --cases FILE`: the reference CLI's aggregate of a JSON array of case objects
//! ([`aggregate_cases`], the file's text in), with errors naming the case's (or the offending
//! field's) line.

use super::metrics::{MetricsError, RouterbenchAggregate, case_metrics_from_value};
use serde_json::Value;
use serde_json::value::RawValue;

/// A problem of a cases file: the 1-based line when known, and the problem (`Display`,
/// without the file's name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CasesError {
    /// 1-based line of the case (or of its offending field), when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// 1-based line of `part` (a sub-slice of `text`) in `text`.
fn line_of(text: &str, part: &str) -> usize {
    let at = (part.as_ptr() as usize)
        .saturating_sub(text.as_ptr() as usize)
        .min(text.len());
    1 + text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// The aggregate (`aggregate_routerbench_metrics`'s JSON) of the cases in `text`, a non-empty
/// JSON array: every case is read first, then the passed ones are costed (the reference's
/// order); `cap_cost_score_at_100` caps `cost_savings_score` at 100.
///
/// # Errors
/// Invalid JSON, not an array, an empty array, or the first bad case (`case I: problem`, at
/// the case's line or its non-numeric cost field's).
pub fn aggregate_cases(text: &str, cap_cost_score_at_100: bool) -> Result<Value, CasesError> {
    let err = |line, message| CasesError { line, message };
    let v: Value = serde_json::from_str(text)
        .map_err(|e| err(Some(e.line()), format!("invalid JSON: {e}")))?;
    let Value::Array(items) = v else {
        return Err(err(None, "cases file must be a JSON array".into()));
    };
    // The same array as raw slices of the text, for each case's (and field's) line.
    let raw: Vec<&RawValue> =
        serde_json::from_str(text).map_err(|e| err(None, format!("invalid JSON: {e}")))?;
    let fail = |i: usize, e: MetricsError| {
        let key = match &e {
            MetricsError::CostNotNumber { key, .. } => Some(*key),
            _ => None,
        };
        let line = raw.get(i).map(|r| {
            let field = key.and_then(|k| {
                serde_json::from_str::<std::collections::HashMap<String, &RawValue>>(r.get())
                    .ok()?
                    .get(k)
                    .map(|f| f.get())
            });
            line_of(text, field.unwrap_or(r.get()))
        });
        err(line, format!("case {i}: {e}"))
    };
    if items.is_empty() {
        return Err(err(None, "cases must be non-empty".into()));
    }
    let mut cases = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        cases.push(case_metrics_from_value(item).map_err(|e| fail(i, e))?);
    }
    let mut agg = RouterbenchAggregate::default();
    for (i, c) in cases.iter().enumerate() {
        agg.add(c).map_err(|e| fail(i, e))?;
    }
    Ok(agg.to_json(cap_cost_score_at_100))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_their_line() {
        assert_eq!(
            aggregate_cases("[]", false).unwrap_err().message,
            "cases must be non-empty"
        );
        assert_eq!(aggregate_cases("{}", false).unwrap_err().line, None);
        let e = aggregate_cases("[\n1,\n2\n]", false).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.message.starts_with("case 0: "), "{e}");
    }
}
