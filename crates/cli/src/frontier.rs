//! `routeval frontier POINTS.jsonl`: cost–quality frontiers of routers.
//!
//! * Default: lines `{"system", "cost", "quality", "param"?}`; per system its NDCH
//!   (RouterBench's non-decreasing convex hull, `--method hull|routerbench`), AIQ and Pareto
//!   set (`routeval_frontier::points::frontier_report`).
//! * `--strong-share --weak-quality W --strong-quality S`: lines `{"system", "strong_pct",
//!   "quality"}`; per system RouteLLM's AUC, APGR and CPT(20/50/80).
//!
//! IO only: reading the points (`-` = stdin), notes on stderr, the table or `--json`.

use crate::common::{self, CmdResult, Failure, display_name, emit, open_input};
use routeval_frontier::points::{
    FrontierReport, NdchMethod, StrongShareReport, frontier_report, read_points,
    read_strong_share_points, strong_share_report,
};
use std::fmt::Write as _;
use std::path::PathBuf;

/// How the NDCH is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Method {
    /// The upper concave envelope of the best quality per cost, O(n log n) (default).
    Hull,
    /// RouterBench's own pairwise algorithm (evaluation/AIQ.py), O(n³), with its quirks.
    Routerbench,
}

/// `routeval frontier`.
#[derive(Debug, clap::Args)]
pub(crate) struct FrontierArgs {
    /// Points, one JSON object per line (`-` = stdin): `{"system", "cost", "quality",
    /// "param"?}`, or with `--strong-share` `{"system", "strong_pct", "quality"}`.
    points: PathBuf,
    /// NDCH construction: `hull` (default) or `routerbench` (the reference's algorithm; systems
    /// where it crashes get the hull and a note).
    #[arg(long, value_enum, default_value = "hull")]
    method: Method,
    /// RouteLLM mode: quality over the share of strong-model calls (AUC, APGR, CPT).
    #[arg(long, requires_all = ["weak_quality", "strong_quality"], conflicts_with = "method")]
    strong_share: bool,
    /// With `--strong-share`: the weak model's quality W (same unit as `quality`).
    #[arg(
        long,
        value_name = "W",
        requires = "strong_share",
        allow_negative_numbers = true
    )]
    weak_quality: Option<f64>,
    /// With `--strong-share`: the strong model's quality S.
    #[arg(
        long,
        value_name = "S",
        requires = "strong_share",
        allow_negative_numbers = true
    )]
    strong_quality: Option<f64>,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Write what would be printed to PATH.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    output: Option<PathBuf>,
    /// stdout format: `text` (the table) or `md` (the report as Markdown).
    #[arg(long, value_enum, default_value = "text", conflicts_with = "json")]
    format: crate::report::TextFormat,
    #[command(flatten)]
    html: crate::report::HtmlArg,
}

/// Points of one system above which `--method routerbench` warns about its cubic cost.
const ROUTERBENCH_WARN_POINTS: usize = 500;

fn notes(notes: &[String]) {
    for n in notes {
        eprintln!("note: {n}");
    }
}

fn fmt(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.6}")
    } else {
        "n/a".into()
    }
}

fn frontier_table(r: &FrontierReport) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "Cost-quality frontier (NDCH: {}, AIQ over cost 0..{})",
        match r.method {
            NdchMethod::Hull => "hull",
            NdchMethod::RouterBench => "RouterBench's algorithm",
        },
        r.max_cost
    );
    let _ = writeln!(
        t,
        "  {:<24} {:>10} {:>6} {:>7}  NDCH (cost, quality)",
        "system", "AIQ", "NDCH", "Pareto"
    );
    for s in &r.systems {
        let pts: Vec<String> = s.ndch.iter().map(|(c, q)| format!("({c}, {q})")).collect();
        let _ = writeln!(
            t,
            "  {:<24} {:>10} {:>6} {:>7}  {}",
            s.system,
            fmt(s.aiq),
            s.ndch.len(),
            s.pareto.len(),
            pts.join(" ")
        );
    }
    t
}

fn strong_share_table(r: &StrongShareReport) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "RouteLLM strong-share metrics (weak quality {}, strong quality {})",
        r.weak, r.strong
    );
    let _ = writeln!(
        t,
        "  {:<24} {:>10} {:>10} {:>9} {:>9} {:>9}",
        "system", "AUC", "APGR", "20% qual", "50% qual", "80% qual"
    );
    for (name, m) in &r.systems {
        let cpt: Vec<String> = m
            .cpt
            .iter()
            .map(|(_, v)| {
                if v.is_finite() {
                    format!("{v:.2}%")
                } else {
                    "n/a".into()
                }
            })
            .collect();
        let _ = writeln!(
            t,
            "  {:<24} {:>10} {:>10} {:>9} {:>9} {:>9}",
            name,
            fmt(m.auc),
            fmt(m.apgr),
            cpt[0],
            cpt[1],
            cpt[2]
        );
    }
    t
}

/// `routeval frontier POINTS`: read the points, compute the frontier report, print it.
pub(crate) fn run(a: FrontierArgs) -> CmdResult {
    let name = display_name(&a.points);
    crate::report::check_outputs(&a.html, &[("-o", a.output.as_deref())])?;
    let reader = open_input(&a.points)?;
    let stdin_used = crate::report::uses_stdin([a.points.as_path()]);
    let md = a.format == crate::report::TextFormat::Md;
    let out = if a.strong_share {
        let (Some(w), Some(s)) = (a.weak_quality, a.strong_quality) else {
            return Err(Failure::bad_input(
                "--strong-share needs --weak-quality W and --strong-quality S",
            ));
        };
        if !w.is_finite() || !s.is_finite() {
            return Err(Failure::bad_input(
                "--weak-quality and --strong-quality must be finite numbers",
            ));
        }
        let pts = read_strong_share_points(reader, &name)?;
        let r = strong_share_report(&pts, w, s);
        notes(&r.notes);
        let doc = routeval_views::frontier::strong_share_document(&pts, &r, &name);
        crate::report::write_html(&a.html, &doc, stdin_used)?;
        if a.json {
            format!("{}\n", r.to_json())
        } else if md {
            crate::report::markdown(&doc, stdin_used)
        } else {
            strong_share_table(&r)
        }
    } else {
        let pts = read_points(reader, &name)?;
        let method = match a.method {
            Method::Hull => NdchMethod::Hull,
            Method::Routerbench => NdchMethod::RouterBench,
        };
        if method == NdchMethod::RouterBench {
            // RouterBench's pairwise algorithm is O(n³) per system: say so before it runs.
            let mut counts: std::collections::HashMap<&str, usize> = Default::default();
            for p in &pts {
                *counts.entry(p.system.as_str()).or_default() += 1;
            }
            if let Some((sys, n)) = counts.iter().max_by_key(|(_, n)| **n)
                && *n > ROUTERBENCH_WARN_POINTS
            {
                eprintln!(
                    "warning: --method routerbench is O(n³) per system and {sys:?} has {n} points: this may take long (the default hull method is O(n log n) and gives the same frontier where RouterBench's does not crash)"
                );
            }
        }
        let r = frontier_report(&pts, method);
        notes(&r.notes);
        let doc = routeval_views::frontier::document(&pts, &r, &name);
        crate::report::write_html(&a.html, &doc, stdin_used)?;
        if a.json {
            format!("{}\n", r.to_json())
        } else if md {
            crate::report::markdown(&doc, stdin_used)
        } else {
            frontier_table(&r)
        }
    };
    emit(a.output.as_ref(), out.as_bytes())?;
    Ok(common::EXIT_OK)
}
