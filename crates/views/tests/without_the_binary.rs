//! The views build every face of a typed result without the `routeval` binary: the same
//! `compare` table in each format, and a report document rendered with a provenance handed in.

use routeval_report::{InputFile, Provenance};
use routeval_stats::{CompareOptions, SystemScores, compare_systems};
use routeval_views::compare::{TableFormat, document, render};

fn report() -> (routeval_stats::ComparisonReport, Vec<SystemScores>) {
    let sys = |name: &str, scores: Vec<f64>| SystemScores {
        name: name.into(),
        path: format!("{name}.txt"),
        scores: vec![scores],
        means: None,
    };
    let systems = vec![
        sys(
            "base",
            vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0],
        ),
        sys(
            "new",
            vec![0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0],
        ),
    ];
    let opts = CompareOptions {
        ci_level: None,
        ..CompareOptions::default()
    };
    let r = compare_systems(&["map".to_string()], &systems, &opts).expect("comparison");
    (r, systems)
}

#[test]
fn compare_faces_share_one_report() {
    let (r, _) = report();
    let text = render(&r, TableFormat::Text, &[]).unwrap();
    let md = render(&r, TableFormat::Md, &[]).unwrap();
    let latex = render(&r, TableFormat::Latex, &[]).unwrap();
    let csv = render(&r, TableFormat::Csv, &[]).unwrap();
    // The same means in every face.
    for face in [&text, &md, &latex] {
        assert!(face.contains("0.5500"), "{face}");
        assert!(face.contains("0.6400 (+0.0900)"), "{face}");
    }
    assert!(text.starts_with("#  run"), "{text}");
    assert!(md.starts_with("| # | run | map |"), "{md}");
    assert!(latex.contains("\\begin{tabular}"), "{latex}");
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("baseline,run,measure,"));
    assert!(
        lines.next().unwrap().starts_with("base,new,map,0.55,0.64"),
        "{csv}"
    );
}

#[test]
fn documents_render_with_a_provenance_handed_in() {
    let (r, systems) = report();
    let doc = document(&r, &systems);
    let prov = Provenance {
        command_line: routeval_views::shell_quote("routeval compare") + " base.txt new.txt",
        inputs: vec![InputFile {
            path: "base.txt".into(),
            bytes: Some(10),
            blake3: None,
        }],
        version: "routeval test".into(),
        date: routeval_views::iso8601(0),
    };
    let md = routeval_views::markdown(&doc, prov.clone());
    assert!(md.ends_with('\n'));
    assert!(md.contains("1970-01-01T00:00:00Z"), "{md}");
    assert!(md.contains("'routeval compare' base.txt new.txt"), "{md}");
    let html = routeval_views::html(&doc, prov).unwrap();
    assert!(html.contains("<svg"), "no plot");
    assert!(html.contains("1970-01-01T00:00:00Z"));
}
