//! The seedable, deterministic random number generator of every resampling procedure.
//!
//! Each replicate (bootstrap resample, randomization flip pattern) draws from its own stream,
//! derived from `(seed, replicate index)` alone. Replicates can therefore run on any number
//! of threads, in any order, and a seed always gives the same result.
//!
//! * Seed derivation: SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
//!   generators", OOPSLA 2014; the constants of Vigna's `splitmix64.c`).
//! * Generator: PCG XSL RR 128/64 (`rand_pcg::Lcg128Xsl64`, O'Neill 2014, numpy's `PCG64`),
//!   whose 128-bit state comes from two SplitMix64 outputs and whose stream (increment) is the
//!   replicate index.
//! * Bounded integers: Lemire's multiply-and-reject method ("Fast random integer generation in
//!   an interval", ACM TOMACS 2019), unbiased.

use rand_pcg::rand_core::Rng as _;

const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// One step of SplitMix64: advances `state` by the golden gamma and returns the mixed output.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GOLDEN_GAMMA);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The random stream of one replicate: a function of `(seed, replicate)` only.
#[derive(Debug, Clone)]
pub struct StatsRng {
    inner: rand_pcg::Lcg128Xsl64,
}

impl StatsRng {
    /// The stream of replicate `replicate` under `seed`. Streams of different replicates (or
    /// seeds) are statistically independent for all practical purposes.
    pub fn for_replicate(seed: u64, replicate: u64) -> StatsRng {
        let mut s = seed;
        let k0 = splitmix64(&mut s);
        let mut r = k0 ^ replicate.wrapping_mul(GOLDEN_GAMMA);
        let hi = splitmix64(&mut r);
        let lo = splitmix64(&mut r);
        let state = ((hi as u128) << 64) | lo as u128;
        let stream = ((splitmix64(&mut s) as u128) << 64) | replicate as u128;
        StatsRng {
            inner: rand_pcg::Lcg128Xsl64::new(state, stream),
        }
    }

    /// 64 uniformly random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    /// A uniform integer in `0..n` (Lemire's unbiased method); `n` must be > 0 (0 returns 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let mut m = (self.next_u64() as u128) * (n as u128);
        let mut low = m as u64;
        if low < n {
            let threshold = n.wrapping_neg() % n;
            while low < threshold {
                m = (self.next_u64() as u128) * (n as u128);
                low = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// A uniform float in `[0, 1)` with 53 random bits.
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Fill `out` with independent uniform indices in `0..n` (one bootstrap resample).
    pub fn fill_indices(&mut self, n: usize, out: &mut [usize]) {
        for slot in out {
            *slot = self.below(n as u64) as usize;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // Vigna's splitmix64.c seeded with 0: first outputs.
        let mut s = 0u64;
        assert_eq!(splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(&mut s), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn streams_are_deterministic_and_distinct() {
        let a: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(StatsRng::for_replicate(7, 3), |r, _: u64| {
                Some(r.next_u64())
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(StatsRng::for_replicate(7, 3), |r, _: u64| {
                Some(r.next_u64())
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(StatsRng::for_replicate(7, 4), |r, _: u64| {
                Some(r.next_u64())
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut r = StatsRng::for_replicate(1, 0);
        let mut counts = [0u32; 7];
        for _ in 0..70_000 {
            let v = r.below(7);
            counts[v as usize] += 1;
        }
        for c in counts {
            assert!((9_400..10_600).contains(&c), "{counts:?}");
        }
        assert_eq!(r.below(0), 0);
        assert_eq!(r.below(1), 0);
    }
}
