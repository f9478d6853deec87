//! Mergeable accumulators.
//!
//! Every aggregate in routeval (a mean over queries, a confusion count, a cost total) is an
//! [`Accumulator`]: a value that can absorb observations and absorb *another accumulator*.
//! Work can then be split into shards (rayon threads today, machines later) and the partial
//! results merged in any grouping.
//!
//! Guarantees, tested here and in each crate's accumulators:
//! * integer counts merge exactly, in any order;
//! * float sums use Neumaier-compensated summation ([`Sum`]), so a merge of shards agrees with
//!   one pass to within 1e-12 relative (in practice to the last bit or two);
//! * where parity with a reference implementation requires its summation order (trec_eval,
//!   CommonRouterBench), the parity path sums sequentially in that order and does not use
//!   shard merging; those places say so.

/// A partial aggregate that can absorb another partial aggregate of the same kind.
///
/// `Default` is the empty accumulator (the identity of [`merge`](Accumulator::merge)).
/// Implementations must make `merge` associative and, up to float rounding, commutative:
/// for any split of the observations into shards, merging the shards' accumulators gives the
/// accumulator of one pass.
pub trait Accumulator: Default {
    /// Absorb `other`, as if its observations had been added to `self`.
    fn merge(&mut self, other: Self);

    /// Merge every accumulator of `parts` into one (the empty accumulator for no parts).
    fn merge_all<I: IntoIterator<Item = Self>>(parts: I) -> Self {
        let mut acc = Self::default();
        for part in parts {
            acc.merge(part);
        }
        acc
    }
}

/// An exact count of observations (`u64`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Count(pub u64);

impl Count {
    /// Count one more observation.
    pub fn inc(&mut self) {
        self.0 += 1;
    }

    /// Count `n` more observations.
    pub fn add(&mut self, n: u64) {
        self.0 += n;
    }
}

impl Accumulator for Count {
    fn merge(&mut self, other: Self) {
        self.0 += other.0;
    }
}

/// A compensated (Neumaier) floating-point sum.
///
/// Carries the running sum and a compensation term, so long sums and sums merged from
/// shards stay within a few ulps of the exactly rounded total. Non-finite inputs propagate
/// as in plain IEEE addition (the value becomes `inf` or `NaN`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sum {
    sum: f64,
    comp: f64,
}

impl Sum {
    /// Add one value.
    pub fn add(&mut self, x: f64) {
        let t = self.sum + x;
        if self.sum.abs() >= x.abs() {
            self.comp += (self.sum - t) + x;
        } else {
            self.comp += (x - t) + self.sum;
        }
        self.sum = t;
    }

    /// The compensated total.
    pub fn value(&self) -> f64 {
        let v = self.sum + self.comp;
        // When the sum is not finite the compensation is meaningless (inf - inf = NaN).
        if self.sum.is_finite() { v } else { self.sum }
    }
}

impl Accumulator for Sum {
    fn merge(&mut self, other: Self) {
        self.add(other.sum);
        self.add(other.comp);
    }
}

impl FromIterator<f64> for Sum {
    fn from_iter<I: IntoIterator<Item = f64>>(iter: I) -> Self {
        let mut s = Sum::default();
        for x in iter {
            s.add(x);
        }
        s
    }
}

/// A mean: a compensated [`Sum`] and an exact [`Count`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Mean {
    /// The sum of the observations.
    pub sum: Sum,
    /// How many observations.
    pub n: Count,
}

impl Mean {
    /// Add one observation.
    pub fn add(&mut self, x: f64) {
        self.sum.add(x);
        self.n.inc();
    }

    /// The mean, or `None` when there were no observations.
    pub fn value(&self) -> Option<f64> {
        (self.n.0 > 0).then(|| self.sum.value() / self.n.0 as f64)
    }
}

impl Accumulator for Mean {
    fn merge(&mut self, other: Self) {
        self.sum.merge(other.sum);
        self.n.merge(other.n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rel_close(a: f64, b: f64, tol: f64) -> bool {
        a == b || (a - b).abs() <= tol * a.abs().max(b.abs())
    }

    proptest! {
        #[test]
        fn sharded_mean_equals_one_pass(
            xs in proptest::collection::vec(
                prop_oneof![-1e6f64..1e6, -1e-6f64..1e-6, -1e15f64..1e15],
                0..400,
            ),
            cuts in proptest::collection::vec(0usize..400, 0..8),
        ) {
            let mut one = Mean::default();
            xs.iter().for_each(|&x| one.add(x));

            let mut bounds: Vec<usize> = cuts.into_iter().map(|c| c.min(xs.len())).collect();
            bounds.push(0);
            bounds.push(xs.len());
            bounds.sort_unstable();
            let shards = bounds.windows(2).map(|w| {
                let mut m = Mean::default();
                xs[w[0]..w[1]].iter().for_each(|&x| m.add(x));
                m
            });
            // Merge in reverse order too: merging must not depend on shard order.
            let merged = Mean::merge_all(shards.collect::<Vec<_>>().into_iter().rev());
            prop_assert_eq!(merged.n, one.n);
            match (merged.value(), one.value()) {
                (None, None) => {}
                // The bound `lib.rs` states: within 1e-12 relative, no absolute escape hatch.
                (Some(a), Some(b)) => prop_assert!(rel_close(a, b, 1e-12), "{} vs {}", a, b),
                other => prop_assert!(false, "{:?}", other),
            }
        }

        #[test]
        fn counts_merge_exactly(parts in proptest::collection::vec(0u64..1_000_000, 0..50)) {
            let merged = Count::merge_all(parts.iter().map(|&n| Count(n)));
            prop_assert_eq!(merged.0, parts.iter().sum::<u64>());
        }
    }

    #[test]
    fn compensated_sum_beats_naive() {
        let xs = [1e16, 1.0, -1e16, 1.0];
        let s: Sum = xs.into_iter().collect();
        assert_eq!(s.value(), 2.0);
        assert_eq!(Mean::default().value(), None);
    }
}
