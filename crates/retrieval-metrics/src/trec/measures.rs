//! Every trec_eval measure as a function of one query's [`JudgedRanking`].
//!
//! Each function states its definition and its source file in trec_eval 10.0-rc3. The
//! arithmetic is done in the same order and with the same integer/float conversions as the C
//! code, so values agree to the last bit (the printed `%6.4f` then agrees byte for byte).
//! `level` is the relevance level (`-l`, default 1): a document is relevant when its qrels
//! value is >= `level`. Values are fractions (0..1) unless noted.
//!
//! Cutoff measures write one value per cutoff into `out` (same length as `cutoffs`); cutoffs
//! are positive and ascending (see [`super::spec::MeasureSet`]).

use super::rank::{JudgedRanking, REL_NONPOOL, REL_UNJUDGED};

/// trec_eval's `MIN_GEO_MEAN`: the floor applied before taking logs for geometric means.
pub const MIN_GEO_MEAN: f64 = 0.00001;
/// trec_eval's `INFAP_EPSILON`.
pub const INFAP_EPSILON: f64 = 0.00001;

#[inline]
fn is_rel(r: i32, level: i64) -> bool {
    r as i64 >= level
}

/// C's `MAX(a, b)` macro: `a > b ? a : b` (so a NaN `a` yields `b`).
#[inline]
fn c_max(a: f64, b: f64) -> f64 {
    if a > b { a } else { b }
}

/// Average precision (`map`, m_map.c): the sum over relevant retrieved documents of
/// precision at their rank, divided by `num_rel`; 0 when none is retrieved.
pub fn average_precision(j: &JudgedRanking, level: i64) -> f64 {
    let mut rel_so_far = 0i64;
    let mut sum = 0.0f64;
    for (i, &r) in j.rels.iter().enumerate() {
        if is_rel(r, level) {
            rel_so_far += 1;
            sum += rel_so_far as f64 / (i + 1) as f64;
        }
    }
    if rel_so_far > 0 {
        sum / j.num_rel as f64
    } else {
        0.0
    }
}

/// Per-query term of `gm_map` (m_gm_map.c): `ln(max(AP, 0.00001))`. The summary is
/// `exp(mean)` of these terms.
pub fn gm_ap_term(j: &JudgedRanking, level: i64) -> f64 {
    let mut rel_so_far = 0i64;
    let mut sum = 0.0f64;
    for (i, &r) in j.rels.iter().enumerate() {
        if is_rel(r, level) {
            rel_so_far += 1;
            sum += rel_so_far as f64 / (i + 1) as f64;
        }
    }
    if rel_so_far > 0 {
        sum /= j.num_rel as f64;
    }
    c_max(sum, MIN_GEO_MEAN).ln()
}

/// R-precision (`Rprec`, m_Rprec.c): relevant documents among the first
/// `min(num_ret, num_rel)` ranks, divided by `num_rel`.
pub fn r_precision(j: &JudgedRanking, level: i64) -> f64 {
    let n = j.num_ret.min(j.num_rel);
    if n <= 0 {
        return 0.0;
    }
    let rel = j.rels[..n as usize]
        .iter()
        .filter(|&&r| is_rel(r, level))
        .count();
    rel as f64 / j.num_rel as f64
}

fn bpref_raw(j: &JudgedRanking, level: i64) -> f64 {
    // Judged non-relevant documents: levels 0..level. Only recorded levels can be non-zero,
    // so the loop stops at the highest one (linear in the levels present, not in `-l`).
    let mut num_nonrel = 0u64;
    let mut l = 0i64;
    while l < level.min(j.num_levels()) {
        num_nonrel += j.level_count(l);
        l += 1;
    }
    let mut nonrel_so_far = 0i64;
    let mut bpref = 0.0f64;
    for &r in &j.rels {
        if r == REL_NONPOOL || r == REL_UNJUDGED {
            continue;
        }
        if r >= 0 && (r as i64) < level {
            nonrel_so_far += 1;
        } else if nonrel_so_far > 0 {
            bpref += 1.0
                - (nonrel_so_far.min(j.num_rel) as f64 / (num_nonrel as i64).min(j.num_rel) as f64);
        } else {
            bpref += 1.0;
        }
    }
    if j.num_rel != 0 {
        bpref /= j.num_rel as f64;
    }
    bpref
}

/// Binary preference (`bpref`, m_bpref.c; Buckley & Voorhees, SIGIR 2004): for each judged
/// relevant retrieved document, `1 - min(nonrel ranked above, R) / min(judged nonrel, R)`,
/// summed and divided by R. Unjudged documents are skipped.
pub fn bpref(j: &JudgedRanking, level: i64) -> f64 {
    bpref_raw(j, level)
}

/// Per-query term of `gm_bpref` (m_gm_bpref.c): `ln(max(bpref, 0.00001))`.
pub fn gm_bpref_term(j: &JudgedRanking, level: i64) -> f64 {
    c_max(bpref_raw(j, level), MIN_GEO_MEAN).ln()
}

/// Reciprocal rank (`recip_rank`, m_recip_rank.c): 1 / rank of the first relevant document,
/// 0 if none is retrieved.
pub fn reciprocal_rank(j: &JudgedRanking, level: i64) -> f64 {
    match j.rels.iter().position(|&r| is_rel(r, level)) {
        Some(i) => 1.0 / (i + 1) as f64,
        None => 0.0,
    }
}

/// Reciprocal rank cut at k (`recip_rank_cut`, a routeval addition; MRR@k as MS MARCO's
/// official MRR@10, ranx `mrr@k` and ir-measures `RR@k` define it): for each cutoff k, 1 / rank
/// of the first relevant document when that rank is at most k, else 0. Ranking is trec_eval's
/// (score descending, ties by docno descending), so it equals `recip_rank` under `-M k`.
pub fn reciprocal_rank_cut(j: &JudgedRanking, level: i64, cutoffs: &[i64], out: &mut [f64]) {
    let first = j.rels.iter().position(|&r| is_rel(r, level));
    for (o, &k) in out.iter_mut().zip(cutoffs) {
        *o = match first {
            Some(i) if (i as i64) < k => 1.0 / (i + 1) as f64,
            _ => 0.0,
        };
    }
}

/// Interpolated precision at recall fractions (`iprec_at_recall`, m_iprec_at_recall.c):
/// each fraction `f` becomes a count of relevant documents `floor(f * num_rel + 0.5)` (the
/// 10.0-rc3 reference outputs need +0.5; older trec_eval sources show +0.9, which `Rprec_mult`
/// still uses);
/// the value is the maximum precision at any rank at or after the rank where that many
/// relevant documents have been seen. With no document retrieved the C code divides 0 by 0
/// (NaN) for the fractions it reaches; that is kept.
pub fn iprec_at_recall(j: &JudgedRanking, level: i64, fractions: &[f64], out: &mut [f64]) {
    iprec_at_recall_rounded(j, level, fractions, 0.5, out)
}

/// [`iprec_at_recall`] as trec_eval 9.0.8 computes it (pytrec_eval, pytrec-eval-terrier):
/// the count of relevant documents for fraction `f` is `floor(f * num_rel + 0.9)`.
pub fn iprec_at_recall_v9(j: &JudgedRanking, level: i64, fractions: &[f64], out: &mut [f64]) {
    iprec_at_recall_rounded(j, level, fractions, 0.9, out)
}

fn iprec_at_recall_rounded(
    j: &JudgedRanking,
    level: i64,
    fractions: &[f64],
    round: f64,
    out: &mut [f64],
) {
    out.iter_mut().for_each(|v| *v = 0.0);
    let cutoffs: Vec<i64> = fractions
        .iter()
        .map(|&f| (f * j.num_rel as f64 + round) as i64)
        .collect();
    let mut cur = cutoffs.len() as i64 - 1;
    while cur >= 0 && cutoffs[cur as usize] > j.num_rel_ret {
        cur -= 1;
    }
    let mut int_precis = j.num_rel_ret as f64 / j.num_ret as f64;
    let mut rel_so_far = j.num_rel_ret;
    let mut i = j.num_ret;
    while i > 0 && rel_so_far > 0 {
        let precis = rel_so_far as f64 / i as f64;
        if int_precis < precis {
            int_precis = precis;
        }
        if is_rel(j.rels[(i - 1) as usize], level) {
            while cur >= 0 && rel_so_far == cutoffs[cur as usize] {
                out[cur as usize] = int_precis;
                cur -= 1;
            }
            rel_so_far -= 1;
        }
        i -= 1;
    }
    while cur >= 0 {
        out[cur as usize] = int_precis;
        cur -= 1;
    }
}

/// Count of documents satisfying `pred` in the top `c` ranks for each cutoff, then `f(count,
/// c)`: the loop structure shared by P, recall, success, relative_P and unj.
fn at_cutoffs(
    j: &JudgedRanking,
    cutoffs: &[i64],
    out: &mut [f64],
    pred: impl Fn(i32) -> bool,
    f: impl Fn(i64, i64) -> f64,
) {
    let mut so_far = 0i64;
    let mut ci = 0usize;
    for (i, &r) in j.rels.iter().enumerate() {
        if ci < cutoffs.len() && i as i64 == cutoffs[ci] {
            out[ci] = f(so_far, i as i64);
            ci += 1;
            if ci == cutoffs.len() {
                return;
            }
        }
        if pred(r) {
            so_far += 1;
        }
    }
    while ci < cutoffs.len() {
        out[ci] = f(so_far, cutoffs[ci]);
        ci += 1;
    }
}

/// Precision at cutoffs (`P`, m_P.c): relevant in the top k / k; missing ranks count as
/// non-relevant.
pub fn precision(j: &JudgedRanking, level: i64, cutoffs: &[i64], out: &mut [f64]) {
    at_cutoffs(
        j,
        cutoffs,
        out,
        |r| is_rel(r, level),
        |n, k| n as f64 / k as f64,
    );
}

/// Recall at cutoffs (`recall`, m_recall.c): relevant in the top k / num_rel; 0 when the query
/// has no relevant document.
pub fn recall(j: &JudgedRanking, level: i64, cutoffs: &[i64], out: &mut [f64]) {
    out.iter_mut().for_each(|v| *v = 0.0);
    if j.num_rel == 0 {
        return;
    }
    let nr = j.num_rel as f64;
    at_cutoffs(j, cutoffs, out, |r| is_rel(r, level), |n, _| n as f64 / nr);
}

/// Success at cutoffs (`success`, m_success.c): 1 if a relevant document is in the top k.
pub fn success(j: &JudgedRanking, level: i64, cutoffs: &[i64], out: &mut [f64]) {
    at_cutoffs(
        j,
        cutoffs,
        out,
        |r| is_rel(r, level),
        |n, _| if n != 0 { 1.0 } else { 0.0 },
    );
}

/// Relative precision at cutoffs (`relative_P`, m_rel_P.c): relevant in the top k /
/// min(k, num_rel); 0 without relevant documents.
pub fn relative_precision(j: &JudgedRanking, level: i64, cutoffs: &[i64], out: &mut [f64]) {
    out.iter_mut().for_each(|v| *v = 0.0);
    if j.num_rel == 0 {
        return;
    }
    let nr = j.num_rel;
    at_cutoffs(
        j,
        cutoffs,
        out,
        |r| is_rel(r, level),
        |n, k| n as f64 / (if k > nr { nr } else { k }) as f64,
    );
}

/// Unjudged fraction at cutoffs (`unj`, m_unjudged.c): documents in the top k that are not
/// in the qrels or judged with a negative value, / k.
pub fn unjudged(j: &JudgedRanking, cutoffs: &[i64], out: &mut [f64]) {
    at_cutoffs(
        j,
        cutoffs,
        out,
        |r| r == REL_NONPOOL || r == REL_UNJUDGED,
        |n, k| n as f64 / k as f64,
    );
}

/// Average precision truncated at cutoffs (`map_cut`, m_map_cut.c): the AP sum over the top
/// k, / num_rel; 0 without relevant documents.
pub fn map_cut(j: &JudgedRanking, level: i64, cutoffs: &[i64], out: &mut [f64]) {
    out.iter_mut().for_each(|v| *v = 0.0);
    if j.num_rel == 0 {
        return;
    }
    let nr = j.num_rel as f64;
    let mut rel_so_far = 0i64;
    let mut sum = 0.0f64;
    let mut ci = 0usize;
    for (i, &r) in j.rels.iter().enumerate() {
        if i as i64 == cutoffs[ci] {
            out[ci] = sum / nr;
            ci += 1;
            if ci == cutoffs.len() {
                return;
            }
        }
        if is_rel(r, level) {
            rel_so_far += 1;
            sum += rel_so_far as f64 / (i + 1) as f64;
        }
    }
    while ci < cutoffs.len() {
        out[ci] = sum / nr;
        ci += 1;
    }
}

/// nDCG at cutoffs (`ndcg_cut`, m_ndcg_cut.c; Jarvelin & Kekalainen 2002): DCG with gain =
/// the qrels relevance value (`-l` plays no part) and discount `log2(rank + 1)`, over the top
/// k, divided by the DCG of the ideal ranking of all judged documents at k.
pub fn ndcg_cut(j: &JudgedRanking, cutoffs: &[i64], out: &mut [f64]) {
    let mut sum = 0.0f64;
    let mut ci = 0usize;
    let mut i = 0usize;
    let mut done = false;
    while i < j.rels.len() {
        if i as i64 == cutoffs[ci] {
            out[ci] = sum;
            ci += 1;
            if ci == cutoffs.len() {
                done = true;
                break;
            }
        }
        let gain = j.rels[i] as f64;
        if gain > 0.0 {
            sum += gain / ((i + 2) as f64).log2();
        }
        i += 1;
    }
    if !done {
        while ci < cutoffs.len() {
            out[ci] = sum;
            ci += 1;
        }
    }
    // Ideal DCG.
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
        if cur_lvl == 0 {
            break;
        }
        if i == cutoffs[ci] {
            if ideal > 0.0 {
                out[ci] /= ideal;
            }
            ci += 1;
            if ci == cutoffs.len() {
                break;
            }
        }
        let gain = cur_lvl as f64;
        ideal += gain / ((i + 2) as f64).log2();
        i += 1;
    }
    while ci < cutoffs.len() {
        if ideal > 0.0 {
            out[ci] /= ideal;
        }
        ci += 1;
    }
}

/// Inferred AP (`infAP`, m_infap.c; Yilmaz & Aslam, CIKM 2006): AP estimated from a sampled
/// pool where qrels value -1 marks pooled-but-unjudged documents.
pub fn inferred_ap(j: &JudgedRanking, level: i64) -> f64 {
    let mut nonrel_so_far = 0i64;
    let mut rel_so_far = 0i64;
    let mut pool_unjudged_so_far = 0i64;
    let mut inf_ap = 0.0f64;
    for (jj, &r) in j.rels.iter().enumerate() {
        if r == REL_NONPOOL {
            continue;
        }
        if r == REL_UNJUDGED {
            pool_unjudged_so_far += 1;
            continue;
        }
        if r >= 0 && (r as i64) < level {
            nonrel_so_far += 1;
        } else {
            rel_so_far += 1;
            if jj == 0 {
                inf_ap += 1.0;
            } else {
                let fj = jj as f64;
                let a = (rel_so_far - 1 + nonrel_so_far + pool_unjudged_so_far) as f64;
                let b = (rel_so_far - 1) as f64 + INFAP_EPSILON;
                let c = (rel_so_far - 1 + nonrel_so_far) as f64 + 2.0 * INFAP_EPSILON;
                inf_ap += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (a / fj) * (b / c);
            }
        }
    }
    if j.num_rel != 0 {
        inf_ap /= j.num_rel as f64;
    }
    inf_ap
}

/// Precision at multiples of R (`Rprec_mult`, m_Rprec_mult.c): each multiple `m` becomes the
/// cutoff `floor(m * num_rel + 0.9)`; beyond the retrieved list the value is
/// `num_rel_ret / cutoff`.
pub fn rprec_mult(j: &JudgedRanking, level: i64, fractions: &[f64], out: &mut [f64]) {
    out.iter_mut().for_each(|v| *v = 0.0);
    let cutoffs: Vec<i64> = fractions
        .iter()
        .map(|&f| (f * j.num_rel as f64 + 0.9) as i64)
        .collect();
    let mut cur = cutoffs.len() as i64 - 1;
    while cur >= 0 && cutoffs[cur as usize] > j.num_ret {
        out[cur as usize] = j.num_rel_ret as f64 / cutoffs[cur as usize] as f64;
        cur -= 1;
    }
    let mut rel_so_far = j.num_rel_ret;
    let mut i = j.num_ret;
    while i > 0 && rel_so_far > 0 {
        let precis = rel_so_far as f64 / i as f64;
        while cur >= 0 && i == cutoffs[cur as usize] {
            out[cur as usize] = precis;
            cur -= 1;
        }
        if is_rel(j.rels[(i - 1) as usize], level) {
            rel_so_far -= 1;
        }
        i -= 1;
    }
}

/// Set utility (`utility`, m_utility.c): `p[0]*relret + p[1]*(ret - relret) +
/// p[2]*(rel - relret) + p[3]*(N + relret - ret - rel)` with N = `-N` (docs in collection).
/// `p` has exactly 4 coefficients. Not a fraction: units are the coefficients'.
pub fn utility(j: &JudgedRanking, p: &[f64], num_docs_in_coll: i64) -> f64 {
    p[0] * j.num_rel_ret as f64
        + p[1] * (j.num_ret - j.num_rel_ret) as f64
        + p[2] * (j.num_rel - j.num_rel_ret) as f64
        + p[3] * (num_docs_in_coll + j.num_rel_ret - j.num_ret - j.num_rel) as f64
}

/// 11-point interpolated average precision (`11pt_avg`, m_11pt_avg.c): the mean of
/// interpolated precision at the given recall fractions (in the order given), with the same
/// fraction-to-count rounding as [`iprec_at_recall`].
pub fn eleven_pt_avg(j: &JudgedRanking, level: i64, fractions: &[f64]) -> f64 {
    eleven_pt_avg_rounded(j, level, fractions, 0.5)
}

/// [`eleven_pt_avg`] as trec_eval 9.0.8 computes it (pytrec_eval, pytrec-eval-terrier), with
/// [`iprec_at_recall_v9`]'s rounding `floor(f * num_rel + 0.9)`.
pub fn eleven_pt_avg_v9(j: &JudgedRanking, level: i64, fractions: &[f64]) -> f64 {
    eleven_pt_avg_rounded(j, level, fractions, 0.9)
}

fn eleven_pt_avg_rounded(j: &JudgedRanking, level: i64, fractions: &[f64], round: f64) -> f64 {
    let cutoffs: Vec<i64> = fractions
        .iter()
        .map(|&f| (f * j.num_rel as f64 + round) as i64)
        .collect();
    let mut cur = cutoffs.len() as i64 - 1;
    while cur >= 0 && cutoffs[cur as usize] > j.num_rel_ret {
        cur -= 1;
    }
    let mut sum = 0.0f64;
    let mut int_precis = j.num_rel_ret as f64 / j.num_ret as f64;
    let mut rel_so_far = j.num_rel_ret;
    let mut i = j.num_ret;
    while i > 0 && rel_so_far > 0 {
        let precis = rel_so_far as f64 / i as f64;
        if int_precis < precis {
            int_precis = precis;
        }
        if is_rel(j.rels[(i - 1) as usize], level) {
            while cur >= 0 && rel_so_far == cutoffs[cur as usize] {
                sum += int_precis;
                cur -= 1;
            }
            rel_so_far -= 1;
        }
        i -= 1;
    }
    while cur >= 0 {
        sum += int_precis;
        cur -= 1;
    }
    sum / fractions.len() as f64
}

/// Binary G (`binG`, m_binG.c): for each relevant retrieved document,
/// `1 / log2(2 + non-relevant ranked above it)`, summed and divided by num_rel.
pub fn bin_g(j: &JudgedRanking, level: i64) -> f64 {
    let mut rel_so_far = 0i64;
    let mut sum = 0.0f64;
    for (i, &r) in j.rels.iter().enumerate() {
        if is_rel(r, level) {
            rel_so_far += 1;
            sum += 1.0 / ((3 + i as i64 - rel_so_far) as f64).log2();
        }
    }
    if rel_so_far > 0 {
        sum / j.num_rel as f64
    } else {
        0.0
    }
}

/// Gain per relevance level for the gain-based measures (trec_eval's `GAINS`, gain_init.c).
///
/// By default the gain of level `l` is `l`; `level=gain` parameters override levels given as
/// integers (other names, like rbp's `p`, are ignored). Entries are ordered by increasing gain
/// with trec_eval's comparator, which compares the gain difference truncated to an integer,
/// using a stable merge sort as glibc's `qsort` does.
///
/// Building is O(L log L) and [`Gains::gain`] O(1) for L levels (judgments graded up to 65535
/// stay linear; trec_eval's own lookup is a linear search per document).
#[derive(Debug, Clone, PartialEq)]
pub struct Gains {
    /// `(level, judged docs at level, gain)`, ordered as trec_eval orders them.
    pub levels: Vec<(i64, u64, f64)>,
    /// `dense[l]` = position in `levels` of the first entry of level `l` (`u32::MAX`: none),
    /// for `0 <= l < dense.len()`.
    dense: Vec<u32>,
    /// Positions of the first entries of levels outside the dense range (negative or
    /// large levels named by `level=gain` parameters), searched linearly.
    sparse: Vec<usize>,
}

fn valid_int(s: &str) -> bool {
    let t = s.strip_prefix(['-', '+']).unwrap_or(s);
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
}

/// C's `(int)` conversion of a double as x86-64 performs it (out of range or NaN gives
/// `INT_MIN`).
fn c_int(x: f64) -> i32 {
    if x.is_nan() || x >= 2147483648.0 || x <= -2147483649.0 {
        i32::MIN
    } else {
        x as i32
    }
}

fn glibc_msort<T: Copy>(v: &mut [T], cmp: &impl Fn(&T, &T) -> i32) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    let n1 = n / 2;
    glibc_msort(&mut v[..n1], cmp);
    glibc_msort(&mut v[n1..], cmp);
    let mut tmp = Vec::with_capacity(n);
    let (mut a, mut b) = (0usize, n1);
    while a < n1 && b < n {
        if cmp(&v[a], &v[b]) <= 0 {
            tmp.push(v[a]);
            a += 1;
        } else {
            tmp.push(v[b]);
            b += 1;
        }
    }
    tmp.extend_from_slice(&v[a..n1]);
    tmp.extend_from_slice(&v[b..n]);
    v.copy_from_slice(&tmp);
}

impl Gains {
    /// Build the gains of a query from `level=gain` pairs (setup_gains in gain_init.c).
    pub fn new(j: &JudgedRanking, pairs: &[(String, f64)]) -> Gains {
        let mut levels: Vec<(i64, u64, f64)> = pairs
            .iter()
            .filter(|(k, _)| valid_int(k))
            .map(|(k, v)| (k.parse::<i64>().unwrap_or(0), 0, *v))
            .collect();
        // The first parameter entry of each level (the pushed levels below are new ones).
        let mut first: std::collections::HashMap<i64, usize> = std::collections::HashMap::new();
        for (p, e) in levels.iter().enumerate() {
            first.entry(e.0).or_insert(p);
        }
        for l in 0..j.num_rel_levels as i64 {
            let count = j.level_count(l);
            match first.get(&l) {
                Some(&p) => levels[p].1 = count,
                None => levels.push((l, count, l as f64)),
            }
        }
        glibc_msort(&mut levels, &|a: &(i64, u64, f64), b: &(i64, u64, f64)| {
            c_int(a.2 - b.2)
        });
        Gains::index(levels)
    }

    /// Index `levels` (already in trec_eval's order) for [`Gains::gain`].
    fn index(levels: Vec<(i64, u64, f64)>) -> Gains {
        // Levels present in the judgments are 0..num_rel_levels (< 2^31); parameters may name
        // any integer, which goes to the sparse list.
        const DENSE_MAX: i64 = 1 << 20;
        let top = levels
            .iter()
            .map(|e| e.0)
            .filter(|&l| (0..DENSE_MAX).contains(&l))
            .max()
            .map_or(0, |m| m as usize + 1);
        let mut dense = vec![u32::MAX; top];
        let mut sparse = Vec::new();
        for (p, e) in levels.iter().enumerate() {
            if (0..DENSE_MAX).contains(&e.0) {
                let slot = &mut dense[e.0 as usize];
                if *slot == u32::MAX {
                    *slot = p as u32;
                }
            } else if !sparse.iter().any(|&q: &usize| levels[q].0 == e.0) {
                sparse.push(p);
            }
        }
        Gains {
            levels,
            dense,
            sparse,
        }
    }

    /// The gain of a relevance value (0 when no entry matches): the first entry of that level
    /// in trec_eval's order.
    #[inline]
    pub fn gain(&self, rel: i32) -> f64 {
        let r = rel as i64;
        if r >= 0 && (r as usize) < self.dense.len() {
            let p = self.dense[r as usize];
            return if p == u32::MAX {
                0.0
            } else {
                self.levels[p as usize].2
            };
        }
        self.sparse
            .iter()
            .find(|&&q| self.levels[q].0 == r)
            .map_or(0.0, |&q| self.levels[q].2)
    }
}

/// Walks the ideal ranking: highest gain first, each level repeated for its judged count.
struct Ideal<'g> {
    g: &'g Gains,
    cur: i64,
    at_level: u64,
    gain: f64,
}

impl<'g> Ideal<'g> {
    fn new(g: &'g Gains) -> Self {
        let cur = g.levels.len() as i64 - 1;
        let gain = if cur >= 0 {
            g.levels[cur as usize].2
        } else {
            0.0
        };
        Ideal {
            g,
            cur,
            at_level: 0,
            gain,
        }
    }
    /// Advance one rank; returns the ideal gain at this rank.
    fn step(&mut self) -> f64 {
        self.at_level += 1;
        while self.cur >= 0 && self.at_level > self.g.levels[self.cur as usize].1 {
            self.at_level = 1;
            self.cur -= 1;
            self.gain = if self.cur >= 0 {
                self.g.levels[self.cur as usize].2
            } else {
                0.0
            };
        }
        self.gain
    }
}

/// `(results DCG, ideal DCG)` over the whole ranking (m_ndcg.c), used by `ndcg`, `dcg` and
/// `ideal_dcg`.
pub fn dcg_pair(j: &JudgedRanking, gains: &Gains) -> (f64, f64) {
    let mut results_dcg = 0.0f64;
    let mut ideal_dcg = 0.0f64;
    let mut ideal = Ideal::new(gains);
    let n = j.rels.len();
    let mut i = 0usize;
    while i < n && ideal.gain > 0.0 {
        let g = gains.gain(j.rels[i]);
        if g != 0.0 {
            results_dcg += g / ((i + 2) as f64).log2();
        }
        let ig = ideal.step();
        if ig > 0.0 {
            ideal_dcg += ig / ((i + 2) as f64).log2();
        }
        i += 1;
    }
    while i < n {
        let g = gains.gain(j.rels[i]);
        if g != 0.0 {
            results_dcg += g / ((i + 2) as f64).log2();
        }
        i += 1;
    }
    while ideal.gain > 0.0 {
        let ig = ideal.step();
        if ig > 0.0 {
            ideal_dcg += ig / ((i + 2) as f64).log2();
        }
        i += 1;
    }
    (results_dcg, ideal_dcg)
}

/// nDCG over the whole ranking (`ndcg`, m_ndcg.c): DCG / ideal DCG (0 when the ideal is 0).
pub fn ndcg(j: &JudgedRanking, gains: &Gains) -> f64 {
    let (r, i) = dcg_pair(j, gains);
    if i > 0.0 { r / i } else { 0.0 }
}

/// nDCG averaged over relevant documents (`ndcg_rel`, m_ndcg_rel.c): nDCG at the rank of
/// each retrieved document with positive gain, plus the final DCG / ideal DCG for each
/// relevant document not retrieved, averaged over the ideal ranking's positive-gain documents.
pub fn ndcg_rel(j: &JudgedRanking, gains: &Gains) -> f64 {
    let mut results_dcg = 0.0f64;
    let mut ideal_dcg = 0.0f64;
    let mut sum = 0.0f64;
    let mut num_rel_ret = 0i64;
    let mut num_rel = 0i64;
    let mut ideal = Ideal::new(gains);
    let n = j.rels.len();
    let mut i = 0usize;
    while i < n && ideal.gain > 0.0 {
        let g = gains.gain(j.rels[i]);
        if g != 0.0 {
            results_dcg += g / ((i + 2) as f64).log2();
        }
        let ig = ideal.step();
        if ig > 0.0 {
            num_rel += 1;
            ideal_dcg += ig / ((i + 2) as f64).log2();
        }
        if g > 0.0 {
            sum += results_dcg / ideal_dcg;
            num_rel_ret += 1;
        }
        i += 1;
    }
    while i < n {
        let g = gains.gain(j.rels[i]);
        if g != 0.0 {
            results_dcg += g / ((i + 2) as f64).log2();
        }
        if g > 0.0 {
            sum += results_dcg / ideal_dcg;
            num_rel_ret += 1;
        }
        i += 1;
    }
    while ideal.gain > 0.0 {
        let ig = ideal.step();
        if ig > 0.0 {
            num_rel += 1;
            ideal_dcg += ig / ((i + 2) as f64).log2();
        }
        i += 1;
    }
    sum += (num_rel - num_rel_ret) as f64 * results_dcg / ideal_dcg;
    if sum > 0.0 { sum / num_rel as f64 } else { 0.0 }
}

/// nDCG averaged at the R levels (`Rndcg`, m_Rndcg.c): nDCG measured where the ideal gain
/// changes level (and at the end of the retrieved list), averaged over those points. 0 when
/// the query has no relevant document; 0/0 (NaN) when no point qualifies, as in C.
pub fn rndcg(j: &JudgedRanking, gains: &Gains) -> f64 {
    if j.num_rel == 0 {
        return 0.0;
    }
    let mut results_dcg = 0.0f64;
    let mut ideal_dcg = 0.0f64;
    let mut sum = 0.0f64;
    let mut changes = 0i64;
    let mut ideal = Ideal::new(gains);
    let mut old_gain = ideal.gain;
    let n = j.rels.len();
    let mut i = 0usize;
    while i < n && ideal.gain > 0.0 {
        let g = gains.gain(j.rels[i]);
        let ig = ideal.step();
        if old_gain != ig {
            if ideal_dcg > 0.0 {
                sum += results_dcg / ideal_dcg;
                changes += 1;
            }
            old_gain = ig;
        }
        if g != 0.0 {
            results_dcg += g / ((i + 2) as f64).log2();
        }
        if ig > 0.0 {
            ideal_dcg += ig / ((i + 2) as f64).log2();
        }
        i += 1;
    }
    if i < n {
        while i < n {
            let g = gains.gain(j.rels[i]);
            if g != 0.0 {
                results_dcg += g / ((i + 2) as f64).log2();
            }
            i += 1;
        }
        if ideal_dcg > 0.0 {
            sum += results_dcg / ideal_dcg;
            changes += 1;
        }
    }
    while ideal.gain > 0.0 {
        let ig = ideal.step();
        if old_gain != ig {
            if ideal_dcg > 0.0 {
                sum += results_dcg / ideal_dcg;
                changes += 1;
            }
            old_gain = ig;
        }
        if ig > 0.0 {
            ideal_dcg += ig / ((i + 2) as f64).log2();
        }
        i += 1;
    }
    sum / changes as f64
}

/// Normalized gain G (`G`, m_G.c): each retrieved document contributes
/// `gain / log2(2 + ideal cost so far - results gain so far)`, the total divided by the
/// ideal ranking's summed positive gain.
pub fn g_measure(j: &JudgedRanking, gains: &Gains) -> f64 {
    let mut results_g = 0.0f64;
    let mut sum_results = 0.0f64;
    let mut sum_ideal = 0.0f64;
    let mut sum_cost = 0.0f64;
    let min_cost = 1.0f64;
    let mut ideal = Ideal::new(gains);
    let n = j.rels.len();
    let mut i = 0usize;
    while i < n && ideal.gain > 0.0 {
        let g = gains.gain(j.rels[i]);
        sum_results += g;
        let ig = ideal.step();
        if ig > 0.0 {
            sum_ideal += ig;
        }
        if ig >= min_cost {
            sum_cost += ig;
        } else {
            sum_cost += min_cost;
        }
        if g != 0.0 {
            results_g += g / (2.0 + sum_cost - sum_results).log2();
        }
        i += 1;
    }
    while i < n {
        let g = gains.gain(j.rels[i]);
        sum_results += g;
        sum_cost += min_cost;
        if g != 0.0 {
            results_g += g / (2.0 + sum_cost - sum_results).log2();
        }
        i += 1;
    }
    while ideal.gain > 0.0 {
        let ig = ideal.step();
        if ig > 0.0 {
            sum_ideal += ig;
        }
    }
    if sum_ideal > 0.0 {
        results_g / sum_ideal
    } else {
        0.0
    }
}

/// The persistence `p` of rbp/rbp_resid: the last `p=` pair, default 0.9.
pub fn rbp_persistence(pairs: &[(String, f64)]) -> f64 {
    pairs
        .iter()
        .filter(|(k, _)| k == "p")
        .map(|(_, v)| *v)
        .next_back()
        .unwrap_or(0.9)
}

/// Rank-biased precision (`rbp`, m_rbp.c; Moffat & Zobel, TOIS 2008):
/// `(1 - p) * sum gain(rank) * p^(rank-1)`, with gains rescaled to [0, 1] by min/max when any
/// lies outside. (trec_eval reads uninitialized min/max; here they are the gains' own min and
/// max, which is what it computes whenever level 0 has gain 0, i.e. with default gains.)
pub fn rbp(j: &JudgedRanking, gains: &Gains, p: f64) -> f64 {
    let g = rbp_gains(gains);
    let mut sum = 0.0f64;
    let mut cur_p = 1.0f64;
    for &r in &j.rels {
        let gain = g.gain(r);
        if gain != 0.0 {
            sum += gain * cur_p;
        }
        cur_p *= p;
    }
    (1.0 - p) * sum
}

/// The gains [`rbp`] uses: `gains` rescaled to [0, 1] by `(g - min) / (max - min)` when any
/// lies outside [0, 1] (m_rbp.c), else unchanged. The rescaling is increasing, so it keeps
/// the gains' order.
pub fn rbp_gains(gains: &Gains) -> Gains {
    let mut g = gains.clone();
    if !g.levels.is_empty() {
        let min = g.levels.iter().map(|e| e.2).fold(f64::INFINITY, f64::min);
        let max = g
            .levels
            .iter()
            .map(|e| e.2)
            .fold(f64::NEG_INFINITY, f64::max);
        if min < 0.0 || max > 1.0 {
            for e in &mut g.levels {
                e.2 = (e.2 - min) / (max - min);
            }
        }
    }
    g
}

/// RBP residual (`rbp_resid`, m_rbp_resid.c): `p^n + (1 - p) * sum over unjudged retrieved of
/// p^(rank-1)`, 0 when every retrieved document is judged.
pub fn rbp_resid(j: &JudgedRanking, p: f64) -> f64 {
    let mut unj = 0i64;
    let mut sum = 0.0f64;
    let mut cur_p = 1.0f64;
    for &r in &j.rels {
        if r < 0 {
            unj += 1;
            sum += cur_p;
        }
        cur_p *= p;
    }
    if unj > 0 {
        cur_p + (1.0 - p) * sum
    } else {
        0.0
    }
}

/// Set precision (`set_P`, m_set_P.c): num_rel_ret / num_ret.
pub fn set_precision(j: &JudgedRanking) -> f64 {
    if j.num_ret != 0 {
        j.num_rel_ret as f64 / j.num_ret as f64
    } else {
        0.0
    }
}

/// Relative set precision (`set_relative_P`, m_set_rel_P.c): num_rel_ret /
/// min(num_ret, num_rel).
pub fn set_relative_precision(j: &JudgedRanking) -> f64 {
    if j.num_ret != 0 && j.num_rel != 0 {
        j.num_rel_ret as f64 / j.num_ret.min(j.num_rel) as f64
    } else {
        0.0
    }
}

/// Set recall (`set_recall`, m_set_recall.c): num_rel_ret / num_rel.
pub fn set_recall(j: &JudgedRanking) -> f64 {
    if j.num_rel != 0 {
        j.num_rel_ret as f64 / j.num_rel as f64
    } else {
        0.0
    }
}

/// Unranked set MAP (`set_map`, m_set_map.c): num_rel_ret^2 / (num_ret * num_rel).
pub fn set_map(j: &JudgedRanking) -> f64 {
    if j.num_ret != 0 && j.num_rel != 0 {
        (j.num_rel_ret as f64 * j.num_rel_ret as f64) / (j.num_ret as f64 * j.num_rel as f64)
    } else {
        0.0
    }
}

/// Set F (`set_F`, m_set_F.c; van Rijsbergen): `(x + 1) P R / (x P + R)` over the retrieved
/// set; 0 when nothing relevant is retrieved.
pub fn set_f(j: &JudgedRanking, x: f64) -> f64 {
    if j.num_rel_ret == 0 {
        return 0.0;
    }
    let p = j.num_rel_ret as f64 / j.num_ret as f64;
    let r = j.num_rel_ret as f64 / j.num_rel as f64;
    (x + 1.0) * p * r / (x * p + r)
}

/// Judged non-relevant retrieved (`num_nonrel_judged_ret`, m_num_nonrel_judged_ret.c):
/// num_ret - not-in-pool - unjudged-in-pool - num_rel_ret. A count.
pub fn num_nonrel_judged_ret(j: &JudgedRanking) -> f64 {
    (j.num_ret - j.num_nonpool - j.num_unjudged_in_pool - j.num_rel_ret) as f64
}

/// The relevance string (`relstring`, m_relstring.c) of the top `len` documents: the digit
/// for 0..=9, `>` above 9, `-` not in the pool, `.` pooled but unjudged.
pub fn relstring(j: &JudgedRanking, len: f64) -> String {
    let n = (len as i64).min(j.num_ret).max(0) as usize;
    j.rels[..n]
        .iter()
        .map(|&r| match r {
            r if r > 9 => '>',
            r if r >= 0 => (b'0' + r as u8) as char,
            REL_NONPOOL => '-',
            REL_UNJUDGED => '.',
            _ => '<',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// trec_eval's lookup: the first entry of the level in the sorted list.
    fn linear_gain(g: &Gains, rel: i32) -> f64 {
        g.levels
            .iter()
            .find(|e| e.0 == rel as i64)
            .map_or(0.0, |e| e.2)
    }

    #[test]
    fn gain_lookup_matches_trec_eval_linear_search() {
        let j = jr(&[0, 1, 2, 5, -1, 7], &[1, 1, 1, 0, 0, 1, 0, 1], 1);
        let pairs: Vec<(String, f64)> = [
            ("2", 10.0),
            ("-3", 4.0),
            ("5", -1.0),
            ("2", 99.0),
            ("1000000000", 7.0),
            ("x", 3.0),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
        for p in [&pairs[..], &[]] {
            let g = Gains::new(&j, p);
            for rel in [
                -3,
                -2,
                -1,
                0,
                1,
                2,
                3,
                5,
                7,
                8,
                1000000000,
                i32::MAX,
                i32::MIN,
            ] {
                assert_eq!(g.gain(rel), linear_gain(&g, rel), "{rel} {p:?}");
            }
        }
    }

    #[test]
    fn gains_with_65535_levels_are_linear() {
        // One judged document per level up to 65535: quadratic before (a linear search per
        // level); now a few milliseconds.
        let levels = vec![1u64; 65536];
        let rels: Vec<i32> = (0..65536).rev().collect();
        let j = jr(&rels, &levels, 1);
        let t = std::time::Instant::now();
        let g = Gains::new(&j, &[]);
        let (dcg, ideal) = dcg_pair(&j, &g);
        assert!(
            dcg > 0.0 && (dcg - ideal).abs() < 1e-9 * ideal,
            "{dcg} {ideal}"
        );
        assert_eq!(g.gain(65535), 65535.0);
        // Generous even for a loaded debug build; the quadratic version took minutes.
        assert!(t.elapsed().as_secs_f64() < 20.0);
    }

    #[test]
    fn reciprocal_rank_cut_is_zero_past_k() {
        // First relevant at rank 3.
        let j = jr(&[0, 0, 1, 1], &[0, 2], 1);
        let mut out = [9.0; 3];
        reciprocal_rank_cut(&j, 1, &[2, 3, 10], &mut out);
        assert_eq!(out, [0.0, 1.0 / 3.0, 1.0 / 3.0]);
        assert_eq!(reciprocal_rank(&j, 1), 1.0 / 3.0);
    }

    #[test]
    fn hand_computed_values() {
        // ranks: rel, nonrel, nonpool, rel ; 3 relevant judged, 2 nonrel judged.
        let j = jr(&[1, 0, -1, 1], &[2, 3], 1);
        assert_eq!(average_precision(&j, 1), (1.0 + 2.0 / 4.0) / 3.0);
        assert_eq!(reciprocal_rank(&j, 1), 1.0);
        let mut out = [0.0; 2];
        precision(&j, 1, &[2, 10], &mut out);
        assert_eq!(out, [0.5, 0.2]);
        recall(&j, 1, &[1, 4], &mut out);
        assert_eq!(out, [1.0 / 3.0, 2.0 / 3.0]);
        assert_eq!(r_precision(&j, 1), 1.0 / 3.0);
        // bpref: first rel 1.0; second rel: 1 - min(1,3)/min(2,3) = 0.5 -> 1.5/3.
        assert_eq!(bpref(&j, 1), 0.5);
        assert_eq!(relstring(&j, 10.0), "10-1");
        let mut u = [0.0; 1];
        unjudged(&j, &[4], &mut u);
        assert_eq!(u, [0.25]);
        assert_eq!(set_precision(&j), 0.5);
        assert_eq!(num_nonrel_judged_ret(&j), 1.0);
        let g = Gains::new(&j, &[]);
        let want = (1.0 + 1.0 / 5f64.log2()) / (1.0 + 1.0 / 3f64.log2() + 1.0 / 4f64.log2());
        assert_eq!(ndcg(&j, &g), want);
        let mut nc = [0.0; 1];
        ndcg_cut(&j, &[10], &mut nc);
        assert_eq!(nc[0], want);
    }

    #[test]
    fn empty_retrieval_gives_c_nan_for_iprec() {
        let j = jr(&[], &[1, 1], 1);
        let mut out = [0.0; 2];
        iprec_at_recall(&j, 1, &[0.0, 1.0], &mut out);
        assert!(out[0].is_nan());
        assert_eq!(out[1], 0.0);
    }

    #[test]
    fn gains_sort_like_trec_eval() {
        let j = jr(&[], &[1, 1, 1], 1);
        let g = Gains::new(&j, &[("2".into(), 0.5), ("p".into(), 0.9)]);
        // level 2 -> 0.5 compares equal to 0 (truncated difference), stable order kept.
        let lv: Vec<i64> = g.levels.iter().map(|e| e.0).collect();
        assert_eq!(lv, [2, 0, 1]);
    }
}
