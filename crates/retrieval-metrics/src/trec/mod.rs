//! trec_eval-exact evaluation of TREC runs.
//!
//! This module reproduces trec_eval 10.0-rc3 (the tool behind the numbers in IR papers):
//! the same measures (every one of the `all_trec` set), the same ranking and tie-breaking, the
//! same options (`-q -c -M -l -n -J -N -m`), the same summation order, and the same printed
//! output byte for byte. It is much faster: runs are parsed in parallel without building
//! per-line records, and only the requested measures are computed.
//!
//! * [`parse`]: [`Qrels`] and run readers ([`RunReader`] streams records from a `BufRead`,
//!   [`Run`] materializes one, [`evaluate_bytes`] evaluates straight from a file's bytes).
//! * [`rank`]: [`rank_by_score`], trec_eval's ranking (score descending, ties by docno
//!   descending), and [`JudgedRanking`], a query's ranked relevance list (`RES_RELS`).
//! * [`measures`]: one documented function per measure, with its definition and source file.
//! * [`spec`]: the measure table, nicknames and `-m name.params` parsing ([`MeasureSet`]).
//! * [`eval`]: the evaluation loop, `-c` handling and the mergeable [`TrecAccumulator`].
//! * [`format`](mod@format): trec_eval's text output and the JSON form.
//! * [`ties`]: tie sensitivity, each measure's min, max and expected value over every order
//!   of the documents that share a score (`--ties`).
//!
//! ```
//! use routeval_retrieval_metrics::trec::{self, EvalOptions, MeasureSet, Qrels};
//! let qrels = Qrels::from_bytes(b"q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\n", "qrels")?;
//! let run = b"q1 Q0 d2 1 0.9 demo\nq1 Q0 d1 2 0.8 demo\nq1 Q0 d3 3 0.8 demo\n";
//! let opts = EvalOptions { measures: MeasureSet::parse(&["map", "P.2"])?, ..Default::default() };
//! let ev = trec::evaluate_bytes(&qrels, run, "run", &opts, "qrels")?;
//! let text = String::from_utf8(trec::format::render_text(&ev, false, true)).unwrap();
//! // d3 and d1 tie at 0.8: d3 ranks first (docno descending), so AP = (1/2 + 2/3) / 2.
//! assert_eq!(text, "map                   \tall\t0.5833\nP_2                   \tall\t0.5000\n");
//! # Ok::<(), routeval_core::Error>(())
//! ```

pub mod compared;
pub mod compute;
pub mod eval;
pub mod format;
pub mod measures;
pub mod parse;
pub mod rank;
pub mod spec;
pub mod ties;

pub use eval::{
    EvalOptions, Evaluation, QueryResult, TrecAccumulator, TrecEvalVersion, compute_query,
    evaluate_bytes, evaluate_bytes_with_progress, evaluate_run,
};
pub use parse::{Qrels, QueryQrels, Run, RunDoc, RunReader, RunRecord};
pub use rank::{
    JudgedRanking, ScoredDoc, rank_by_score, score_key, score_key_for, sort_by_key_desc,
    stored_score, trec_order,
};
pub use spec::{MeasureId, MeasureSet};
