//! The views build every face of a typed result without the `routeval` binary: the same
//! `compare` table in each format, and a report document rendered with a provenance handed in.

use routeval_report::{InputFile, Provenance};
use routeval_stats::{CompareOptions, SystemScores, compare_systems};
use routeval_views::compare::{TableFormat, document, render};

/// One system with one measure's per-query scores.
fn sys(name: &str, scores: Vec<f64>) -> SystemScores {
    SystemScores {
        name: name.into(),
        path: format!("{name}.txt"),
        scores: vec![scores],
        means: None,
    }
}

fn report() -> (routeval_stats::ComparisonReport, Vec<SystemScores>) {
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
fn csv_rows_carry_the_notes_of_tests_and_intervals_without_evidence() {
    // A constant difference (zero variance: the t-test has no evidence) on 3 queries (an
    // interval over fewer than 10 units is degenerate): the CSV says both, as the JSON does.
    let systems = vec![
        sys("base", vec![0.1, 0.2, 0.3]),
        sys("new", vec![0.2, 0.3, 0.4]),
    ];
    let r = compare_systems(&["map".to_string()], &systems, &CompareOptions::default())
        .expect("comparison");
    let json = serde_json::to_value(&r).unwrap();
    let c = &json["runs"][1]["vs_baseline"]["map"];
    let (note, ci_note) = (
        c["note"].as_str().unwrap(),
        c["ci_degenerate"].as_str().unwrap(),
    );
    let csv = render(&r, TableFormat::Csv, &[]).unwrap();
    let mut rd = csv::Reader::from_reader(csv.as_bytes());
    let head = rd.headers().unwrap().clone();
    let row = rd.records().next().unwrap().unwrap();
    let cell = |name: &str| {
        row.get(head.iter().position(|h| h == name).unwrap())
            .unwrap()
    };
    assert_eq!(cell("note"), note, "{csv}");
    assert_eq!(cell("ci_degenerate"), ci_note, "{csv}");
    assert_eq!(cell("significant"), "false");
    // A comparison with evidence leaves both cells empty.
    let (r, _) = report();
    let csv = render(&r, TableFormat::Csv, &[]).unwrap();
    let mut rd = csv::Reader::from_reader(csv.as_bytes());
    let head = rd.headers().unwrap().clone();
    let row = rd.records().next().unwrap().unwrap();
    let note_at = head.iter().position(|h| h == "note").unwrap();
    assert_eq!(&row[note_at], "");
    assert_eq!(&row[note_at + 1], "");
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

#[test]
fn every_table_face_names_tests_and_intervals_without_evidence() {
    // One query (no test, no interval) and three queries of a constant difference (no test;
    // a degenerate interval): each text-like face says so, every LaTeX note line is a comment,
    // and the HTML table shows `n/a` (never `nan`) where the JSON has null.
    for (n, query_word) in [(1usize, "1 query;"), (3, "3 queries;")] {
        let systems = vec![
            sys("base", (0..n).map(|i| 0.1 * i as f64).collect()),
            sys("new", (0..n).map(|i| 0.1 * i as f64 + 0.1).collect()),
        ];
        let r = compare_systems(&["map".to_string()], &systems, &CompareOptions::default())
            .expect("comparison");
        let json = serde_json::to_value(&r).unwrap();
        let c = &json["runs"][1]["vs_baseline"]["map"];
        let ci_note = c["ci_degenerate"].as_str().expect("a degenerate interval");
        let test_note = c["note"].as_str().expect("no test");
        assert!(c["p_value"].is_null(), "{c}");
        for format in [TableFormat::Text, TableFormat::Md, TableFormat::Latex] {
            let face = render(&r, format, &[]).unwrap();
            assert!(face.contains(query_word), "{face}");
            assert!(
                face.contains(&format!("CI {ci_note}")),
                "{format:?}: {face}"
            );
            assert!(face.contains(test_note), "{format:?}: {face}");
            if format == TableFormat::Latex {
                let tail = face.split("\\end{tabular}").last().unwrap();
                for line in tail.lines().filter(|l| !l.is_empty()) {
                    assert!(line.starts_with('%'), "not a comment: {line:?} in {face}");
                }
            }
        }
        let doc = document(&r, &systems);
        let prov = Provenance {
            command_line: "routeval compare".into(),
            inputs: vec![],
            version: "routeval test".into(),
            date: routeval_views::iso8601(0),
        };
        let html = routeval_views::html(&doc, prov.clone()).unwrap();
        assert!(!html.contains(">nan</td>"), "a nan cell in the HTML table");
        // minijinja escapes `/` as `&#x2f;`.
        assert!(html.contains(">n&#x2f;a</td>"), "no n/a p cell");
        let md = routeval_views::markdown(&doc, prov);
        assert!(md.contains(&format!("CI {ci_note}")), "{md}");
        assert!(!md.contains("1 queries"), "{md}");
    }
}
