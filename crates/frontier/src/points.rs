//! The inputs of `routeval frontier` (JSON Lines) and the typed reports it renders.
//!
//! * Cost–quality points: one object per line, `{"system": str, "cost": number,
//!   "quality": number, "param"?: any}` ([`read_points`]); per system its NDCH, AIQ and Pareto
//!   set ([`frontier_report`]).
//! * Strong-share points (RouteLLM): `{"system": str, "strong_pct": number in [0, 100],
//!   "quality": number}` ([`read_strong_share_points`], [`strong_share_report`]).
//!
//! Blank lines are skipped; every other line must parse, and the first problem is a
//! [`routeval_core::Error`] naming the input and its 1-based line. Systems keep their order of
//! first appearance.

use crate::ndch::{CostQuality, aiq, ndch_hull, ndch_routerbench, pareto};
use crate::strong_share::{StrongShareMetrics, strong_share_metrics};
use routeval_core::{Error, Location};
use serde_json::{Map, Value, json};
use std::io::BufRead;

/// One cost–quality point of a system (cost ≥ 0 in the caller's unit, e.g. USD; quality any
/// finite number, e.g. accuracy as a fraction), with the knob setting that produced it.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontierPoint {
    /// System (router) name.
    pub system: String,
    /// Cost (≥ 0, finite).
    pub cost: f64,
    /// Quality (finite).
    pub quality: f64,
    /// The optional `param` value (e.g. the threshold), copied to the Pareto set.
    pub param: Option<Value>,
}

/// One RouteLLM point: quality at a share of strong-model calls.
#[derive(Debug, Clone, PartialEq)]
pub struct StrongSharePoint {
    /// System (router) name.
    pub system: String,
    /// Share of calls routed to the strong model, in percent (0..=100).
    pub strong_pct: f64,
    /// Quality (finite).
    pub quality: f64,
}

fn lines_of<R: BufRead>(
    reader: R,
    source: &str,
    mut each: impl FnMut(&Map<String, Value>, &Location) -> Result<(), Error>,
) -> Result<(), Error> {
    for (i, line) in reader.lines().enumerate() {
        let at = Location::at_line(source, i as u64 + 1);
        let line = line.map_err(|e| Error::io(at.clone(), e))?;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(t)
            .map_err(|e| Error::input(at.clone(), format!("invalid JSON: {e}")))?;
        let Value::Object(o) = v else {
            return Err(Error::input(at, "expected a JSON object"));
        };
        each(&o, &at)?;
    }
    Ok(())
}

fn get_system(o: &Map<String, Value>, at: &Location) -> Result<String, Error> {
    match o.get("system") {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(Error::input(at.clone(), "\"system\" must be a string")),
        None => Err(Error::input(at.clone(), "missing \"system\"")),
    }
}

fn get_number(o: &Map<String, Value>, key: &str, at: &Location) -> Result<f64, Error> {
    match o.get(key) {
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|x| x.is_finite())
            .ok_or_else(|| Error::input(at.clone(), format!("\"{key}\" must be a finite number"))),
        Some(other) => Err(Error::input(
            at.clone(),
            format!("\"{key}\" must be a finite number, not {other}"),
        )),
        None => Err(Error::input(at.clone(), format!("missing \"{key}\""))),
    }
}

/// Read cost–quality points from JSON Lines (`source` names the input in errors).
///
/// Errors: invalid JSON, a line that is not an object, a missing or non-string `system`, a
/// missing, non-numeric or non-finite `cost`/`quality`, a negative cost, no points at all.
pub fn read_points<R: BufRead>(reader: R, source: &str) -> Result<Vec<FrontierPoint>, Error> {
    let mut out = Vec::new();
    lines_of(reader, source, |o, at| {
        let system = get_system(o, at)?;
        let cost = get_number(o, "cost", at)?;
        if cost < 0.0 {
            return Err(Error::input(at.clone(), format!("cost {cost} is negative")));
        }
        let quality = get_number(o, "quality", at)?;
        out.push(FrontierPoint {
            system,
            cost,
            quality,
            param: o.get("param").cloned(),
        });
        Ok(())
    })?;
    if out.is_empty() {
        return Err(Error::input(Location::new(source), "no points"));
    }
    Ok(out)
}

/// Read RouteLLM strong-share points from JSON Lines (`source` names the input in errors).
///
/// Errors: as [`read_points`], and a `strong_pct` outside `[0, 100]`.
pub fn read_strong_share_points<R: BufRead>(
    reader: R,
    source: &str,
) -> Result<Vec<StrongSharePoint>, Error> {
    let mut out = Vec::new();
    lines_of(reader, source, |o, at| {
        let system = get_system(o, at)?;
        let strong_pct = get_number(o, "strong_pct", at)?;
        if !(0.0..=100.0).contains(&strong_pct) {
            return Err(Error::input(
                at.clone(),
                format!("strong_pct {strong_pct} is outside [0, 100] (percent)"),
            ));
        }
        let quality = get_number(o, "quality", at)?;
        out.push(StrongSharePoint {
            system,
            strong_pct,
            quality,
        });
        Ok(())
    })?;
    if out.is_empty() {
        return Err(Error::input(Location::new(source), "no points"));
    }
    Ok(out)
}

/// How the NDCH is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NdchMethod {
    /// [`ndch_hull`]: O(n log n) upper concave envelope (default).
    #[default]
    Hull,
    /// [`ndch_routerbench`]: RouterBench's pairwise algorithm (O(n³)); systems where the
    /// reference crashes get the hull and a note.
    RouterBench,
}

/// One system's frontier.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemFrontier {
    /// System name.
    pub system: String,
    /// AIQ (fraction of `max_cost × quality` units; NaN when `max_cost` is 0).
    pub aiq: f64,
    /// NDCH points in increasing cost (without the flat extension to `max_cost`).
    pub ndch: Vec<CostQuality>,
    /// Pareto-optimal points in increasing cost.
    pub pareto: Vec<CostQuality>,
    /// The `param` of each Pareto point (`None` where the line had none).
    pub pareto_params: Vec<Option<Value>>,
}

/// `routeval frontier`'s report.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontierReport {
    /// The NDCH construction used.
    pub method: NdchMethod,
    /// The largest cost of any system's NDCH (AIQ's x range).
    pub max_cost: f64,
    /// Systems in first-appearance order.
    pub systems: Vec<SystemFrontier>,
    /// Notes for stderr (fallbacks, degenerate inputs).
    pub notes: Vec<String>,
}

fn group_by_system<T>(items: &[T], name: impl Fn(&T) -> &str) -> Vec<(String, Vec<usize>)> {
    let mut order: Vec<(String, Vec<usize>)> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = Default::default();
    for (i, it) in items.iter().enumerate() {
        let n = name(it);
        let slot = *index.entry(n).or_insert_with(|| {
            order.push((n.to_string(), Vec::new()));
            order.len() - 1
        });
        order[slot].1.push(i);
    }
    order
}

/// Per system: NDCH (by `method`), AIQ and Pareto set.
pub fn frontier_report(points: &[FrontierPoint], method: NdchMethod) -> FrontierReport {
    let groups = group_by_system(points, |p| p.system.as_str());
    let mut notes = Vec::new();
    let mut ndchs = Vec::with_capacity(groups.len());
    for (name, idx) in &groups {
        let cq: Vec<CostQuality> = idx
            .iter()
            .map(|&i| (points[i].cost, points[i].quality))
            .collect();
        let h = match method {
            NdchMethod::Hull => ndch_hull(&cq),
            NdchMethod::RouterBench => ndch_routerbench(&cq).unwrap_or_else(|| {
                notes.push(format!(
                    "system {name:?}: RouterBench's algorithm crashes without a point strictly between the cheapest and the most expensive cost ({} point(s)); used the hull",
                    cq.len()
                ));
                ndch_hull(&cq)
            }),
        };
        ndchs.push(h);
    }
    let (max_cost, aiqs) = aiq(&ndchs);
    if max_cost <= 0.0 {
        notes.push("every NDCH ends at cost 0: AIQ is undefined (null)".to_string());
    }
    let systems = groups
        .into_iter()
        .zip(ndchs)
        .zip(aiqs)
        .map(|(((system, idx), ndch), aiq)| {
            let cq: Vec<CostQuality> = idx
                .iter()
                .map(|&i| (points[i].cost, points[i].quality))
                .collect();
            let par = pareto(&cq);
            SystemFrontier {
                system,
                aiq,
                ndch,
                pareto: par.iter().map(|&k| cq[k]).collect(),
                pareto_params: par.iter().map(|&k| points[idx[k]].param.clone()).collect(),
            }
        })
        .collect();
    FrontierReport {
        method,
        max_cost,
        systems,
        notes,
    }
}

/// A float as JSON (NaN/infinity → null).
pub fn num(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

fn pairs(v: &[CostQuality]) -> Value {
    Value::Array(v.iter().map(|&(c, q)| json!([num(c), num(q)])).collect())
}

impl FrontierReport {
    /// `{"max_cost", "systems": [{"system", "aiq", "ndch": [[cost, quality], ...], "pareto":
    /// [[cost, quality], ...], "pareto_params"?: [...]}]}`; `pareto_params` only when some
    /// point has a `param`.
    pub fn to_json(&self) -> Value {
        let systems = self
            .systems
            .iter()
            .map(|s| {
                let mut m = Map::new();
                m.insert("system".into(), Value::String(s.system.clone()));
                m.insert("aiq".into(), num(s.aiq));
                m.insert("ndch".into(), pairs(&s.ndch));
                m.insert("pareto".into(), pairs(&s.pareto));
                if s.pareto_params.iter().any(Option::is_some) {
                    m.insert(
                        "pareto_params".into(),
                        Value::Array(
                            s.pareto_params
                                .iter()
                                .map(|p| p.clone().unwrap_or(Value::Null))
                                .collect(),
                        ),
                    );
                }
                Value::Object(m)
            })
            .collect();
        json!({"max_cost": num(self.max_cost), "systems": Value::Array(systems)})
    }
}

/// `routeval frontier --strong-share`'s report.
#[derive(Debug, Clone, PartialEq)]
pub struct StrongShareReport {
    /// The weak model's quality `W`.
    pub weak: f64,
    /// The strong model's quality `S`.
    pub strong: f64,
    /// Systems in first-appearance order.
    pub systems: Vec<(String, StrongShareMetrics)>,
    /// Notes for stderr.
    pub notes: Vec<String>,
}

/// Per system: AUC, APGR and CPT(20/50/80) (see [`crate::strong_share`]).
pub fn strong_share_report(
    points: &[StrongSharePoint],
    weak: f64,
    strong: f64,
) -> StrongShareReport {
    let mut notes = Vec::new();
    if weak == strong {
        notes.push("weak and strong quality are equal: APGR is undefined (null)".to_string());
    }
    let systems = group_by_system(points, |p| p.system.as_str())
        .into_iter()
        .map(|(name, idx)| {
            let pts: Vec<(f64, f64)> = idx
                .iter()
                .map(|&i| (points[i].strong_pct, points[i].quality))
                .collect();
            let m = strong_share_metrics(&pts, weak, strong);
            if m.running_max_used {
                notes.push(format!(
                    "system {name:?}: quality is not non-decreasing in strong share; CPT interpolates over its running maximum (np.interp is undefined there)"
                ));
            }
            (name, m)
        })
        .collect();
    StrongShareReport {
        weak,
        strong,
        systems,
        notes,
    }
}

impl StrongShareReport {
    /// `{"weak", "strong", "systems": [{"system", "auc", "apgr", "cpt": {"20", "50", "80"}}]}`.
    pub fn to_json(&self) -> Value {
        let systems = self
            .systems
            .iter()
            .map(|(name, m)| {
                let mut cpt = Map::new();
                for (level, v) in &m.cpt {
                    cpt.insert(level.to_string(), num(*v));
                }
                json!({"system": name, "auc": num(m.auc), "apgr": num(m.apgr), "cpt": cpt})
            })
            .collect();
        json!({"weak": num(self.weak), "strong": num(self.strong), "systems": Value::Array(systems)})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_name_file_and_line() {
        let e = read_points("\n{\"system\": \"a\", \"cost\": 1, \"quality\": 0.5}\n{\"system\": \"a\", \"cost\": -1, \"quality\": 0.5}\n".as_bytes(), "p.jsonl").unwrap_err();
        assert_eq!(e.to_string(), "p.jsonl:3: cost -1 is negative");
        let e = read_points("{\"system\": \"a\", \"quality\": 0.5}".as_bytes(), "p").unwrap_err();
        assert_eq!(e.to_string(), "p:1: missing \"cost\"");
        let e = read_strong_share_points(
            "{\"system\": \"a\", \"strong_pct\": 101, \"quality\": 0.5}".as_bytes(),
            "s",
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("s:1: strong_pct 101"));
    }

    #[test]
    fn systems_keep_first_appearance_order() {
        let pts = read_points(
            "{\"system\": \"b\", \"cost\": 1, \"quality\": 0.5, \"param\": 0.3}\n{\"system\": \"a\", \"cost\": 2, \"quality\": 0.7}\n{\"system\": \"b\", \"cost\": 3, \"quality\": 0.9}\n"
                .as_bytes(),
            "p",
        )
        .unwrap();
        let r = frontier_report(&pts, NdchMethod::RouterBench);
        assert_eq!(r.systems[0].system, "b");
        assert_eq!(r.systems[1].system, "a");
        assert_eq!(r.notes.len(), 2);
        assert_eq!(r.max_cost, 3.0);
        let j = r.to_json();
        assert_eq!(j["systems"][0]["pareto_params"], json!([0.3, null]));
    }
}
