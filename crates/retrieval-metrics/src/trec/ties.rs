//! Tie sensitivity: the range of each measure over every order of the documents that share a
//! score (`routeval trec --ties`).
//!
//! trec_eval breaks a score tie by docno (descending, [`super::rank::trec_order`]), which is
//! arbitrary: renaming documents changes the numbers. For one query, let the *tie groups* be
//! the maximal runs of ranked documents with the same score. Every order of the documents
//! inside each group, chosen independently and uniformly for each group, gives a ranking;
//! over all of them this module gives each measure's
//!
//! * **min** and **max**: the measure, computed by trec_eval's own code ([`super::measures`])
//!   on the ranking whose groups are sorted by the measure's gain ascending / descending (the
//!   extremes: every supported measure only rises when a higher-gain document moves above a
//!   lower-gain one, by an exchange argument; for `ndcg`/`dcg`/`rbp` by the rearrangement
//!   inequality on their decreasing discounts), so both are values trec_eval prints for
//!   some order;
//! * **expected**: the mean over all those orders, in closed form (no sampling), by linearity
//!   of expectation and the position distributions of a uniform permutation (McSherry &
//!   Najork, "Computing information retrieval performance measures efficiently in the presence
//!   of tied scores", ECIR 2008, give the forms for P, AP and DCG):
//!   - `P`, `recall`, `relative_P`, `Rprec`, `Rprec_mult`, `unj`, `dcg`, `ndcg`, `ndcg_cut`,
//!     `rbp`, `rbp_resid`: each rank of a group holds the group's mean gain;
//!   - `success@k`: `1 - C(n - r, t) / C(n, t)` when the cut takes `t` of a group of `n`
//!     documents with `r` relevant and nothing relevant ranks above the group;
//!   - `recip_rank` (and `recip_rank_cut`): the first relevant document of the first group
//!     holding one is at offset `j` with probability `C(n - 1 - j, r - 1) / C(n, r)`;
//!   - `map`, `map_cut` (McSherry & Najork's form): `E[x_i (1 + sum_{j<i} x_j)] / i` summed
//!     over ranks, with `E[x_i] = r/n` and `E[x_i x_j] = r (r - 1) / (n (n - 1))` for two
//!     ranks of the same group (independent across groups);
//!   - `bpref`, `binG`: a relevant document of a group with `s` documents of the kind counted
//!     above it (judged non-relevant for bpref, any non-relevant for binG) has
//!     `base + U` of them above, `U` uniform on `0..=s`; bpref keeps trec_eval's
//!     `min(., R)` caps exactly.
//!
//! Measures that do not depend on the order at all (`num_ret`, `set_P`, `utility`, ...) get
//! their value as a point. Measures without an exact form here ([`TieSupport::Unsupported`]:
//! `gm_map`, `gm_bpref`, `iprec_at_recall`, `11pt_avg`, `infAP`, `G`, `ndcg_rel`, `Rndcg`,
//! `relstring`, and `rbp`/`rbp_resid` with a negative persistence) get no range at all.
//!
//! Cost per query: O(n) to find that no group mixes relevance values (the common case: then
//! every range is the point value), else O(n log n) for the two sorted orders plus O(n) per
//! measure for the closed forms (a query of 10,000 tied documents takes about a millisecond).

use super::compute::{EvalOptions, TrecAccumulator, compute_measure};
use super::measures::{self as m, Gains};
use super::rank::JudgedRanking;
use super::spec::{Measure, MeasureId, MeasureSet, Params};

/// How `--ties` treats a measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TieSupport {
    /// The value depends on the order inside tie groups; min, max and expected are exact.
    Exact,
    /// The value does not depend on the order of the ranking (counts, set measures,
    /// `ideal_dcg`): min = max = expected = the value.
    OrderFree,
    /// No exact range: reported as unsupported, never as a point.
    Unsupported,
    /// Not a per-query measure of a ranking (`runid`, `num_q`): left out.
    NotReported,
}

/// Whether and how `--ties` covers `meas` (see the module documentation).
pub fn support(meas: &Measure) -> TieSupport {
    use MeasureId::*;
    match meas.id {
        Runid | NumQ => TieSupport::NotReported,
        NumRet | NumRel | NumRelRet | NumNonrelJudgedRet | SetP | SetRelativeP | SetRecall
        | SetMap | SetF | Utility | IdealDcg => TieSupport::OrderFree,
        Map | Rprec | Bpref | RecipRank | P | Recall | RprecMult | BinG | Dcg | Ndcg | NdcgCut
        | MapCut | RelativeP | Success | Unj | RecipRankCut => TieSupport::Exact,
        // A negative persistence makes the discount alternate in sign: no sorted order is
        // extreme.
        Rbp | RbpResid => {
            if persistence(meas) >= 0.0 {
                TieSupport::Exact
            } else {
                TieSupport::Unsupported
            }
        }
        GmMap | GmBpref | IprecAtRecall | Relstring | InfAP | ElevenPtAvg | G | NdcgRel | Rndcg => {
            TieSupport::Unsupported
        }
    }
}

fn persistence(meas: &Measure) -> f64 {
    match &meas.params {
        Params::Pairs(p) => m::rbp_persistence(p),
        _ => m::rbp_persistence(&[]),
    }
}

/// One measure value's range over the orders of a query's tie groups (or the mean of the
/// per-query ranges over queries). Units are the measure's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TieRange {
    /// The smallest value any order gives.
    pub min: f64,
    /// The largest value any order gives.
    pub max: f64,
    /// The mean over all orders (each group's orders equally likely, groups independent).
    pub expected: f64,
}

impl TieRange {
    /// The range of a value no order changes.
    pub fn point(v: f64) -> TieRange {
        TieRange {
            min: v,
            max: v,
            expected: v,
        }
    }

    /// Whether no order changes the value (`min == max`).
    pub fn is_point(&self) -> bool {
        self.min == self.max
    }
}

/// The exclusive ends of a query's tie groups, from its ranked documents as `(score key,
/// qrels value)` pairs in rank order (already cut at `-M`): consecutive documents with equal
/// keys ([`super::rank::score_key`]) form a group. With `judged_only` (`-J`) documents
/// without a judgment (`None` or a negative value) are skipped, as
/// [`JudgedRanking::fill_rels`] skips them, so the ends index [`JudgedRanking::rels`].
pub fn group_ends<I>(docs: I, judged_only: bool, ends: &mut Vec<usize>)
where
    I: IntoIterator<Item = (u64, Option<i32>)>,
{
    ends.clear();
    let mut prev: Option<u64> = None;
    let mut k = 0usize;
    for (key, rel) in docs {
        if judged_only && !matches!(rel, Some(r) if r >= 0) {
            continue;
        }
        if prev.is_some_and(|p| p != key) {
            ends.push(k);
        }
        prev = Some(key);
        k += 1;
    }
    if k > 0 {
        ends.push(k);
    }
}

/// Whether some tie group holds documents of different relevance values: only then can an
/// order change any measure (every measure is a function of the relevance per rank).
pub fn ties_matter(j: &JudgedRanking, ends: &[usize]) -> bool {
    let mut start = 0;
    for &end in ends {
        let g = &j.rels[start..end.min(j.rels.len())];
        if g.len() > 1 && g.iter().any(|&r| r != g[0]) {
            return true;
        }
        start = end;
    }
    false
}

/// The range of every value slot of `opts.measures` (laid out as `values`, the query's
/// trec_eval values from [`super::compute::compute_query`]) over the orders of the tie groups
/// `ends` (from [`group_ends`]) of the ranking `j`.
///
/// `None` when no group mixes relevance values: every range is then its value. Otherwise one
/// range per slot; slots of [`TieSupport::Unsupported`] and [`TieSupport::NotReported`]
/// measures hold NaN ranges, order-free ones their value.
pub fn query_ranges(
    j: &JudgedRanking,
    ends: &[usize],
    opts: &EvalOptions,
    values: &[f64],
) -> Option<Box<[TieRange]>> {
    if !ties_matter(j, ends) {
        return None;
    }
    SCRATCH.with(|s| query_ranges_in(&mut s.borrow_mut(), j, ends, opts, values))
}

/// Buffers [`query_ranges`] reuses from query to query (one set per thread).
#[derive(Default)]
struct Scratch {
    lo: JudgedRanking,
    hi: JudgedRanking,
    lo_vals: Vec<f64>,
    hi_vals: Vec<f64>,
    exp: Vec<f64>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

fn query_ranges_in(
    sc: &mut Scratch,
    j: &JudgedRanking,
    ends: &[usize],
    opts: &EvalOptions,
    values: &[f64],
) -> Option<Box<[TieRange]>> {
    let groups = Groups { ends };
    let mut out: Option<Vec<TieRange>> = None;
    // Whether `sc.lo`/`sc.hi` hold the two extreme orders by relevance value, shared by every
    // measure whose gain is monotone in it.
    let mut by_rel = false;
    for meas in opts.measures.measures() {
        if support(meas) != TieSupport::Exact {
            continue;
        }
        let gains = gain_key(meas, j);
        if !matters_for(j, &groups, meas, opts.relevance_level, gains.as_ref()) {
            continue;
        }
        let n = meas.len();
        for v in [&mut sc.lo_vals, &mut sc.hi_vals, &mut sc.exp] {
            v.clear();
            v.resize(n, 0.0);
        }
        match &gains {
            None if meas.id == MeasureId::Map => {
                let (lo, hi) = ap_extremes(j, &groups, opts.relevance_level);
                sc.lo_vals[0] = lo;
                sc.hi_vals[0] = hi;
            }
            None => {
                if !by_rel {
                    sort_groups(&mut sc.lo, j, &groups, f64::from, false);
                    sort_groups(&mut sc.hi, j, &groups, f64::from, true);
                    by_rel = true;
                }
            }
            Some(g) => {
                sort_groups(&mut sc.lo, j, &groups, |r| g.gain(r), false);
                sort_groups(&mut sc.hi, j, &groups, |r| g.gain(r), true);
                by_rel = false;
            }
        }
        if meas.id != MeasureId::Map {
            compute_measure(&sc.lo, meas, opts, &mut sc.lo_vals);
            compute_measure(&sc.hi, meas, opts, &mut sc.hi_vals);
        }
        expected(j, &groups, meas, opts, &mut sc.exp);
        let out = out.get_or_insert_with(|| {
            // Every slot starts as its value (order-free and unaffected measures keep it);
            // measures given no range hold NaN.
            let mut o: Vec<TieRange> = values.iter().map(|&v| TieRange::point(v)).collect();
            for m in opts.measures.measures() {
                if matches!(
                    support(m),
                    TieSupport::Unsupported | TieSupport::NotReported
                ) {
                    o[m.offset..m.offset + m.len()].fill(TieRange::point(f64::NAN));
                }
            }
            o
        });
        for k in 0..n {
            let (a, b) = (sc.lo_vals[k], sc.hi_vals[k]);
            let (min, max) = if a <= b { (a, b) } else { (b, a) };
            // The closed form is exact up to rounding; keep it inside the range it must lie in
            // (and equal to the value when no order changes it).
            let e = if min == max {
                min
            } else {
                sc.exp[k].clamp(min, max)
            };
            out[meas.offset + k] = TieRange {
                min,
                max,
                expected: e,
            };
        }
    }
    let out = out?;
    // `None` also when every range turned out a point.
    let any = opts.measures.measures().iter().any(|m| {
        support(m) == TieSupport::Exact
            && out[m.offset..m.offset + m.len()]
                .iter()
                .any(|r| !r.is_point())
    });
    any.then(|| out.into_boxed_slice())
}

/// The ranges of an evaluation, summarized over its queries (`routeval trec --ties`'s `all`).
#[derive(Debug, Clone, PartialEq)]
pub struct TieSummary {
    /// Per value slot (the layout of [`super::eval::Evaluation::summary`]): the per-query
    /// minima, maxima and expected values each aggregated as trec_eval aggregates the measure
    /// (the mean over `num_q` queries, with `-c` over every qrels query; sums for counts), in
    /// qrels order, so a measure no tie changes gets exactly its summary value. NaN for
    /// [`TieSupport::Unsupported`] and [`TieSupport::NotReported`] slots.
    pub all: Vec<TieRange>,
    /// Per value slot: the number of queries whose range is not a point.
    pub affected: Vec<u64>,
    /// Queries where at least one reported value's range is not a point.
    pub queries_affected: u64,
    /// Per measure of the [`MeasureSet`], in print order: its [`support`].
    pub support: Vec<TieSupport>,
}

/// The mergeable sums behind a [`TieSummary`]: one [`TrecAccumulator`] per end of the range
/// and for the expected values, plus the counts of affected queries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TieAccumulator {
    min: TrecAccumulator,
    max: TrecAccumulator,
    expected: TrecAccumulator,
    affected: Vec<u64>,
    queries_affected: u64,
    /// Slots of [`TieSupport::Exact`] measures.
    exact: Vec<bool>,
    buf: [Vec<f64>; 3],
}

impl TieAccumulator {
    /// An empty accumulator for `measures`.
    pub fn new(measures: &MeasureSet) -> TieAccumulator {
        let mut exact = vec![false; measures.n_values()];
        for meas in measures.measures() {
            if support(meas) == TieSupport::Exact {
                exact[meas.offset..meas.offset + meas.len()]
                    .iter_mut()
                    .for_each(|e| *e = true);
            }
        }
        TieAccumulator {
            affected: vec![0; measures.n_values()],
            exact,
            ..TieAccumulator::default()
        }
    }

    /// Add one query: its values and its ranges (`None`: every range is the value).
    pub fn add(&mut self, values: &[f64], ranges: Option<&[TieRange]>) {
        let Some(r) = ranges else {
            self.min.add(values);
            self.max.add(values);
            self.expected.add(values);
            return;
        };
        let mut any = false;
        for b in &mut self.buf {
            b.clear();
            b.extend_from_slice(values);
        }
        for (s, range) in r.iter().enumerate().take(values.len()) {
            if !self.exact.get(s).copied().unwrap_or(false) {
                continue;
            }
            self.buf[0][s] = range.min;
            self.buf[1][s] = range.max;
            self.buf[2][s] = range.expected;
            if !range.is_point() {
                self.affected[s] += 1;
                any = true;
            }
        }
        self.min.add(&self.buf[0]);
        self.max.add(&self.buf[1]);
        self.expected.add(&self.buf[2]);
        self.queries_affected += u64::from(any);
    }

    /// The summary, aggregated as [`TrecAccumulator::finish`] aggregates (`complete` = `-c`,
    /// `num_qrels` = queries in the qrels); order-free measures take their value from
    /// `summary` (the evaluation's own, so `-c`'s `num_rel` rule carries over).
    pub fn finish(
        &self,
        measures: &MeasureSet,
        complete: bool,
        num_qrels: usize,
        summary: &[f64],
    ) -> TieSummary {
        let (_, lo) = self.min.finish(measures, complete, num_qrels);
        let (_, hi) = self.max.finish(measures, complete, num_qrels);
        let (_, ex) = self.expected.finish(measures, complete, num_qrels);
        let mut all = vec![TieRange::point(f64::NAN); measures.n_values()];
        let mut sup = Vec::with_capacity(measures.measures().len());
        for meas in measures.measures() {
            let s = support(meas);
            sup.push(s);
            for k in meas.offset..meas.offset + meas.len() {
                all[k] = match s {
                    TieSupport::Exact => TieRange {
                        min: lo[k],
                        max: hi[k],
                        expected: if lo[k] == hi[k] { lo[k] } else { ex[k] },
                    },
                    TieSupport::OrderFree => TieRange::point(summary[k]),
                    _ => TieRange::point(f64::NAN),
                };
            }
        }
        TieSummary {
            all,
            affected: self.affected.clone(),
            queries_affected: self.queries_affected,
            support: sup,
        }
    }
}

/// Whether some order changes `meas`: a tie group holding documents `meas` tells apart (its
/// own classes of relevance values: relevant or not at `-l`, judged non-relevant or skipped
/// for bpref, the gain for the DCG family, judged or not for unj/rbp_resid) starts within the
/// ranks it reads (its largest cutoff, R for Rprec, the first relevant document's group for
/// recip_rank; the whole ranking otherwise).
fn matters_for(
    j: &JudgedRanking,
    groups: &Groups,
    meas: &Measure,
    level: i64,
    gains: Option<&Gains>,
) -> bool {
    use MeasureId::*;
    let max_cut = match &meas.params {
        Params::Cutoffs(c) => c.last().copied().unwrap_or(0),
        _ => i64::MAX,
    };
    let horizon = match meas.id {
        P | Recall | RelativeP | Success | NdcgCut | MapCut | Unj | RecipRankCut => max_cut,
        Rprec => j.num_ret.min(j.num_rel),
        _ => i64::MAX,
    };
    let rel = |r: i32| i64::from(is_rel(r, level));
    match meas.id {
        P | Recall | RelativeP | Success | MapCut | Rprec | Map | BinG | RprecMult => {
            mixed_within(j, groups, horizon, rel)
        }
        RecipRank | RecipRankCut => {
            // Only the groups up to the first holding a relevant document are read.
            let mut end = 0;
            for (a, b) in groups.iter() {
                if j.rels[a..b].iter().any(|&r| is_rel(r, level)) {
                    end = b;
                    break;
                }
            }
            end > 0 && mixed_within(j, groups, horizon.min(end as i64), rel)
        }
        Bpref => mixed_within(j, groups, horizon, |r| {
            if r < 0 {
                0
            } else if (r as i64) < level {
                1
            } else {
                2
            }
        }),
        NdcgCut => mixed_within(j, groups, horizon, |r| i64::from(r.max(0))),
        Unj | RbpResid => mixed_within(j, groups, horizon, |r| i64::from(r < 0)),
        Ndcg | Dcg | Rbp => match gains {
            Some(g) => mixed_within(j, groups, horizon, |r| g.gain(r).to_bits() as i64),
            None => true,
        },
        _ => true,
    }
}

/// Whether a group starting before rank `horizon` holds two documents of different `class`.
fn mixed_within(
    j: &JudgedRanking,
    groups: &Groups,
    horizon: i64,
    class: impl Fn(i32) -> i64,
) -> bool {
    for (a, b) in groups.iter() {
        if a as i64 >= horizon {
            break;
        }
        let g = &j.rels[a..b];
        if g.len() > 1 {
            let c = class(g[0]);
            if g[1..].iter().any(|&r| class(r) != c) {
                return true;
            }
        }
    }
    false
}

/// The gains whose order a gain-map measure's extremes follow (`None`: the relevance value's
/// order serves).
fn gain_key(meas: &Measure, j: &JudgedRanking) -> Option<Gains> {
    let pairs = match &meas.params {
        Params::Pairs(p) => p.as_slice(),
        _ => &[],
    };
    match meas.id {
        MeasureId::Ndcg | MeasureId::Dcg => Some(Gains::new(j, pairs)),
        MeasureId::Rbp => Some(m::rbp_gains(&Gains::new(j, pairs))),
        _ => None,
    }
}

/// AP ([`m::average_precision`]) of the orders with every group's relevant documents last
/// and first, without building them: the relevant ranks of those orders, visited in rank
/// order with m_map.c's arithmetic, so both are bit-identical to AP of the sorted rankings.
fn ap_extremes(j: &JudgedRanking, groups: &Groups, level: i64) -> (f64, f64) {
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    let mut so_far = 0i64;
    for (a, b) in groups.iter() {
        let r = j.rels[a..b].iter().filter(|&&x| is_rel(x, level)).count();
        for k in 0..r {
            let n = (so_far + k as i64 + 1) as f64;
            hi += n / (a + k + 1) as f64;
            lo += n / (b - r + k + 1) as f64;
        }
        so_far += r as i64;
    }
    if so_far > 0 {
        (lo / j.num_rel as f64, hi / j.num_rel as f64)
    } else {
        (0.0, 0.0)
    }
}

/// `dst` = `j` with every tie group that mixes relevance values sorted by `key` (ascending,
/// or descending with `desc`; keys are gains, never NaN for finite parameters, and
/// `total_cmp` orders them regardless).
fn sort_groups(
    dst: &mut JudgedRanking,
    j: &JudgedRanking,
    groups: &Groups,
    key: impl Fn(i32) -> f64,
    desc: bool,
) {
    dst.rels.clear();
    dst.rels.extend_from_slice(&j.rels);
    dst.rel_levels.clear();
    dst.rel_levels.extend_from_slice(&j.rel_levels);
    dst.num_ret = j.num_ret;
    dst.num_rel = j.num_rel;
    dst.num_rel_ret = j.num_rel_ret;
    dst.num_nonpool = j.num_nonpool;
    dst.num_unjudged_in_pool = j.num_unjudged_in_pool;
    dst.num_rel_levels = j.num_rel_levels;
    for (a, b) in groups.iter() {
        let g = &mut dst.rels[a..b];
        if g.len() < 2 || g.iter().all(|&r| r == g[0]) {
            continue;
        }
        if desc {
            g.sort_unstable_by(|&x, &y| key(y).total_cmp(&key(x)));
        } else {
            g.sort_unstable_by(|&x, &y| key(x).total_cmp(&key(y)));
        }
    }
}

/// Tie groups as `[start, end)` rank ranges covering the ranking.
struct Groups<'e> {
    ends: &'e [usize],
}

impl Groups<'_> {
    fn iter(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.ends
            .iter()
            .scan(0usize, |start, &end| {
                let a = *start;
                *start = end;
                Some((a, end))
            })
            .filter(|(a, b)| b > a)
    }

    /// Per rank, the mean of `f` over the rank's group: the expected value of `f` at that rank.
    /// Only the first `limit` ranks are filled (the means are over whole groups).
    fn means(&self, rels: &[i32], limit: usize, f: impl Fn(i32) -> f64) -> Vec<f64> {
        let n = limit.min(rels.len());
        let mut out = vec![0.0; n];
        for (a, b) in self.iter() {
            if a >= n {
                break;
            }
            let mean = rels[a..b].iter().map(|&r| f(r)).sum::<f64>() / (b - a) as f64;
            out[a..b.min(n)].iter_mut().for_each(|v| *v = mean);
        }
        out
    }

    /// Expected number of ranks among the top `k` whose relevance satisfies `pred`.
    fn expected_count(&self, rels: &[i32], k: i64, pred: &impl Fn(i32) -> bool) -> f64 {
        let mut before = 0u64;
        for (a, b) in self.iter() {
            let c = rels[a..b].iter().filter(|&&r| pred(r)).count() as u64;
            if (b as i64) <= k {
                before += c;
                continue;
            }
            if (a as i64) < k {
                let t = (k - a as i64) as f64;
                return before as f64 + t * c as f64 / (b - a) as f64;
            }
            break;
        }
        before as f64
    }
}

#[inline]
fn is_rel(r: i32, level: i64) -> bool {
    r as i64 >= level
}

/// The expected value of each of `meas`'s slots into `out` (closed forms of the module
/// documentation; `meas` must be [`TieSupport::Exact`]).
fn expected(j: &JudgedRanking, g: &Groups, meas: &Measure, opts: &EvalOptions, out: &mut [f64]) {
    let level = opts.relevance_level;
    let rels = &j.rels;
    let rel = |r: i32| is_rel(r, level);
    let cut: &[i64] = match &meas.params {
        Params::Cutoffs(c) => c,
        _ => &[],
    };
    let pairs: &[(String, f64)] = match &meas.params {
        Params::Pairs(p) => p,
        _ => &[],
    };
    let nr = j.num_rel;
    use MeasureId::*;
    match meas.id {
        P => {
            for (o, &k) in out.iter_mut().zip(cut) {
                *o = g.expected_count(rels, k, &rel) / k as f64;
            }
        }
        Recall => {
            for (o, &k) in out.iter_mut().zip(cut) {
                *o = if nr == 0 {
                    0.0
                } else {
                    g.expected_count(rels, k, &rel) / nr as f64
                };
            }
        }
        RelativeP => {
            for (o, &k) in out.iter_mut().zip(cut) {
                *o = if nr == 0 {
                    0.0
                } else {
                    g.expected_count(rels, k, &rel) / k.min(nr) as f64
                };
            }
        }
        Unj => {
            for (o, &k) in out.iter_mut().zip(cut) {
                *o = g.expected_count(rels, k, &|r| r < 0) / k as f64;
            }
        }
        Rprec => {
            let k = j.num_ret.min(nr);
            out[0] = if k <= 0 {
                0.0
            } else {
                g.expected_count(rels, k, &rel) / nr as f64
            };
        }
        RprecMult => {
            let fr: &[f64] = match &meas.params {
                Params::Fractions(f) => f,
                _ => &[],
            };
            for (o, &f) in out.iter_mut().zip(fr) {
                let c = (f * nr as f64 + 0.9) as i64;
                *o = if c <= 0 {
                    0.0
                } else {
                    g.expected_count(rels, c, &rel) / c as f64
                };
            }
        }
        Success => {
            for (o, &k) in out.iter_mut().zip(cut) {
                *o = expected_success(rels, g, k, &rel);
            }
        }
        RecipRank => out[0] = expected_rr(rels, g, i64::MAX, &rel),
        RecipRankCut => {
            for (o, &k) in out.iter_mut().zip(cut) {
                *o = expected_rr(rels, g, k, &rel);
            }
        }
        Map => {
            let mut sums = [0.0];
            expected_ap_sums(rels, g, &[i64::MAX], &rel, &mut sums);
            out[0] = if j.num_rel_ret > 0 {
                sums[0] / nr as f64
            } else {
                0.0
            };
        }
        MapCut => {
            expected_ap_sums(rels, g, cut, &rel, out);
            for o in out.iter_mut() {
                *o = if nr == 0 { 0.0 } else { *o / nr as f64 };
            }
        }
        Bpref => out[0] = expected_bpref(j, g, level),
        BinG => {
            let mut total = 0.0f64;
            let mut rel_before = 0usize;
            for (a, b) in g.iter() {
                let r = rels[a..b].iter().filter(|&&x| rel(x)).count();
                let s = (b - a) - r;
                if r > 0 {
                    let base = a - rel_before;
                    let sum: f64 = (0..=s).map(|x| 1.0 / ((2 + base + x) as f64).log2()).sum();
                    total += r as f64 * sum / (s + 1) as f64;
                }
                rel_before += r;
            }
            out[0] = if j.num_rel_ret > 0 {
                total / nr as f64
            } else {
                0.0
            };
        }
        NdcgCut => {
            let top = cut
                .last()
                .map_or(0, |&k| (k.max(0) as usize).min(rels.len()));
            let means = g.means(rels, top, |r| if r > 0 { r as f64 } else { 0.0 });
            let ideal = ideal_dcg_cut(j, cut);
            let mut sum = 0.0f64;
            let mut ci = 0;
            for (i, &mg) in means.iter().enumerate() {
                while ci < cut.len() && i as i64 == cut[ci] {
                    out[ci] = sum;
                    ci += 1;
                }
                sum += mg / ((i + 2) as f64).log2();
            }
            while ci < cut.len() {
                out[ci] = sum;
                ci += 1;
            }
            for (o, id) in out.iter_mut().zip(ideal) {
                if id > 0.0 {
                    *o /= id;
                }
            }
        }
        Dcg | Ndcg => {
            let gains = Gains::new(j, pairs);
            let means = g.means(rels, usize::MAX, |r| gains.gain(r));
            let dcg: f64 = means
                .iter()
                .enumerate()
                .map(|(i, &mg)| mg / ((i + 2) as f64).log2())
                .sum();
            out[0] = if meas.id == Dcg {
                dcg
            } else {
                let ideal = m::dcg_pair(j, &gains).1;
                if ideal > 0.0 { dcg / ideal } else { 0.0 }
            };
        }
        Rbp => {
            let p = m::rbp_persistence(pairs);
            let gains = m::rbp_gains(&Gains::new(j, pairs));
            let means = g.means(rels, usize::MAX, |r| gains.gain(r));
            let mut sum = 0.0f64;
            let mut cur_p = 1.0f64;
            for mg in means {
                sum += mg * cur_p;
                cur_p *= p;
            }
            out[0] = (1.0 - p) * sum;
        }
        RbpResid => {
            let p = m::rbp_persistence(pairs);
            if !rels.iter().any(|&r| r < 0) {
                out[0] = 0.0;
                return;
            }
            let means = g.means(rels, usize::MAX, |r| if r < 0 { 1.0 } else { 0.0 });
            let mut sum = 0.0f64;
            let mut cur_p = 1.0f64;
            for mu in means {
                sum += mu * cur_p;
                cur_p *= p;
            }
            out[0] = cur_p + (1.0 - p) * sum;
        }
        _ => out.iter_mut().for_each(|v| *v = f64::NAN),
    }
}

/// `E[success@k]`: 1 once a relevant document ranks above the group the cut falls in; else
/// the chance that the `t` ranks the cut takes of a group of `n` documents (`r` relevant) hold
/// a relevant one, `1 - C(n - r, t) / C(n, t)`.
fn expected_success(rels: &[i32], g: &Groups, k: i64, rel: &impl Fn(i32) -> bool) -> f64 {
    for (a, b) in g.iter() {
        if (a as i64) >= k {
            break;
        }
        let r = rels[a..b].iter().filter(|&&x| rel(x)).count();
        if r == 0 {
            continue;
        }
        let n = b - a;
        if (b as i64) <= k {
            return 1.0;
        }
        let t = (k - a as i64) as usize;
        if t > n - r {
            return 1.0;
        }
        let mut none = 1.0f64;
        for i in 0..t {
            none *= (n - r - i) as f64 / (n - i) as f64;
        }
        return 1.0 - none;
    }
    0.0
}

/// `E[1 / rank of the first relevant document]`, 0 past rank `k` (`recip_rank_cut`; `k` =
/// `i64::MAX` for `recip_rank`).
fn expected_rr(rels: &[i32], g: &Groups, k: i64, rel: &impl Fn(i32) -> bool) -> f64 {
    for (a, b) in g.iter() {
        let r = rels[a..b].iter().filter(|&&x| rel(x)).count();
        if r == 0 {
            continue;
        }
        let n = b - a;
        // P(first relevant at offset j) = C(n-1-j, r-1) / C(n, r).
        let mut pj = r as f64 / n as f64;
        let mut e = 0.0f64;
        for jj in 0..=(n - r) {
            let rank = a + jj + 1;
            if rank as i64 > k {
                break;
            }
            e += pj / rank as f64;
            if jj < n - r {
                pj *= (n - jj - r) as f64 / (n - 1 - jj) as f64;
            }
        }
        return e;
    }
    0.0
}

/// `E[sum over relevant ranks i <= k of (relevant at or above i) / i]` for each cutoff `k`
/// (ascending; `i64::MAX` = the whole ranking), McSherry & Najork's form.
fn expected_ap_sums(
    rels: &[i32],
    g: &Groups,
    cutoffs: &[i64],
    rel: &impl Fn(i32) -> bool,
    out: &mut [f64],
) {
    let mut sum = 0.0f64;
    let mut before = 0u64;
    let mut ci = 0;
    for (a, b) in g.iter() {
        let n = b - a;
        let r = rels[a..b].iter().filter(|&&x| rel(x)).count() as u64;
        let p = r as f64 / n as f64;
        let q = if n > 1 && r > 1 {
            (r * (r - 1)) as f64 / (n * (n - 1)) as f64
        } else {
            0.0
        };
        if r == 0 {
            // Nothing to add; record the cutoffs that fall in the group.
            while ci < cutoffs.len() && cutoffs[ci] < b as i64 {
                out[ci] = sum;
                ci += 1;
            }
            continue;
        }
        let c = p * (1 + before) as f64;
        for o in 0..n {
            let i = a + o;
            while ci < cutoffs.len() && i as i64 == cutoffs[ci] {
                out[ci] = sum;
                ci += 1;
            }
            sum += (c + o as f64 * q) / (i + 1) as f64;
        }
        before += r;
    }
    while ci < cutoffs.len() {
        out[ci] = sum;
        ci += 1;
    }
}

/// `E[bpref]` (m_bpref.c's arithmetic per term): a relevant document of a group with `s`
/// judged non-relevant documents has `base + U` judged non-relevant documents above it, `U`
/// uniform on `0..=s`.
fn expected_bpref(j: &JudgedRanking, g: &Groups, level: i64) -> f64 {
    let mut num_nonrel = 0u64;
    let mut l = 0i64;
    while l < level.min(j.num_levels()) {
        num_nonrel += j.level_count(l);
        l += 1;
    }
    let big_r = j.num_rel;
    let denom = (num_nonrel as i64).min(big_r) as f64;
    let term = |x: i64| {
        if x > 0 {
            1.0 - (x.min(big_r) as f64 / denom)
        } else {
            1.0
        }
    };
    let is_nonrel = |r: i32| r >= 0 && (r as i64) < level;
    let is_relevant = |r: i32| r >= 0 && (r as i64) >= level;
    let mut total = 0.0f64;
    let mut base = 0i64;
    for (a, b) in g.iter() {
        let grp = &j.rels[a..b];
        let r = grp.iter().filter(|&&x| is_relevant(x)).count();
        let s = grp.iter().filter(|&&x| is_nonrel(x)).count() as i64;
        if r > 0 {
            // Past R non-relevant documents above, every term is the same.
            let distinct = (big_r - base + 1).clamp(0, s + 1);
            let mut sum: f64 = (0..distinct).map(|x| term(base + x)).sum();
            sum += (s + 1 - distinct) as f64 * term(base + s);
            total += r as f64 * sum / (s + 1) as f64;
        }
        base += s;
    }
    if big_r != 0 {
        total /= big_r as f64;
    }
    total
}

/// The ideal DCG at each cutoff as m_ndcg_cut.c forms it (gain = relevance level, judged
/// documents only).
fn ideal_dcg_cut(j: &JudgedRanking, cutoffs: &[i64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(cutoffs.len());
    let mut ci = 0usize;
    let mut cur_lvl = j.num_rel_levels as i64 - 1;
    let mut lvl_count = 0u64;
    let mut ideal = 0.0f64;
    let mut i = 0i64;
    loop {
        lvl_count += 1;
        while cur_lvl > 0 && lvl_count > j.level_count(cur_lvl) {
            cur_lvl -= 1;
            lvl_count = 1;
        }
        if cur_lvl == 0 || ci == cutoffs.len() {
            break;
        }
        while ci < cutoffs.len() && i == cutoffs[ci] {
            out.push(ideal);
            ci += 1;
        }
        if ci == cutoffs.len() {
            break;
        }
        ideal += cur_lvl as f64 / ((i + 2) as f64).log2();
        i += 1;
    }
    while out.len() < cutoffs.len() {
        out.push(ideal);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trec::compute::compute_query;
    use crate::trec::spec::MeasureSet;
    use proptest::prelude::*;

    fn jr(rels: &[i32], levels: &[u64], level: i64) -> JudgedRanking {
        let num_rel: u64 = levels
            .iter()
            .enumerate()
            .filter(|(i, _)| *i as i64 >= level)
            .map(|(_, n)| n)
            .sum();
        JudgedRanking {
            rels: rels.to_vec(),
            num_ret: rels.len() as i64,
            num_rel: num_rel as i64,
            num_rel_ret: rels
                .iter()
                .filter(|&&r| r >= 0 && r as i64 >= level)
                .count() as i64,
            num_nonpool: rels.iter().filter(|&&r| r == -1).count() as i64,
            num_unjudged_in_pool: rels.iter().filter(|&&r| r == -2).count() as i64,
            rel_levels: levels.to_vec(),
            num_rel_levels: levels.iter().rposition(|&n| n > 0).map_or(0, |i| i + 1),
        }
    }

    /// Every order of every group (the product of the groups' permutations), each measured
    /// by trec_eval's code: (min, max, mean) per slot.
    fn brute_force(j: &JudgedRanking, ends: &[usize], opts: &EvalOptions) -> Vec<TieRange> {
        let n = opts.measures.n_values();
        let mut mins = vec![f64::INFINITY; n];
        let mut maxs = vec![f64::NEG_INFINITY; n];
        let mut sums = vec![0.0f64; n];
        let mut count = 0u64;
        let groups: Vec<(usize, usize)> = Groups { ends }.iter().collect();
        let mut cur = j.clone();
        fn rec(
            gi: usize,
            groups: &[(usize, usize)],
            cur: &mut JudgedRanking,
            visit: &mut dyn FnMut(&JudgedRanking),
        ) {
            if gi == groups.len() {
                visit(cur);
                return;
            }
            let (a, b) = groups[gi];
            // Heap's algorithm over cur.rels[a..b].
            let k = b - a;
            let mut c = vec![0usize; k];
            rec(gi + 1, groups, cur, visit);
            let mut i = 0;
            while i < k {
                if c[i] < i {
                    if i % 2 == 0 {
                        cur.rels.swap(a, a + i);
                    } else {
                        cur.rels.swap(a + c[i], a + i);
                    }
                    rec(gi + 1, groups, cur, visit);
                    c[i] += 1;
                    i = 0;
                } else {
                    c[i] = 0;
                    i += 1;
                }
            }
        }
        let mut vals = vec![0.0; n];
        rec(0, &groups, &mut cur, &mut |r: &JudgedRanking| {
            compute_query(r, opts, &mut vals);
            for s in 0..n {
                mins[s] = mins[s].min(vals[s]);
                maxs[s] = maxs[s].max(vals[s]);
                sums[s] += vals[s];
            }
            count += 1;
        });
        (0..n)
            .map(|s| TieRange {
                min: mins[s],
                max: maxs[s],
                expected: sums[s] / count as f64,
            })
            .collect()
    }

    const MEASURES: &[&str] = &[
        "P.1,2,3,5,10",
        "recall.1,3,5,10",
        "success.1,2,3,5",
        "recip_rank",
        "recip_rank_cut.1,2,4",
        "map",
        "map_cut.1,3,5",
        "ndcg",
        "ndcg.0=-1,1=3,2=1",
        "dcg",
        "ndcg_cut.1,3,5,10",
        "Rprec",
        "Rprec_mult",
        "bpref",
        "binG",
        "relative_P.1,3,5",
        "unj.1,3,5",
        "rbp",
        "rbp_resid.p=0.5",
        "set_P",
        "num_rel_ret",
    ];

    fn check(rels: &[i32], ends: &[usize], levels: &[u64], level: i64) {
        let j = jr(rels, levels, level);
        for spec in MEASURES {
            let opts = EvalOptions {
                measures: MeasureSet::parse(&[spec]).unwrap(),
                relevance_level: level,
                ..EvalOptions::default()
            };
            let mut values = vec![0.0; opts.measures.n_values()];
            compute_query(&j, &opts, &mut values);
            let want = brute_force(&j, ends, &opts);
            let got = query_ranges(&j, ends, &opts, &values);
            let names: Vec<&String> = opts.measures.measures()[0].names.iter().collect();
            for s in 0..values.len() {
                let got = got.as_ref().map_or(TieRange::point(values[s]), |g| g[s]);
                let w = want[s];
                let ctx = format!(
                    "{spec} {} rels {rels:?} ends {ends:?} levels {levels:?} l {level}: got {got:?} want {w:?}",
                    names[s]
                );
                assert_eq!(got.min, w.min, "min {ctx}");
                assert_eq!(got.max, w.max, "max {ctx}");
                // Relative to the size of the values (an expected value of 0 comes out of the
                // enumeration's sum as 1e-18).
                let tol = 1e-12
                    * w.expected
                        .abs()
                        .max(w.min.abs())
                        .max(w.max.abs())
                        .max(1e-300);
                assert!((got.expected - w.expected).abs() <= tol, "expected {ctx}");
            }
        }
    }

    #[test]
    fn hand_checked_ap_and_p() {
        // One group of 3 with 1 relevant: AP = E[1/pos] = (1 + 1/2 + 1/3) / 3; P@1 = 1/3.
        let j = jr(&[1, 0, 0], &[2, 1], 1);
        let opts = EvalOptions {
            measures: MeasureSet::parse(&["map", "P.1", "recip_rank"]).unwrap(),
            ..EvalOptions::default()
        };
        let mut v = vec![0.0; 3];
        compute_query(&j, &opts, &mut v);
        let r = query_ranges(&j, &[3], &opts, &v).unwrap();
        let e = (1.0 + 0.5 + 1.0 / 3.0) / 3.0;
        assert_eq!((r[0].min, r[0].max), (1.0 / 3.0, 1.0));
        assert!((r[0].expected - e).abs() < 1e-15);
        // Print order: map, recip_rank, P_1.
        assert!((r[1].expected - e).abs() < 1e-15);
        assert!((r[2].expected - 1.0 / 3.0).abs() < 1e-15);
        // No group mixes relevance values: no range.
        assert!(query_ranges(&j, &[1, 2, 3], &opts, &v).is_none());
    }

    #[test]
    fn small_cases_match_brute_force() {
        check(&[1, 0, 0, 1, 2, 0], &[2, 5, 6], &[3, 2, 1], 1);
        check(&[0, 2, -1, 1, -2, 0, 1], &[3, 7], &[4, 2, 1], 1);
        check(&[0, 2, -1, 1, -2, 0, 1], &[3, 7], &[4, 2, 1], 2);
        check(&[0, 1, 0, 1, 0, 1, 0], &[7], &[4, 3], 1);
        check(&[-1, 1, -1, 0], &[4], &[1, 1], 1);
        check(&[1, 1, 0, 0, 3, 0, 2, 1], &[1, 4, 8], &[10, 3, 1, 1], 1);
    }

    #[test]
    fn group_ends_follow_keys_and_judged_only() {
        let docs = [
            (9, Some(1)),
            (9, None),
            (9, Some(0)),
            (5, Some(-1)),
            (5, Some(2)),
        ];
        let mut ends = Vec::new();
        group_ends(docs, false, &mut ends);
        assert_eq!(ends, [3, 5]);
        group_ends(docs, true, &mut ends);
        assert_eq!(ends, [2, 3]);
        group_ends([], false, &mut ends);
        assert!(ends.is_empty());
    }

    #[test]
    fn ten_thousand_tied_documents_are_linear() {
        // One group of 10,000 documents, 100 relevant at two levels: the closed forms are
        // O(n); compare a few against independent sums.
        let mut rels = vec![0i32; 10_000];
        for i in 0..100 {
            rels[i * 97 % 10_000] = 1 + (i % 2) as i32;
        }
        let j = jr(&rels, &[9_900, 50, 50], 1);
        let opts = EvalOptions {
            measures: MeasureSet::parse(&["official", "ndcg", "ndcg_cut", "success", "binG"])
                .unwrap(),
            ..EvalOptions::default()
        };
        let mut v = vec![0.0; opts.measures.n_values()];
        compute_query(&j, &opts, &mut v);
        let r = query_ranges(&j, &[10_000], &opts, &v).unwrap();
        let p10 = opts
            .measures
            .measures()
            .iter()
            .find(|m| m.id == MeasureId::P)
            .unwrap();
        // E[P@10] = 100 / 10000.
        assert!((r[p10.offset + 1].expected - 0.01).abs() < 1e-15);
        assert_eq!(r[p10.offset + 1].max, 1.0);
        assert_eq!(r[p10.offset + 1].min, 0.0);
    }

    fn case() -> impl Strategy<Value = (Vec<i32>, Vec<usize>, i64)> {
        // Up to 8 ranked documents in groups whose orders multiply to at most 8! = 40320.
        (
            proptest::collection::vec(-2i32..4, 1..8),
            proptest::collection::vec(1usize..5, 1..8),
            1i64..3,
        )
            .prop_map(|(rels, sizes, level)| {
                let mut ends = Vec::new();
                let mut e = 0;
                for s in sizes {
                    if e >= rels.len() {
                        break;
                    }
                    e = (e + s).min(rels.len());
                    ends.push(e);
                }
                if e < rels.len() {
                    ends.push(rels.len());
                }
                (rels, ends, level)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// min, max (exactly) and expected (to 1e-12) against every order of small groups,
        /// for every supported measure.
        #[test]
        fn ranges_match_enumeration((rels, ends, level) in case(), extra in proptest::collection::vec(0u64..3, 4)) {
            // Judged counts per level: at least those retrieved, plus some not retrieved.
            let mut levels = vec![0u64; 4];
            for &r in &rels {
                if r >= 0 {
                    levels[r as usize] += 1;
                }
            }
            for (l, x) in levels.iter_mut().zip(&extra) {
                *l += x;
            }
            check(&rels, &ends, &levels, level);
        }
    }
}
