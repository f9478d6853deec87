//! Tests of the lexical scorer's bitmap coverage and of `RagRun` (batches, windows, errors).

use super::lexical::{
    CachedPassage, Lexical, MARK_IDS, PASSAGE_CACHE_ENTRIES, PassageTable, coverage_slices,
};
use super::{Options, RagError, RagRun, Scorer};

/// The report of `cases` (JSON objects) with default options, and its `--json` text.
fn report_json(cases: &[String]) -> (super::RagReport, String) {
    let raw = format!("[{}]", cases.join(","));
    let parsed = super::parse_cases(&raw, "t").unwrap();
    let mut run = RagRun::new(&Options::default()).unwrap();
    run.push(&parsed);
    let report = run.finish().unwrap();
    let mut out: Vec<u8> = Vec::new();
    report.write_json(&mut out).unwrap();
    (report, String::from_utf8(out).unwrap())
}

/// The `--json` report of more cases than a rendering window (several windows, their
/// buffers reused) is one valid JSON document whose rows are the cases in order, each
/// with its own query, and whose notes and failures are the cases' in order.
#[test]
fn json_report_across_windows() {
    let n = 2 * 2048 + 700;
    let cases: Vec<String> = (0..n)
        .map(|i| {
            let rel = if i % 3 == 0 { "x" } else { "d0" };
            format!(
                r#"{{"query": "q{i} \"quoted\" {}", "retrieved": ["d0", "d1"], "relevant": ["{rel}"]}}"#,
                "w".repeat(i % 40)
            )
        })
        .collect();
    let (report, out) = report_json(&cases);
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
    let rows = v["per_case"].as_array().unwrap();
    assert_eq!(rows.len(), n);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row["index"], i, "row {i}");
        let want = format!("q{i} \"quoted\" {}", "w".repeat(i % 40));
        assert_eq!(row["query"], want.as_str(), "row {i}");
    }
    // A list of strings in the JSON document.
    let strings = |key: &str| -> Vec<String> {
        let list = v[key].as_array().unwrap();
        list.iter()
            .map(|f| f.as_str().unwrap().to_owned())
            .collect()
    };
    let failures: Vec<&str> = report.failures().collect();
    assert_eq!(failures.len(), n.div_ceil(3));
    assert_eq!(strings("failures"), failures);
    let notes: Vec<&str> = report.notes().collect();
    assert_eq!(strings("notes"), notes);
}

/// The `--json` report is `json.dumps(indent=2)` text byte for byte (the test-support
/// crate's `json.dumps` of the parsed document gives it back) however the notes, failures and
/// cases fall into rendering windows: none in the first window and then some, only in the
/// last case, only run notes (no case note), none at all, or exactly one window of cases.
#[test]
fn json_report_bytes_whatever_the_windows() {
    // (cases, which cases fail (their relevant id is not retrieved), which cases get a note
    // (two passages retrieved at k = 5)); the others retrieve five passages, one relevant.
    type Pick<'a> = &'a dyn Fn(usize) -> bool;
    let layouts: [(usize, Pick, Pick); 5] = [
        (2 * 2048 + 9, &|i| i >= 2100 && i % 7 == 0, &|i| {
            i >= 2050 && i % 11 == 0
        }),
        (2048 + 1, &|i| i == 2048, &|i| i == 2048),
        (2048, &|_| false, &|_| false),
        (3, &|_| true, &|_| false),
        (1, &|_| false, &|_| true),
    ];
    for (n, fails, short) in layouts {
        let cases: Vec<String> = (0..n)
            .map(|i| {
                let rel = if fails(i) { "x" } else { "d0" };
                let retrieved = if short(i) {
                    r#"["d0", "d1"]"#
                } else {
                    r#"["d0", "d1", "d2", "d3", "d4"]"#
                };
                format!(r#"{{"query": "q{i}", "retrieved": {retrieved}, "relevant": ["{rel}"]}}"#)
            })
            .collect();
        let (report, out) = report_json(&cases);
        let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
        assert_eq!(
            out,
            routeval_test_support::pydump::dumps(&v, Some(2), false),
            "{n} cases"
        );
        let failing = (0..n).filter(|&i| fails(i)).count();
        assert_eq!(report.failures().count(), failing, "{n} cases");
        let notes: Vec<&str> = report.notes().collect();
        let noted = (0..n).filter(|&i| short(i)).count();
        if failing == n {
            // No relevant id matched anywhere: the run's note on it, and no case note.
            assert_eq!(notes.len(), 1, "{n} cases");
            assert!(
                notes[0].starts_with("no 'relevant' id matched"),
                "{n} cases"
            );
        } else {
            assert_eq!(notes.len(), noted, "{n} cases");
        }
    }
}

/// A batch is scored in parallel, but the error reported is the first failing case in
/// input order (as a sequential pass gives), whichever worker met its error first, and
/// a failed run keeps no results.
#[test]
fn first_failing_case_in_input_order_wins() {
    let text = |bad: &[usize], n: usize| -> String {
        let cases: Vec<String> = (0..n)
            .map(|i| {
                if bad.contains(&i) {
                    format!(r#"{{"query": "q{i}", "retrieved": "d{i}"}}"#)
                } else {
                    format!(r#"{{"query": "q{i}", "retrieved": ["d{i}"], "relevant": ["d{i}"]}}"#)
                }
            })
            .collect();
        format!("[{}]", cases.join(","))
    };
    for bad in [
        vec![3, 700],
        vec![700, 3],
        vec![999],
        vec![0, 1, 2],
        vec![511, 512],
    ] {
        let raw = text(&bad, 1000);
        let parsed = super::parse_cases(&raw, "t").unwrap();
        let first = *bad.iter().min().unwrap();
        // One batch, and the same cases in batches of 512 (the streaming size).
        let mut one = RagRun::new(&Options::default()).unwrap();
        one.push(&parsed);
        let mut split = RagRun::new(&Options::default()).unwrap();
        for chunk in parsed.chunks(512) {
            split.push(chunk);
        }
        for run in [one, split] {
            assert!(run.results.is_empty(), "{bad:?}");
            match run.finish() {
                Err(RagError::RetrievedString(i)) => assert_eq!(i, first, "{bad:?}"),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }
    // No failure: every case kept, in order.
    let raw = text(&[], 1000);
    let parsed = super::parse_cases(&raw, "t").unwrap();
    let mut run = RagRun::new(&Options::default()).unwrap();
    run.push(&parsed);
    let report = run.finish().unwrap();
    assert!(
        report
            .per_case
            .iter()
            .enumerate()
            .all(|(i, c)| c.index == i)
    );
    assert_eq!(report.per_case.len(), 1000);
}

/// The bitmap path of `Lexical::coverage` equals the merge intersection, for left sets
/// inside and beyond the bitmap's id range, with the left set reused and changed, and
/// across `reset` (slots are renumbered per case).
#[test]
fn bitmap_coverage_equals_merge() {
    let mut lex = Lexical::default();
    // Enough distinct words that later ones get ids past the bitmap.
    let words: Vec<String> = (0..MARK_IDS as usize + 500)
        .map(|i| format!("w{i}x"))
        .collect();
    let far = words[words.len() - 500..].join(" ");
    lex.prepare(&words[..MARK_IDS as usize].join(" "));
    for round in 0..3 {
        lex.reset();
        let texts = [
            "w1x w2x w3x w4x".to_string(),
            "w3x w4x w5x".to_string(),
            format!("w2x {far}"),
            "w9x w1x".to_string(),
            String::new(),
            far.clone(),
        ];
        let handles: Vec<usize> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if i % 2 == 0 {
                    lex.prepare(t)
                } else {
                    lex.prepare_passage(t)
                }
            })
            .collect();
        for &l in &handles {
            for &r in &handles {
                let want = coverage_slices(lex.slice(lex.slots[l]), lex.slice(lex.slots[r]));
                let got = lex.score_h(l, r).unwrap();
                assert_eq!(got.to_bits(), want.to_bits(), "round {round} {l} {r}");
            }
        }
    }
}

/// The passage table finds every key it was given across its growth (keys sharing a home
/// slot included), never a key it was not given, and nothing after `clear`.
#[test]
fn passage_table_finds_its_keys() {
    let mut t = PassageTable::new();
    // Every seventh key is a multiple of 2^11 (with the free-slot bit): while the table has
    // at most 1,024 slots these share one home slot and probe past each other; the others
    // are spread.
    let keys: Vec<u64> = (0..5000u64)
        .map(|i| {
            if i % 7 == 0 {
                (i << 11) | 1
            } else {
                i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1
            }
        })
        .collect();
    for (i, &key) in keys.iter().enumerate() {
        assert!(t.get(key).is_none(), "key {i} before insert");
        t.insert(CachedPassage {
            key,
            check: i as u64,
            ids: (i as u32, i as u32 + 1),
        });
        t.touch(keys[..=i].iter().copied());
    }
    assert!(t.slots.len() >= 2 * keys.len());
    for (i, &key) in keys.iter().enumerate() {
        let e = t.get(key).expect("inserted");
        assert_eq!((e.check, e.ids), (i as u64, (i as u32, i as u32 + 1)));
    }
    assert!(t.get(0x1234_5678 << 1 | 1).is_none());
    t.clear();
    assert!(keys.iter().all(|&k| t.get(k).is_none()));
}

/// `prepare_passages` gives each passage the token set `prepare` gives it, whether the
/// passage is new, cached, or repeated within the call.
#[test]
fn batched_passages_are_prepared_as_single_ones() {
    let mut lex = Lexical::default();
    let texts = [
        "Reset the password.",
        "Billing cluster node",
        "Reset the password.",
        "",
    ];
    let first = lex.prepare_passages(&texts);
    let again = lex.prepare_passages(&texts);
    let single: Vec<usize> = texts.iter().map(|t| lex.prepare(t)).collect();
    for ((a, b), c) in first.iter().zip(&again).zip(&single) {
        let want = lex.slice(lex.slots[*c]).to_vec();
        assert_eq!(lex.slice(lex.slots[*a]), &want[..]);
        assert_eq!(lex.slice(lex.slots[*b]), &want[..]);
    }
}

/// Passages without a token take no room in the id arena, so the cache is also emptied by
/// its number of entries.
#[test]
fn passage_cache_is_bounded_by_entries() {
    let mut lex = Lexical::default();
    // Distinct passages of punctuation only (i written in base 4 with `!?.,`): no tokens.
    let text = |mut i: usize| {
        let mut t = String::from("-");
        while i > 0 {
            t.push(['!', '?', '.', ','][i % 4]);
            i /= 4;
        }
        t
    };
    for i in 0..=PASSAGE_CACHE_ENTRIES {
        lex.prepare_passage(&text(i));
    }
    assert_eq!(lex.cache.len, PASSAGE_CACHE_ENTRIES + 1);
    lex.reset();
    assert_eq!(lex.cache.len, 0);
}
