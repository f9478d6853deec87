//! routeval's report documents (issue 13).
//!
//! A [`Document`] is what a report says: a title, headline numbers, sections of tables and
//! plots, notes and the run's [`Provenance`]. Front ends build one from a subcommand's typed
//! report (the library crates own the numbers; this crate only presents them) and render it:
//!
//! * [`render_markdown`]: GitHub-flavoured Markdown for CI logs and pull-request comments
//!   (plots appear by title; their numbers are in the tables next to them);
//! * [`render_html`]: one self-contained HTML file: inline CSS, inline SVG plots drawn with
//!   plotters' SVG backend ([`plot_svg`], the colour-blind-safe [`OKABE_ITO`] palette), no
//!   script, and a Content-Security-Policy `default-src 'none'` so that nothing is ever fetched.
//!
//! Pure: no IO, no clocks (the date in the provenance is handed in).

mod html;
mod markdown;
mod model;
mod plot;

pub use html::render_html;
pub use markdown::{markdown_escape, render_markdown};
pub use model::{
    Band, BarSeries, Block, Document, Headline, HistogramBin, InputFile, Plot, PlotKind,
    Provenance, RankBar, RefLine, Section, Table, XySeries, XyStyle,
};
pub use plot::{OKABE_ITO, plot_svg};

/// Why a report could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// plotters failed to draw a plot (the message is plotters' error).
    #[error("cannot draw a plot: {0}")]
    Plot(String),
    /// The HTML template failed (a bug: the template is built in).
    #[error("cannot render the HTML template: {0}")]
    Template(String),
}

/// Equal-width histogram bins of the finite `values` over `[min, max]`: `bins` bins (at least
/// 1), the last one closed. Empty when there is no finite value; one bin of width 0 is widened
/// to `[v - 0.5, v + 0.5]`. Used to keep a report's size independent of the number of queries.
pub fn histogram_bins(values: &[f64], bins: usize) -> Vec<HistogramBin> {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let Some(lo) = finite.iter().copied().reduce(f64::min) else {
        return Vec::new();
    };
    let hi = finite.iter().copied().fold(lo, f64::max);
    let (lo, hi) = if hi - lo <= 0.0 {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    };
    let n = bins.max(1);
    let width = (hi - lo) / n as f64;
    let mut counts = vec![0u64; n];
    for v in finite {
        let i = (((v - lo) / width) as usize).min(n - 1);
        counts[i] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, count)| HistogramBin {
            low: lo + width * i as f64,
            high: if i + 1 == n {
                hi
            } else {
                lo + width * (i + 1) as f64
            },
            count,
        })
        .collect()
}

/// At most `max_points` points of a sorted series, taken at evenly spaced ranks (first and last
/// always kept), as `(rank, value)` with 1-based ranks: a sorted per-query curve of 100k
/// queries drawn with a few hundred points.
pub fn thin_sorted(values: &[f64], max_points: usize) -> Vec<(f64, f64)> {
    let n = values.len();
    if n == 0 {
        return Vec::new();
    }
    let m = max_points.max(2).min(n);
    if m == n {
        return values
            .iter()
            .enumerate()
            .map(|(i, &v)| ((i + 1) as f64, v))
            .collect();
    }
    (0..m)
        .map(|k| {
            let i = if m == 1 { 0 } else { k * (n - 1) / (m - 1) };
            ((i + 1) as f64, values[i])
        })
        .collect()
}

/// Columns of a [`PlotKind::SortedBars`] plot for `sorted` (values already in rank order):
/// one column per value when there are at most `max_bars` (at least 1), else `max_bars`
/// columns over contiguous runs of near-equal length, each drawn at its run's mean. A
/// 100k-query difference plot thus stays a few hundred SVG rectangles.
pub fn sorted_bars(sorted: &[f64], max_bars: usize) -> Vec<RankBar> {
    let n = sorted.len();
    let m = max_bars.max(1).min(n);
    (0..m)
        .map(|k| {
            let (i, j) = (k * n / m, (k + 1) * n / m);
            let run = &sorted[i..j];
            RankBar {
                from: i as u64 + 1,
                to: j as u64,
                value: run.iter().sum::<f64>() / run.len() as f64,
            }
        })
        .collect()
}

#[cfg(test)]
mod sorted_bars_tests {
    use super::*;

    #[test]
    fn one_column_per_value_or_means_of_even_runs() {
        let v = [-2.0, -1.0, 0.0, 1.0, 5.0];
        let one = sorted_bars(&v, 10);
        assert_eq!(one.len(), 5);
        assert_eq!((one[4].from, one[4].to, one[4].value), (5, 5, 5.0));
        let agg = sorted_bars(&v, 2);
        assert_eq!(agg.len(), 2);
        assert_eq!((agg[0].from, agg[0].to, agg[0].value), (1, 2, -1.5));
        assert_eq!((agg[1].from, agg[1].to, agg[1].value), (3, 5, 2.0));
        assert!(sorted_bars(&[], 4).is_empty());
        // Every rank is covered exactly once.
        let many: Vec<f64> = (0..1001).map(f64::from).collect();
        let cols = sorted_bars(&many, 200);
        assert_eq!(cols.len(), 200);
        assert_eq!(cols[0].from, 1);
        assert_eq!(cols[199].to, 1001);
        for w in cols.windows(2) {
            assert_eq!(w[0].to + 1, w[1].from);
        }
    }
}
