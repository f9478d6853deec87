//! Bit-exact ports of the numpy, pandas, scikit-learn and Hugging Face `datasets` random
//! procedures that decide GQR-Bench's splits (`specs/gqr.md` §7).
//!
//! * [`SeedSequence`]: numpy's `SeedSequence(entropy)` (pool of 4 u32 words, hashmix/mix),
//!   ported from numpy's `bit_generator.pyx` description.
//! * [`Pcg64`]: numpy's `PCG64` (`default_rng(seed)`): `rand_pcg::Lcg128Xsl64` seeded from
//!   the SeedSequence state, with numpy's *buffered* 32-bit draws (low half of a fresh u64
//!   first, then the high half).
//! * [`Mt19937`]: numpy's legacy `RandomState(seed)` (MT19937 `init_genrand`), via `rand_mt`.
//! * [`permutation`] / [`shuffle`]: numpy's Fisher–Yates with masked rejection
//!   (`random_interval`), shared by `Generator` and `RandomState`.
//! * [`hf_train_test_split`], [`pandas_sample`], [`approximate_mode`],
//!   [`stratified_train_test_split`], [`plain_train_test_split`]: the library procedures on top.
//!
//! All of them are verified against `golden/gqr/rng/` and `golden/gqr/splits/`.

use rand_pcg::rand_core::Rng;

/// A source of raw 32- and 64-bit draws, as numpy's bit generators expose them.
pub trait BitGen {
    /// numpy's `next_uint32`.
    fn next_u32(&mut self) -> u32;
    /// numpy's `next_uint64`.
    fn next_u64(&mut self) -> u64;
}

const INIT_A: u32 = 0x43b0_d7e5;
const MULT_A: u32 = 0x931e_8875;
const INIT_B: u32 = 0x8b51_f9dd;
const MULT_B: u32 = 0x58f3_8ded;
const MIX_MULT_L: u32 = 0xca01_f9dd;
const MIX_MULT_R: u32 = 0x4973_f715;
const XSHIFT: u32 = 16;
const POOL: usize = 4;

/// numpy's `SeedSequence(entropy)` for a non-negative integer entropy (no spawn key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedSequence {
    pool: [u32; POOL],
}

impl SeedSequence {
    /// Mix `entropy` (split into little-endian u32 words) into the 4-word pool.
    pub fn new(entropy: u128) -> Self {
        let mut words = Vec::new();
        let mut e = entropy;
        if e == 0 {
            words.push(0);
        }
        while e > 0 {
            words.push(e as u32);
            e >>= 32;
        }
        let mut hc = INIT_A;
        let mut hashmix = |v: u32| {
            let mut v = v ^ hc;
            hc = hc.wrapping_mul(MULT_A);
            v = v.wrapping_mul(hc);
            v ^ (v >> XSHIFT)
        };
        let mix = |x: u32, y: u32| {
            let r = MIX_MULT_L
                .wrapping_mul(x)
                .wrapping_sub(MIX_MULT_R.wrapping_mul(y));
            r ^ (r >> XSHIFT)
        };
        let mut pool = [0u32; POOL];
        for (i, p) in pool.iter_mut().enumerate() {
            *p = hashmix(words.get(i).copied().unwrap_or(0));
        }
        for s in 0..POOL {
            for d in 0..POOL {
                if s != d {
                    let h = hashmix(pool[s]);
                    pool[d] = mix(pool[d], h);
                }
            }
        }
        for &w in words.iter().skip(POOL) {
            for p in pool.iter_mut() {
                let h = hashmix(w);
                *p = mix(*p, h);
            }
        }
        SeedSequence { pool }
    }

    /// The mixed entropy pool (4 u32 words).
    pub fn pool(&self) -> [u32; POOL] {
        self.pool
    }

    /// `generate_state(n_words, dtype=uint32)`.
    pub fn generate_state_u32(&self, n_words: usize) -> Vec<u32> {
        let mut hc = INIT_B;
        (0..n_words)
            .map(|i| {
                let mut v = self.pool[i % POOL] ^ hc;
                hc = hc.wrapping_mul(MULT_B);
                v = v.wrapping_mul(hc);
                v ^ (v >> XSHIFT)
            })
            .collect()
    }

    /// `generate_state(n_words, dtype=uint64)`: u32 pairs, low word first.
    pub fn generate_state_u64(&self, n_words: usize) -> Vec<u64> {
        let w = self.generate_state_u32(2 * n_words);
        w.chunks_exact(2)
            .map(|p| p[0] as u64 | ((p[1] as u64) << 32))
            .collect()
    }
}

/// numpy's `PCG64` bit generator as seeded by `default_rng(seed)`.
#[derive(Debug, Clone)]
pub struct Pcg64 {
    inner: rand_pcg::Lcg128Xsl64,
    buffered: Option<u32>,
    initstate: u128,
    initseq: u128,
}

impl Pcg64 {
    /// `numpy.random.PCG64(seed)` / `default_rng(seed)`.
    pub fn new(seed: u128) -> Self {
        let w = SeedSequence::new(seed).generate_state_u64(4);
        let initstate = ((w[0] as u128) << 64) | w[1] as u128;
        let initseq = ((w[2] as u128) << 64) | w[3] as u128;
        Pcg64 {
            inner: rand_pcg::Lcg128Xsl64::new(initstate, initseq),
            buffered: None,
            initstate,
            initseq,
        }
    }

    /// The seeding words `(initstate, initseq)` derived from the SeedSequence.
    pub fn init_words(&self) -> (u128, u128) {
        (self.initstate, self.initseq)
    }
}

impl BitGen for Pcg64 {
    fn next_u32(&mut self) -> u32 {
        if let Some(v) = self.buffered.take() {
            return v;
        }
        let n = self.inner.next_u64();
        self.buffered = Some((n >> 32) as u32);
        n as u32
    }

    fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }
}

/// numpy's legacy `RandomState(seed)` (MT19937, `init_genrand(seed)`), counting its draws.
#[derive(Debug, Clone)]
pub struct Mt19937 {
    inner: rand_mt::Mt,
    draws: u64,
}

impl Mt19937 {
    /// `numpy.random.RandomState(seed)` for `0 <= seed < 2^32`.
    pub fn new(seed: u32) -> Self {
        Mt19937 {
            inner: rand_mt::Mt::new(seed),
            draws: 0,
        }
    }

    /// How many 32-bit outputs have been drawn so far.
    pub fn draws(&self) -> u64 {
        self.draws
    }
}

impl BitGen for Mt19937 {
    fn next_u32(&mut self) -> u32 {
        self.draws += 1;
        self.inner.next_u32()
    }

    fn next_u64(&mut self) -> u64 {
        let hi = self.next_u32() as u64;
        let lo = self.next_u32() as u64;
        (hi << 32) | lo
    }
}

/// numpy's `random_interval(max)`: a uniform integer in `0..=max` by masked rejection.
pub fn random_interval<G: BitGen>(bg: &mut G, max: u64) -> u64 {
    if max == 0 {
        return 0;
    }
    let mut mask = max;
    for s in [1, 2, 4, 8, 16, 32] {
        mask |= mask >> s;
    }
    if max <= u32::MAX as u64 {
        loop {
            let v = (bg.next_u32() as u64) & mask;
            if v <= max {
                return v;
            }
        }
    }
    loop {
        let v = bg.next_u64() & mask;
        if v <= max {
            return v;
        }
    }
}

/// numpy's in-place `shuffle`: for i = n−1 down to 1, swap `items[i]` with
/// `items[random_interval(i)]`.
pub fn shuffle<G: BitGen, T>(bg: &mut G, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = random_interval(bg, i as u64) as usize;
        items.swap(i, j);
    }
}

/// `permutation(n)`: a shuffled `0..n`.
pub fn permutation<G: BitGen>(bg: &mut G, n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    shuffle(bg, &mut v);
    v
}

/// An invalid split request (what the Python libraries raise as `ValueError`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SplitError {
    /// One side of the split would be empty.
    #[error("with n_samples={n}, test_size={test_size} the resulting {side} set would be empty")]
    EmptySide {
        /// Number of rows.
        n: usize,
        /// The requested test fraction.
        test_size: f64,
        /// `train` or `test`.
        side: &'static str,
    },
    /// The test fraction is outside (0, 1).
    #[error("test_size={0} should be a float in the (0, 1) range")]
    BadTestSize(f64),
    /// A stratum has fewer than two members (sklearn's check).
    #[error(
        "the least populated class in y has only 1 member, which is too few; the minimum number of groups for any class cannot be less than 2"
    )]
    ClassTooSmall,
    /// sklearn: a side of the stratified split is smaller than the number of classes.
    #[error(
        "the {side}_size = {size} should be greater or equal to the number of classes = {classes}"
    )]
    FewerThanClasses {
        /// `train` or `test`.
        side: &'static str,
        /// That side's size.
        size: usize,
        /// The number of classes.
        classes: usize,
    },
    /// A pandas sample larger than the frame without replacement.
    #[error("cannot take a larger sample ({size}) than population ({n}) when replace=False")]
    SampleTooLarge {
        /// Requested sample size.
        size: usize,
        /// Rows available.
        n: usize,
    },
}

fn split_sizes(n: usize, test_size: f64) -> Result<(usize, usize), SplitError> {
    if !(test_size > 0.0 && test_size < 1.0) {
        return Err(SplitError::BadTestSize(test_size));
    }
    let n_test = (test_size * n as f64).ceil() as usize;
    let n_train = n - n_test.min(n);
    if n_train == 0 {
        return Err(SplitError::EmptySide {
            n,
            test_size,
            side: "train",
        });
    }
    if n_test == 0 {
        return Err(SplitError::EmptySide {
            n,
            test_size,
            side: "test",
        });
    }
    Ok((n_train, n_test))
}

/// Hugging Face `Dataset.train_test_split(test_size, seed)` (no stratification):
/// `n_test = ceil(test_size·n)` in f64, `perm = default_rng(seed).permutation(n)`; returns
/// `(train, test)` row ids, each in permutation order (`test = perm[..n_test]`).
pub fn hf_train_test_split(
    n: usize,
    test_size: f64,
    seed: u64,
) -> Result<(Vec<usize>, Vec<usize>), SplitError> {
    let (n_train, n_test) = split_sizes(n, test_size)?;
    let perm = permutation(&mut Pcg64::new(seed as u128), n);
    Ok((
        perm[n_test..n_test + n_train].to_vec(),
        perm[..n_test].to_vec(),
    ))
}

/// pandas `DataFrame.sample(n=size, random_state=seed)` (or `frac=1` with `size = n`): the
/// sampled *positions*, `RandomState(seed).permutation(n)[..size]` (the full permutation is
/// drawn).
pub fn pandas_sample(n: usize, size: usize, seed: u32) -> Result<Vec<usize>, SplitError> {
    if size > n {
        return Err(SplitError::SampleTooLarge { size, n });
    }
    let mut perm = permutation(&mut Mt19937::new(seed), n);
    perm.truncate(size);
    Ok(perm)
}

/// scikit-learn's `_approximate_mode(class_counts, n_draws, rng)`: per-class counts that sum
/// to `n_draws`, ties in the remainders broken by `rng` (drawing even when every tied class
/// is taken).
pub fn approximate_mode<G: BitGen>(
    class_counts: &[usize],
    n_draws: usize,
    rng: &mut G,
) -> Vec<usize> {
    let total: usize = class_counts.iter().sum();
    let continuous: Vec<f64> = class_counts
        .iter()
        .map(|&c| c as f64 / total as f64 * n_draws as f64)
        .collect();
    let mut floored: Vec<f64> = continuous.iter().map(|x| x.floor()).collect();
    // numpy: need = n_draws - floored.sum() (float64 sum, then int()).
    let fsum = numpy_sum(&floored);
    let mut need = (n_draws as f64 - fsum) as i64;
    if need > 0 {
        let remainder: Vec<f64> = continuous
            .iter()
            .zip(&floored)
            .map(|(c, f)| c - f)
            .collect();
        let mut values = remainder.clone();
        values.sort_by(|a, b| b.partial_cmp(a).unwrap_or(std::cmp::Ordering::Equal));
        values.dedup();
        for v in values {
            let inds: Vec<usize> = (0..remainder.len())
                .filter(|&i| remainder[i] == v)
                .collect();
            let add_now = (inds.len() as i64).min(need) as usize;
            let perm = permutation(rng, inds.len());
            for &k in &perm[..add_now] {
                floored[inds[k]] += 1.0;
            }
            need -= add_now as i64;
            if need == 0 {
                break;
            }
        }
    }
    floored.into_iter().map(|f| f as usize).collect()
}

/// numpy's pairwise float64 sum (one definition, in `routeval_core::py`).
pub use routeval_core::py::numpy_sum;

/// The result of [`stratified_train_test_split`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StratifiedSplit {
    /// Train positions, in returned row order.
    pub train: Vec<usize>,
    /// Test positions, in returned row order.
    pub test: Vec<usize>,
    /// The classes in sorted order.
    pub classes: Vec<String>,
    /// Train rows per class (sorted class order).
    pub n_train_per_class: Vec<usize>,
    /// Test rows per class (sorted class order).
    pub n_test_per_class: Vec<usize>,
}

/// scikit-learn `train_test_split(X, test_size, random_state=seed, stratify=y)`
/// (StratifiedShuffleSplit, one split), returning positions in sklearn's row order.
///
/// Classes are sorted by code point (numpy `unique` on strings). Errors as sklearn's
/// `ValueError`s: a class with one member, or a side smaller than the number of classes.
pub fn stratified_train_test_split<S: AsRef<str>>(
    y: &[S],
    test_size: f64,
    seed: u32,
) -> Result<StratifiedSplit, SplitError> {
    let n = y.len();
    let (n_train, n_test) = split_sizes(n, test_size)?;
    let mut classes: Vec<&str> = y.iter().map(|s| s.as_ref()).collect();
    classes.sort_unstable();
    classes.dedup();
    let k = classes.len();
    let mut class_indices: Vec<Vec<usize>> = vec![Vec::new(); k];
    for (p, v) in y.iter().enumerate() {
        let c = classes.binary_search(&v.as_ref()).unwrap_or(0);
        class_indices[c].push(p);
    }
    let counts: Vec<usize> = class_indices.iter().map(Vec::len).collect();
    if counts.iter().any(|&c| c < 2) {
        return Err(SplitError::ClassTooSmall);
    }
    if n_train < k {
        return Err(SplitError::FewerThanClasses {
            side: "train",
            size: n_train,
            classes: k,
        });
    }
    if n_test < k {
        return Err(SplitError::FewerThanClasses {
            side: "test",
            size: n_test,
            classes: k,
        });
    }
    let mut rng = Mt19937::new(seed);
    let n_i = approximate_mode(&counts, n_train, &mut rng);
    let remaining: Vec<usize> = counts.iter().zip(&n_i).map(|(c, a)| c - a).collect();
    let t_i = approximate_mode(&remaining, n_test, &mut rng);
    let mut train = Vec::with_capacity(n_train);
    let mut test = Vec::with_capacity(n_test);
    for c in 0..k {
        let perm = permutation(&mut rng, counts[c]);
        let picked: Vec<usize> = perm.iter().map(|&p| class_indices[c][p]).collect();
        train.extend_from_slice(&picked[..n_i[c]]);
        test.extend_from_slice(&picked[n_i[c]..n_i[c] + t_i[c]]);
    }
    shuffle(&mut rng, &mut train);
    shuffle(&mut rng, &mut test);
    Ok(StratifiedSplit {
        train,
        test,
        classes: classes.iter().map(|s| s.to_string()).collect(),
        n_train_per_class: n_i,
        n_test_per_class: t_i,
    })
}

/// scikit-learn `train_test_split` without `stratify` (ShuffleSplit): `perm =
/// RandomState(seed).permutation(n)`, test = `perm[..n_test]`, train = the next `n_train`.
pub fn plain_train_test_split(
    n: usize,
    test_size: f64,
    seed: u32,
) -> Result<(Vec<usize>, Vec<usize>), SplitError> {
    let (n_train, n_test) = split_sizes(n, test_size)?;
    let perm = permutation(&mut Mt19937::new(seed), n);
    Ok((
        perm[n_test..n_test + n_train].to_vec(),
        perm[..n_test].to_vec(),
    ))
}
