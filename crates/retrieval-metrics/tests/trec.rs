//! Library-level trec tests: conformance on trec_eval's test collection (via
//! `$ROUTEVAL_SHARED`), both evaluation paths, interleaved runs, the mergeable accumulator, and
//! the ranking order.

use proptest::prelude::*;
use routeval_core::Accumulator;
use routeval_retrieval_metrics::trec::{
    self, EvalOptions, MeasureSet, Qrels, Run, TrecAccumulator, rank_by_score, trec_order,
};
use std::path::PathBuf;

fn shared(test: &str) -> Option<PathBuf> {
    routeval_core::fixtures::shared_files(
        test,
        "thirdparty/trec_eval",
        &[
            "qrels.test",
            "results.test",
            "out.test",
            "out.test.a",
            "out.test.aq",
        ],
    )
}

fn all_trec(per_query: bool) -> EvalOptions {
    EvalOptions {
        measures: MeasureSet::all_trec(),
        per_query,
        ..EvalOptions::default()
    }
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn library_conformance_both_paths() {
    let Some(d) = shared("library_conformance_both_paths") else {
        return;
    };
    let qrels =
        Qrels::from_bytes(&std::fs::read(d.join("qrels.test")).unwrap(), "qrels.test").unwrap();
    let run_bytes = std::fs::read(d.join("results.test")).unwrap();
    for (opts, file, q) in [
        (EvalOptions::default(), "out.test", false),
        (all_trec(false), "out.test.a", false),
        (all_trec(true), "out.test.aq", true),
    ] {
        let want = std::fs::read(d.join(file)).unwrap();
        let ev =
            trec::evaluate_bytes(&qrels, &run_bytes, "results.test", &opts, "qrels.test").unwrap();
        assert!(
            trec::format::render_text(&ev, q, true) == want,
            "evaluate_bytes vs {file}"
        );
        let run = Run::from_bytes(&run_bytes, "results.test").unwrap();
        let ev2 = trec::evaluate_run(&qrels, &run, &opts, "qrels.test").unwrap();
        assert_eq!(ev, ev2, "evaluate_run agrees with evaluate_bytes");
    }
}

/// Lines of a run shuffled (queries interleaved, split across parse chunks) evaluate the same.
#[test]
fn interleaved_run_equals_grouped_run() {
    let mut q = String::new();
    let mut lines = Vec::new();
    for qi in 0..300 {
        for d in 0..40 {
            if (qi * 7 + d * 3usize).is_multiple_of(5) {
                q.push_str(&format!("q{qi} 0 d{d} {}\n", (qi + d) % 3));
            }
        }
        for d in 0..60 {
            lines.push(format!(
                "q{qi} Q0 d{d} {d} {} tag\n",
                ((qi * 31 + d * 17) % 23) as f64 / 4.0
            ));
        }
    }
    let qrels = Qrels::from_bytes(q.as_bytes(), "q").unwrap();
    let grouped: String = lines.concat();
    // Deterministic shuffle.
    let mut shuffled = lines.clone();
    let mut s = 12345u64;
    for i in (1..shuffled.len()).rev() {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        shuffled.swap(i, (s >> 33) as usize % (i + 1));
    }
    // Make it big enough for several parse chunks.
    let pad =
        "# padding comment line to push the run over one megabyte............\n".repeat(16_000);
    let shuffled = format!("{pad}{}", shuffled.concat());
    let opts = all_trec(true);
    let a = trec::evaluate_bytes(&qrels, grouped.as_bytes(), "g", &opts, "q").unwrap();
    let b = trec::evaluate_bytes(&qrels, shuffled.as_bytes(), "s", &opts, "q").unwrap();
    assert_eq!(a.summary, b.summary);
    assert_eq!(a.queries, b.queries);
    assert_eq!(a.queries.len(), 300);
}

/// A run of several parse chunks, grouped by query except one query split between its start
/// and its end, with judged queries missing and queries without judgments: the chunked byte
/// path gives the in-memory path's results in qrels order, with and without `-c`.
#[test]
fn multi_chunk_run_agrees_with_the_in_memory_path() {
    let mut q = String::new();
    for qi in 0..2_000 {
        // Every fifth query judged but absent from the run; its judgments still count.
        for d in 0..12 {
            q.push_str(&format!("q{qi} 0 d{} {}\n", d * 3, (qi + d) % 3));
        }
    }
    let qrels = Qrels::from_bytes(q.as_bytes(), "q").unwrap();
    let mut run = String::new();
    let line = |qi: usize, d: usize| {
        format!(
            "q{qi} Q0 d{d} {d} {} a_run_tag_long_enough_to_make_several_chunks\n",
            ((qi * 31 + d * 17) % 29) as f64 / 8.0
        )
    };
    for d in 0..20 {
        run.push_str(&line(1, d));
    }
    for qi in (0..2_500).filter(|qi| qi % 5 != 0 && *qi != 1) {
        for d in 0..36 {
            run.push_str(&line(qi, d));
        }
    }
    for d in 20..36 {
        run.push_str(&line(1, d));
    }
    assert!(run.len() > 4 << 20, "several 1 MB chunks: {}", run.len());
    let parsed = Run::from_bytes(run.as_bytes(), "r").unwrap();
    for complete in [false, true] {
        let opts = EvalOptions {
            complete,
            ..all_trec(true)
        };
        let a = trec::evaluate_bytes(&qrels, run.as_bytes(), "r", &opts, "q").unwrap();
        let b = trec::evaluate_run(&qrels, &parsed, &opts, "q").unwrap();
        assert_eq!(a, b, "complete = {complete}");
        let want = if complete { 2_000 } else { 1_600 };
        assert_eq!(a.queries.len(), want);
        assert_eq!(a.run_only_queries, 400);
        assert_eq!(a.judged_without_results, 400);
    }
}

/// Shards of per-query values merged = one pass: counts exact, sums within 1e-12 relative.
#[test]
fn accumulator_shards_merge_to_one_pass() {
    let mut q = String::new();
    let mut r = String::new();
    for qi in 0..200 {
        for d in 0..30 {
            q.push_str(&format!("q{qi} 0 d{d} {}\n", (qi * d) % 4));
            r.push_str(&format!(
                "q{qi} Q0 d{} {d} {} t\n",
                (d * 7 + qi) % 45,
                (d * 13 % 11) as f64
            ));
        }
    }
    let qrels = Qrels::from_bytes(q.as_bytes(), "q").unwrap();
    let opts = all_trec(true);
    let ev = trec::evaluate_bytes(&qrels, r.as_bytes(), "r", &opts, "q").unwrap();
    let mut one = TrecAccumulator::default();
    ev.queries.iter().for_each(|x| one.add(&x.values));
    for parts in [2usize, 3, 7, 200] {
        let shards: Vec<TrecAccumulator> = ev
            .queries
            .chunks(ev.queries.len().div_ceil(parts))
            .map(|c| {
                let mut a = TrecAccumulator::default();
                c.iter().for_each(|x| a.add(&x.values));
                a
            })
            .collect();
        let merged = TrecAccumulator::merge_all(shards.into_iter().rev());
        assert_eq!(merged.num_queries, one.num_queries);
        for (a, b) in merged.sums.iter().zip(&one.sums) {
            assert!(
                (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0),
                "{a} vs {b}"
            );
        }
        let (n, fin) = merged.finish(&opts.measures, false, qrels.len());
        assert_eq!(n, 200);
        for (a, b) in fin.iter().zip(&ev.summary) {
            assert!((a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0));
        }
    }
    // The parity path is the sequential one: bit-identical to the evaluation's summary.
    assert_eq!(one.finish(&opts.measures, false, qrels.len()).1, ev.summary);
}

/// Every score the run parser admits: small multiples of 0.5 (many ties), `-0.0` and `0.0`
/// (equal for trec_eval's `>`/`<` comparator, so ordered by docno), the infinities (`inf` is
/// accepted), extremes, and arbitrary finite values. NaN is refused by the parser
/// (`run_parser_refuses_nan_and_admits_the_rest`), so it never reaches the ranking.
fn admitted_score() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => (-3i32..3).prop_map(|s| s as f64 * 0.5),
        1 => Just(-0.0f64),
        1 => Just(0.0f64),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(f64::MAX),
        1 => Just(-f64::MIN_POSITIVE),
        1 => Just(5e-324f64),
        2 => any::<f64>().prop_filter("NaN is refused at parse time", |x| !x.is_nan()),
    ]
}

proptest! {
    /// `rank_by_score` sorts exactly as trec_eval's comparator, on every admitted score.
    #[test]
    fn rank_by_score_is_trec_order(docs in proptest::collection::vec(("[a-d]{1,3}", admitted_score()), 0..60)) {
        let mut a: Vec<(String, f64)> = docs.clone();
        let mut b = a.clone();
        rank_by_score(&mut a);
        b.sort_by(|x, y| trec_order(x.1, x.0.as_bytes(), y.1, y.0.as_bytes()));
        // Compare bits, but with -0.0 and 0.0 as one value (they tie in trec_eval, and which
        // of two tied equal-docno entries comes first is not observable).
        let key = |v: &[(String, f64)]| -> Vec<(u64, String)> {
            v.iter().map(|x| ((x.1 + 0.0).to_bits(), x.0.clone())).collect()
        };
        prop_assert_eq!(key(&a), key(&b));
    }

    /// The run parser refuses every NaN spelling and reads every other score as `strtod`
    /// (here: Rust's correctly rounded parse) would, `-0.0` and infinities included.
    #[test]
    fn run_parser_refuses_nan_and_admits_the_rest(
        x in admitted_score(),
        nan in prop::sample::select(vec!["nan", "NaN", "-nan", "+NaN", "NAN", "nan(1)"]),
    ) {
        use routeval_retrieval_metrics::trec::parse::parse_score;
        prop_assert_eq!(parse_score(nan.as_bytes()), None, "{}", nan);
        let run = format!("q1 Q0 d1 1 {nan} t\n");
        prop_assert!(Run::from_bytes(run.as_bytes(), "run").is_err(), "{}", nan);
        for text in [format!("{x:?}"), format!("{x:e}")] {
            let got = parse_score(text.as_bytes());
            prop_assert_eq!(got.map(f64::to_bits), Some(x.to_bits()), "{}", text);
        }
    }
}

#[test]
fn utf8_bom_is_ignored_in_qrels_and_run() {
    use routeval_retrieval_metrics::trec::{self, EvalOptions, MeasureSet, Qrels, RunReader};
    let qrels_text = "q1 0 d1 1\nq1 0 d2 0\n";
    let run_text = "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n";
    let opts = EvalOptions {
        measures: MeasureSet::parse(&["num_ret", "num_rel_ret"]).unwrap(),
        ..EvalOptions::default()
    };
    let plain = Qrels::from_bytes(qrels_text.as_bytes(), "q").unwrap();
    let with_bom = Qrels::from_bytes(format!("\u{feff}{qrels_text}").as_bytes(), "q").unwrap();
    assert_eq!(with_bom.len(), plain.len());
    assert!(with_bom.get(b"q1").is_some());
    let a = trec::evaluate_bytes(&plain, run_text.as_bytes(), "r", &opts, "q").unwrap();
    let bom_run = format!("\u{feff}{run_text}");
    let b = trec::evaluate_bytes(&with_bom, bom_run.as_bytes(), "r", &opts, "q").unwrap();
    let text = |e| String::from_utf8(trec::format::render_text(e, false, true)).unwrap();
    assert_eq!(text(&a), text(&b));
    assert!(text(&b).contains("num_ret               \tall\t2"));
    let mut reader = RunReader::new(bom_run.as_bytes(), "r");
    let first = reader.next_record().unwrap().unwrap();
    assert_eq!(first.qid, b"q1");
}

/// trec_eval 10.0's `-c` summary of `num_rel` (`te_calc_avg_num_rel`, m_num_rel.c) counts every
/// qrels line with relevance > 0 over all judged queries, ignoring `-l`, while the per-query
/// values honour `-l` (seen on the trec_matrix fixtures `16_*`, `24_*`, `29_*`).
#[test]
fn complete_num_rel_summary_counts_raw_qrels_like_trec_eval() {
    let qrels = Qrels::from_bytes(
        b"q1 0 a 1\nq1 0 b 2\nq1 0 c 0\nq1 0 d -1\nq2 0 e 2\nq2 0 f 1\nq3 0 g 3\n",
        "q",
    )
    .unwrap();
    let run = b"q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\nq2 Q0 e 1 1.0 t\n";
    let eval = |complete: bool, level: i64| {
        let opts = EvalOptions {
            measures: MeasureSet::parse(&["num_rel"]).unwrap(),
            complete,
            relevance_level: level,
            per_query: true,
            ..EvalOptions::default()
        };
        trec::evaluate_bytes(&qrels, run, "r", &opts, "q").unwrap()
    };
    // -c -l 2: per query 1 (q1: b), 1 (q2: e), 1 (q3: g); the summary is the raw count of
    // rel > 0 lines: a, b, e, f, g = 5 (not 3).
    let e = eval(true, 2);
    assert_eq!(e.summary[0], 5.0);
    let per_query: f64 = e.queries.iter().map(|q| q.values[0]).sum();
    // Under -c the judged query without results (q3) is evaluated too (num_rel 1 at -l 2).
    assert_eq!(per_query, 3.0, "q1, q2 and q3 at -l 2");
    // Without -c the summary is the sum of the evaluated queries (q1, q2) at -l 2.
    assert_eq!(eval(false, 2).summary[0], 2.0);
    // -c -l 1: the same raw count.
    assert_eq!(eval(true, 1).summary[0], 5.0);
}

/// Scores that differ only beyond single precision: trec_eval 10.0 (`double sim`) ranks the
/// higher one first, trec_eval 9.0.8 (`float sim`, pytrec_eval) sees a tie broken by docno
/// descending. Values checked against the trec_eval 10.0 binary (recip_rank 1.0) and
/// pytrec-eval-terrier 0.5.11 (0.5); streamed and materialized evaluation agree.
#[test]
fn ties_in_single_precision_follow_the_trec_eval_release() {
    use routeval_retrieval_metrics::trec::{
        EvalOptions, MeasureSet, Qrels, Run, TrecEvalVersion, evaluate_bytes, evaluate_run,
    };
    let qrels = Qrels::from_bytes(b"q1 0 d65 1\nq1 0 d76 0\n", "qrels").unwrap();
    let run = b"q1 Q0 d65 1 0.4140936412550752 r\nq1 Q0 d76 2 0.41409363333403515 r\n";
    for (version, want) in [(TrecEvalVersion::V10, 1.0), (TrecEvalVersion::V9_0_8, 0.5)] {
        let opts = EvalOptions {
            measures: MeasureSet::parse(&["recip_rank"]).unwrap(),
            version,
            ..EvalOptions::default()
        };
        let streamed = evaluate_bytes(&qrels, run, "run", &opts, "qrels").unwrap();
        let parsed = Run::from_bytes(run, "run").unwrap();
        let whole = evaluate_run(&qrels, &parsed, &opts, "qrels").unwrap();
        assert_eq!(streamed.summary, vec![want], "{version:?}");
        assert_eq!(whole.summary, vec![want], "{version:?}");
    }
}
