//! `routeval frontier` report: each system's points and NDCH (AIQ in the legend), or RouteLLM's
//! quality over strong share (AUC, APGR, CPT).

use crate::f4;
use routeval_frontier::points::{
    FrontierPoint, FrontierReport, NdchMethod, StrongSharePoint, StrongShareReport,
};
use routeval_report::{
    Document, Headline, Plot, PlotKind, RefLine, Section, Table, XySeries, XyStyle,
};

/// The points' `param` values as labels (`param = 0.25`; a string as is), or none when no point
/// has one.
fn param_labels<'a>(points: impl Iterator<Item = &'a FrontierPoint>) -> Vec<String> {
    let labels: Vec<Option<String>> = points
        .map(|p| {
            p.param.as_ref().and_then(|v| match v {
                serde_json::Value::Null => None,
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Number(n) => Some(format!("param = {n}")),
                other => Some(other.to_string()),
            })
        })
        .collect();
    if labels.iter().all(Option::is_none) {
        return Vec::new();
    }
    labels.into_iter().map(Option::unwrap_or_default).collect()
}

/// The cost–quality frontier report: `points` = the input lines, `r` = the computed report.
pub fn document(points: &[FrontierPoint], r: &FrontierReport, input: &str) -> Document {
    let method = match r.method {
        NdchMethod::Hull => "hull",
        NdchMethod::RouterBench => "RouterBench's algorithm",
    };
    let mut doc = Document {
        title: "routeval frontier: cost–quality".into(),
        subtitle: Some(format!(
            "{input}; NDCH by {method}; AIQ = area under the NDCH over cost 0..{} divided by that range",
            r.max_cost
        )),
        ..Default::default()
    };
    for s in &r.systems {
        doc.headline
            .push(Headline::new(format!("AIQ {}", s.system), f4(s.aiq)));
    }
    // Each system's input points, grouped once (a filter per system is quadratic: 30k
    // systems took 9.6 s).
    let mut by_system: std::collections::HashMap<&str, Vec<(f64, f64)>> = Default::default();
    for p in points {
        by_system
            .entry(p.system.as_str())
            .or_default()
            .push((p.cost, p.quality));
    }
    let mut series = Vec::new();
    for (i, s) in r.systems.iter().enumerate() {
        series.push(XySeries {
            name: format!("{} NDCH (AIQ {})", s.system, f4(s.aiq)),
            points: s.ndch.clone(),
            style: XyStyle::Line,
            colour: Some(i),
            labels: vec![],
        });
    }
    let mut pts_series = Vec::new();
    for (i, s) in r.systems.iter().enumerate() {
        pts_series.push(XySeries {
            name: format!("{} points", s.system),
            points: by_system
                .get(s.system.as_str())
                .cloned()
                .unwrap_or_default(),
            style: XyStyle::Points,
            colour: Some(i),
            // Each point's `param` (e.g. its threshold τ) next to it, when the input has one.
            labels: param_labels(points.iter().filter(|p| p.system == s.system)),
        });
    }
    series.extend(pts_series);
    let mut sec = Section::new("Frontier").with(Plot {
        title: "Quality over cost, with each system's NDCH".into(),
        x_label: "cost (input units, e.g. USD)".into(),
        y_label: "quality (input units)".into(),
        kind: PlotKind::Xy {
            series,
            vlines: vec![],
            hlines: vec![],
        },
    });
    let mut t = Table::new(["system", "AIQ", "points", "NDCH points", "Pareto points"]);
    for s in &r.systems {
        t.row([
            s.system.clone(),
            f4(s.aiq),
            by_system
                .get(s.system.as_str())
                .map_or(0, Vec::len)
                .to_string(),
            s.ndch.len().to_string(),
            s.pareto.len().to_string(),
        ]);
    }
    sec.push(t);
    let mut nt =
        Table::new(["system", "cost", "quality"]).caption("NDCH points in increasing cost");
    for s in &r.systems {
        for (c, q) in &s.ndch {
            nt.row([s.system.clone(), c.to_string(), q.to_string()]);
        }
    }
    sec.push(nt);
    doc.sections.push(sec);
    doc.notes = r.notes.clone();
    doc
}

/// The RouteLLM strong-share report.
pub fn strong_share_document(
    points: &[StrongSharePoint],
    r: &StrongShareReport,
    input: &str,
) -> Document {
    let mut doc = Document {
        title: "routeval frontier: quality over strong-model share".into(),
        subtitle: Some(format!(
            "{input}; RouteLLM metrics; weak model quality {}, strong model quality {}",
            r.weak, r.strong
        )),
        ..Default::default()
    };
    for (name, m) in &r.systems {
        doc.headline
            .push(Headline::new(format!("APGR {name}"), f4(m.apgr)));
    }
    let mut by_system: std::collections::HashMap<&str, Vec<(f64, f64)>> = Default::default();
    for p in points {
        by_system
            .entry(p.system.as_str())
            .or_default()
            .push((p.strong_pct, p.quality));
    }
    let series = r
        .systems
        .iter()
        .map(|(name, m)| {
            let mut pts: Vec<(f64, f64)> =
                by_system.get(name.as_str()).cloned().unwrap_or_default();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            XySeries {
                name: format!("{name} (APGR {})", f4(m.apgr)),
                points: pts,
                style: XyStyle::LinePoints,
                colour: None,
                labels: vec![],
            }
        })
        .collect();
    let mut sec = Section::new("Quality over strong share").with(Plot {
        title: "Quality over the share of strong-model calls".into(),
        x_label: "strong-model calls (%)".into(),
        y_label: "quality (input units)".into(),
        kind: PlotKind::Xy {
            series,
            vlines: vec![],
            hlines: vec![
                RefLine {
                    at: r.weak,
                    label: format!("weak model {}", r.weak),
                },
                RefLine {
                    at: r.strong,
                    label: format!("strong model {}", r.strong),
                },
            ],
        },
    });
    let mut t = Table::new([
        "system",
        "AUC",
        "APGR",
        "CPT(20%) (%)",
        "CPT(50%) (%)",
        "CPT(80%) (%)",
    ]);
    for (name, m) in &r.systems {
        let mut row = vec![name.clone(), f4(m.auc), f4(m.apgr)];
        row.extend(m.cpt.iter().map(|(_, v)| {
            if v.is_finite() {
                format!("{v:.2}")
            } else {
                "n/a".into()
            }
        }));
        t.row(row);
    }
    sec.push(t);
    doc.sections.push(sec);
    doc.notes = r.notes.clone();
    doc
}
