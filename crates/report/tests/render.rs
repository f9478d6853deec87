//! Renderers on a sample document with every block and plot kind: Markdown snapshot, HTML
//! structure snapshot (tags and text outline, SVG bodies summarised), and the self-contained
//! rules (CSP, no script, no external reference).

use routeval_report::{
    Band, BarSeries, Document, Headline, InputFile, Plot, PlotKind, Provenance, RefLine, Section,
    Table, XySeries, XyStyle, histogram_bins, render_html, render_markdown, sorted_bars,
    thin_sorted,
};

fn sample() -> Document {
    let mut t = Table::new(["set", "accuracy", "n"]).caption("per set <b>");
    t.row(["in-domain", "0.9500", "20"]);
    t.row(["ood | pipes", "0.7000", "10"]);
    let bars = Plot {
        title: "Accuracy per set".into(),
        x_label: "accuracy (fraction)".into(),
        y_label: "set".into(),
        kind: PlotKind::Bars {
            categories: vec!["in-domain".into(), "ood | pipes".into()],
            series: vec![BarSeries {
                name: "accuracy".into(),
                values: vec![0.95, 0.7],
                intervals: Some(vec![(0.9, 0.99), (0.6, 0.8)]),
            }],
            range: Some((0.0, 1.0)),
        },
    };
    let hist = Plot {
        title: "Latency".into(),
        x_label: "latency (ms)".into(),
        y_label: "queries".into(),
        kind: PlotKind::Histogram {
            bins: histogram_bins(&[1.0, 2.0, 2.5, 9.0, f64::NAN], 4),
        },
    };
    let heat = Plot {
        title: "Confusion".into(),
        x_label: "predicted".into(),
        y_label: "gold".into(),
        kind: PlotKind::Heatmap {
            rows: vec!["a".into(), "b".into()],
            columns: vec!["a".into(), "b".into()],
            counts: vec![vec![5, 1], vec![0, 7]],
        },
    };
    let xy = Plot {
        title: "Frontier".into(),
        x_label: "cost (USD)".into(),
        y_label: "quality (fraction)".into(),
        kind: PlotKind::Xy {
            series: vec![XySeries {
                name: "sys (AIQ 0.5)".into(),
                points: vec![(0.0, 0.2), (1.0, 0.6), (f64::INFINITY, 1.0)],
                style: XyStyle::LinePoints,
                colour: None,
                labels: vec!["τ = 0".into(), "τ = 1".into(), "τ = ∞".into()],
            }],
            vlines: vec![RefLine {
                at: 0.5,
                label: "chosen τ".into(),
            }],
            hlines: vec![],
        },
    };
    let diffs = Plot {
        title: "Per-query differences".into(),
        x_label: "query rank by difference".into(),
        y_label: "difference (measure units)".into(),
        kind: PlotKind::SortedBars {
            bars: sorted_bars(&[-0.2, 0.0, 0.1, 0.3, f64::NAN], 10),
            hlines: vec![RefLine {
                at: 0.05,
                label: "mean +0.05".into(),
            }],
            band: Some(Band {
                low: -0.1,
                high: 0.2,
                label: "95% CI <of the mean>".into(),
            }),
        },
    };
    Document {
        title: "routeval sample <report>".into(),
        subtitle: Some("two sets & one plot of each kind".into()),
        headline: vec![Headline::new("accuracy", "0.8667")],
        caveats: vec!["a caveat <b>".into()],
        sections: vec![
            Section::new("Sets").with(bars).with(t),
            Section::new("Latency").with(hist),
            Section::new("Confusion").with(heat),
            Section::new("Differences").with(diffs),
            Section::new("Frontier")
                .with(xy)
                .with("A paragraph with <script>alert(1)</script>."),
        ],
        notes: vec!["one note".into()],
        provenance: Some(Provenance {
            command_line: "routeval gqr score preds.jsonl --html r.html".into(),
            inputs: vec![InputFile {
                path: "preds.jsonl".into(),
                bytes: Some(12),
                blake3: Some("ab".repeat(32)),
            }],
            version: "routeval 0.1.0".into(),
            date: "2026-12-01T00:00:00Z".into(),
        }),
    }
}

/// An outline of the HTML: one line per element (indented by depth) with its direct text;
/// an `<svg>` is summarised by its number of `<text>` labels (the drawing is plotters' business).
fn outline(html: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    let mut rest = html;
    let mut in_svg = 0usize;
    let mut svg_counts: std::collections::BTreeMap<String, usize> = Default::default();
    while let Some(i) = rest.find('<') {
        let text = rest[..i].trim();
        if !text.is_empty() && in_svg == 0 {
            out.push_str(&format!("{}\"{}\"\n", "  ".repeat(depth), text));
        }
        let Some(j) = rest[i..].find('>') else { break };
        let tag = &rest[i + 1..i + j];
        rest = &rest[i + j + 1..];
        if tag.starts_with('!') {
            continue;
        }
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        if name == "style" && !tag.starts_with('/') {
            // Skip the stylesheet body.
            if let Some(k) = rest.find("</style>") {
                rest = &rest[k..];
            }
        }
        let void = matches!(name.as_str(), "meta" | "br") || tag.ends_with('/');
        if tag.starts_with('/') {
            if name == "svg" {
                in_svg -= 1;
                if in_svg == 0 {
                    let c: Vec<String> =
                        svg_counts.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    out.push_str(&format!("{}[svg: {}]\n", "  ".repeat(depth), c.join(" ")));
                    svg_counts.clear();
                }
            }
            if in_svg == 0 || name == "svg" {
                depth = depth.saturating_sub(1);
            }
            continue;
        }
        if in_svg > 0 {
            // Only the labels: the drawing's lines and rectangles are plotters' business.
            if name == "text" {
                *svg_counts.entry(name.clone()).or_default() += 1;
            }
            if name == "svg" {
                in_svg += 1;
            }
            continue;
        }
        if name == "svg" {
            in_svg = 1;
        }
        let attrs: Vec<&str> = tag
            .split_whitespace()
            .skip(1)
            .filter(|a| {
                a.starts_with("class=") || a.starts_with("id=") || a.starts_with("http-equiv=")
            })
            .collect();
        out.push_str(&format!(
            "{}<{name}{}{}>\n",
            "  ".repeat(depth),
            if attrs.is_empty() { "" } else { " " },
            attrs.join(" ")
        ));
        if !void {
            depth += 1;
        }
    }
    out
}

#[test]
fn markdown_snapshot() {
    insta::assert_snapshot!(render_markdown(&sample()));
}

#[test]
fn html_structure_snapshot() {
    let html = render_html(&sample()).unwrap();
    insta::assert_snapshot!(outline(&html));
}

#[test]
fn html_is_self_contained() {
    let html = render_html(&sample()).unwrap();
    assert!(html.contains("Content-Security-Policy"));
    assert!(html.contains("default-src 'none'"));
    let lower = html.to_lowercase();
    assert!(!lower.contains("<script"), "no script element");
    assert!(!lower.contains("src=\""), "no src attribute");
    assert!(!lower.contains("href=\"http"), "no link out");
    assert!(!lower.contains("url("), "no CSS url()");
    assert!(!lower.contains("@import"));
    assert!(!lower.contains("<?xml"));
    // Text is escaped, plots are inlined.
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;")
            || html.contains("&lt;script&gt;alert(1)&lt;/script&gt;")
    );
    assert_eq!(html.matches("<svg").count(), 5);
    // Legend labels are escaped inside the SVG too.
    assert!(html.contains("95% CI &lt;of the mean&gt;"));
}

#[test]
fn histogram_bins_count_every_finite_value() {
    let b = histogram_bins(&[0.0, 0.5, 1.0, 1.0, f64::NAN, f64::INFINITY], 2);
    assert_eq!(b.len(), 2);
    assert_eq!(b.iter().map(|x| x.count).sum::<u64>(), 4);
    assert_eq!((b[0].low, b[1].high), (0.0, 1.0));
    assert_eq!(
        b[1].count, 3,
        "0.5 and the closed upper edge fall in the last bin"
    );
    let one = histogram_bins(&[2.0, 2.0], 10);
    assert_eq!(one.iter().map(|x| x.count).sum::<u64>(), 2);
    assert!(histogram_bins(&[f64::NAN], 3).is_empty());
}

#[test]
fn thin_sorted_keeps_the_ends() {
    let v: Vec<f64> = (0..100_000).map(f64::from).collect();
    let t = thin_sorted(&v, 300);
    assert_eq!(t.len(), 300);
    assert_eq!(t[0], (1.0, 0.0));
    assert_eq!(t[299], (100_000.0, 99_999.0));
    assert_eq!(thin_sorted(&v[..5], 300).len(), 5);
    assert!(thin_sorted(&[], 10).is_empty());
}

#[test]
fn empty_and_non_finite_plots_do_not_fail() {
    let doc = Document {
        title: "empty".into(),
        sections: vec![
            Section::new("s")
                .with(Plot {
                    title: "bars".into(),
                    x_label: "x".into(),
                    y_label: "y".into(),
                    kind: PlotKind::Bars {
                        categories: vec![],
                        series: vec![],
                        range: None,
                    },
                })
                .with(Plot {
                    title: "nan".into(),
                    x_label: "x".into(),
                    y_label: "y".into(),
                    kind: PlotKind::Xy {
                        series: vec![XySeries {
                            name: "n".into(),
                            points: vec![(f64::NAN, 1.0)],
                            style: XyStyle::Line,
                            colour: None,
                            labels: vec![],
                        }],
                        vlines: vec![],
                        hlines: vec![],
                    },
                }),
        ],
        ..Default::default()
    };
    let html = render_html(&doc).unwrap();
    assert!(html.contains("(no data)"));
}

#[test]
#[ignore = "dev aid: writes the sample to $SAMPLE_OUT"]
fn write_sample() {
    // Run with `-- --ignored write_sample` and SAMPLE_OUT=PATH; without it (e.g. under
    // `--include-ignored` in CI) there is nothing to write.
    let Ok(path) = std::env::var("SAMPLE_OUT") else {
        eprintln!("write_sample: SAMPLE_OUT not set, nothing written");
        return;
    };
    std::fs::write(path, render_html(&sample()).unwrap()).unwrap();
}
