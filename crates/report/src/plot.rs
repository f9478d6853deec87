//! SVG plots drawn with plotters' SVG backend (no system fonts: text is emitted as SVG
//! `<text>` elements and laid out by the browser).

use crate::ReportError;
use crate::model::{Plot, PlotKind, XyStyle};
use plotters::coord::Shift;
use plotters::prelude::*;

/// The Okabe–Ito colour-blind-safe palette (Okabe & Ito 2008, "Color Universal Design"),
/// black last; series take colours in this order.
pub const OKABE_ITO: [(u8, u8, u8); 8] = [
    (0, 114, 178),   // blue
    (230, 159, 0),   // orange
    (0, 158, 115),   // bluish green
    (204, 121, 167), // reddish purple
    (86, 180, 233),  // sky blue
    (213, 94, 0),    // vermillion
    (240, 228, 66),  // yellow
    (0, 0, 0),       // black
];

fn colour(i: usize) -> RGBColor {
    let (r, g, b) = OKABE_ITO[i % OKABE_ITO.len()];
    RGBColor(r, g, b)
}

const WIDTH: u32 = 720;
const FONT: &str = "sans-serif";
/// Font sizes handed to plotters. Its SVG backend writes `font-size` = size / 1.24, so these
/// give 11.3 px (labels, legend), 12.9 px (axis titles) and 16.1 px (titles) at the default
/// width of 720 px: nothing under 11 px.
const LABEL: i32 = 14;
const AXIS: i32 = 16;
const TITLE: i32 = 20;
/// Estimated width of one character at [`LABEL`] (px), for layout (legend, label areas).
const CHAR_W: u32 = 7;
/// plotters' default number of labelled ticks per axis (`x_labels`/`y_labels`).
const TICKS: usize = 10;

fn err<E: std::fmt::Debug>(e: E) -> ReportError {
    ReportError::Plot(format!("{e:?}"))
}

/// Shorten a label for an axis (the table next to the plot has the full text).
fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

/// `(low, high)` of the finite values, padded so that the range is never empty; `None` when
/// there is no finite value.
fn span(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for v in values {
        if v.is_finite() {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    if !lo.is_finite() {
        return None;
    }
    if hi - lo < 1e-12 {
        let pad = if lo.abs() > 1e-12 {
            lo.abs() * 0.1
        } else {
            1.0
        };
        return Some((lo - pad, hi + pad));
    }
    let pad = (hi - lo) * 0.05;
    Some((lo - pad, hi + pad))
}

/// How the tick labels of one axis are written: the ticks plotters draws for the range are
/// computed once, values within a hair of a round tick are snapped to it (so floating-point
/// noise such as `-2.78e-17` reads `0`), and every label gets the fewest decimals that write
/// each tick exactly at its spacing (so `0.25, 0.50, 0.75` rather than `0.250` or `0.3`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TickFormat {
    /// Decimals (fixed notation) or mantissa decimals (scientific).
    decimals: usize,
    /// Scientific notation (very large or very small ticks).
    scientific: bool,
    /// Values closer than this to 0 print as `0`.
    snap: f64,
}

impl TickFormat {
    /// The format for an axis over `lo..hi` with about `n` labelled ticks (plotters' own
    /// choice of ticks, `Ranged::key_points`).
    pub(crate) fn for_range(lo: f64, hi: f64, n: usize) -> Self {
        use plotters::coord::ranged1d::Ranged;
        use plotters::coord::types::RangedCoordf64;
        let fallback = TickFormat {
            decimals: 2,
            scientific: false,
            snap: 1e-12,
        };
        if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
            return fallback;
        }
        let ticks: Vec<f64> = RangedCoordf64::from(lo..hi).key_points(n.max(2));
        let step = ticks
            .windows(2)
            .map(|w| (w[1] - w[0]).abs())
            .filter(|d| *d > 0.0)
            .fold(f64::INFINITY, f64::min);
        let step = if step.is_finite() { step } else { hi - lo };
        let snap = (step * 1e-9).max(1e-12);
        let big = ticks.iter().map(|t| t.abs()).fold(0.0f64, f64::max);
        let tol = step * 1e-6;
        if big >= 1e6 || step < 1e-6 {
            // Mantissa decimals: enough to tell ticks `step` apart at the largest magnitude.
            let decimals = ((big.max(step) / step).log10().ceil().max(0.0) as usize).min(12);
            return TickFormat {
                decimals,
                scientific: true,
                snap,
            };
        }
        let decimals = (0..=12)
            .find(|&d| {
                let m = 10f64.powi(d as i32);
                ticks.iter().all(|t| ((t * m).round() / m - t).abs() <= tol)
            })
            .unwrap_or(12);
        TickFormat {
            decimals,
            scientific: false,
            snap,
        }
    }

    /// The label of tick `x`.
    pub(crate) fn label(&self, x: f64) -> String {
        let x = if x.abs() < self.snap { 0.0 } else { x };
        let d = self.decimals;
        let s = if self.scientific {
            if x == 0.0 {
                return "0".into();
            }
            format!("{x:.d$e}")
        } else {
            format!("{x:.d$}")
        };
        // `-0.00` after rounding is 0.
        match s.strip_prefix('-') {
            Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
            _ => s,
        }
    }
}

/// How a legend entry is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Swatch {
    /// A solid line.
    Line,
    /// A dashed reference line.
    Dashed,
    /// A filled box (bars, columns).
    Box,
    /// A translucent box (a band).
    Band,
    /// A marker.
    Dot,
}

/// One legend entry: name, colour, swatch.
#[derive(Debug, Clone)]
struct LegendEntry {
    name: String,
    colour: RGBColor,
    swatch: Swatch,
}

const LEGEND_ROW: u32 = 22;
const LEGEND_PAD: u32 = 12;

/// The legend's rows: entries laid out left to right, wrapped at the plot's width.
fn legend_rows(entries: &[LegendEntry]) -> Vec<Vec<(u32, &LegendEntry)>> {
    let mut rows: Vec<Vec<(u32, &LegendEntry)>> = Vec::new();
    let mut x = LEGEND_PAD;
    for e in entries {
        let w = 28 + CHAR_W * short(&e.name, 80).chars().count() as u32 + 18;
        if rows.is_empty() || (x + w > WIDTH - LEGEND_PAD && x > LEGEND_PAD) {
            rows.push(Vec::new());
            x = LEGEND_PAD;
        }
        if let Some(r) = rows.last_mut() {
            r.push((x, e));
        }
        x += w;
    }
    rows
}

/// Height (px) of the legend strip below the plot (0 without entries).
fn legend_height(entries: &[LegendEntry]) -> u32 {
    let n = legend_rows(entries).len() as u32;
    if n == 0 { 0 } else { n * LEGEND_ROW + 10 }
}

/// Draw the legend into its own strip below the plotting area, so it never covers data.
fn draw_legend(area: &Area<'_>, entries: &[LegendEntry]) -> Result<(), ReportError> {
    if entries.is_empty() {
        return Ok(());
    }
    let (w, h) = area.dim_in_pixel();
    area.draw(&Rectangle::new(
        [(4, 2), (w as i32 - 4, h as i32 - 4)],
        RGBColor(153, 153, 153).stroke_width(1),
    ))
    .map_err(err)?;
    for (r, row) in legend_rows(entries).iter().enumerate() {
        let y = (r as u32 * LEGEND_ROW + LEGEND_ROW / 2 + 6) as i32;
        for (x, e) in row {
            let x = *x as i32;
            let c = e.colour;
            match e.swatch {
                Swatch::Line => area
                    .draw(&PathElement::new(
                        vec![(x, y), (x + 20, y)],
                        c.stroke_width(3),
                    ))
                    .map_err(err)?,
                Swatch::Dashed => {
                    for k in 0..3 {
                        area.draw(&PathElement::new(
                            vec![(x + k * 8, y), (x + k * 8 + 5, y)],
                            c.stroke_width(2),
                        ))
                        .map_err(err)?;
                    }
                }
                Swatch::Box => area
                    .draw(&Rectangle::new([(x, y - 6), (x + 20, y + 6)], c.filled()))
                    .map_err(err)?,
                Swatch::Band => area
                    .draw(&Rectangle::new(
                        [(x, y - 6), (x + 20, y + 6)],
                        c.mix(0.3).filled(),
                    ))
                    .map_err(err)?,
                Swatch::Dot => area
                    .draw(&Circle::new((x + 10, y), 4, c.filled()))
                    .map_err(err)?,
            }
            area.draw(&Text::new(
                short(&e.name, 80),
                (x + 28, y),
                (FONT, LABEL).into_font().color(&BLACK).pos(
                    plotters::style::text_anchor::Pos::new(
                        plotters::style::text_anchor::HPos::Left,
                        plotters::style::text_anchor::VPos::Center,
                    ),
                ),
            ))
            .map_err(err)?;
        }
    }
    Ok(())
}

/// The legend of a plot (the same colours as the drawing).
fn legend_entries(kind: &PlotKind) -> Vec<LegendEntry> {
    let entry = |name: &str, colour: RGBColor, swatch: Swatch| LegendEntry {
        name: name.to_string(),
        colour,
        swatch,
    };
    match kind {
        PlotKind::Bars { series, .. } if series.len() > 1 => series
            .iter()
            .enumerate()
            .map(|(k, b)| entry(&b.name, colour(k), Swatch::Box))
            .collect(),
        PlotKind::Xy {
            series,
            vlines,
            hlines,
        } => {
            let mut out: Vec<LegendEntry> = series
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let swatch = if matches!(s.style, XyStyle::Points) {
                        Swatch::Dot
                    } else {
                        Swatch::Line
                    };
                    entry(&s.name, colour(s.colour.unwrap_or(k)), swatch)
                })
                .collect();
            for (k, l) in vlines.iter().enumerate() {
                out.push(entry(
                    &l.label,
                    colour(series.len().min(3) + k),
                    Swatch::Dashed,
                ));
            }
            for (k, l) in hlines.iter().enumerate() {
                out.push(entry(
                    &l.label,
                    colour(series.len().min(3) + vlines.len() + k),
                    Swatch::Dashed,
                ));
            }
            out
        }
        PlotKind::SortedBars { bars, hlines, band } => {
            let mut out = Vec::new();
            if let Some(b) = band
                .as_ref()
                .filter(|b| b.low.is_finite() && b.high.is_finite())
            {
                out.push(entry(&b.label, colour(4), Swatch::Band));
            }
            for (sign, c, name) in [(1.0, colour(2), "above 0"), (-1.0, colour(5), "below 0")] {
                if bars
                    .iter()
                    .any(|b| b.value.is_finite() && b.value * sign > 0.0)
                {
                    out.push(entry(name, c, Swatch::Box));
                }
            }
            for (k, l) in hlines.iter().enumerate() {
                let c = if k == 0 { colour(7) } else { colour(k) };
                out.push(entry(&l.label, c, Swatch::Dashed));
            }
            out
        }
        _ => Vec::new(),
    }
}

/// WCAG 2 relative luminance of a colour.
fn luminance(c: RGBColor) -> f64 {
    let lin = |v: u8| {
        let s = f64::from(v) / 255.0;
        if s <= 0.039_28 {
            s / 12.92
        } else {
            ((s + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(c.0) + 0.7152 * lin(c.1) + 0.0722 * lin(c.2)
}

/// WCAG 2 contrast ratio of two colours (1 to 21).
pub(crate) fn contrast(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
    let (la, lb) = (
        luminance(RGBColor(a.0, a.1, a.2)),
        luminance(RGBColor(b.0, b.1, b.2)),
    );
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// The whisker colours over a bar of colour `bar`: `(core, halo)`, the core black or white,
/// whichever contrasts more with the bar, the halo the other one (so the whisker also shows
/// where it runs past the bar, over the white background).
fn whisker_colours(bar: RGBColor) -> (RGBColor, RGBColor) {
    let b = (bar.0, bar.1, bar.2);
    if contrast(b, (255, 255, 255)) > contrast(b, (0, 0, 0)) {
        (WHITE, BLACK)
    } else {
        (BLACK, WHITE)
    }
}

/// Draw `plot` as an SVG document (a string starting with `<svg`).
///
/// Text is at least 11 px at the default width (720 px); tick labels carry no floating-point
/// noise (the private `TickFormat`); the legend is a strip below the plotting area, never over the
/// data; interval whiskers are drawn in a colour contrasting with their bar, with a halo.
///
/// Errors: [`ReportError::Plot`] when plotters fails (it does not on valid input: non-finite
/// values are skipped, empty data gives an empty frame with a "no data" title).
pub fn plot_svg(plot: &Plot) -> Result<String, ReportError> {
    let height = match &plot.kind {
        PlotKind::Bars {
            categories, series, ..
        } => {
            let slots = categories.len() * (series.len().max(1) + 1);
            (120 + 16 * slots as u32).clamp(220, 1600)
        }
        PlotKind::Heatmap { rows, .. } => (150 + 48 * rows.len() as u32).clamp(250, 900),
        _ => 380,
    };
    let legend = legend_entries(&plot.kind);
    let legend_h = legend_height(&legend);
    let mut buf = String::new();
    {
        let root =
            SVGBackend::with_string(&mut buf, (WIDTH, height + legend_h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (area, legend_area) = root.split_vertically(height);
        match &plot.kind {
            PlotKind::Bars {
                categories,
                series,
                range,
            } => bars(&area, plot, categories, series, *range)?,
            PlotKind::Histogram { bins } => histogram(&area, plot, bins)?,
            PlotKind::Heatmap {
                rows,
                columns,
                counts,
            } => heatmap(&area, plot, rows, columns, counts)?,
            PlotKind::Xy {
                series,
                vlines,
                hlines,
            } => xy(&area, plot, series, vlines, hlines)?,
            PlotKind::SortedBars { bars, hlines, band } => {
                sorted_bars(&area, plot, bars, hlines, band.as_ref())?
            }
        }
        draw_legend(&legend_area, &legend)?;
        root.present().map_err(err)?;
    }
    Ok(buf)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

fn no_data(root: &Area<'_>, plot: &Plot) -> Result<(), ReportError> {
    root.titled(&format!("{} (no data)", plot.title), (FONT, TITLE))
        .map_err(err)?;
    Ok(())
}

fn bars(
    root: &Area<'_>,
    plot: &Plot,
    categories: &[String],
    series: &[crate::model::BarSeries],
    range: Option<(f64, f64)>,
) -> Result<(), ReportError> {
    let s = series.len().max(1);
    let slots = categories.len() * (s + 1);
    let data_span = span(series.iter().flat_map(|b| {
        b.values
            .iter()
            .copied()
            .chain(b.intervals.iter().flatten().flat_map(|&(l, h)| [l, h]))
            .chain([0.0])
    }));
    let (Some((lo, hi)), true) = (range.or(data_span), slots > 0) else {
        return no_data(root, plot);
    };
    let label_width = categories
        .iter()
        .map(|c| short(c, 28).chars().count())
        .max()
        .unwrap_or(4) as u32
        * CHAR_W
        + 20;
    let mut chart = ChartBuilder::on(root)
        .caption(&plot.title, (FONT, TITLE))
        .margin(12)
        .x_label_area_size(52)
        .y_label_area_size(label_width.clamp(48, 240))
        // plotters' integer ranges include their end: slots 0..=slots-1.
        .build_cartesian_2d(lo..hi, (0..slots - 1).into_segmented())
        .map_err(err)?;
    // Slot j (from the top) = category j / (s + 1), series j % (s + 1) (the last slot of a
    // group is the gap); the y axis counts from the bottom.
    let to_y = |j: usize| slots - 1 - j;
    let label_of = |y: &SegmentValue<usize>| -> String {
        let j = match y {
            SegmentValue::CenterOf(j) | SegmentValue::Exact(j) => *j,
            SegmentValue::Last => return String::new(),
        };
        if j >= slots {
            return String::new();
        }
        let from_top = slots - 1 - j;
        // Label the middle slot of each group.
        if from_top % (s + 1) == (s - 1) / 2 {
            short(&categories[from_top / (s + 1)], 28)
        } else {
            String::new()
        }
    };
    let xt = TickFormat::for_range(lo, hi, TICKS);
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(slots)
        .x_labels(TICKS)
        .y_label_formatter(&label_of)
        .x_label_formatter(&|x| xt.label(*x))
        .x_desc(&plot.x_label)
        .y_desc(&plot.y_label)
        .axis_desc_style((FONT, AXIS))
        .label_style((FONT, LABEL))
        .draw()
        .map_err(err)?;
    let base = 0.0f64.clamp(lo, hi);
    for (k, b) in series.iter().enumerate() {
        let c = colour(k);
        let rects = b.values.iter().enumerate().filter_map(|(i, &v)| {
            if !v.is_finite() {
                return None;
            }
            let y = to_y(i * (s + 1) + k);
            let v = v.clamp(lo, hi);
            Some(Rectangle::new(
                [
                    (base, SegmentValue::Exact(y)),
                    (v, SegmentValue::Exact(y + 1)),
                ],
                c.filled(),
            ))
        });
        chart.draw_series(rects).map_err(err)?;
        if let Some(iv) = &b.intervals {
            let (core, halo) = whisker_colours(c);
            let segs: Vec<((f64, f64), usize)> = iv
                .iter()
                .enumerate()
                .filter(|(_, (l, h))| l.is_finite() && h.is_finite())
                .map(|(i, &(l, h))| ((l.clamp(lo, hi), h.clamp(lo, hi)), to_y(i * (s + 1) + k)))
                .collect();
            // A halo under the core, then the core, each with end caps across the bar.
            for style in [halo.stroke_width(5), core.stroke_width(2)] {
                let paths = segs.iter().flat_map(|&((l, h), y)| {
                    let mid = SegmentValue::CenterOf(y);
                    [
                        vec![(l, mid.clone()), (h, mid)],
                        vec![(l, SegmentValue::Exact(y)), (l, SegmentValue::Exact(y + 1))],
                        vec![(h, SegmentValue::Exact(y)), (h, SegmentValue::Exact(y + 1))],
                    ]
                });
                chart
                    .draw_series(paths.map(|p| PathElement::new(p, style)))
                    .map_err(err)?;
            }
        }
    }
    Ok(())
}

fn histogram(
    root: &Area<'_>,
    plot: &Plot,
    bins: &[crate::model::HistogramBin],
) -> Result<(), ReportError> {
    let bins: Vec<_> = bins
        .iter()
        .filter(|b| b.low.is_finite() && b.high.is_finite())
        .collect();
    let Some((lo, hi)) = span(bins.iter().flat_map(|b| [b.low, b.high])) else {
        return no_data(root, plot);
    };
    let top = bins.iter().map(|b| b.count).max().unwrap_or(0).max(1) as f64 * 1.08;
    let mut chart = ChartBuilder::on(root)
        .caption(&plot.title, (FONT, TITLE))
        .margin(12)
        .x_label_area_size(52)
        .y_label_area_size(72)
        .build_cartesian_2d(lo..hi, 0.0..top)
        .map_err(err)?;
    let xt = TickFormat::for_range(lo, hi, TICKS);
    chart
        .configure_mesh()
        .x_desc(&plot.x_label)
        .y_desc(&plot.y_label)
        .x_labels(TICKS)
        .x_label_formatter(&|x| xt.label(*x))
        .y_labels((top as usize).clamp(2, 10))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .axis_desc_style((FONT, AXIS))
        .label_style((FONT, LABEL))
        .draw()
        .map_err(err)?;
    let c = colour(0);
    chart
        .draw_series(
            bins.iter()
                .map(|b| Rectangle::new([(b.low, 0.0), (b.high, b.count as f64)], c.filled())),
        )
        .map_err(err)?;
    chart
        .draw_series(bins.iter().map(|b| {
            Rectangle::new(
                [(b.low, 0.0), (b.high, b.count as f64)],
                WHITE.stroke_width(1),
            )
        }))
        .map_err(err)?;
    Ok(())
}

fn heatmap(
    root: &Area<'_>,
    plot: &Plot,
    rows: &[String],
    columns: &[String],
    counts: &[Vec<u64>],
) -> Result<(), ReportError> {
    let (nr, nc) = (rows.len(), columns.len());
    if nr == 0 || nc == 0 {
        return no_data(root, plot);
    }
    let max = counts.iter().flatten().copied().max().unwrap_or(0).max(1) as f64;
    let mut chart = ChartBuilder::on(root)
        .caption(&plot.title, (FONT, TITLE))
        .margin(12)
        .x_label_area_size(56)
        .y_label_area_size(
            (rows
                .iter()
                .map(|r| short(r, 20).chars().count())
                .max()
                .unwrap_or(4) as u32
                * CHAR_W
                + 44)
                .clamp(64, 220),
        )
        .build_cartesian_2d((0..nc - 1).into_segmented(), (0..nr - 1).into_segmented())
        .map_err(err)?;
    let col_label = |x: &SegmentValue<usize>| match x {
        SegmentValue::CenterOf(i) if *i < nc => short(&columns[*i], 16),
        _ => String::new(),
    };
    // Row 0 at the top.
    let row_label = |y: &SegmentValue<usize>| match y {
        SegmentValue::CenterOf(i) if *i < nr => short(&rows[nr - 1 - *i], 20),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(nc)
        .y_labels(nr)
        .x_label_formatter(&col_label)
        .y_label_formatter(&row_label)
        .x_desc(&plot.x_label)
        .y_desc(&plot.y_label)
        .axis_desc_style((FONT, AXIS))
        .label_style((FONT, LABEL))
        .draw()
        .map_err(err)?;
    // Sequential scale from white to Okabe–Ito blue.
    let (br, bg, bb) = OKABE_ITO[0];
    let mut cells = Vec::with_capacity(nr * nc);
    let mut labels = Vec::with_capacity(nr * nc);
    for (r, row) in counts.iter().enumerate().take(nr) {
        for (c, &n) in row.iter().enumerate().take(nc) {
            let t = n as f64 / max;
            let mix = |a: u8| (255.0 - (255.0 - f64::from(a)) * t).round() as u8;
            let fill = RGBColor(mix(br), mix(bg), mix(bb));
            let y = nr - 1 - r;
            cells.push(Rectangle::new(
                [
                    (SegmentValue::Exact(c), SegmentValue::Exact(y)),
                    (SegmentValue::Exact(c + 1), SegmentValue::Exact(y + 1)),
                ],
                fill.filled(),
            ));
            let ink = if t > 0.55 { WHITE } else { BLACK };
            labels.push(Text::new(
                n.to_string(),
                (SegmentValue::CenterOf(c), SegmentValue::CenterOf(y)),
                (FONT, AXIS)
                    .into_font()
                    .color(&ink)
                    .pos(plotters::style::text_anchor::Pos::new(
                        plotters::style::text_anchor::HPos::Center,
                        plotters::style::text_anchor::VPos::Center,
                    )),
            ));
        }
    }
    chart.draw_series(cells).map_err(err)?;
    chart.draw_series(labels).map_err(err)?;
    Ok(())
}

/// The staircase through `pts` (sorted by x): the value at each x holds on (previous x, x].
pub(crate) fn step_path(pts: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(pts.len() * 2);
    for (i, &(x, y)) in pts.iter().enumerate() {
        if i > 0 {
            out.push((pts[i - 1].0, y));
        }
        out.push((x, y));
    }
    out
}

fn xy(
    root: &Area<'_>,
    plot: &Plot,
    series: &[crate::model::XySeries],
    vlines: &[crate::model::RefLine],
    hlines: &[crate::model::RefLine],
) -> Result<(), ReportError> {
    let finite = |p: &&(f64, f64)| p.0.is_finite() && p.1.is_finite();
    let xs = series
        .iter()
        .flat_map(|s| s.points.iter().filter(finite).map(|p| p.0))
        .chain(vlines.iter().map(|l| l.at));
    let ys = series
        .iter()
        .flat_map(|s| s.points.iter().filter(finite).map(|p| p.1))
        .chain(hlines.iter().map(|l| l.at));
    let (Some((x0, x1)), Some((y0, y1))) = (span(xs), span(ys)) else {
        return no_data(root, plot);
    };
    let mut chart = ChartBuilder::on(root)
        .caption(&plot.title, (FONT, TITLE))
        .margin(12)
        .margin_right(24)
        .x_label_area_size(52)
        .y_label_area_size(72)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    let (xt, yt) = (
        TickFormat::for_range(x0, x1, TICKS),
        TickFormat::for_range(y0, y1, TICKS),
    );
    chart
        .configure_mesh()
        .x_desc(&plot.x_label)
        .y_desc(&plot.y_label)
        .x_labels(TICKS)
        .y_labels(TICKS)
        .x_label_formatter(&|x| xt.label(*x))
        .y_label_formatter(&|y| yt.label(*y))
        .axis_desc_style((FONT, AXIS))
        .label_style((FONT, LABEL))
        .draw()
        .map_err(err)?;
    // Point labels already placed (pixel boxes), to thin crowded ones.
    let mut placed: Vec<(i32, i32, i32, i32)> = Vec::new();
    for (k, s) in series.iter().enumerate() {
        let c = colour(s.colour.unwrap_or(k));
        let pts: Vec<(f64, f64)> = s.points.iter().filter(finite).copied().collect();
        match s.style {
            XyStyle::Line | XyStyle::LinePoints => {
                chart
                    .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
                    .map_err(err)?;
            }
            XyStyle::Step => {
                chart
                    .draw_series(LineSeries::new(step_path(&pts), c.stroke_width(2)))
                    .map_err(err)?;
            }
            XyStyle::Points => {}
        }
        if matches!(s.style, XyStyle::Points | XyStyle::LinePoints) {
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))
                .map_err(err)?;
        }
        if s.labels.len() == s.points.len() {
            let style = (FONT, LABEL).into_font().color(&RGBColor(51, 51, 51));
            for (p, label) in s.points.iter().zip(&s.labels) {
                if !(p.0.is_finite() && p.1.is_finite()) || label.is_empty() {
                    continue;
                }
                let (px, py) = chart.backend_coord(p);
                let w = CHAR_W as i32 * label.chars().count() as i32;
                let bx = (px + 5, py - 20, px + 5 + w, py - 4);
                if placed
                    .iter()
                    .any(|b| bx.0 < b.2 && b.0 < bx.2 && bx.1 < b.3 && b.1 < bx.3)
                {
                    continue;
                }
                placed.push(bx);
                chart
                    .draw_series(std::iter::once(
                        EmptyElement::at(*p) + Text::new(label.clone(), (5, -18), style.clone()),
                    ))
                    .map_err(err)?;
            }
        }
    }
    for (k, l) in vlines.iter().enumerate() {
        let c = colour(series.len().min(3) + k);
        chart
            .draw_series(DashedLineSeries::new(
                [(l.at, y0), (l.at, y1)],
                6,
                4,
                c.stroke_width(2),
            ))
            .map_err(err)?;
    }
    for (k, l) in hlines.iter().enumerate() {
        let c = colour(series.len().min(3) + vlines.len() + k);
        chart
            .draw_series(DashedLineSeries::new(
                [(x0, l.at), (x1, l.at)],
                6,
                4,
                c.stroke_width(2),
            ))
            .map_err(err)?;
    }
    Ok(())
}

fn sorted_bars(
    root: &Area<'_>,
    plot: &Plot,
    bars: &[crate::model::RankBar],
    hlines: &[crate::model::RefLine],
    band: Option<&crate::model::Band>,
) -> Result<(), ReportError> {
    let bars: Vec<_> = bars.iter().filter(|b| b.value.is_finite()).collect();
    let (Some(first), Some(last)) = (bars.first(), bars.last()) else {
        return no_data(root, plot);
    };
    let (x0, x1) = (first.from as f64 - 0.5, last.to as f64 + 0.5);
    let ys = bars
        .iter()
        .map(|b| b.value)
        .chain([0.0])
        .chain(hlines.iter().map(|l| l.at))
        .chain(band.into_iter().flat_map(|b| [b.low, b.high]));
    let Some((y0, y1)) = span(ys) else {
        return no_data(root, plot);
    };
    let mut chart = ChartBuilder::on(root)
        .caption(&plot.title, (FONT, TITLE))
        .margin(12)
        .x_label_area_size(52)
        .y_label_area_size(72)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    let yt = TickFormat::for_range(y0, y1, TICKS);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc(&plot.x_label)
        .y_desc(&plot.y_label)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_labels(TICKS)
        .y_label_formatter(&|y| yt.label(*y))
        .axis_desc_style((FONT, AXIS))
        .label_style((FONT, LABEL))
        .draw()
        .map_err(err)?;
    if let Some(b) = band.filter(|b| b.low.is_finite() && b.high.is_finite()) {
        let c = colour(4);
        chart
            .draw_series([Rectangle::new(
                [(x0, b.low), (x1, b.high)],
                c.mix(0.3).filled(),
            )])
            .map_err(err)?;
    }
    // Columns above and below zero in two colours (bluish green, vermillion).
    for (sign, c) in [(1.0, colour(2)), (-1.0, colour(5))] {
        let cols: Vec<_> = bars.iter().filter(|b| b.value * sign > 0.0).collect();
        if cols.is_empty() {
            continue;
        }
        chart
            .draw_series(cols.iter().map(|b| {
                // A gap between single-item columns; aggregated runs stay contiguous.
                let pad = if b.from == b.to { 0.4 } else { 0.5 };
                Rectangle::new(
                    [(b.from as f64 - pad, 0.0), (b.to as f64 + pad, b.value)],
                    c.filled(),
                )
            }))
            .map_err(err)?;
    }
    chart
        .draw_series([PathElement::new(
            vec![(x0, 0.0), (x1, 0.0)],
            BLACK.stroke_width(1),
        )])
        .map_err(err)?;
    for (k, l) in hlines.iter().enumerate() {
        let c = if k == 0 { colour(7) } else { colour(k) };
        chart
            .draw_series(DashedLineSeries::new(
                [(x0, l.at), (x1, l.at)],
                6,
                4,
                c.stroke_width(2),
            ))
            .map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_have_no_float_noise() {
        let t = TickFormat::for_range(-0.1, 0.3, TICKS);
        assert_eq!(t.label(-2.7755575615628914e-17), "0.00");
        assert_eq!(t.label(0.05), "0.05");
        assert_eq!(t.label(0.1), "0.10");
        let t = TickFormat::for_range(0.0, 100.0, TICKS);
        assert_eq!(t.label(40.0), "40");
        assert_eq!(t.label(1e-14), "0");
        let t = TickFormat::for_range(0.0, 3e7, TICKS);
        assert!(t.scientific, "{t:?}");
        assert_eq!(t.label(0.0), "0");
        let t = TickFormat::for_range(0.0, 1.0, TICKS);
        assert_eq!(t.label(-1e-17), "0.0");
        assert_eq!(t.label(0.3), "0.3");
    }

    #[test]
    fn step_paths_are_staircases() {
        let p = step_path(&[(0.0, 1.0), (1.0, 3.0), (2.0, 2.0)]);
        assert_eq!(
            p,
            vec![(0.0, 1.0), (0.0, 3.0), (1.0, 3.0), (1.0, 2.0), (2.0, 2.0)]
        );
        for w in p.windows(2) {
            assert!(w[0].0 == w[1].0 || w[0].1 == w[1].1);
        }
    }

    #[test]
    fn whiskers_contrast_with_their_bars() {
        for (r, g, b) in OKABE_ITO {
            let (core, _) = whisker_colours(RGBColor(r, g, b));
            assert!(
                contrast((r, g, b), (core.0, core.1, core.2)) >= 3.0,
                "{:?}",
                (r, g, b)
            );
        }
    }
}
