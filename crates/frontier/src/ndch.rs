//! RouterBench's non-decreasing convex hull (NDCH), AIQ and the Pareto set of a system's
//! (cost, quality) points.
//!
//! Source: withmartian/routerbench `evaluation/AIQ.py` (`get_non_descreasing_convex_hull_of`,
//! `calc_AIQ`). Costs are in whatever unit the points use (RouterBench: USD); quality is the
//! system's score (RouterBench: accuracy as a fraction).
//!
//! Two NDCH constructions:
//! * [`ndch_hull`] (routeval's default, O(n log n)): the best quality per cost, the upper convex
//!   hull of those points from the cheapest one, cut at the last (most expensive) point of
//!   maximum quality, so ties at the top extend the curve flat. Collinear points are dropped.
//! * [`ndch_routerbench`]: the reference's pairwise algorithm, reproduced with its quirks (it
//!   keeps interpolated values at interior costs; it appends the most expensive point only if
//!   it is at least as good as the *last interior cost added*; it then drops points below their
//!   predecessor, comparing with the original predecessor, not the last kept point). It returns
//!   `None` where the reference crashes (no interior cost: fewer than 3 points, or all points
//!   at the two extreme costs). O(n³).
//!
//! AIQ ([`aiq`]): each NDCH is extended flat to the largest cost of any system's NDCH and its
//! trapezoid area (`np.trapz`) is divided by that cost.

use crate::numpy::{interp, trapz};

/// One (cost, quality) point.
pub type CostQuality = (f64, f64);

/// Sort by cost, stably (equal costs keep input order). numpy's default argsort is stable on
/// arrays of up to 16 elements (insertion sort); beyond that its order among equal costs is
/// unspecified, and routeval keeps input order.
fn sorted_by_cost(points: &[CostQuality]) -> Vec<CostQuality> {
    let mut p = points.to_vec();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    p
}

/// The NDCH as the non-decreasing upper concave envelope (see the module docs), as points in
/// increasing cost. Empty input gives an empty hull. Points must be finite.
pub fn ndch_hull(points: &[CostQuality]) -> Vec<CostQuality> {
    if points.is_empty() {
        return Vec::new();
    }
    let sorted = sorted_by_cost(points);
    // Best quality per cost.
    let mut best: Vec<CostQuality> = Vec::with_capacity(sorted.len());
    for (c, q) in sorted {
        match best.last_mut() {
            Some(last) if last.0 == c => {
                if q > last.1 {
                    last.1 = q;
                }
            }
            _ => best.push((c, q)),
        }
    }
    // Cut at the last point of maximum quality.
    let top = best.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let last = best
        .iter()
        .rposition(|p| p.1 == top)
        .unwrap_or(best.len() - 1);
    best.truncate(last + 1);
    // Upper hull (monotone chain), dropping collinear points.
    let mut h: Vec<CostQuality> = Vec::with_capacity(best.len());
    for (x, y) in best {
        while h.len() >= 2 {
            let (ax, ay) = h[h.len() - 2];
            let (bx, by) = h[h.len() - 1];
            let cross = (bx - ax) * (y - ay) - (by - ay) * (x - ax);
            if cross >= 0.0 {
                h.pop();
            } else {
                break;
            }
        }
        h.push((x, y));
    }
    h
}

/// RouterBench's own NDCH (`get_non_descreasing_convex_hull_of`), or `None` where the
/// reference raises `IndexError` (no point strictly between the cheapest and the most expensive
/// cost). See the module docs for its quirks; the result is bit-equal to the reference's.
pub fn ndch_routerbench(points: &[CostQuality]) -> Option<Vec<CostQuality>> {
    let p = sorted_by_cost(points);
    let n = p.len();
    if n == 0 {
        return None;
    }
    // new_convex_hull_points: one entry per interior cost, in first-appearance order of the
    // reference's (i, j, k) loops; the value is the maximum over the candidates it sees
    // (the point's own quality, or the chord (i, j) interpolated at its cost).
    let mut entries: Vec<CostQuality> = Vec::new();
    let mut index_of: Vec<Option<usize>> = vec![None; n];
    for i in 0..n {
        let (x1, y1) = p[i];
        for j in i..n {
            let (x2, y2) = p[j];
            if x2 <= x1 {
                continue;
            }
            // x1 < x < x2 only for i < k < j (sorted by cost); same order as the reference's
            // full k loop.
            for k in i + 1..j {
                let (x, y) = p[k];
                if !(x1 < x && x < x2) {
                    continue;
                }
                let iv = interp(x, &[x1, x2], &[y1, y2]);
                let cand = if y < iv { iv } else { y };
                // Entries are keyed by cost: equal costs share one entry.
                let slot = match index_of[k] {
                    Some(s) => Some(s),
                    None => entries.iter().position(|e| e.0 == x),
                };
                match slot {
                    Some(s) => {
                        index_of[k] = Some(s);
                        if entries[s].1 < cand {
                            entries[s].1 = cand;
                        }
                    }
                    None => {
                        entries.push((x, cand));
                        index_of[k] = Some(entries.len() - 1);
                    }
                }
            }
        }
    }
    let last_added = *entries.last()?;
    let (lx, ly) = p[n - 1];
    if !entries.iter().any(|e| e.0 == lx) && ly >= last_added.1 {
        entries.push((lx, ly));
    }
    if !entries.iter().any(|e| e.0 == p[0].0) {
        entries.insert(0, p[0]);
    }
    let c = sorted_by_cost(&entries);
    let mut out = Vec::with_capacity(c.len());
    for i in 0..c.len() {
        if i == 0 || c[i].1 >= c[i - 1].1 {
            out.push(c[i]);
        }
    }
    Some(out)
}

/// AIQ of each NDCH (`calc_AIQ`): the largest cost over all NDCHs (`max_cost`), then per NDCH
/// the trapezoid area of the curve extended by `(max_cost, its last quality)`, divided by
/// `max_cost`. Returns `(max_cost, aiqs)`; an empty NDCH gets NaN, and so does every system
/// when `max_cost` is not positive (the reference divides by zero).
pub fn aiq(ndchs: &[Vec<CostQuality>]) -> (f64, Vec<f64>) {
    let max_cost = ndchs
        .iter()
        .flat_map(|h| h.iter().map(|p| p.0))
        .fold(f64::NEG_INFINITY, f64::max);
    let aiqs = ndchs
        .iter()
        .map(|h| {
            let Some(&(_, last_q)) = h.last() else {
                return f64::NAN;
            };
            let mut xs: Vec<f64> = h.iter().map(|p| p.0).collect();
            let mut ys: Vec<f64> = h.iter().map(|p| p.1).collect();
            xs.push(max_cost);
            ys.push(last_q);
            if max_cost > 0.0 {
                trapz(&ys, &xs) / max_cost
            } else {
                f64::NAN
            }
        })
        .collect();
    (max_cost, aiqs)
}

/// Indices of the Pareto-optimal points (no other point is at most as expensive and at least
/// as good, with one of the two strict), in increasing cost; of several identical optimal
/// points only the first in input order is kept. O(n log n).
pub fn pareto(points: &[CostQuality]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..points.len()).collect();
    // Cost ascending, then quality descending, then input order.
    idx.sort_by(|&a, &b| {
        points[a]
            .0
            .total_cmp(&points[b].0)
            .then(points[b].1.total_cmp(&points[a].1))
            .then(a.cmp(&b))
    });
    let mut out = Vec::new();
    let mut best = f64::NEG_INFINITY;
    for i in idx {
        if points[i].1 > best {
            best = points[i].1;
            out.push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hull_drops_dominated_and_collinear_points() {
        let pts = [(1.0, 0.5), (2.0, 0.6), (3.0, 0.7), (2.5, 0.1), (4.0, 0.65)];
        assert_eq!(ndch_hull(&pts), vec![(1.0, 0.5), (3.0, 0.7)]);
    }

    #[test]
    fn hull_ties_at_top_extend_flat() {
        let pts = [(1.0, 0.5), (2.0, 0.9), (3.0, 0.9)];
        assert_eq!(ndch_hull(&pts), vec![(1.0, 0.5), (2.0, 0.9), (3.0, 0.9)]);
        assert_eq!(
            ndch_routerbench(&pts),
            Some(vec![(1.0, 0.5), (2.0, 0.9), (3.0, 0.9)])
        );
    }

    #[test]
    fn routerbench_crashes_without_interior_point() {
        assert_eq!(ndch_routerbench(&[(1.0, 0.5), (2.0, 0.6)]), None);
        assert_eq!(
            ndch_routerbench(&[(1.0, 0.5), (1.0, 0.6), (2.0, 0.6)]),
            None
        );
        assert_eq!(ndch_routerbench(&[]), None);
    }

    #[test]
    fn aiq_extends_flat_to_the_largest_cost() {
        let (m, a) = aiq(&[vec![(0.0, 1.0)], vec![(0.0, 0.0), (2.0, 1.0)]]);
        assert_eq!(m, 2.0);
        assert_eq!(a, vec![1.0, 0.5]);
    }

    #[test]
    fn pareto_keeps_undominated_points() {
        let pts = [
            (1.0, 0.5),
            (2.0, 0.4),
            (2.0, 0.8),
            (3.0, 0.8),
            (0.5, 0.1),
            (1.0, 0.5),
        ];
        assert_eq!(pareto(&pts), vec![4, 0, 2]);
    }
}
