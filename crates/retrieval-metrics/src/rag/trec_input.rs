//! TREC qrels and a TREC run as rag-quality-check cases, so the five retrieval metrics can be
//! computed with rag-quality-check's definitions on trec_eval's inputs (`routeval rag --qrels
//! QRELS --run RUN`) and compared with `routeval trec` on the same files.
//!
//! * Queries: those in both the qrels and the run (trec_eval's default without `-c`), in
//!   byte order of the query id; the case `query` is the query id.
//! * Ranking: each query's documents sorted by score descending with trec_eval's tie-break
//!   (docno descending, [`crate::trec::rank_by_score`]); the run's rank column is ignored,
//!   as in trec_eval. Repeated docnos are de-duplicated (and noted) by the rag rules, where
//!   trec_eval would refuse the run.
//! * Relevance: the qrels as a graded `{docno: gain}` mapping (gain = the judgment; 0 and
//!   negative judgments are not relevant). A query whose judgments are all ≤ 0 is "labelled as
//!   having no right answer" and excluded from every retrieval mean, where trec_eval scores 0.

use super::pyjson::PyValue;
use crate::trec::{Qrels, Run, rank_by_score};
use std::borrow::Cow;

fn text(b: &[u8]) -> Cow<'static, str> {
    Cow::Owned(String::from_utf8_lossy(b).into_owned())
}

/// The cases for `qrels` × `run` (see the module docs for the rules).
pub fn cases_from_trec(qrels: &Qrels, run: &Run) -> Vec<PyValue<'static>> {
    let mut qids: Vec<&[u8]> = run
        .queries
        .keys()
        .map(|q| &**q)
        .filter(|q| qrels.get(q).is_some())
        .collect();
    qids.sort_unstable();
    qids.into_iter()
        .filter_map(|qid| {
            let judged = qrels.get(qid)?;
            let mut docs = run.queries.get(qid)?.clone();
            rank_by_score(&mut docs);
            let retrieved = docs.iter().map(|d| PyValue::Str(text(&d.docno))).collect();
            let relevant = (0..judged.len())
                .map(|i| {
                    (
                        text(judged.docno(i)),
                        PyValue::Int(i64::from(judged.rel_at(i))),
                    )
                })
                .collect();
            Some(PyValue::Dict(vec![
                (Cow::Borrowed("query"), PyValue::Str(text(qid))),
                (Cow::Borrowed("retrieved"), PyValue::List(retrieved)),
                (Cow::Borrowed("relevant"), PyValue::Dict(relevant)),
            ]))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rag::{Options, evaluate};

    #[test]
    fn ties_follow_trec_eval_and_zero_judged_queries_are_excluded() {
        let qrels =
            Qrels::from_bytes(b"q1 0 a 1\nq1 0 c 0\nq2 0 x 0\nq3 0 z 2\n", "qrels").unwrap();
        // q1: all tied; trec_eval ranks by docno descending: c, b, a → first relevant at 3.
        let run = Run::from_triples(
            [
                ("q1", "a", 1.0),
                ("q1", "b", 1.0),
                ("q1", "c", 1.0),
                ("q2", "x", 3.0),
                ("q9", "z", 1.0),
            ],
            "r",
        );
        let cases = cases_from_trec(&qrels, &run);
        assert_eq!(cases.len(), 2, "queries in both files only");
        let rep = evaluate(
            &cases,
            &Options {
                k: 3,
                threshold: 0.5,
            },
            None,
        )
        .unwrap();
        assert_eq!(
            rep.per_case[0].metric(crate::rag::Metric::Mrr),
            Some(1.0 / 3.0)
        );
        assert!(
            rep.per_case[1].metrics.is_empty(),
            "q2 has no relevant doc: excluded"
        );
        assert_eq!(rep.metric("mrr"), Some(1.0 / 3.0));
    }
}
