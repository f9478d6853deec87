//! GitHub-flavoured Markdown rendering (for CI logs and pull-request comments).

use crate::model::{Block, Document, Table};
use std::fmt::Write as _;

/// Escape a table cell or inline text for GitHub-flavoured Markdown (what every routeval
/// Markdown report does to names and cells): `|`, `\`, `*`, `` ` ``, `<`, `>` are escaped (`_` is
/// left alone: GitHub does not emphasise inside words, and measure names are full of it) and
/// line breaks become spaces, so a cell never breaks the table.
pub fn markdown_escape(s: &str) -> String {
    escape(s)
}

pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' | '\\' | '*' | '`' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

fn is_numeric(cell: &str) -> bool {
    let t = cell.trim().trim_end_matches(['%', '*', '†']);
    !t.is_empty() && t.parse::<f64>().is_ok()
}

fn table(out: &mut String, t: &Table) {
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "*{}*\n", escape(c));
    }
    if t.columns.is_empty() {
        return;
    }
    let n = t.columns.len();
    let cells: Vec<String> = t.columns.iter().map(|c| escape(c)).collect();
    let _ = writeln!(out, "| {} |", cells.join(" | "));
    // Right-align a column whose cells are all numbers.
    let seps: Vec<&str> = (0..n)
        .map(|i| {
            let numeric = !t.rows.is_empty()
                && t.rows
                    .iter()
                    .all(|r| r.get(i).is_none_or(|c| c.is_empty() || is_numeric(c)));
            if numeric { "---:" } else { "---" }
        })
        .collect();
    let _ = writeln!(out, "|{}|", seps.join("|"));
    for r in &t.rows {
        let cells: Vec<String> = (0..n)
            .map(|i| escape(r.get(i).map_or("", String::as_str)))
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out.push('\n');
}

/// Render a document as Markdown: `#` title, a headline table, its caveats (one quoted
/// `**Caveat:**` line each), `##` sections with tables
/// (plots appear as their title only: their numbers are in the section's tables), notes and
/// provenance.
pub fn render_markdown(doc: &Document) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", escape(&doc.title));
    if let Some(s) = &doc.subtitle {
        let _ = writeln!(out, "{}\n", escape(s));
    }
    if !doc.headline.is_empty() {
        let mut t = Table::new(["headline", "value"]);
        for h in &doc.headline {
            t.row([h.label.as_str(), h.value.as_str()]);
        }
        table(&mut out, &t);
    }
    for c in &doc.caveats {
        let _ = writeln!(out, "> **Caveat:** {}\n", escape(c));
    }
    for s in &doc.sections {
        let _ = writeln!(out, "## {}\n", escape(&s.title));
        for b in &s.blocks {
            match b {
                Block::Paragraph { text } => {
                    let _ = writeln!(out, "{}\n", escape(text));
                }
                Block::Table(t) => table(&mut out, t),
                Block::Plot(p) => {
                    let _ = writeln!(
                        out,
                        "*Plot (in the HTML report): {}; numbers in the table.*\n",
                        escape(&p.title)
                    );
                }
            }
        }
    }
    if !doc.notes.is_empty() {
        out.push_str("## Notes\n\n");
        for n in &doc.notes {
            let _ = writeln!(out, "- {}", escape(n));
        }
        out.push('\n');
    }
    if let Some(p) = &doc.provenance {
        out.push_str("## Provenance\n\n");
        let _ = writeln!(out, "- command: `{}`", p.command_line.replace('`', "'"));
        let _ = writeln!(out, "- version: {}", escape(&p.version));
        let _ = writeln!(out, "- date: {}", escape(&p.date));
        if !p.inputs.is_empty() {
            out.push('\n');
            let mut t = Table::new(["input", "bytes", "blake3"]);
            for i in &p.inputs {
                t.row([
                    i.path.clone(),
                    i.bytes.map_or_else(|| "-".into(), |b| b.to_string()),
                    i.blake3.clone().unwrap_or_else(|| "-".into()),
                ]);
            }
            table(&mut out, &t);
        }
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}
