//! TREC qrels + run bytes → evaluate, as `routeval trec` does. Input layout:
//! `FLAGS QRELS \0 RUN` where the first byte picks the options (`-l`, `-c`, `-J`, `-M`,
//! `-q`, measure set; `--ties` from the qrels' length). Parsing and evaluation must never panic; the streaming path
//! (`evaluate_bytes`) and the materialized path (`Run::from_bytes` + `evaluate_run`) must agree
//! on success.
#![no_main]

use libfuzzer_sys::fuzz_target;
use routeval_retrieval_metrics::rag::cases_from_trec;
use routeval_retrieval_metrics::trec::{
    EvalOptions, TrecEvalVersion, MeasureSet, Qrels, Run, evaluate_bytes, evaluate_run, format,
};

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else { return };
    let (qrels, run) = match rest.iter().position(|&b| b == 0) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &b""[..]),
    };
    // Constant measure sets (each parses: checked by `routeval trec -m ...`).
    let set: &[&str] = match flags >> 5 {
        0 => &["official"],
        1 => &["all_trec"],
        2 => &["P.1,3,1000000", "ndcg_cut.2,10", "bpref", "infAP"],
        3 => &["num_rel", "num_ret", "Rprec_mult.0.2,1.5", "rbp.p=0.5"],
        4 => &["utility.1,-1,0,0", "gm_map", "ndcg.0=0,1=1,2=3", "11pt_avg.0.5"],
        _ => &["all_trec", "11pt_avg.0.5", "Rprec_mult.0.2,1.5", "rbp.p=0.9"],
    };
    let measures = if set == ["official"] {
        MeasureSet::official()
    } else {
        MeasureSet::parse(set).expect("constant measure set")
    };
    let opts = EvalOptions {
        measures,
        relevance_level: [1, 0, 2, -3][(flags & 3) as usize],
        complete: flags & 4 != 0,
        judged_only: flags & 8 != 0,
        max_docs_per_topic: if flags & 16 != 0 { 3 } else { usize::MAX },
        num_docs_in_coll: 1000,
        per_query: true,
        // Both trec_eval versions routeval reproduces (10.0 default, 9.0.8 for pytrec_eval).
        version: if run.len() % 2 == 0 { TrecEvalVersion::V10 } else { TrecEvalVersion::V9_0_8 },
        // `--ties` (tie ranges per query; refused where -M cuts through a tie group).
        ties: qrels.len() % 2 == 1,
    };
    let Ok(q) = Qrels::from_bytes(qrels, "qrels") else { return };
    let streamed = evaluate_bytes(&q, run, "run", &opts, "qrels");
    if let Ok(r) = Run::from_bytes(run, "run") {
        let _ = cases_from_trec(&q, &r);
        let whole = evaluate_run(&q, &r, &opts, "qrels");
        if let (Ok(a), Ok(b)) = (&streamed, &whole) {
            assert_eq!(a.num_q, b.num_q);
            for (x, y) in a.summary.iter().zip(&b.summary) {
                assert!(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()), "{x} vs {y}");
            }
        }
    }
    if let Ok(e) = streamed {
        let _ = format::render_text(&e, true, true);
    }
});
