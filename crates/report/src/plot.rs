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

fn tick(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-3..1e6).contains(&a) {
        format!("{x:.2e}")
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// Draw `plot` as an SVG document (a string starting with `<svg`).
///
/// Errors: [`ReportError::Plot`] when plotters fails (it does not on valid input: non-finite
/// values are skipped, empty data gives an empty frame with a "no data" title).
pub fn plot_svg(plot: &Plot) -> Result<String, ReportError> {
    let height = match &plot.kind {
        PlotKind::Bars {
            categories, series, ..
        } => {
            let slots = categories.len() * (series.len().max(1) + 1);
            (110 + 14 * slots as u32).clamp(200, 1400)
        }
        PlotKind::Heatmap { rows, .. } => (140 + 48 * rows.len() as u32).clamp(240, 900),
        _ => 360,
    };
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        match &plot.kind {
            PlotKind::Bars {
                categories,
                series,
                range,
            } => bars(&root, plot, categories, series, *range)?,
            PlotKind::Histogram { bins } => histogram(&root, plot, bins)?,
            PlotKind::Heatmap {
                rows,
                columns,
                counts,
            } => heatmap(&root, plot, rows, columns, counts)?,
            PlotKind::Xy {
                series,
                vlines,
                hlines,
            } => xy(&root, plot, series, vlines, hlines)?,
            PlotKind::SortedBars { bars, hlines, band } => {
                sorted_bars(&root, plot, bars, hlines, band.as_ref())?
            }
        }
        root.present().map_err(err)?;
    }
    Ok(buf)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

fn no_data(root: &Area<'_>, plot: &Plot) -> Result<(), ReportError> {
    root.titled(&format!("{} (no data)", plot.title), (FONT, 18))
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
        * 7
        + 16;
    let mut chart = ChartBuilder::on(root)
        .caption(&plot.title, (FONT, 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(label_width.clamp(40, 220))
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
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(slots)
        .y_label_formatter(&label_of)
        .x_label_formatter(&|x| tick(*x))
        .x_desc(&plot.x_label)
        .y_desc(&plot.y_label)
        .axis_desc_style((FONT, 14))
        .label_style((FONT, 12))
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
        let drawn = chart.draw_series(rects).map_err(err)?;
        if series.len() > 1 {
            drawn
                .label(&b.name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
        }
        if let Some(iv) = &b.intervals {
            let whiskers = iv.iter().enumerate().filter_map(|(i, &(l, h))| {
                if !(l.is_finite() && h.is_finite()) {
                    return None;
                }
                let y = to_y(i * (s + 1) + k);
                Some(PathElement::new(
                    vec![
                        (l.clamp(lo, hi), SegmentValue::CenterOf(y)),
                        (h.clamp(lo, hi), SegmentValue::CenterOf(y)),
                    ],
                    BLACK.stroke_width(2),
                ))
            });
            chart.draw_series(whiskers).map_err(err)?;
        }
    }
    if series.len() > 1 {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font((FONT, 12))
            .draw()
            .map_err(err)?;
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
        .caption(&plot.title, (FONT, 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(lo..hi, 0.0..top)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(&plot.x_label)
        .y_desc(&plot.y_label)
        .x_label_formatter(&|x| tick(*x))
        .y_labels((top as usize).clamp(2, 10))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .axis_desc_style((FONT, 14))
        .label_style((FONT, 12))
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
        .caption(&plot.title, (FONT, 18))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(
            (rows
                .iter()
                .map(|r| short(r, 20).chars().count())
                .max()
                .unwrap_or(4) as u32
                * 7
                + 40)
                .clamp(60, 200),
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
        .axis_desc_style((FONT, 14))
        .label_style((FONT, 12))
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
                (FONT, 14)
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
        .caption(&plot.title, (FONT, 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(&plot.x_label)
        .y_desc(&plot.y_label)
        .x_label_formatter(&|x| tick(*x))
        .y_label_formatter(&|y| tick(*y))
        .axis_desc_style((FONT, 14))
        .label_style((FONT, 12))
        .draw()
        .map_err(err)?;
    for (k, s) in series.iter().enumerate() {
        let c = colour(s.colour.unwrap_or(k));
        let pts: Vec<(f64, f64)> = s.points.iter().filter(finite).copied().collect();
        let with_line = matches!(s.style, XyStyle::Line | XyStyle::LinePoints);
        let with_points = matches!(s.style, XyStyle::Points | XyStyle::LinePoints);
        if with_line {
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
                .map_err(err)?
                .label(&s.name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 14, y)], c.stroke_width(2))
                });
        }
        if with_points {
            let drawn = chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))
                .map_err(err)?;
            if !with_line {
                drawn
                    .label(&s.name)
                    .legend(move |(x, y)| Circle::new((x + 6, y), 3, c.filled()));
            }
        }
    }
    let dashed = |c: RGBColor| c.stroke_width(1);
    for (k, l) in vlines.iter().enumerate() {
        let c = colour(series.len().min(3) + k);
        chart
            .draw_series(DashedLineSeries::new(
                [(l.at, y0), (l.at, y1)],
                6,
                4,
                dashed(c),
            ))
            .map_err(err)?
            .label(&l.label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], c.stroke_width(1)));
    }
    for (k, l) in hlines.iter().enumerate() {
        let c = colour(series.len().min(3) + vlines.len() + k);
        chart
            .draw_series(DashedLineSeries::new(
                [(x0, l.at), (x1, l.at)],
                6,
                4,
                dashed(c),
            ))
            .map_err(err)?
            .label(&l.label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], c.stroke_width(1)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 12))
        .draw()
        .map_err(err)?;
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
        .caption(&plot.title, (FONT, 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc(&plot.x_label)
        .y_desc(&plot.y_label)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| tick(*y))
        .axis_desc_style((FONT, 14))
        .label_style((FONT, 12))
        .draw()
        .map_err(err)?;
    if let Some(b) = band.filter(|b| b.low.is_finite() && b.high.is_finite()) {
        let c = colour(4);
        chart
            .draw_series([Rectangle::new(
                [(x0, b.low), (x1, b.high)],
                c.mix(0.3).filled(),
            )])
            .map_err(err)?
            .label(&b.label)
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.mix(0.3).filled())
            });
    }
    // Columns above and below zero in two colours (bluish green, vermillion).
    for (sign, c, name) in [(1.0, colour(2), "above 0"), (-1.0, colour(5), "below 0")] {
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
            .map_err(err)?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.filled()));
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
            .map_err(err)?
            .label(&l.label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], c.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 12))
        .draw()
        .map_err(err)?;
    Ok(())
}
