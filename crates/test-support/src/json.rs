//! The strict JSON comparison for goldens.
//!
//! Conventions of the goldens (`../shared/README.md`): non-finite floats are written as the
//! strings `"NaN"`, `"Infinity"`, `"-Infinity"`; object key order is the reference's emission
//! order; integers and floats are distinct (`1` vs `1.0`). The rules of [`JsonCompare::strict`]:
//!
//! * objects: the same keys in the same order (key order can be relaxed with a reason, for
//!   outputs whose order the reference does not define);
//! * numbers: an integer equals only the same integer, a float only a float with the same bits
//!   (so `-0.0 != 0.0`); a tolerance applies only when the test names it and why;
//! * non-finite: expected `"NaN"` equals only a NaN (a got-side `"NaN"` string, or `null` when
//!   the test declares, with a reason, that the product writes NaN as `null`); `"Infinity"` and
//!   `"-Infinity"` equal only the same infinity, never `null`;
//! * arrays: same length, element by element; everything else: equal values.
//!
//! Every mismatch is reported with its path (`$.rows[3].tier`).

use serde_json::Value;
use std::fmt::Write;

/// A float tolerance a test opts into: `|a - b| <= abs + rel * max(|a|, |b|)`.
#[derive(Debug, Clone, Copy)]
pub struct Tolerance {
    /// Absolute part.
    pub abs: f64,
    /// Relative part (fraction, not percent).
    pub rel: f64,
    /// Why the values may differ (shown in failures).
    pub reason: &'static str,
}

/// A configured comparison; start from [`JsonCompare::strict`].
#[derive(Debug, Clone)]
pub struct JsonCompare {
    key_order: bool,
    tolerance: Option<Tolerance>,
    nan_as_null: Option<&'static str>,
    ignored: Vec<(String, &'static str)>,
    max_report: usize,
}

impl Default for JsonCompare {
    fn default() -> Self {
        Self::strict()
    }
}

/// The golden spelling of a float: a JSON number, or `"NaN"` / `"Infinity"` / `"-Infinity"`.
pub fn num(x: f64) -> Value {
    if x.is_nan() {
        Value::String("NaN".into())
    } else if x == f64::INFINITY {
        Value::String("Infinity".into())
    } else if x == f64::NEG_INFINITY {
        Value::String("-Infinity".into())
    } else {
        serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

/// `assert!` that `got` equals the golden `expected` under [`JsonCompare::strict`];
/// `context` names the case in the failure message.
#[track_caller]
pub fn assert_json_eq(expected: &Value, got: &Value, context: &str) {
    JsonCompare::strict().assert_eq(expected, got, context);
}

/// A non-finite float written the golden way (`"NaN"`, `"Infinity"`, `"-Infinity"`).
fn special(v: &Value) -> Option<f64> {
    match v.as_str()? {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// How a value is shown in a failure: numbers with their kind (and a float's bits).
fn show(v: &Value) -> String {
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            format!("float {f:?} (bits {:#018x})", f.to_bits())
        }
        Value::Number(n) => format!("int {n}"),
        Value::String(s) if special(v).is_some() => format!("non-finite float {s}"),
        Value::Object(m) => format!("object with {} key(s)", m.len()),
        Value::Array(a) => format!("array of {}", a.len()),
        other => {
            let s = other.to_string();
            if s.chars().count() > 120 {
                format!("{}…", s.chars().take(120).collect::<String>())
            } else {
                s
            }
        }
    }
}

fn same_int(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    let wide = |n: &serde_json::Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    wide(a).is_some() && wide(a) == wide(b)
}

impl JsonCompare {
    /// Every rule strict (see the module docs).
    pub fn strict() -> Self {
        JsonCompare {
            key_order: true,
            tolerance: None,
            nan_as_null: None,
            ignored: Vec::new(),
            max_report: 25,
        }
    }

    /// Compare objects as key sets only; `reason` says why the order is not part of the
    /// output (e.g. the reference writes a dict whose order it does not define).
    pub fn ignore_key_order(mut self, reason: &'static str) -> Self {
        assert!(!reason.is_empty(), "a relaxed key order needs a reason");
        self.key_order = false;
        self
    }

    /// Accept floats within `abs + rel * max(|a|, |b|)`; `reason` is mandatory.
    pub fn tolerance(mut self, abs: f64, rel: f64, reason: &'static str) -> Self {
        assert!(!reason.is_empty(), "a tolerance needs a reason");
        self.tolerance = Some(Tolerance { abs, rel, reason });
        self
    }

    /// Accept `null` for an expected `"NaN"` (only NaN: never an infinity), for outputs that
    /// document writing NaN as `null`; `reason` is mandatory.
    pub fn nan_as_null(mut self, reason: &'static str) -> Self {
        assert!(!reason.is_empty(), "NaN-as-null needs a reason");
        self.nan_as_null = Some(reason);
        self
    }

    /// Leave out the member at `path` (`$.classifier`, `$.rows[0].usage`) on both sides;
    /// `reason` is mandatory.
    pub fn ignore_path(mut self, path: &str, reason: &'static str) -> Self {
        assert!(!reason.is_empty(), "an ignored path needs a reason");
        self.ignored.push((path.to_string(), reason));
        self
    }

    /// Every difference between the golden `expected` and `got`, one line each, with its path.
    pub fn diff(&self, expected: &Value, got: &Value) -> Vec<String> {
        let mut out = Vec::new();
        self.walk(expected, got, &mut String::from("$"), &mut out);
        out
    }

    /// Panic with the differences (at most 25 shown, and their count) unless there are none.
    #[track_caller]
    pub fn assert_eq(&self, expected: &Value, got: &Value, context: &str) {
        let d = self.diff(expected, got);
        if !d.is_empty() {
            panic!("{}", self.report(context, &d));
        }
    }

    /// The failure text for `diffs` (empty when there are none).
    pub fn report(&self, context: &str, diffs: &[String]) -> String {
        if diffs.is_empty() {
            return String::new();
        }
        let mut s = format!("{context}: {} JSON difference(s)", diffs.len());
        if let Some(t) = &self.tolerance {
            let _ = write!(
                s,
                " (float tolerance abs {:e} rel {:e}: {})",
                t.abs, t.rel, t.reason
            );
        }
        for d in diffs.iter().take(self.max_report) {
            s.push_str("\n  ");
            s.push_str(d);
        }
        if diffs.len() > self.max_report {
            let _ = write!(s, "\n  … and {} more", diffs.len() - self.max_report);
        }
        s
    }

    fn ignored(&self, path: &str) -> bool {
        self.ignored.iter().any(|(p, _)| p == path)
    }

    fn floats_match(&self, a: f64, b: f64) -> bool {
        if a.is_nan() || b.is_nan() {
            return a.is_nan() && b.is_nan();
        }
        if a.to_bits() == b.to_bits() {
            return true;
        }
        match &self.tolerance {
            Some(t) if a.is_finite() && b.is_finite() => {
                (a - b).abs() <= t.abs + t.rel * a.abs().max(b.abs())
            }
            _ => false,
        }
    }

    fn walk(&self, e: &Value, g: &Value, path: &mut String, out: &mut Vec<String>) {
        match (e, g) {
            (Value::Object(em), Value::Object(gm)) => {
                let keep = |k: &&String, p: &str| !self.ignored(&format!("{p}.{k}"));
                let ek: Vec<&String> = em.keys().filter(|k| keep(k, path)).collect();
                let gk: Vec<&String> = gm.keys().filter(|k| keep(k, path)).collect();
                let missing: Vec<&&String> = ek.iter().filter(|k| !gm.contains_key(**k)).collect();
                let extra: Vec<&&String> = gk.iter().filter(|k| !em.contains_key(**k)).collect();
                if !missing.is_empty() {
                    out.push(format!("at {path}: missing key(s) {missing:?}"));
                }
                if !extra.is_empty() {
                    out.push(format!("at {path}: unexpected key(s) {extra:?}"));
                }
                if self.key_order && missing.is_empty() && extra.is_empty() && ek != gk {
                    out.push(format!(
                        "at {path}: key order differs: expected {ek:?}, got {gk:?}"
                    ));
                }
                for k in ek {
                    if let Some(gv) = gm.get(k) {
                        let len = path.len();
                        let _ = write!(path, ".{k}");
                        self.walk(&em[k], gv, path, out);
                        path.truncate(len);
                    }
                }
            }
            (Value::Array(ea), Value::Array(ga)) => {
                if ea.len() != ga.len() {
                    out.push(format!(
                        "at {path}: expected {} element(s), got {}",
                        ea.len(),
                        ga.len()
                    ));
                }
                for (i, (a, b)) in ea.iter().zip(ga).enumerate() {
                    let len = path.len();
                    let _ = write!(path, "[{i}]");
                    self.walk(a, b, path, out);
                    path.truncate(len);
                }
            }
            (Value::Number(a), Value::Number(b)) => {
                let ok = match (a.is_f64(), b.is_f64()) {
                    (true, true) => {
                        self.floats_match(a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0))
                    }
                    (false, false) => same_int(a, b),
                    _ => false,
                };
                if !ok {
                    out.push(format!("at {path}: expected {}, got {}", show(e), show(g)));
                }
            }
            _ => {
                if let Some(x) = special(e) {
                    let ok = match g {
                        Value::Null => x.is_nan() && self.nan_as_null.is_some(),
                        _ => special(g).is_some_and(|y| self.floats_match(x, y)),
                    };
                    if !ok {
                        out.push(format!("at {path}: expected {}, got {}", show(e), show(g)));
                    }
                } else if e != g {
                    out.push(format!("at {path}: expected {}, got {}", show(e), show(g)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn d(e: &str, g: &str) -> Vec<String> {
        JsonCompare::strict().diff(
            &serde_json::from_str(e).unwrap(),
            &serde_json::from_str(g).unwrap(),
        )
    }

    #[test]
    fn equal_values_have_no_differences() {
        assert!(
            d(
                r#"{"a": [1, 2.5, "x", null, true], "b": {}}"#,
                r#"{"a": [1, 2.5, "x", null, true], "b": {}}"#
            )
            .is_empty()
        );
    }

    #[test]
    fn key_set_and_order() {
        assert_eq!(
            d(r#"{"a": 1, "b": 2}"#, r#"{"b": 2, "a": 1}"#),
            [r#"at $: key order differs: expected ["a", "b"], got ["b", "a"]"#]
        );
        let relaxed = JsonCompare::strict().ignore_key_order("test");
        assert!(
            relaxed
                .diff(&json!({"a": 1, "b": 2}), &json!({"b": 2, "a": 1}))
                .is_empty()
        );
        assert_eq!(
            d(r#"{"a": {"x": 1}}"#, r#"{"a": {"y": 1}}"#),
            [
                r#"at $.a: missing key(s) ["x"]"#,
                r#"at $.a: unexpected key(s) ["y"]"#
            ]
        );
    }

    #[test]
    fn ints_and_floats_are_apart_and_floats_bit_exact() {
        assert_eq!(d("[1]", "[1.0]").len(), 1);
        assert!(d("[1.0]", "[1.0]").is_empty());
        assert_eq!(d("[0.1]", "[0.10000000000000002]").len(), 1);
        assert_eq!(d("[0.0]", "[-0.0]").len(), 1);
        assert!(d("[18446744073709551615]", "[18446744073709551615]").is_empty());
        assert_eq!(d("[-1]", "[18446744073709551615]").len(), 1);
        let tol = JsonCompare::strict().tolerance(0.0, 1e-15, "test");
        assert!(
            tol.diff(&json!([0.1]), &json!([0.10000000000000002]))
                .is_empty()
        );
        assert_eq!(tol.diff(&json!([0.1]), &json!([0.1001])).len(), 1);
        assert_eq!(tol.diff(&json!([1]), &json!([1.0])).len(), 1);
    }

    #[test]
    fn non_finite_rules() {
        assert!(
            d(
                r#"["NaN", "Infinity", "-Infinity"]"#,
                r#"["NaN", "Infinity", "-Infinity"]"#
            )
            .is_empty()
        );
        assert_eq!(
            d(r#"["NaN"]"#, "[null]").len(),
            1,
            "null is not NaN by default"
        );
        assert_eq!(d(r#"["NaN"]"#, "[1.0]").len(), 1);
        assert_eq!(d(r#"["Infinity"]"#, r#"["-Infinity"]"#).len(), 1);
        let nn = JsonCompare::strict().nan_as_null("test");
        assert!(nn.diff(&json!(["NaN"]), &json!([null])).is_empty());
        assert_eq!(nn.diff(&json!(["Infinity"]), &json!([null])).len(), 1);
        assert_eq!(nn.diff(&json!(["-Infinity"]), &json!([null])).len(), 1);
        assert_eq!(nn.diff(&json!([null]), &json!(["NaN"])).len(), 1);
        assert_eq!(num(f64::NAN), json!("NaN"));
        assert_eq!(num(f64::NEG_INFINITY), json!("-Infinity"));
        assert_eq!(num(0.5), json!(0.5));
    }

    #[test]
    fn paths_name_the_place_and_ignored_paths_are_skipped() {
        let e = json!({"rows": [{"tier": 1}, {"tier": 2}], "label": "a"});
        let g = json!({"rows": [{"tier": 1}, {"tier": 3}], "label": "b"});
        let diffs = JsonCompare::strict()
            .ignore_path("$.label", "test")
            .diff(&e, &g);
        assert_eq!(diffs, ["at $.rows[1].tier: expected int 2, got int 3"]);
        assert_eq!(d("[1, 2]", "[1]"), ["at $: expected 2 element(s), got 1"]);
    }
}
