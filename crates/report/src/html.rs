//! Self-contained HTML: inline CSS, inline SVG plots, no script, and a Content-Security-Policy
//! that forbids every fetch (`default-src 'none'`), so the file opens from disk, can be mailed
//! or attached, and prints.

use crate::ReportError;
use crate::model::{Block, Document};
use minijinja::{Environment, Value, context};
use serde::Serialize;

const TEMPLATE: &str = include_str!("report.html.j2");

#[derive(Serialize)]
struct Cell<'a> {
    text: &'a str,
    num: bool,
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum BlockView<'a> {
    Paragraph {
        text: &'a str,
    },
    Table {
        caption: Option<&'a str>,
        columns: &'a [String],
        rows: Vec<Vec<Cell<'a>>>,
    },
    Plot {
        title: &'a str,
        svg: Value,
    },
}

#[derive(Serialize)]
struct SectionView<'a> {
    title: &'a str,
    blocks: Vec<BlockView<'a>>,
}

fn numeric(cell: &str) -> bool {
    let t = cell.trim().trim_end_matches(['%', '*', '†']);
    !t.is_empty() && t.parse::<f64>().is_ok()
}

/// Render a document as one self-contained HTML file (UTF-8).
///
/// Every plot is drawn by [`crate::plot_svg`] and inlined; text is HTML-escaped.
/// Errors: [`ReportError::Plot`] (plotters) or [`ReportError::Template`] (minijinja).
pub fn render_html(doc: &Document) -> Result<String, ReportError> {
    let mut sections = Vec::with_capacity(doc.sections.len());
    for s in &doc.sections {
        let mut blocks = Vec::with_capacity(s.blocks.len());
        for b in &s.blocks {
            blocks.push(match b {
                Block::Paragraph { text } => BlockView::Paragraph { text },
                Block::Table(t) => BlockView::Table {
                    caption: t.caption.as_deref(),
                    columns: &t.columns,
                    rows: t
                        .rows
                        .iter()
                        .map(|r| {
                            (0..t.columns.len().max(r.len()))
                                .map(|i| {
                                    let text = r.get(i).map_or("", String::as_str);
                                    Cell {
                                        text,
                                        num: numeric(text),
                                    }
                                })
                                .collect()
                        })
                        .collect(),
                },
                Block::Plot(p) => BlockView::Plot {
                    title: &p.title,
                    // Markup made by plotters (which escapes text); inlined as is.
                    svg: Value::from_safe_string(strip_xml_decl(crate::plot_svg(p)?)),
                },
            });
        }
        sections.push(SectionView {
            title: &s.title,
            blocks,
        });
    }
    let mut env = Environment::new();
    env.add_template("report.html", TEMPLATE)
        .map_err(|e| ReportError::Template(e.to_string()))?;
    let tpl = env
        .get_template("report.html")
        .map_err(|e| ReportError::Template(e.to_string()))?;
    let generator = doc
        .provenance
        .as_ref()
        .map_or("routeval", |p| p.version.as_str());
    tpl.render(context! { doc => Value::from(minijinja::value::Serde(doc)), sections => Value::from(minijinja::value::Serde(&sections)), generator => generator })
        .map_err(|e| ReportError::Template(e.to_string()))
}

/// Drop an `<?xml ...?>` declaration (not allowed inside HTML).
fn strip_xml_decl(svg: String) -> String {
    match svg.strip_prefix("<?xml") {
        Some(rest) => rest
            .find("?>")
            .map_or(svg.clone(), |i| rest[i + 2..].trim_start().to_string()),
        None => svg,
    }
}
