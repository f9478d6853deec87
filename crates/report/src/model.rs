//! The document model: what a report says, independent of how it is drawn.

use serde::Serialize;

/// One report: a title, headline numbers, sections of tables and plots, notes and the run's
/// provenance. Built by a front end from a subcommand's typed report; rendered by
/// [`crate::render_markdown`] and [`crate::render_html`].
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Document {
    /// Title, e.g. `"routeval trec: run.txt vs qrels.txt"`.
    pub title: String,
    /// One line under the title (what was evaluated, with which options), if any.
    pub subtitle: Option<String>,
    /// The numbers a reader looks at first, in order (each also appears in a table).
    pub headline: Vec<Headline>,
    /// What qualifies the headline (e.g. "τ chosen on the rows it is reported on: optimistic"),
    /// shown right under it by every renderer. Front ends copy these from the typed report, so
    /// a caveat printed by the text table is never missing from the Markdown or HTML.
    pub caveats: Vec<String>,
    /// Sections in reading order.
    pub sections: Vec<Section>,
    /// Notes of the run (warnings, caveats), shown after the sections.
    pub notes: Vec<String>,
    /// Where the numbers come from; rendered last.
    pub provenance: Option<Provenance>,
}

/// A headline number: a label and its value formatted as in the text table.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Headline {
    /// What the number is, with its unit where it has one (e.g. `"map"`, `"savings (%)"`).
    pub label: String,
    /// The value as printed (the same digits as the text table).
    pub value: String,
}

impl Headline {
    /// A headline from a label and an already formatted value.
    pub fn new(label: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            value: value.into(),
        }
    }
}

/// A titled section of blocks.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Section {
    /// Section heading.
    pub title: String,
    /// Content in order.
    pub blocks: Vec<Block>,
}

impl Section {
    /// An empty section with a heading.
    pub fn new(title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            blocks: Vec::new(),
        }
    }

    /// Append a block (builder style).
    #[must_use]
    pub fn with(mut self, block: impl Into<Block>) -> Self {
        self.blocks.push(block.into());
        self
    }

    /// Append a block.
    pub fn push(&mut self, block: impl Into<Block>) {
        self.blocks.push(block.into());
    }
}

/// A piece of a section.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Block {
    /// A paragraph of plain text (escaped, never interpreted as markup).
    Paragraph {
        /// The text.
        text: String,
    },
    /// A table of formatted cells.
    Table(Table),
    /// A plot; its numbers must also be in a table of the same section (the HTML shows the
    /// plot, Markdown only its title and the table).
    Plot(Plot),
}

impl From<Table> for Block {
    fn from(t: Table) -> Self {
        Block::Table(t)
    }
}

impl From<Plot> for Block {
    fn from(p: Plot) -> Self {
        Block::Plot(p)
    }
}

impl From<&str> for Block {
    fn from(s: &str) -> Self {
        Block::Paragraph { text: s.into() }
    }
}

impl From<String> for Block {
    fn from(s: String) -> Self {
        Block::Paragraph { text: s }
    }
}

/// A table: column headings and rows of already formatted cells.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Table {
    /// Caption (above the table), if any.
    pub caption: Option<String>,
    /// Column headings (with units, e.g. `"cost (USD)"`).
    pub columns: Vec<String>,
    /// Rows; each has `columns.len()` cells (shorter rows are padded with empty cells).
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headings and no rows.
    pub fn new<S: Into<String>>(columns: impl IntoIterator<Item = S>) -> Self {
        Self {
            caption: None,
            columns: columns.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Set the caption (builder style).
    #[must_use]
    pub fn caption(mut self, caption: impl Into<String>) -> Self {
        self.caption = Some(caption.into());
        self
    }

    /// Append a row.
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }
}

/// A plot: title, axis labels (with units) and the data.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Plot {
    /// Title drawn above the plot.
    pub title: String,
    /// Label of the horizontal axis, with its unit.
    pub x_label: String,
    /// Label of the vertical axis, with its unit.
    pub y_label: String,
    /// What is drawn.
    pub kind: PlotKind,
}

/// The kinds of plot routeval draws.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PlotKind {
    /// Horizontal bars, one group per category, one bar per series (value on the horizontal
    /// axis, categories top to bottom), each bar with an optional interval whisker.
    Bars {
        /// Category names, top to bottom.
        categories: Vec<String>,
        /// One or more series; each has one value per category (non-finite values are left
        /// out of the plot).
        series: Vec<BarSeries>,
        /// Fixed value range of the axis (e.g. `(0, 1)` for a fraction); computed from the
        /// data when `None`.
        range: Option<(f64, f64)>,
    },
    /// A histogram of pre-counted bins (the front end aggregates, so a report's size does not
    /// grow with the number of queries).
    Histogram {
        /// Bins in order: `[low, high)` (the last one closed) and the count in it.
        bins: Vec<HistogramBin>,
    },
    /// A matrix of counts (e.g. a confusion matrix: rows gold, columns predicted), cells
    /// shaded by count.
    Heatmap {
        /// Row labels, top to bottom (the vertical axis).
        rows: Vec<String>,
        /// Column labels, left to right (the horizontal axis).
        columns: Vec<String>,
        /// `counts[r][c]`.
        counts: Vec<Vec<u64>>,
    },
    /// Per-item values sorted and drawn as columns from 0 (e.g. per-query differences between
    /// two runs, worst to best), with reference lines and an optional shaded interval (e.g.
    /// the mean difference and its bootstrap CI). Positive and negative columns take two
    /// palette colours. Columns may aggregate runs of neighbouring items (see
    /// [`crate::sorted_bars`]), so the size does not grow with the number of items.
    SortedBars {
        /// Columns left to right, in rank order.
        bars: Vec<RankBar>,
        /// Horizontal reference lines (e.g. the mean difference).
        hlines: Vec<RefLine>,
        /// A horizontal band across the plot (e.g. the mean's confidence interval).
        band: Option<Band>,
    },
    /// Lines and/or points over two numeric axes, with optional reference lines.
    Xy {
        /// The series.
        series: Vec<XySeries>,
        /// Vertical reference lines (e.g. the chosen threshold τ).
        vlines: Vec<RefLine>,
        /// Horizontal reference lines (e.g. a mean and its CI).
        hlines: Vec<RefLine>,
    },
}

/// One series of a bar plot.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BarSeries {
    /// Legend name.
    pub name: String,
    /// One value per category.
    pub values: Vec<f64>,
    /// Optional `(low, high)` interval per category (a whisker), e.g. a bootstrap CI.
    pub intervals: Option<Vec<(f64, f64)>>,
}

/// One column of a [`PlotKind::SortedBars`] plot: items of ranks `from..=to` (1-based, in the
/// sorted order; `from == to` for a single item) and the value drawn (their mean when the
/// column holds several items).
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct RankBar {
    /// First rank covered (1-based).
    pub from: u64,
    /// Last rank covered (inclusive).
    pub to: u64,
    /// The value drawn, in the plot's vertical unit; non-finite columns are left out.
    pub value: f64,
}

/// A labelled horizontal interval `[low, high]` drawn as a shaded band.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Band {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
    /// Legend label, e.g. `"95% CI [-0.012, +0.034]"`.
    pub label: String,
}

/// One bin of a histogram.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct HistogramBin {
    /// Lower edge (inclusive).
    pub low: f64,
    /// Upper edge (exclusive, except for the last bin).
    pub high: f64,
    /// Number of values in the bin.
    pub count: u64,
}

/// How an [`XySeries`] is drawn.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum XyStyle {
    /// A polyline through the points in order.
    Line,
    /// Markers only.
    Points,
    /// A polyline with markers.
    LinePoints,
    /// A step function sampled at the points (sorted by x): the value at each x holds on
    /// (previous x, x], so the line rises or falls vertically at the previous x and runs
    /// horizontally to the next (the threshold sweeps' metrics, which change only where τ
    /// passes a score: a row is routed up when its probability is below τ).
    Step,
}

/// One series of an xy plot.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct XySeries {
    /// Legend name (may carry a figure, e.g. `"router-a (AIQ 0.712)"`).
    pub name: String,
    /// Points `(x, y)`; non-finite points are left out of the plot.
    pub points: Vec<(f64, f64)>,
    /// Line, points or both.
    pub style: XyStyle,
    /// A label per point (e.g. its threshold `τ = 0.4`), drawn next to it; empty = none.
    /// Labels that would overlap one already drawn are left out (the table has them all).
    pub labels: Vec<String>,
    /// Palette index ([`crate::OKABE_ITO`]) to draw with; `None` = the series' position, so
    /// a system's line and points can share a colour.
    pub colour: Option<usize>,
}

/// A labelled reference line at a fixed coordinate.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RefLine {
    /// Where (x for a vertical line, y for a horizontal one).
    pub at: f64,
    /// Legend label, e.g. `"chosen τ = 0.42"`.
    pub label: String,
}

/// Where a report's numbers come from (gathered by the front end, at the IO edge).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Provenance {
    /// The command line, arguments joined by spaces (shell-quoted where needed).
    pub command_line: String,
    /// The input files.
    pub inputs: Vec<InputFile>,
    /// The program and its version, e.g. `"routeval 0.1.0"`.
    pub version: String,
    /// When the report was made, UTC, ISO 8601 (`2026-12-01T15:42:00Z`).
    pub date: String,
}

/// One input file of a run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct InputFile {
    /// The path as given on the command line (`-` for stdin).
    pub path: String,
    /// Size in bytes (`None` for stdin or an unreadable file).
    pub bytes: Option<u64>,
    /// blake3 of the file's bytes, lowercase hex (`None` for stdin or an unreadable file).
    pub blake3: Option<String>,
}
