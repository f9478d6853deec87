//! The five retrieval metrics of rag-quality-check 0.1.0 (spec section 5), as pure kernels.
//!
//! Inputs: `gains` — the gain of each *de-duplicated* retrieved item in rank order (0 for an
//! unknown/irrelevant id); `ideal` — every positive gain known for the query (any order);
//! `k` — the cut-off (≥ 1). "Relevant" means gain > 0; ranks start at 1; only the first `k`
//! gains are read. These are the rag-quality-check variants, which differ from trec_eval's
//! measures at the edges (MRR is cut at k; see the README).

/// `precision_at_k = |{i ≤ k : gains[i] > 0}| / k` — always divides by the requested `k`,
/// even when fewer than `k` items came back (trec_eval `P_k` does the same). Range 0..1.
pub fn precision_at_k(gains: &[f64], k: usize) -> f64 {
    if k == 0 {
        return 0.0;
    }
    hits(gains, k) as f64 / k as f64
}

fn hits(gains: &[f64], k: usize) -> usize {
    gains.iter().take(k).filter(|&&g| g > 0.0).count()
}

/// `recall_at_k = |{i ≤ k : gains[i] > 0}| / |{g ∈ ideal : g > 0}|` — counts, not gains (graded
/// gains do not weight recall). `None` (excluded, not 0) when nothing relevant is known.
pub fn recall_at_k(gains: &[f64], ideal: &[f64], k: usize) -> Option<f64> {
    let total = ideal.iter().filter(|&&g| g > 0.0).count();
    if total == 0 {
        return None;
    }
    Some(hits(gains, k) as f64 / total as f64)
}

/// Reciprocal rank cut at k: `1 / rank` of the first relevant item among the top `k`, else 0
/// (a hit at rank k+1 scores 0, unlike trec_eval's uncut `recip_rank`). The report's `mrr` is
/// the mean over cases.
pub fn mrr(gains: &[f64], k: usize) -> f64 {
    for (i, &g) in gains.iter().take(k).enumerate() {
        if g > 0.0 {
            return 1.0 / (i + 1) as f64;
        }
    }
    0.0
}

/// Linear-gain `DCG@k = Σ_{i=1..min(k,len)} g_i / log2(i + 1)`, summed left to right in rank
/// order, zero gains skipped (the reference's order, so sums match bit for bit).
pub fn dcg(gains: &[f64], k: usize) -> f64 {
    let mut total = 0.0;
    for (i, &g) in gains.iter().take(k).enumerate() {
        if g != 0.0 {
            total += g / ((i + 2) as f64).log2();
        }
    }
    total
}

/// rag-quality-check's linear-gain nDCG: `min(1, DCG@k(gains) / DCG@k(sort_desc(ideal)))`,
/// log2 discount starting at 1 for rank 1. `None` (excluded) when the ideal DCG is ≤ 0. Like
/// Python's `min(1.0, nan)`, a NaN ratio (only reachable with an infinite gain) gives 1.0.
/// Equals trec_eval's `ndcg_cut_k` when the ideal holds every judged gain; differs from the
/// exponential `(2^g − 1)` variant for graded gains.
pub fn ndcg_at_k(gains: &[f64], ideal: &[f64], k: usize) -> Option<f64> {
    let mut sorted = ideal.to_vec();
    sorted.sort_by(|a, b| b.partial_cmp(a).unwrap_or(std::cmp::Ordering::Equal));
    let idcg = dcg(&sorted, k);
    if idcg <= 0.0 || idcg.is_nan() {
        if idcg.is_nan() {
            return Some(1.0);
        }
        return None;
    }
    let ratio = dcg(gains, k) / idcg;
    // Python `min(1.0, ratio)` returns 1.0 unless ratio < 1.0 (NaN compares false).
    Some(if ratio < 1.0 { ratio } else { 1.0 })
}

/// `hit_rate = 1.0` if any of the top `k` is relevant, else 0.0; the report's value is the
/// share of queries with a hit.
pub fn hit_rate(gains: &[f64], k: usize) -> f64 {
    if gains.iter().take(k).any(|&g| g > 0.0) {
        1.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes() {
        // graded 3,2,1 reversed at k=3 → 0.79 linear.
        let n = ndcg_at_k(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0], 3).unwrap();
        assert!((n - 0.7900).abs() < 1e-4);
        assert_eq!(mrr(&[0.0, 0.0, 0.0, 1.0], 3), 0.0);
        assert_eq!(precision_at_k(&[0.0, 1.0], 3), 1.0 / 3.0);
        assert_eq!(recall_at_k(&[1.0], &[], 3), None);
        assert_eq!(ndcg_at_k(&[0.0], &[], 3), None);
        assert_eq!(hit_rate(&[0.0, 1.0], 1), 0.0);
    }
}
