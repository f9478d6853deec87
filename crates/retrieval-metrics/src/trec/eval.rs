//! Evaluating a run against qrels: trec_eval's main loop (`trec_eval.c`), parallel.
//!
//! Queries are evaluated in qrels order (qid byte order). Without `-c` a query is evaluated
//! when it has both judgments and results (the documented intersection; trec_eval 10.0-rc3's
//! exit 4 on a judged query without results is a bug we do not copy). With `-c` every judged
//! query is evaluated; one without results is scored, as trec_eval does, on a stand-in ranking
//! of one unjudged document, after which `num_ret`, `utility`, `relstring`, `unj_*` and
//! `rbp_resid` are reset to 0/empty. Per-query work runs in parallel (rayon); the summary sums
//! per-query values sequentially in qrels order, as trec_eval does, so it is bit-identical.

pub use super::compute::{EvalOptions, TrecAccumulator, compute_measure, compute_query};
use super::parse::{
    Qrels, QueryQrels, Run, RunLines, ScannedLine, hash_id, is_skippable, line_chunks,
    parse_run_line, same_id,
};
use super::rank::{JudgedRanking, key_score, score_key, score_key_for};
pub use super::spec::TrecEvalVersion;
use super::spec::{Aggregate, MeasureId, MeasureSet};
use super::ties::{self, TieRange, TieSummary};
use memchr::{memchr, memchr_iter};
use rayon::prelude::*;
use routeval_core::progress::Unit;
use routeval_core::{Error, Location, NoProgress, Progress};

/// One evaluated query: its values (layout of [`MeasureSet`]) and its relevance string.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResult {
    /// Query id.
    pub qid: Box<[u8]>,
    /// One value per [`MeasureSet`] slot.
    pub values: Vec<f64>,
    /// `relstring`, when requested.
    pub relstring: Option<String>,
    /// With [`EvalOptions::ties`], when some tie group mixes relevance values: the range of
    /// every slot ([`super::ties::query_ranges`]); `None` means every range is the value.
    pub ties: Option<Box<[TieRange]>>,
}

/// The outcome of an evaluation: summary values, and per-query values when requested.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// The measures, with their printed names.
    pub measures: MeasureSet,
    /// The run tag of the last result line.
    pub runid: Box<[u8]>,
    /// Number of queries averaged over (`num_q`).
    pub num_q: u64,
    /// Summary value per slot (sums for counts, means, geometric means).
    pub summary: Vec<f64>,
    /// Per-query results in qrels order (only with [`EvalOptions::per_query`]).
    pub queries: Vec<QueryResult>,
    /// Judged queries (in the qrels) for which the run has no result line: left out of the
    /// averages, or with `-c` scored 0 (as trec_eval does; trec_eval says nothing about them).
    pub judged_without_results: u64,
    /// The first [`MISSING_EXAMPLES`] of those queries' ids, in qrels order (for notes).
    pub judged_without_results_ids: Vec<String>,
    /// Distinct run queries without judgments (ignored, as trec_eval ignores them).
    pub run_only_queries: u64,
    /// With [`EvalOptions::ties`]: the ranges averaged over queries.
    pub ties: Option<TieSummary>,
}

/// How many ids of judged queries without results an [`Evaluation`] keeps for notes.
pub const MISSING_EXAMPLES: usize = 5;

/// Gates (`--fail-under`) on a trec evaluation: every summary value, named as trec_eval
/// prints it (`map`, `P_10`, `ndcg_cut_10`, `num_rel_ret`); text measures (`runid`,
/// `relstring`) have none.
impl routeval_core::gate::NamedMetrics for Evaluation {
    fn metric_names(&self) -> Vec<String> {
        summary_slots(&self.measures)
            .into_iter()
            .map(|(n, _)| n.to_string())
            .collect()
    }
    fn metric_value(&self, name: &str) -> Option<f64> {
        summary_slots(&self.measures)
            .into_iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, i)| self.summary.get(i).copied())
            .filter(|v| v.is_finite())
    }
    /// Counts (`num_q`, `num_ret`, `num_rel`, `num_rel_ret`, `num_nonrel_judged_ret`) are
    /// non-negative; precision/recall-style measures are fractions in `[0, 1]`; gain measures
    /// (`ndcg*`, `dcg`, `G`, `utility`, `rbp*`), whose range depends on the qrels' gains, have
    /// no stated range.
    fn metric_range(&self, name: &str) -> Option<routeval_core::gate::MetricRange> {
        use routeval_core::gate::MetricRange;
        let m = self
            .measures
            .measures()
            .iter()
            .find(|m| m.names.iter().any(|n| n == name))?;
        match m.id {
            MeasureId::NumQ
            | MeasureId::NumRet
            | MeasureId::NumRel
            | MeasureId::NumRelRet
            | MeasureId::NumNonrelJudgedRet => Some(MetricRange::COUNT),
            MeasureId::Map
            | MeasureId::GmMap
            | MeasureId::Rprec
            | MeasureId::Bpref
            | MeasureId::RecipRank
            | MeasureId::IprecAtRecall
            | MeasureId::P
            | MeasureId::Recall
            | MeasureId::GmBpref
            | MeasureId::RprecMult
            | MeasureId::ElevenPtAvg
            | MeasureId::MapCut
            | MeasureId::RelativeP
            | MeasureId::Success
            | MeasureId::SetP
            | MeasureId::SetRelativeP
            | MeasureId::SetRecall
            | MeasureId::SetMap
            | MeasureId::SetF
            | MeasureId::RecipRankCut => Some(MetricRange::FRACTION),
            _ => None,
        }
    }
}

impl Evaluation {
    /// The summary values a confidence interval makes sense for, as `(printed name, slot,
    /// geometric)`: every mean (`map`, `P_10`, ...) and geometric mean (`gm_map`, `gm_bpref`);
    /// not sums (`num_ret`) or `num_q`.
    pub fn interval_slots(&self) -> Vec<(&str, usize, bool)> {
        let mut out = Vec::new();
        for meas in self.measures.measures() {
            let geo = match meas.id.aggregate() {
                Aggregate::Mean => false,
                Aggregate::GeoMean => true,
                _ => continue,
            };
            for (k, name) in meas.names.iter().enumerate() {
                out.push((name.as_str(), meas.offset + k, geo));
            }
        }
        out
    }

    /// The summary values of `slots` (from [`interval_slots`](Self::interval_slots)) over a
    /// sample of the per-query results (`sample` = positions in [`queries`](Self::queries),
    /// repeats allowed): the mean of the sampled values, or for a geometric mean the `exp` of
    /// the mean of its per-query log terms (trec_eval's `meas_avg.c` on the sample). Needs
    /// per-query values ([`EvalOptions::per_query`]); NaN for an empty sample.
    pub fn sample_summary(&self, slots: &[(&str, usize, bool)], sample: &[usize]) -> Vec<f64> {
        let mut sums = vec![0.0f64; slots.len()];
        for &q in sample {
            let Some(qr) = self.queries.get(q) else {
                continue;
            };
            for (s, &(_, slot, _)) in sums.iter_mut().zip(slots) {
                *s += qr.values.get(slot).copied().unwrap_or(0.0);
            }
        }
        let n = sample.len() as f64;
        sums.iter()
            .zip(slots)
            .map(|(s, &(_, _, geo))| if geo { (s / n).exp() } else { s / n })
            .collect()
    }

    /// Percentile bootstrap confidence intervals of every mean and geometric-mean measure
    /// (`trec --ci`): the evaluated queries are resampled with replacement (`replicates`
    /// times, replicate `r` drawing from `StatsRng::for_replicate(seed, r)`), each replicate's
    /// summary recomputed with [`sample_summary`](Self::sample_summary). Needs per-query
    /// values ([`EvalOptions::per_query`]). Deterministic for a seed on any thread count.
    pub fn intervals(&self, level: f64, replicates: u64, seed: u64) -> routeval_stats::Intervals {
        let slots = self.interval_slots();
        let cis = routeval_stats::bootstrap_ci_multi(
            self.queries.len(),
            replicates,
            seed,
            level,
            slots.len(),
            |idx, out| out.copy_from_slice(&self.sample_summary(&slots, idx)),
        );
        routeval_stats::Intervals {
            level,
            replicates,
            seed,
            units: "queries".into(),
            intervals: slots
                .iter()
                .map(|(n, _, _)| n.to_string())
                .zip(cis)
                .collect(),
        }
    }
}

/// `(printed name, slot)` of every numeric summary value of `measures`, in print order.
pub fn summary_slots(measures: &MeasureSet) -> Vec<(&str, usize)> {
    let mut out = Vec::new();
    for meas in measures.measures() {
        if matches!(meas.id.aggregate(), Aggregate::NoSummary | Aggregate::Runid) {
            continue;
        }
        for (k, name) in meas.names.iter().enumerate() {
            out.push((name.as_str(), meas.offset + k));
        }
    }
    out
}

/// trec_eval's `num_rel` summary under `-c` (`te_calc_avg_num_rel`, m_num_rel.c): not the sum
/// of the per-query values but every judgment of the raw qrels with rel > 0, in every query,
/// whatever `-l` says (with `-l 2`, a rel-1 judgment counts here but in no query's `num_rel`).
fn complete_num_rel(measures: &MeasureSet, qrels: &Qrels, summary: &mut [f64]) {
    if let Some(meas) = measures
        .measures()
        .iter()
        .find(|m| m.id == MeasureId::NumRel)
    {
        // Every qrels line with rel > 0 (a query's `num_rel(1)` would count judgments of
        // relevance >= 1 after its own rules; trec_eval counts raw lines: checked against
        // trec_eval 10.0 in cli/tests/trec_matrix).
        let raw: u64 = qrels
            .queries()
            .iter()
            .map(|q| (0..q.len()).filter(|&i| q.rel_at(i) > 0).count() as u64)
            .sum();
        summary[meas.offset] = raw as f64;
    }
}

/// A retrieved document during evaluation: score, docno and where it came from (a byte offset
/// or a line number, see [`Locator`]).
#[derive(Debug, Clone, Copy)]
struct Doc<'a> {
    /// Order-preserving integer key of the score.
    key: u64,
    docno: &'a [u8],
    pos: u64,
}

/// [`super::rank::rank_by_score`] on precomputed keys: key descending, then docno descending.
fn rank_docs(docs: &mut [Doc]) {
    // Runs are usually written in score order already (ties in any order): check first
    // (linear); then only the groups of equal scores need ordering, by docno descending.
    // Otherwise sort the whole ranking.
    if !docs.windows(2).all(|w| w[0].key >= w[1].key) {
        super::rank::sort_by_key_desc(docs, |d| d.key, |a, b| b.docno.cmp(a.docno));
        return;
    }
    let mut i = 0;
    while i < docs.len() {
        let mut j = i + 1;
        while j < docs.len() && docs[j].key == docs[i].key {
            j += 1;
        }
        if j - i > 1 {
            let group = &mut docs[i..j];
            if !group.windows(2).all(|w| w[0].docno > w[1].docno) {
                group.sort_unstable_by(|a, b| b.docno.cmp(a.docno));
            }
        }
        i = j;
    }
}

/// Why a query could not be evaluated (trec_eval's "duplicate docs").
#[derive(Debug, Clone)]
enum QueryError {
    RunDup {
        docno: Box<[u8]>,
        first: u64,
        second: u64,
    },
    QrelsDup {
        docno: Box<[u8]>,
        line: u64,
    },
    /// `--ties` with `-M`: the cut falls inside a tie group of differently judged documents.
    TieCut {
        /// Position of the first document cut off.
        pos: u64,
        score: f64,
        /// Size of the group and its last rank (1-based).
        size: usize,
        last_rank: usize,
    },
}

#[derive(Clone, Copy, Default)]
struct Slot<'a> {
    generation: u32,
    rel: Option<i32>,
    hash: u64,
    docno: &'a [u8],
    /// Position of the retrieved document with this docno, plus one (0 = not retrieved yet).
    seen: u64,
}

/// A per-query open-addressing table: docno -> (qrels value, already retrieved?). It joins the
/// ranking with the judgments and detects duplicate documents in one pass.
#[derive(Default)]
struct DocTable<'a> {
    slots: Vec<Slot<'a>>,
    generation: u32,
}

impl<'a> DocTable<'a> {
    fn reset(&mut self, n: usize) {
        let want = (n * 2).next_power_of_two().max(16);
        if self.slots.len() < want {
            self.slots = vec![Slot::default(); want];
            self.generation = 0;
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.slots.iter_mut().for_each(|s| s.generation = 0);
            self.generation = 1;
        }
    }

    /// Where `docno` (whose [`hash_id`] is `h`) is, or the free slot where it would go, and
    /// whether it is there: the one probe of [`DocTable::judge`] and [`DocTable::retrieve`].
    #[inline]
    fn probe(&self, docno: &[u8], h: u64) -> (usize, bool) {
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        loop {
            let s = &self.slots[i];
            if s.generation != self.generation {
                return (i, false);
            }
            if s.hash == h && same_id(s.docno, docno) {
                return (i, true);
            }
            i = (i + 1) & mask;
        }
    }

    /// Record the judged document `docno` (hash `h`) with its qrels value (a repeated docno
    /// keeps the first value; the qrels reader reports the duplicate).
    #[inline]
    fn judge(&mut self, docno: &'a [u8], h: u64, rel: i32) {
        if let (i, false) = self.probe(docno, h) {
            self.slots[i] = Slot {
                generation: self.generation,
                rel: Some(rel),
                hash: h,
                docno,
                seen: 0,
            };
        }
    }

    /// Record the retrieved document `docno` (hash `h`) at line offset `pos`: its qrels value
    /// (`None` when unjudged), or `Err(previous position)` when it was retrieved before. The
    /// decision is written and returned, so the caller never reads back a slot just written
    /// (an unjudged document's new slot).
    #[inline]
    fn retrieve(&mut self, docno: &'a [u8], h: u64, pos: u64) -> Result<Option<i32>, u64> {
        let (i, found) = self.probe(docno, h);
        let s = &mut self.slots[i];
        if !found {
            *s = Slot {
                generation: self.generation,
                rel: None,
                hash: h,
                docno,
                seen: pos + 1,
            };
            return Ok(None);
        }
        if s.seen != 0 {
            return Err(s.seen - 1);
        }
        s.seen = pos + 1;
        Ok(s.rel)
    }
}

#[derive(Default)]
struct Scratch<'a> {
    judged: JudgedRanking,
    table: DocTable<'a>,
    rels: Vec<Option<i32>>,
    /// Tie group ends (`--ties`).
    ends: Vec<usize>,
}

fn evaluate_docs<'a>(
    qid: &[u8],
    docs: &mut Vec<Doc<'a>>,
    qq: &'a QueryQrels,
    opts: &EvalOptions,
    scratch: &mut Scratch<'a>,
) -> Result<QueryResult, QueryError> {
    if opts.version == TrecEvalVersion::V9_0_8 {
        // 9.0.8 ranks the scores it stored as floats (`rank::stored_score`).
        for d in docs.iter_mut() {
            d.key = score_key_for(opts.version, key_score(d.key));
        }
    }
    rank_docs(docs);
    if opts.ties {
        check_tie_cut(docs, qq, opts)?;
    }
    docs.truncate(opts.max_docs_per_topic);
    let table = &mut scratch.table;
    table.reset(qq.len() + docs.len());
    for i in 0..qq.len() {
        table.judge(qq.docno(i), qq.docno_hash(i), qq.rel_at(i));
    }
    scratch.rels.clear();
    for d in docs.iter() {
        match table.retrieve(d.docno, hash_id(d.docno), d.pos) {
            Ok(rel) => scratch.rels.push(rel),
            Err(prev) => {
                let (first, second) = if prev <= d.pos {
                    (prev, d.pos)
                } else {
                    (d.pos, prev)
                };
                return Err(QueryError::RunDup {
                    docno: d.docno.into(),
                    first,
                    second,
                });
            }
        }
    }
    if let Some((docno, line)) = qq.duplicate() {
        return Err(QueryError::QrelsDup {
            docno: docno.into(),
            line,
        });
    }
    scratch.judged.fill_rels(
        scratch.rels.iter().copied(),
        qq,
        opts.relevance_level,
        opts.judged_only,
    );
    let mut values = vec![0.0; opts.measures.n_values()];
    let relstring = compute_query(&scratch.judged, opts, &mut values);
    let ties = if opts.ties {
        ties::group_ends(
            docs.iter().zip(&scratch.rels).map(|(d, &r)| (d.key, r)),
            opts.judged_only,
            &mut scratch.ends,
        );
        ties::query_ranges(&scratch.judged, &scratch.ends, opts, &values)
    } else {
        None
    };
    Ok(QueryResult {
        qid: qid.into(),
        values,
        relstring,
        ties,
    })
}

/// `--ties` with `-M`: refuse a cut inside a tie group whose documents are judged differently
/// (which of them are evaluated would depend on the order of the tie). A cut through a group
/// of equally judged documents keeps the same relevance list whatever the order.
fn check_tie_cut(docs: &[Doc], qq: &QueryQrels, opts: &EvalOptions) -> Result<(), QueryError> {
    let m = opts.max_docs_per_topic;
    if m == 0 || docs.len() <= m || docs[m - 1].key != docs[m].key {
        return Ok(());
    }
    let key = docs[m].key;
    let a = docs[..m]
        .iter()
        .rposition(|d| d.key != key)
        .map_or(0, |i| i + 1);
    let b = m + docs[m..]
        .iter()
        .position(|d| d.key != key)
        .unwrap_or(docs.len() - m);
    let class = |d: &Doc| match qq.rel(d.docno) {
        None => super::rank::REL_NONPOOL,
        Some(r) if r < 0 => super::rank::REL_UNJUDGED,
        Some(r) => r,
    };
    let first = class(&docs[a]);
    if docs[a..b].iter().all(|d| class(d) == first) {
        return Ok(());
    }
    Err(QueryError::TieCut {
        pos: docs[m].pos,
        score: key_score(key),
        size: b - a,
        last_rank: b,
    })
}

const BOGUS_DOCNO: &[u8] = b"ceci_nest_pas_un_docno";

/// `-c` for a judged query without results: trec_eval scores a one-document stand-in ranking,
/// then resets the measures that would otherwise count that document.
fn evaluate_missing(qq: &QueryQrels, opts: &EvalOptions) -> Result<QueryResult, QueryError> {
    let mut docs = vec![Doc {
        key: score_key(1.0),
        docno: BOGUS_DOCNO,
        pos: 0,
    }];
    let mut scratch = Scratch::default();
    let mut r = evaluate_docs(qq.qid(), &mut docs, qq, opts, &mut scratch)?;
    for meas in opts.measures.measures() {
        if let Some(t) = &meas.text_name
            && t == "relstring"
        {
            r.relstring = Some(String::new());
        }
        for (k, name) in meas.names.iter().enumerate() {
            if name == "num_ret"
                || name == "utility"
                || name.starts_with("unj")
                || name == "rbp_resid"
            {
                r.values[meas.offset + k] = 0.0;
            }
        }
    }
    Ok(r)
}

/// How a [`Doc::pos`] maps to a line number for messages.
enum Locator<'b> {
    /// `pos` is a byte offset into this buffer.
    Bytes(&'b [u8]),
    /// `pos` is already a line number.
    Lines,
}

impl Locator<'_> {
    fn line(&self, pos: u64) -> u64 {
        match self {
            Locator::Bytes(buf) => line_of(buf, pos as usize),
            Locator::Lines => pos,
        }
    }
}

/// The number of the last line of `buf` (1 for an empty buffer).
fn last_line(buf: &[u8]) -> u64 {
    let n = memchr_iter(b'\n', buf).count() as u64;
    let partial = u64::from(!buf.is_empty() && buf[buf.len() - 1] != b'\n');
    (n + partial).max(1)
}

/// 1-based line number of byte offset `pos`.
fn line_of(buf: &[u8], pos: usize) -> u64 {
    memchr_iter(b'\n', &buf[..pos.min(buf.len())]).count() as u64 + 1
}

fn query_error(
    e: QueryError,
    qid: &[u8],
    qrels_source: &str,
    run_source: &str,
    loc: &Locator,
) -> Error {
    let q = String::from_utf8_lossy(qid);
    match e {
        QueryError::RunDup {
            docno,
            first,
            second,
        } => Error::input(
            Location::at_line(run_source, loc.line(second)),
            format!(
                "duplicate document '{}' for query '{q}' (also at line {})",
                String::from_utf8_lossy(&docno),
                loc.line(first)
            ),
        ),
        QueryError::QrelsDup { docno, line } => Error::input(
            Location::at_line(qrels_source, line),
            format!(
                "duplicate judgment of document '{}' for query '{q}'",
                String::from_utf8_lossy(&docno)
            ),
        ),
        QueryError::TieCut {
            pos,
            score,
            size,
            last_rank,
        } => Error::input(
            Location::at_line(run_source, loc.line(pos)),
            format!(
                "--ties: -M cuts through {size} documents of query '{q}' tied at score {score} \
                 and judged differently (which are evaluated depends on the tie order); \
                 use -M {last_rank} or more, or no -M"
            ),
        ),
    }
}

/// Put per-query results, given in qrels order (one item per qrels query), together into an
/// [`Evaluation`].
#[allow(clippy::too_many_arguments)] // one call site per reader kind; a struct would only rename them
fn assemble(
    qrels: &Qrels,
    results: impl IntoIterator<Item = Option<Result<QueryResult, QueryError>>>,
    runid: Box<[u8]>,
    opts: &EvalOptions,
    qrels_source: &str,
    run_source: &str,
    loc: &Locator,
    run_only_queries: u64,
) -> Result<Evaluation, Error> {
    let mut acc = TrecAccumulator::default();
    let mut tie_acc = opts.ties.then(|| ties::TieAccumulator::new(&opts.measures));
    let mut queries = Vec::new();
    for (i, r) in results.into_iter().enumerate() {
        match r {
            None => {}
            Some(Err(e)) => {
                return Err(query_error(
                    e,
                    qrels.queries()[i].qid(),
                    qrels_source,
                    run_source,
                    loc,
                ));
            }
            Some(Ok(q)) => {
                acc.add(&q.values);
                if let Some(t) = &mut tie_acc {
                    t.add(&q.values, q.ties.as_deref());
                }
                if opts.per_query {
                    queries.push(q);
                }
            }
        }
    }
    if acc.num_queries == 0 {
        return Err(Error::input(
            Location::new(run_source),
            format!("no query has both results and relevance judgments (in {qrels_source})"),
        ));
    }
    let (num_q, mut summary) = acc.finish(&opts.measures, opts.complete, qrels.len());
    if opts.complete {
        complete_num_rel(&opts.measures, qrels, &mut summary);
    }
    let ties = tie_acc.map(|t| t.finish(&opts.measures, opts.complete, qrels.len(), &summary));
    Ok(Evaluation {
        measures: opts.measures.clone(),
        runid,
        num_q,
        summary,
        queries,
        judged_without_results: 0,
        judged_without_results_ids: Vec::new(),
        run_only_queries,
        ties,
    })
}

/// Evaluate an in-memory [`Run`] (see [`evaluate_bytes`] for the semantics).
pub fn evaluate_run(
    qrels: &Qrels,
    run: &Run,
    opts: &EvalOptions,
    qrels_source: &str,
) -> Result<Evaluation, Error> {
    if run.queries.is_empty() {
        return Err(Error::input(
            Location::at_line(run.source.as_str(), 1),
            "empty run file (no result lines)",
        ));
    }
    let results: Vec<Option<Result<QueryResult, QueryError>>> = qrels
        .queries()
        .par_iter()
        .map(|qq| match run.queries.get(qq.qid()) {
            Some(docs) => {
                let mut ds: Vec<Doc> = docs
                    .iter()
                    .map(|d| Doc {
                        key: score_key(d.score),
                        docno: &d.docno,
                        pos: d.line,
                    })
                    .collect();
                let mut scratch = Scratch::default();
                Some(evaluate_docs(qq.qid(), &mut ds, qq, opts, &mut scratch))
            }
            None if opts.complete => Some(evaluate_missing(qq, opts)),
            None => None,
        })
        .collect();
    let missing = qrels
        .queries()
        .iter()
        .filter(|qq| !run.queries.contains_key(qq.qid()))
        .count() as u64;
    let missing_ids: Vec<String> = qrels
        .queries()
        .iter()
        .filter(|qq| !run.queries.contains_key(qq.qid()))
        .take(MISSING_EXAMPLES)
        .map(|qq| String::from_utf8_lossy(qq.qid()).into_owned())
        .collect();
    let run_only = run
        .queries
        .keys()
        .filter(|q| qrels.position(q).is_none())
        .count() as u64;
    assemble(
        qrels,
        results,
        run.runid.clone(),
        opts,
        qrels_source,
        &run.source,
        &Locator::Lines,
        run_only,
    )
    .map(|ev| Evaluation {
        judged_without_results: missing,
        judged_without_results_ids: missing_ids,
        ..ev
    })
}

/// Where [`evaluate_bytes`] finds a qrels query's result.
#[derive(Clone, Copy)]
enum Origin {
    /// No result (no run line; without `-c`).
    None,
    /// In `chunks[chunk].segments[segment].result`, evaluated while its chunk was parsed.
    Segment { chunk: usize, segment: usize },
    /// Evaluated after grouping: the `k`th of those results.
    Evaluated(usize),
}

/// A run of consecutive lines with the same qid inside one parse chunk.
struct Segment<'a> {
    qid: &'a [u8],
    /// The query's position in the qrels ([`Qrels::position`]), found by the chunk's worker.
    qi: Option<usize>,
    start: usize,
    end: usize,
    result: Option<Result<QueryResult, QueryError>>,
}

struct ChunkOut<'a> {
    segments: Vec<Segment<'a>>,
    error: Option<(usize, String)>,
    last_tag: Option<&'a [u8]>,
    records: u64,
}

fn parse_chunk<'a>(
    buf: &'a [u8],
    start: usize,
    end: usize,
    qrels: &'a Qrels,
    opts: &EvalOptions,
) -> ChunkOut<'a> {
    let mut out = ChunkOut {
        segments: Vec::new(),
        error: None,
        last_tag: None,
        records: 0,
    };
    let mut docs: Vec<Doc<'a>> = Vec::with_capacity(1024);
    let mut scratch = Scratch::default();
    let mut cur: Option<(&'a [u8], usize, Option<usize>)> = None;
    // Segments are evaluated when closed, except the chunk's first and last (they may continue
    // in a neighbouring chunk); those are evaluated after all chunks are parsed. Once a qid
    // comes back in this chunk (lines interleaved across queries), eager evaluation stops for
    // the rest of the chunk: each segment's evaluation costs the query's whole qrels, so
    // evaluating one-line segments would be quadratic. Such queries are evaluated once, after
    // grouping.
    // Room for a segment per 2 KB of the chunk (a query of about 40 result lines) without
    // rehashing.
    let mut closed: rustc_hash::FxHashSet<&'a [u8]> =
        rustc_hash::FxHashSet::with_capacity_and_hasher((end - start) / 2048, Default::default());
    let mut eager = true;
    let mut close = |qid: &'a [u8],
                     s: usize,
                     qi: Option<usize>,
                     e: usize,
                     docs: &mut Vec<Doc<'a>>,
                     out: &mut ChunkOut<'a>,
                     last: bool| {
        let first = out.segments.is_empty();
        if eager && !closed.insert(qid) {
            eager = false;
        }
        let result = if first || last || !eager {
            None
        } else {
            qi.map(|qi| evaluate_docs(qid, docs, &qrels.queries()[qi], opts, &mut scratch))
        };
        out.segments.push(Segment {
            qid,
            qi,
            start: s,
            end: e,
            result,
        });
        docs.clear();
    };
    for (pos, line, _) in RunLines::new(&buf[..end], start) {
        match line {
            ScannedLine::Skip => {}
            ScannedLine::Record((qid, docno, score, tag)) => {
                out.records += 1;
                out.last_tag = Some(tag);
                match cur {
                    Some((q, _, _)) if same_id(q, qid) => {}
                    Some((q, s, qi)) => {
                        close(q, s, qi, pos, &mut docs, &mut out, false);
                        cur = Some((qid, pos, open_query(qrels, qid)));
                    }
                    None => cur = Some((qid, pos, open_query(qrels, qid))),
                }
                docs.push(Doc {
                    key: score_key(score),
                    docno,
                    pos: pos as u64,
                });
            }
            ScannedLine::Bad(p) => {
                out.error = Some((pos, p));
                return out;
            }
        }
    }
    if let Some((q, s, qi)) = cur {
        close(q, s, qi, end, &mut docs, &mut out, true);
    }
    out
}

/// The qrels position of a segment's query, looked up when its first line is read, and its
/// judgments touched (a load of each array's last entry) so that they are on their way into
/// the cache while the segment's lines are parsed, not waited for when it is evaluated.
#[inline]
fn open_query(qrels: &Qrels, qid: &[u8]) -> Option<usize> {
    let qi = qrels.position(qid)?;
    qrels.queries()[qi].touch();
    Some(qi)
}

/// Re-read the documents of `segs` (already validated lines) into `docs`.
fn collect_docs<'a>(buf: &'a [u8], segs: &[(usize, usize)], docs: &mut Vec<Doc<'a>>) {
    for &(s, e) in segs {
        let mut pos = s;
        while pos < e {
            let nl = memchr(b'\n', &buf[pos..e]).map_or(e, |i| pos + i);
            let line = &buf[pos..nl];
            if !is_skippable(line)
                && let Ok((_, docno, score, _)) = parse_run_line(line)
            {
                docs.push(Doc {
                    key: score_key(score),
                    docno,
                    pos: pos as u64,
                });
            }
            pos = nl + 1;
        }
    }
}

/// Evaluate a run given as the bytes of a TREC run file, against `qrels`, as trec_eval 10.0-rc3
/// does: parsing, ranking ([`super::rank::rank_by_score`]), `-M` truncation, duplicate checks, `-J`, every
/// requested measure, and the summary in qrels order.
///
/// The run is parsed in parallel chunks without building per-line records; memory beyond the
/// input is a few bytes per query. Queries may appear in any order and even be split across the
/// file (trec_eval groups lines by qid).
///
/// Errors (one line each, naming file and line): a malformed run line (missing column,
/// non-numeric or NaN score), an empty run, a duplicate document within an evaluated query
/// (after `-M`), a duplicate judgment in an evaluated query, and no query in common.
pub fn evaluate_bytes(
    qrels: &Qrels,
    run: &[u8],
    run_source: &str,
    opts: &EvalOptions,
    qrels_source: &str,
) -> Result<Evaluation, Error> {
    evaluate_bytes_with_progress(qrels, run, run_source, opts, qrels_source, &NoProgress)
}

/// [`evaluate_bytes`], reporting to `progress`: a stage `"parsing <run>"` in bytes of the run,
/// then `"evaluating queries"` counting the qrels' queries. The result is the same.
pub fn evaluate_bytes_with_progress(
    qrels: &Qrels,
    run: &[u8],
    run_source: &str,
    opts: &EvalOptions,
    qrels_source: &str,
    progress: &dyn Progress,
) -> Result<Evaluation, Error> {
    let run = super::parse::strip_bom(run);
    let bounds = line_chunks(run, rayon::current_num_threads().max(1) * 32, 1 << 20);
    progress.stage(
        &format!("parsing {run_source}"),
        Some(run.len() as u64),
        Unit::Bytes,
    );
    // One rayon job per chunk (`with_max_len(1)`): rayon's default splitting hands each
    // thread a range of chunks to parse in turn, which another thread cannot take over, so
    // one thread could be left parsing alone for several chunks at the end.
    let mut chunks: Vec<ChunkOut> = bounds
        .windows(2)
        .collect::<Vec<_>>()
        .into_par_iter()
        .with_max_len(1)
        .map(|w| {
            let c = parse_chunk(run, w[0], w[1], qrels, opts);
            progress.advance((w[1] - w[0]) as u64);
            c
        })
        .collect();

    if let Some((pos, msg)) = chunks
        .iter()
        .filter_map(|c| c.error.clone())
        .min_by_key(|e| e.0)
    {
        return Err(Error::input(
            Location::at_line(run_source, line_of(run, pos)),
            msg,
        ));
    }
    if chunks.iter().map(|c| c.records).sum::<u64>() == 0 {
        return Err(Error::input(
            Location::at_line(run_source, last_line(run)),
            "empty run file (no result lines)",
        ));
    }
    let runid: Box<[u8]> = chunks
        .iter()
        .rev()
        .find_map(|c| c.last_tag)
        .unwrap_or(b"")
        .into();

    // Results per qrels query. A query whose lines form one segment that was evaluated
    // while its chunk was parsed (nearly every query of a file grouped by qid) takes that
    // result in place; the others (split across chunks or interleaved, or never evaluated)
    // are gathered and evaluated once below. No per-query collection is built: memory here is
    // one result slot and one counter per judged query.
    let n = qrels.len();
    let mut counts: Vec<u32> = vec![0; n];
    let mut run_only: rustc_hash::FxHashSet<&[u8]> = Default::default();
    for s in chunks.iter().flat_map(|c| &c.segments) {
        match s.qi {
            Some(qi) => counts[qi] = counts[qi].saturating_add(1),
            None => {
                run_only.insert(s.qid);
            }
        }
    }
    // Where each query's result is (24 bytes a query): the results stay in the segments
    // that hold them, in memory the workers have already touched, and are taken from there in
    // qrels order by `assemble` (a vector of the results themselves, 80 bytes a query, was
    // 8 MB of fresh pages for 100k queries, faulted in on this one thread).
    let mut origin: Vec<Origin> = vec![Origin::None; n];
    // Queries evaluated after grouping: their segments' byte ranges in file order.
    let mut pending: rustc_hash::FxHashMap<usize, Vec<(usize, usize)>> = Default::default();
    for (c, chunk) in chunks.iter().enumerate() {
        for (k, s) in chunk.segments.iter().enumerate() {
            let Some(qi) = s.qi else { continue };
            match s.result {
                Some(_) if counts[qi] == 1 => {
                    origin[qi] = Origin::Segment {
                        chunk: c,
                        segment: k,
                    }
                }
                _ => pending.entry(qi).or_default().push((s.start, s.end)),
            }
        }
    }
    let missing = counts.iter().filter(|&&k| k == 0).count() as u64;
    let missing_ids: Vec<String> = counts
        .iter()
        .zip(qrels.queries())
        .filter(|(k, _)| **k == 0)
        .take(MISSING_EXAMPLES)
        .map(|(_, qq)| String::from_utf8_lossy(qq.qid()).into_owned())
        .collect();
    progress.stage("evaluating queries", Some(n as u64), Unit::Items);
    // Already evaluated, and (without `-c`) the queries without results, which need nothing.
    let done = origin.iter().filter(|o| !matches!(o, Origin::None)).count() as u64;
    progress.advance(done + if opts.complete { 0 } else { missing });
    let mut todo: Vec<(usize, Vec<(usize, usize)>)> = pending.into_iter().collect();
    if opts.complete {
        todo.extend(
            counts
                .iter()
                .enumerate()
                .filter(|(_, k)| **k == 0)
                .map(|(qi, _)| (qi, Vec::new())),
        );
    }
    let evaluated: Vec<(usize, Result<QueryResult, QueryError>)> = todo
        .into_par_iter()
        .map(|(qi, ranges)| {
            progress.advance(1);
            let qq = &qrels.queries()[qi];
            if ranges.is_empty() {
                return (qi, evaluate_missing(qq, opts));
            }
            let mut docs = Vec::new();
            collect_docs(run, &ranges, &mut docs);
            let mut scratch = Scratch::default();
            (
                qi,
                evaluate_docs(qq.qid(), &mut docs, qq, opts, &mut scratch),
            )
        })
        .collect();
    let mut evaluated: Vec<Option<Result<QueryResult, QueryError>>> = evaluated
        .into_iter()
        .enumerate()
        .map(|(k, (qi, r))| {
            origin[qi] = Origin::Evaluated(k);
            Some(r)
        })
        .collect();
    let results = origin.iter().map(|o| match *o {
        Origin::None => None,
        Origin::Segment { chunk, segment } => chunks[chunk].segments[segment].result.take(),
        Origin::Evaluated(k) => evaluated[k].take(),
    });
    assemble(
        qrels,
        results,
        runid,
        opts,
        qrels_source,
        run_source,
        &Locator::Bytes(run),
        run_only.len() as u64,
    )
    .map(|ev| Evaluation {
        judged_without_results: missing,
        judged_without_results_ids: missing_ids,
        ..ev
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trec::rank::trec_order;

    #[test]
    fn interleaved_run_lines_evaluate_as_grouped_ones() {
        use crate::trec::{EvalOptions, Qrels};
        let mut qrels = String::new();
        for q in 0..30 {
            for d in 0..40 {
                qrels.push_str(&format!("q{q} 0 d{d} {}\n", (q + d) % 3));
            }
        }
        let qrels = Qrels::from_bytes(qrels.as_bytes(), "qrels").unwrap();
        // Round-robin over queries (interleaved) vs the same lines grouped by query.
        let mut inter = String::new();
        let mut grouped = vec![String::new(); 30];
        for d in 0..50 {
            for (q, g) in grouped.iter_mut().enumerate() {
                let line = format!("q{q} Q0 d{} {d} {} r\n", (d * 7 + q) % 60, 100 - d);
                inter.push_str(&line);
                g.push_str(&line);
            }
        }
        let grouped = grouped.concat();
        let opts = EvalOptions {
            per_query: true,
            ..EvalOptions::default()
        };
        let a = evaluate_bytes(&qrels, inter.as_bytes(), "run", &opts, "qrels").unwrap();
        let b = evaluate_bytes(&qrels, grouped.as_bytes(), "run", &opts, "qrels").unwrap();
        assert_eq!(a.queries.len(), 30);
        assert_eq!(a.queries, b.queries);
        assert_eq!(a.summary, b.summary);
    }

    #[test]
    fn trec_eval_9_0_8_rounds_recall_fractions_up_by_0_9() {
        // 2 relevant documents, one found at rank 2: 10.0 needs round(0.6 * 2 + 0.5) = 1
        // relevant document for recall 0.6, 9.0.8 needs floor(0.6 * 2 + 0.9) = 2 (values checked
        // against pytrec-eval-terrier 0.5.11 in crates/python/tests/test_trec.py).
        let qrels = Qrels::from_bytes(b"q 0 d1 1\nq 0 d2 0\nq 0 d3 2\n", "q").unwrap();
        let run = b"q Q0 d2 1 0.7 t\nq Q0 d1 2 0.5 t\nq Q0 d4 3 0.1 t\n";
        let mut opts = EvalOptions {
            measures: MeasureSet::parse(&["iprec_at_recall", "11pt_avg"]).unwrap(),
            per_query: true,
            ..EvalOptions::default()
        };
        let v10 = evaluate_bytes(&qrels, run, "r", &opts, "q").unwrap();
        opts.version = TrecEvalVersion::V9_0_8;
        let v9 = evaluate_bytes(&qrels, run, "r", &opts, "q").unwrap();
        // slots: iprec_at_recall_0.00 .. _1.00, then 11pt_avg
        assert_eq!(v10.queries[0].values[6], 0.5);
        assert_eq!(v9.queries[0].values[6], 0.0);
        assert_eq!(v10.queries[0].values[5], 0.5);
        assert_eq!(v9.queries[0].values[5], 0.5);
        assert!(v10.queries[0].values[11] > v9.queries[0].values[11]);
    }

    proptest::proptest! {
        /// The packed-word sort gives trec_eval's order exactly, including scores that differ
        /// only in their last bits (they share the packed word's high part) and equal scores.
        #[test]
        fn rank_docs_matches_trec_order_on_close_scores(
            docs in proptest::collection::vec((0u8..4, 0u64..6, 0u32..300), 0..300)
        ) {
            let bases = [0.5f64, -0.25, 1e-3, 0.0];
            let mut uniq: Vec<(f64, String)> = Vec::new();
            for (b, ulps, id) in docs {
                let name = format!("d{id}");
                if uniq.iter().any(|u| u.1 == name) {
                    continue;
                }
                let s = f64::from_bits(bases[b as usize].to_bits() + ulps);
                uniq.push((s, name));
            }
            let mut want = uniq.clone();
            want.sort_by(|a, b| trec_order(a.0, a.1.as_bytes(), b.0, b.1.as_bytes()));
            let mut got: Vec<Doc> = uniq
                .iter()
                .map(|(s, d)| Doc { key: score_key(*s), docno: d.as_bytes(), pos: 0 })
                .collect();
            // Also from score order with ties left in input order (the tie-groups-only path).
            let mut by_score = got.clone();
            by_score.sort_by_key(|d| std::cmp::Reverse(d.key));
            rank_docs(&mut got);
            rank_docs(&mut by_score);
            let got: Vec<&[u8]> = got.iter().map(|d| d.docno).collect();
            let by_score: Vec<&[u8]> = by_score.iter().map(|d| d.docno).collect();
            let want: Vec<&[u8]> = want.iter().map(|d| d.1.as_bytes()).collect();
            proptest::prop_assert_eq!(&got, &want);
            proptest::prop_assert_eq!(by_score, want);
        }
    }

    #[test]
    fn rank_docs_matches_trec_order_sorted_or_not() {
        let names: Vec<String> = (0..40).map(|i| format!("d{}", i % 17)).collect();
        let scores: Vec<f64> = (0..40).map(|i| ((i * 7) % 5) as f64 * 0.5 - 1.0).collect();
        let mut uniq: Vec<(f64, &[u8])> = Vec::new();
        for (n, s) in names.iter().zip(&scores) {
            if !uniq.iter().any(|u| u.1 == n.as_bytes()) {
                uniq.push((*s, n.as_bytes()));
            }
        }
        let mut want = uniq.clone();
        want.sort_by(|a, b| trec_order(a.0, a.1, b.0, b.1));
        for input in [
            uniq.clone(),
            want.clone(),
            want.iter().rev().copied().collect(),
        ] {
            let mut docs: Vec<Doc> = input
                .iter()
                .map(|(s, d)| Doc {
                    key: score_key(*s),
                    docno: d,
                    pos: 0,
                })
                .collect();
            rank_docs(&mut docs);
            let got: Vec<&[u8]> = docs.iter().map(|d| d.docno).collect();
            let exp: Vec<&[u8]> = want.iter().map(|d| d.1).collect();
            assert_eq!(got, exp);
        }
    }
}
