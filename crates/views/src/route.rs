//! `routeval route` report: per-route and per-group bars of each metric, and the routing counts.

use routeval_report::{BarSeries, Document, Headline, Plot, PlotKind, Section, Table};
use serde_json::{Map, Value};

/// Bars for at most this many metric keys (the table covers all).
const MAX_PLOTS: usize = 12;

fn cell(v: &Value) -> String {
    match v {
        Value::Number(n) => n
            .as_f64()
            .map_or_else(|| n.to_string(), |x| format!("{x:.4}")),
        Value::Null => "n/a".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The route report: `summary` = the flat metrics (`route/key`, `route/group/key`),
/// `routing` = per routed metric `{"selected": {route: n}, "unmatched": n}`, `instances` = lines.
pub fn document(
    summary: &Map<String, Value>,
    routing: &[Value],
    instances: usize,
    config: &str,
    data: &str,
) -> Document {
    let mut doc = Document {
        title: "routeval route: query-routed metrics".into(),
        subtitle: Some(format!(
            "{instances} instances of {data}, routes of {config} (flexeval's QueryRoutedMetric)"
        )),
        ..Default::default()
    };
    doc.headline
        .push(Headline::new("instances", instances.to_string()));
    // Split keys into (route or route/group, metric).
    let mut metrics: Vec<String> = Vec::new();
    let mut rows: Vec<(String, String, String, &Value)> = Vec::new();
    for (k, v) in summary {
        let parts: Vec<&str> = k.split('/').collect();
        let (route, group, metric) = match parts.as_slice() {
            [r, m] => (r.to_string(), String::new(), m.to_string()),
            [r, g @ .., m] => (r.to_string(), g.join("/"), m.to_string()),
            _ => (String::new(), String::new(), k.clone()),
        };
        if !metrics.contains(&metric) {
            metrics.push(metric.clone());
        }
        rows.push((route, group, metric, v));
    }
    let mut sec = Section::new("Metrics per route and group");
    for m in metrics.iter().take(MAX_PLOTS) {
        let sel: Vec<_> = rows.iter().filter(|r| &r.2 == m).collect();
        if !sel.iter().any(|r| r.3.is_number()) {
            continue;
        }
        sec.push(Plot {
            title: format!("{m} per route and group"),
            x_label: format!("{m} (the metric's own units)"),
            y_label: "route / group".into(),
            kind: PlotKind::Bars {
                categories: sel
                    .iter()
                    .map(|r| {
                        if r.1.is_empty() {
                            r.0.clone()
                        } else {
                            format!("  {} / {}", r.0, r.1)
                        }
                    })
                    .collect(),
                series: vec![BarSeries {
                    name: m.clone(),
                    values: sel
                        .iter()
                        .map(|r| r.3.as_f64().unwrap_or(f64::NAN))
                        .collect(),
                    intervals: None,
                }],
                range: None,
            },
        });
    }
    let mut t = Table::new(["route", "group", "metric", "value"]);
    for (r, g, m, v) in &rows {
        t.row([r.clone(), g.clone(), m.clone(), cell(v)]);
    }
    sec.push(t);
    doc.sections.push(sec);
    let mut rt = Table::new(["routed metric", "route", "instances selected"]);
    for (i, r) in routing.iter().enumerate() {
        if let Some(Value::Object(sel)) = r.get("selected") {
            for (route, n) in sel {
                rt.row([
                    (i + 1).to_string(),
                    route.clone(),
                    cell(n).replace(".0000", ""),
                ]);
            }
        }
        let unmatched = r.get("unmatched").and_then(Value::as_u64).unwrap_or(0);
        rt.row([
            (i + 1).to_string(),
            "(no route)".into(),
            unmatched.to_string(),
        ]);
        if unmatched > 0 {
            doc.notes.push(format!(
                "{unmatched} instances matched no route (routed metric {})",
                i + 1
            ));
        }
    }
    doc.sections.push(Section::new("Routing").with(rt));
    doc
}
