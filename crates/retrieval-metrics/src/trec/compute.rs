//! What trec_eval computes for one query and how it sums queries: the options that change
//! evaluation (`-m`, `-l`, `-c`, `-J`, `-M`, `-N`, `-q`, the release, `--ties`), one query's
//! measures ([`compute_query`], [`compute_measure`]: `m_*.c`'s calculations over a
//! [`JudgedRanking`]) and the mergeable summary ([`TrecAccumulator`], `meas_avg.c`).
//!
//! Below [`super::eval`] (the parallel main loop) and [`super::ties`] (the tie ranges), which
//! both call it; it depends only on the measures, the ranking and the measure specs.

use super::measures as m;
use super::rank::JudgedRanking;
use super::spec::{Aggregate, MeasureId, MeasureSet, Params, TrecEvalVersion};
use routeval_core::Accumulator;

/// trec_eval's command-line options that change evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalOptions {
    /// Measures to compute (`-m`); default `official`.
    pub measures: MeasureSet,
    /// `-l`: minimum qrels value for a document to count as relevant (default 1).
    pub relevance_level: i64,
    /// `-c`: average over every query in the qrels (missing queries score 0).
    pub complete: bool,
    /// `-J`: drop unjudged retrieved documents before computing anything.
    pub judged_only: bool,
    /// `-M`: evaluate at most this many top-ranked documents per query (default unlimited).
    pub max_docs_per_topic: usize,
    /// `-N`: documents in the collection (only `utility` uses it; default 0).
    pub num_docs_in_coll: i64,
    /// `-q`: keep per-query values in the [`Evaluation`](super::eval::Evaluation).
    pub per_query: bool,
    /// Which trec_eval release's definitions to follow where releases differ (default
    /// 10.0-rc3, the CLI's; pytrec-eval-terrier builds 9.0.8).
    pub version: TrecEvalVersion,
    /// `--ties`: also compute each measure's range over the orders of tied documents
    /// ([`super::ties`]) into [`QueryResult::ties`](super::eval::QueryResult::ties) and [`Evaluation::ties`](super::eval::Evaluation::ties). With `-M`, a
    /// cut through a tie group of differently judged documents is an error.
    pub ties: bool,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            measures: MeasureSet::official(),
            relevance_level: 1,
            complete: false,
            judged_only: false,
            max_docs_per_topic: usize::MAX,
            num_docs_in_coll: 0,
            per_query: false,
            version: TrecEvalVersion::V10,
            ties: false,
        }
    }
}

/// The mergeable aggregate behind the summary: per-slot sums and a query count.
///
/// Merging shards adds their sums (exact for counts; float sums agree with one pass within
/// rounding). The parity path ([`evaluate_bytes`](super::eval::evaluate_bytes), [`evaluate_run`](super::eval::evaluate_run)) adds queries one by one in
/// qrels order, which reproduces trec_eval's sums bit for bit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrecAccumulator {
    /// Per-slot sums of per-query values.
    pub sums: Vec<f64>,
    /// Queries added.
    pub num_queries: u64,
}

impl TrecAccumulator {
    /// Add one query's values.
    pub fn add(&mut self, values: &[f64]) {
        if self.sums.len() < values.len() {
            self.sums.resize(values.len(), 0.0);
        }
        for (s, v) in self.sums.iter_mut().zip(values) {
            *s += v;
        }
        self.num_queries += 1;
    }

    /// Final values as trec_eval computes them (`meas_avg.c`): sums for counts, means over
    /// `num_q`, geometric means for `gm_*`. With `-c`, `num_q` is the number of qrels queries.
    pub fn finish(
        &self,
        measures: &MeasureSet,
        complete: bool,
        num_qrels: usize,
    ) -> (u64, Vec<f64>) {
        let n = if complete {
            num_qrels as u64
        } else {
            self.num_queries
        };
        let mut out = vec![0.0; measures.n_values()];
        for (i, s) in self.sums.iter().enumerate() {
            out[i] = *s;
        }
        for meas in measures.measures() {
            let r = meas.offset..meas.offset + meas.len();
            match meas.id.aggregate() {
                Aggregate::Mean if n > 0 => out[r].iter_mut().for_each(|v| *v /= n as f64),
                Aggregate::GeoMean if n > 0 => {
                    for v in &mut out[r] {
                        let mut sum = *v;
                        if complete {
                            sum += (n - self.num_queries) as f64 * m::MIN_GEO_MEAN.ln();
                        }
                        *v = (sum / n as f64).exp();
                    }
                }
                Aggregate::NumQ => out[r].iter_mut().for_each(|v| *v = n as f64),
                _ => {}
            }
        }
        (n, out)
    }
}

impl Accumulator for TrecAccumulator {
    fn merge(&mut self, other: Self) {
        if self.sums.len() < other.sums.len() {
            self.sums.resize(other.sums.len(), 0.0);
        }
        for (s, v) in self.sums.iter_mut().zip(other.sums) {
            *s += v;
        }
        self.num_queries += other.num_queries;
    }
}

/// Compute every requested measure for one query into `values` (laid out as `opts.measures`);
/// returns the relevance string when `relstring` is requested.
pub fn compute_query(j: &JudgedRanking, opts: &EvalOptions, values: &mut [f64]) -> Option<String> {
    let mut relstring = None;
    for meas in opts.measures.measures() {
        let out = &mut values[meas.offset..meas.offset + meas.len()];
        if let Some(s) = compute_measure(j, meas, opts, out) {
            relstring = Some(s);
        }
    }
    relstring
}

/// Compute one measure of `opts.measures` for one query into `out` (its
/// [`Measure::len`](super::spec::Measure::len) slots); returns the relevance string for
/// `relstring`. [`compute_query`] is this for every requested measure.
pub fn compute_measure(
    j: &JudgedRanking,
    meas: &super::spec::Measure,
    opts: &EvalOptions,
    out: &mut [f64],
) -> Option<String> {
    let level = opts.relevance_level;
    let mut relstring = None;
    {
        let cut = || match &meas.params {
            Params::Cutoffs(c) => c.as_slice(),
            _ => &[],
        };
        let frac = || match &meas.params {
            Params::Fractions(c) | Params::Numbers(c) => c.as_slice(),
            _ => &[],
        };
        let pairs = || match &meas.params {
            Params::Pairs(p) => p.as_slice(),
            _ => &[],
        };
        use MeasureId::*;
        match meas.id {
            Runid => {}
            NumQ => out[0] = 1.0,
            NumRet => out[0] = j.num_ret as f64,
            NumRel => out[0] = j.num_rel as f64,
            NumRelRet => out[0] = j.num_rel_ret as f64,
            Map => out[0] = m::average_precision(j, level),
            GmMap => out[0] = m::gm_ap_term(j, level),
            Rprec => out[0] = m::r_precision(j, level),
            Bpref => out[0] = m::bpref(j, level),
            RecipRank => out[0] = m::reciprocal_rank(j, level),
            IprecAtRecall => match opts.version {
                TrecEvalVersion::V10 => m::iprec_at_recall(j, level, frac(), out),
                TrecEvalVersion::V9_0_8 => m::iprec_at_recall_v9(j, level, frac(), out),
            },
            P => m::precision(j, level, cut(), out),
            Relstring => relstring = Some(m::relstring(j, frac()[0])),
            Recall => m::recall(j, level, cut(), out),
            InfAP => out[0] = m::inferred_ap(j, level),
            GmBpref => out[0] = m::gm_bpref_term(j, level),
            RprecMult => m::rprec_mult(j, level, frac(), out),
            Utility => out[0] = m::utility(j, frac(), opts.num_docs_in_coll),
            ElevenPtAvg => {
                out[0] = match opts.version {
                    TrecEvalVersion::V10 => m::eleven_pt_avg(j, level, frac()),
                    TrecEvalVersion::V9_0_8 => m::eleven_pt_avg_v9(j, level, frac()),
                }
            }
            BinG => out[0] = m::bin_g(j, level),
            G => out[0] = m::g_measure(j, &m::Gains::new(j, pairs())),
            Dcg => out[0] = m::dcg_pair(j, &m::Gains::new(j, pairs())).0,
            IdealDcg => out[0] = m::dcg_pair(j, &m::Gains::new(j, pairs())).1,
            Ndcg => out[0] = m::ndcg(j, &m::Gains::new(j, pairs())),
            NdcgRel => out[0] = m::ndcg_rel(j, &m::Gains::new(j, pairs())),
            Rndcg => out[0] = m::rndcg(j, &m::Gains::new(j, pairs())),
            NdcgCut => m::ndcg_cut(j, cut(), out),
            MapCut => m::map_cut(j, level, cut(), out),
            RelativeP => m::relative_precision(j, level, cut(), out),
            Success => m::success(j, level, cut(), out),
            SetP => out[0] = m::set_precision(j),
            SetRelativeP => out[0] = m::set_relative_precision(j),
            SetRecall => out[0] = m::set_recall(j),
            SetMap => out[0] = m::set_map(j),
            SetF => out[0] = m::set_f(j, frac()[0]),
            NumNonrelJudgedRet => out[0] = m::num_nonrel_judged_ret(j),
            Rbp => {
                let p = m::rbp_persistence(pairs());
                out[0] = m::rbp(j, &m::Gains::new(j, pairs()), p)
            }
            RbpResid => out[0] = m::rbp_resid(j, m::rbp_persistence(pairs())),
            Unj => m::unjudged(j, cut(), out),
            RecipRankCut => m::reciprocal_rank_cut(j, level, cut(), out),
        }
    }
    relstring
}
