//! CPython's `random.Random` for integer seeds, bit for bit (`specs/crb.md` §5.3).
//!
//! The generator is MT19937 ([`rand_mt::Mt`]); this module ports the parts of CPython's
//! `random` that CommonRouterBench's sampler uses: `seed(int)` (key = 32-bit words of `|seed|`,
//! least significant first, then `init_by_array`), `getrandbits(k)`, `_randbelow(n)`
//! (`k = n.bit_length()`, rejection sampling), `randint(a, b)` and `shuffle(x)`.

use rand_mt::Mt;

/// A Python-compatible `random.Random(seed)`.
#[derive(Debug, Clone)]
pub struct PyRandom {
    mt: Mt,
}

impl PyRandom {
    /// `random.Random(seed)` for an integer seed (negative seeds equal their absolute value).
    pub fn new(seed: i128) -> Self {
        let mut x = seed.unsigned_abs();
        let mut key = Vec::new();
        loop {
            key.push((x & 0xFFFF_FFFF) as u32);
            x >>= 32;
            if x == 0 {
                break;
            }
        }
        PyRandom {
            mt: Mt::new_with_key(key),
        }
    }

    /// One raw 32-bit output (`genrand_uint32`).
    pub fn next_u32(&mut self) -> u32 {
        self.mt.next_u32()
    }

    /// `getrandbits(k)` for `k <= 64`: words from the least significant up, the last one
    /// shifted right by `32 - remaining bits`.
    pub fn getrandbits(&mut self, k: u32) -> u64 {
        assert!(k <= 64, "getrandbits is implemented up to 64 bits");
        if k == 0 {
            return 0;
        }
        if k <= 32 {
            return (self.next_u32() >> (32 - k)) as u64;
        }
        let lo = self.next_u32() as u64;
        let rest = k - 32;
        let hi = (self.next_u32() >> (32 - rest)) as u64;
        lo | (hi << 32)
    }

    /// `_randbelow(n)` for `n >= 1`: draw `getrandbits(n.bit_length())` until it is `< n`.
    pub fn randbelow(&mut self, n: u64) -> u64 {
        assert!(n >= 1, "randbelow needs n >= 1");
        let k = 64 - n.leading_zeros();
        loop {
            let r = self.getrandbits(k);
            if r < n {
                return r;
            }
        }
    }

    /// `randint(a, b)` = `a + _randbelow(b - a + 1)` (requires `a <= b`).
    pub fn randint(&mut self, a: i64, b: i64) -> i64 {
        a + self.randbelow((b - a + 1) as u64) as i64
    }

    /// `shuffle(x)`: for `i` from `len-1` down to 1, swap `x[i]` with `x[_randbelow(i+1)]`.
    pub fn shuffle<T>(&mut self, x: &mut [T]) {
        for i in (1..x.len()).rev() {
            let j = self.randbelow(i as u64 + 1) as usize;
            x.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_random_42() {
        // Python: random.Random(42).getrandbits(32) == 2746317213.
        let mut r = PyRandom::new(42);
        assert_eq!(r.getrandbits(32), 2746317213);
        let mut r = PyRandom::new(-42);
        assert_eq!(r.getrandbits(32), 2746317213);
    }
}
