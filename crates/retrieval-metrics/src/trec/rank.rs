//! Ranking a query's retrieved documents and joining them with the qrels, as trec_eval does.
//!
//! Source: trec_eval 10.0-rc3 `form_res_rels.c`.

use super::parse::QueryQrels;
use std::cmp::Ordering;

/// Relevance given to a retrieved document that is not in the qrels (trec_eval
/// `RELVALUE_NONPOOL`).
pub const REL_NONPOOL: i32 = -1;
/// Relevance given to a retrieved document judged with a negative value, i.e. pooled but not
/// judged (trec_eval `RELVALUE_UNJUDGED`).
pub const REL_UNJUDGED: i32 = -2;

/// trec_eval's ranking order of two retrieved documents (`comp_sim_docno` in
/// `form_res_rels.c`): higher score first; equal scores are ordered by docno **descending** in
/// byte order (`strcmp(b, a)`), so for a tie `d9` ranks above `d10` and `b` above `a`.
///
/// Scores are compared in double precision, as trec_eval 10.0 stores them (`double sim` in
/// `trec_format.h`'s `TEXT_RESULTS`); trec_eval 9.0.8 (pytrec_eval) keeps a `float`: apply
/// [`stored_score`] first to rank as it does. `-0.0` and `0.0` are equal scores. Scores must
/// not be NaN (the readers refuse NaN); a NaN is treated as equal to everything, as C's
/// comparisons would.
#[inline]
pub fn trec_order(a_score: f64, a_docno: &[u8], b_score: f64, b_docno: &[u8]) -> Ordering {
    if a_score > b_score {
        Ordering::Less
    } else if a_score < b_score {
        Ordering::Greater
    } else {
        b_docno.cmp(a_docno)
    }
}

/// A retrieved document as seen by [`rank_by_score`]: a score and a docno.
pub trait ScoredDoc {
    /// The retrieval score (higher ranks first).
    fn score(&self) -> f64;
    /// The document id, compared as bytes.
    fn docno(&self) -> &[u8];
}

impl ScoredDoc for (String, f64) {
    fn score(&self) -> f64 {
        self.1
    }
    fn docno(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl ScoredDoc for (&str, f64) {
    fn score(&self) -> f64 {
        self.1
    }
    fn docno(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl ScoredDoc for super::parse::RunDoc {
    fn score(&self) -> f64 {
        self.score
    }
    fn docno(&self) -> &[u8] {
        &self.docno
    }
}

/// Sort one query's retrieved documents into trec_eval's ranking: by score descending, ties
/// broken by docno descending (see [`trec_order`]). The rank column of a run file plays no
/// part, exactly as in trec_eval. After the call, `docs[0]` is rank 1.
///
/// This is the one place the tie-break is defined; reuse it wherever a ranking must agree with
/// trec_eval (for example when converting other formats to TREC runs).
pub fn rank_by_score<T: ScoredDoc>(docs: &mut [T]) {
    // Sort on an order-preserving integer key of the score (cheap comparisons), then order each
    // run of equal scores by docno descending: the same total order as `trec_order`.
    docs.sort_unstable_by_key(|d| std::cmp::Reverse(score_key(d.score())));
    let mut i = 0;
    while i < docs.len() {
        let k = score_key(docs[i].score());
        let mut j = i + 1;
        while j < docs.len() && score_key(docs[j].score()) == k {
            j += 1;
        }
        if j - i > 1 {
            docs[i..j].sort_unstable_by(|a, b| b.docno().cmp(a.docno()));
        }
        i = j;
    }
}

/// Sort `items` by `key` descending, items with equal keys by `then`: the ranking sort of the
/// file path and of the Python binding (whose documents are small `Copy` records with a
/// [`score_key`]). Instead of moving the records through the sort, one sort of plain words
/// (the inverted key with the item's index in its low bits) orders them and they are gathered
/// once; items whose keys agree above the index bits (equal scores, or scores a few units
/// apart in the last place) are then put in exact order. Up to 2^16 items; larger slices are
/// sorted directly.
pub fn sort_by_key_desc<T: Copy>(
    items: &mut [T],
    key: impl Fn(&T) -> u64,
    then: impl Fn(&T, &T) -> Ordering,
) {
    let n = items.len();
    if n < 2 {
        return;
    }
    let exact = |a: &T, b: &T| key(b).cmp(&key(a)).then_with(|| then(a, b));
    let bits = usize::BITS - (n - 1).leading_zeros();
    if bits > 16 {
        items.sort_unstable_by(exact);
        return;
    }
    let mask = (1u64 << bits) - 1;
    let mut order: Vec<u64> = items
        .iter()
        .enumerate()
        .map(|(i, d)| (!key(d) & !mask) | i as u64)
        .collect();
    order.sort_unstable();
    let ranked: Vec<T> = order.iter().map(|&o| items[(o & mask) as usize]).collect();
    items.copy_from_slice(&ranked);
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && order[j] & !mask == order[i] & !mask {
            j += 1;
        }
        if j - i > 1 {
            items[i..j].sort_unstable_by(exact);
        }
        i = j;
    }
}

/// An integer key ordered like the score (`-0.0` and `0.0` map to the same key): sorting by
/// this key descending, then docno descending, is [`trec_order`]. Front ends that rank
/// documents themselves (the Python binding ranks dict entries) use it, through
/// [`score_key_for`], to agree with the evaluator bit for bit. The score must not be NaN.
#[inline]
pub fn score_key(s: f64) -> u64 {
    let bits = (s + 0.0).to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// The score a [`score_key`] stands for (`0.0` for both zeros).
#[inline]
pub(crate) fn key_score(key: u64) -> f64 {
    f64::from_bits(if key >> 63 == 1 {
        key & !(1 << 63)
    } else {
        !key
    })
}

/// A score as trec_eval release `version` stores it before ranking: trec_eval 10.0 keeps the
/// double (`double sim`); 9.0.8, which pytrec_eval and pytrec-eval-terrier build, keeps a
/// `float sim`, so two scores that round to the same `f32` tie there and are ordered by docno
/// (found on a 30k-query random run against pytrec_eval: `0.4140936412550752` and
/// `0.41409363333403515` tie in 9.0.8 and not in 10.0). The conversion rounds to nearest,
/// ties to even, and overflows to ±inf, as C's double-to-float conversion does.
#[inline]
pub fn stored_score(version: super::spec::TrecEvalVersion, s: f64) -> f64 {
    match version {
        super::spec::TrecEvalVersion::V10 => s,
        super::spec::TrecEvalVersion::V9_0_8 => f64::from(s as f32),
    }
}

/// [`score_key`] of the score as trec_eval release `version` stores it ([`stored_score`]).
#[inline]
pub fn score_key_for(version: super::spec::TrecEvalVersion, s: f64) -> u64 {
    score_key(stored_score(version, s))
}

/// A query's ranked relevance list joined with its judgments: trec_eval's `RES_RELS`.
///
/// `rels[i]` is the relevance of the document at rank `i + 1`: the qrels value (>= 0),
/// [`REL_NONPOOL`] (not in the qrels) or [`REL_UNJUDGED`] (judged with a negative value).
/// Counts follow `form_res_rels.c`: `num_rel` counts judged documents with rel >= the
/// relevance level (whether retrieved or not); `rel_levels[l]` counts judged documents at level
/// `l`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgedRanking {
    /// Relevance per rank.
    pub rels: Vec<i32>,
    /// Retrieved documents considered (after `-M` and `-J`).
    pub num_ret: i64,
    /// Relevant judged documents (rel >= level).
    pub num_rel: i64,
    /// Relevant documents retrieved.
    pub num_rel_ret: i64,
    /// Retrieved documents not in the qrels.
    pub num_nonpool: i64,
    /// Retrieved documents in the qrels with a negative relevance.
    pub num_unjudged_in_pool: i64,
    /// Judged documents per level `0..=max`.
    pub rel_levels: Vec<u64>,
    /// One more than the highest level with a judgment.
    pub num_rel_levels: usize,
}

impl JudgedRanking {
    /// Join ranked docnos (already in rank order, already truncated to `-M`) with the
    /// judgments of their query.
    ///
    /// `relevance_level` is `-l`; `judged_only` is `-J` (drop retrieved documents that are not
    /// judged, keeping the rank order of the rest).
    pub fn from_ranked<'a, I>(
        ranked: I,
        qrels: &QueryQrels,
        relevance_level: i64,
        judged_only: bool,
    ) -> JudgedRanking
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        let mut j = JudgedRanking::default();
        j.fill(ranked, qrels, relevance_level, judged_only);
        j
    }

    /// [`JudgedRanking::from_ranked`] into `self`, reusing its allocations.
    pub fn fill<'a, I>(
        &mut self,
        ranked: I,
        qrels: &QueryQrels,
        relevance_level: i64,
        judged_only: bool,
    ) where
        I: IntoIterator<Item = &'a [u8]>,
    {
        self.fill_rels(
            ranked.into_iter().map(|d| qrels.rel(d)),
            qrels,
            relevance_level,
            judged_only,
        );
    }

    /// Like [`JudgedRanking::fill`], given each ranked document's qrels value (`None` = not in
    /// the qrels) instead of its docno.
    pub fn fill_rels<I>(
        &mut self,
        ranked_rels: I,
        qrels: &QueryQrels,
        relevance_level: i64,
        judged_only: bool,
    ) where
        I: IntoIterator<Item = Option<i32>>,
    {
        self.rels.clear();
        self.num_rel_ret = 0;
        self.num_nonpool = 0;
        self.num_unjudged_in_pool = 0;
        for judged in ranked_rels {
            let rel = match judged {
                None => REL_NONPOOL,
                Some(r) if r < 0 => REL_UNJUDGED,
                Some(r) => r,
            };
            if judged_only {
                if rel < 0 {
                    continue;
                }
            } else if rel == REL_NONPOOL {
                self.num_nonpool += 1;
            } else if rel == REL_UNJUDGED {
                self.num_unjudged_in_pool += 1;
            }
            if rel >= 0 && rel as i64 >= relevance_level {
                self.num_rel_ret += 1;
            }
            self.rels.push(rel);
        }
        self.num_ret = self.rels.len() as i64;
        self.rel_levels.clear();
        self.rel_levels.extend_from_slice(qrels.rel_levels());
        self.num_rel_levels = qrels.num_rel_levels();
        self.num_rel = qrels.num_rel(relevance_level) as i64;
    }

    /// Number of recorded relevance levels (levels `0..num_levels()`); [`Self::level_count`]
    /// is 0 at and beyond it.
    pub fn num_levels(&self) -> i64 {
        i64::try_from(self.rel_levels.len()).unwrap_or(i64::MAX)
    }

    /// Judged documents at `level`, 0 outside the recorded levels.
    pub fn level_count(&self, level: i64) -> u64 {
        if level < 0 {
            return 0;
        }
        self.rel_levels.get(level as usize).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trec::parse::Qrels;

    #[test]
    fn ties_break_by_docno_descending() {
        let mut docs = vec![
            ("d10", 1.0),
            ("d9", 1.0),
            ("a", 2.0),
            ("b", 0.5),
            ("c", -0.0),
            ("e", 0.0),
        ];
        rank_by_score(&mut docs);
        let order: Vec<&str> = docs.iter().map(|d| d.0).collect();
        assert_eq!(order, ["a", "d9", "d10", "b", "e", "c"]);
    }

    #[test]
    fn scores_are_stored_as_each_trec_eval_release_stores_them() {
        use crate::trec::TrecEvalVersion;
        // 0.4140936412550752 and 0.41409363333403515 differ as f64 but are the same f32:
        // trec_eval 10.0 (double sim) ranks the higher first; 9.0.8 (float sim, pytrec_eval)
        // sees a tie and breaks it by docno descending. Checked against both binaries.
        let (hi, lo) = (0.4140936412550752_f64, 0.41409363333403515_f64);
        assert!(hi > lo && hi as f32 == lo as f32);
        let mut docs = vec![("d65", hi), ("d76", lo), ("d1", 0.5), ("d2", 0.3)];
        rank_by_score(&mut docs);
        let order: Vec<&str> = docs.iter().map(|d| d.0).collect();
        assert_eq!(order, ["d1", "d65", "d76", "d2"]);
        let mut v9: Vec<(&str, f64)> = docs
            .iter()
            .map(|&(n, s)| (n, stored_score(TrecEvalVersion::V9_0_8, s)))
            .collect();
        rank_by_score(&mut v9);
        let order: Vec<&str> = v9.iter().map(|d| d.0).collect();
        assert_eq!(order, ["d1", "d76", "d65", "d2"]);
        assert_ne!(score_key(hi), score_key(lo));
        assert_eq!(
            score_key_for(TrecEvalVersion::V9_0_8, hi),
            score_key_for(TrecEvalVersion::V9_0_8, lo)
        );
        for s in [
            hi,
            lo,
            -2.5,
            0.0,
            -0.0,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert_eq!(key_score(score_key(s)), s + 0.0, "{s}");
        }
        // Keys order like the scores: negative, zero (either sign), positive, infinities.
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -0.0,
            0.0,
            1e-40,
            2.5,
            1e300,
            f64::INFINITY,
        ];
        for w in xs.windows(2) {
            assert!(score_key(w[0]) <= score_key(w[1]), "{w:?}");
        }
        assert_eq!(score_key(-0.0), score_key(0.0));
        assert!(score_key(-2.5) < score_key(-1.0) && score_key(1.0) < score_key(2.5));
    }

    #[test]
    fn judged_only_drops_unjudged() {
        let q = Qrels::from_bytes(b"1 0 a 1\n1 0 b 0\n1 0 c -1\n1 0 z 2\n", "q").unwrap();
        let qq = q.get(b"1").unwrap();
        let ranked: Vec<&[u8]> = vec![b"x", b"a", b"c", b"b"];
        let j = JudgedRanking::from_ranked(ranked.iter().copied(), qq, 1, false);
        assert_eq!(j.rels, [REL_NONPOOL, 1, REL_UNJUDGED, 0]);
        assert_eq!(
            (
                j.num_ret,
                j.num_rel,
                j.num_rel_ret,
                j.num_nonpool,
                j.num_unjudged_in_pool
            ),
            (4, 2, 1, 1, 1)
        );
        let j = JudgedRanking::from_ranked(ranked.iter().copied(), qq, 1, true);
        assert_eq!(j.rels, [1, 0]);
        assert_eq!((j.num_ret, j.num_nonpool), (2, 0));
    }
}
