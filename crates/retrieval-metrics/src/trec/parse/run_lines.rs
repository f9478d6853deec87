//! The lines of a run chunk, scanned from bit masks computed 64 bytes at a time
//! ([`MaskedLines`]; the qrels reader, `qrels_chunk::for_each_qrel`, reads its common lines
//! through it too).
//!
//! [`RunLines`] yields the same lines as calling [`scan_run_line`] at each line start (tested
//! against it), faster on the common line. Bit masks of a segment of the text are computed
//! first, in one pass with no dependence on where lines end: which bytes are at most `0x20`,
//! which are `\n`, and which are at most `0x20` but not C whitespace. Then each line's fields
//! are read from the masks. Its end is the next `\n` bit. Fields start where a byte above
//! `0x20` follows a byte at most `0x20`, and end where the reverse happens. No per-byte loop:
//! the old scanner's loops ended on a different byte in every line, a mispredicted branch
//! each; the one test per field here (is there another field?) goes the same way on every
//! common line.
//!
//! A line takes this path when all of these hold:
//! - it ends with `\n` within the 64 bytes from its start, and the text holds two whole
//!   64-byte blocks of masks from its block on (so the last 64 to 127 bytes of a chunk, and a
//!   last line without `\n`, take the general path);
//! - its first byte is above `0x20` and is not `#` (so blank lines, comments and lines with
//!   leading whitespace take the general path);
//! - it has no control byte that is not whitespace (content for trec_eval);
//! - it has at least six fields, and a score that parses.
//!
//! Anything else goes to [`scan_run_line`], so its result and error are the general ones.
//! Scores of at most 8 bytes that are plain decimals are read by [`parse_short`] (when 8 bytes
//! from the score's start are in the text; else by [`parse_score`], with the same value), the
//! same Clinger division as [`parse_score`]'s fast path.
//!
//! The masks are computed with SSE2 (part of every x86-64 CPU) through `safe_arch`. On other
//! targets every line goes to [`scan_run_line`].

use super::{ScannedLine, parse_score, scan_run_line};

/// Blocks of 64 bytes whose masks are computed at once; one more is computed so that a line
/// starting in the last block can be read across its end.
const SEGMENT_BLOCKS: usize = 64;

/// A line read by [`MaskedLines::fields`]: the byte ranges of its first `K` fields, whether
/// it has more, and the start of the next line.
pub(crate) type MaskedLine<const K: usize> = ([(usize, usize); K], bool, usize);

/// Byte masks of a text, a segment at a time, and the fields of a line read from them: the
/// engine of [`RunLines`] and of the qrels reader.
pub(crate) struct MaskedLines<'a> {
    buf: &'a [u8],
    /// Offset of the segment's first block in `buf`.
    seg: usize,
    /// Blocks of the segment computed (0 to `SEGMENT_BLOCKS + 1`).
    blocks: usize,
    /// Per block, bit `i` for byte `i`: at most `0x20`.
    low: [u64; SEGMENT_BLOCKS + 1],
    /// `\n`.
    nl: [u64; SEGMENT_BLOCKS + 1],
    /// At most `0x20` and not C whitespace (` \t\n\v\f\r`).
    bad: [u64; SEGMENT_BLOCKS + 1],
}

impl<'a> MaskedLines<'a> {
    /// Masks over `buf` (lines end at `\n` or at the end of `buf`), none computed yet.
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        MaskedLines {
            buf,
            seg: 0,
            blocks: 0,
            low: [0; SEGMENT_BLOCKS + 1],
            nl: [0; SEGMENT_BLOCKS + 1],
            bad: [0; SEGMENT_BLOCKS + 1],
        }
    }

    /// Compute the masks of the segment starting at `at`.
    fn refill(&mut self, at: usize) {
        self.seg = at;
        let whole = self.buf.len().saturating_sub(at) / 64;
        self.blocks = whole.min(SEGMENT_BLOCKS + 1);
        for i in 0..self.blocks {
            let b = at + i * 64;
            let Some(Ok(bytes)) = self.buf.get(b..b + 64).map(<&[u8; 64]>::try_from) else {
                self.blocks = i;
                return;
            };
            let Some((low, nl, bad)) = block_masks(bytes) else {
                self.blocks = 0;
                return;
            };
            self.low[i] = low;
            self.nl[i] = nl;
            self.bad[i] = bad;
        }
    }

    /// The line starting at `s`, when the masks decide it: the byte ranges of its first `K`
    /// fields, whether it has more fields, and the start of the next line. `None` (the
    /// caller's general reader then takes the line) when:
    /// - the line does not end with `\n` within the 64 bytes from `s` (a last line without
    ///   `\n` included);
    /// - the text does not hold two whole 64-byte blocks from `s`'s block on (the end of the
    ///   text);
    /// - the line's first byte is at most `0x20` (blank, or leading whitespace) or is `#`;
    /// - the line holds a control byte that is not whitespace;
    /// - the line has fewer than `K` fields.
    ///
    /// Calls going forward through the text reuse the masks of the current segment; a call
    /// outside it computes the masks of a new segment starting at `s`.
    #[inline]
    pub(crate) fn fields<const K: usize>(&mut self, s: usize) -> Option<MaskedLine<K>> {
        if s < self.seg || (s - self.seg) / 64 + 1 >= self.blocks {
            self.refill(s);
        }
        let rel = s - self.seg;
        let i = rel / 64;
        if i + 1 >= self.blocks {
            return None;
        }
        let o = (rel % 64) as u32;
        // The 64 bits from `s` on (two blocks; `<< 1 << (63 - o)` is `<< (64 - o)` without
        // the overflowing shift at `o = 0`).
        let window = |m: &[u64; SEGMENT_BLOCKS + 1]| (m[i] >> o) | ((m[i + 1] << 1) << (63 - o));
        let nl = window(&self.nl);
        if nl == 0 {
            return None;
        }
        let low = window(&self.low);
        let bad = window(&self.bad);
        let e = nl.trailing_zeros();
        let line = (1u64 << e) - 1;
        if low & 1 != 0 || self.buf.get(s) == Some(&b'#') || bad & line != 0 {
            return None;
        }
        let mut starts = !low & ((low << 1) | 1) & line;
        let mut ends = low & !(low << 1) & (line | (1u64 << e));
        let mut f = [(0usize, 0usize); K];
        for field in f.iter_mut() {
            if starts == 0 {
                return None;
            }
            *field = (
                s + starts.trailing_zeros() as usize,
                s + ends.trailing_zeros() as usize,
            );
            starts &= starts - 1;
            ends &= ends - 1;
        }
        Some((f, starts != 0, s + e as usize + 1))
    }
}

/// The lines of a run chunk `buf[start..]` (the chunk's text ends where `buf` ends), in order:
/// `(line start, the line as [`scan_run_line`] reads it, next line start)`.
pub(crate) struct RunLines<'a> {
    masks: MaskedLines<'a>,
    pos: usize,
}

impl<'a> RunLines<'a> {
    /// The lines of `buf` from `start` (a line start).
    pub(crate) fn new(buf: &'a [u8], start: usize) -> Self {
        RunLines {
            masks: MaskedLines::new(buf),
            pos: start,
        }
    }

    /// The line at `s` from the masks, or `None` for [`scan_run_line`] to read it.
    #[inline]
    fn read_masked(&mut self, s: usize) -> Option<(ScannedLine<'a>, usize)> {
        let (f, _, next) = self.masks.fields::<6>(s)?;
        let buf = self.masks.buf;
        let field = |k: usize| buf.get(f[k].0..f[k].1);
        let (a, b) = f[4];
        let score = match buf.get(a..a + 8) {
            Some(w) if b - a <= 8 => {
                let w = u64::from_le_bytes(w.try_into().ok()?);
                parse_short(w, b - a).or_else(|| parse_score(field(4)?))?
            }
            _ => parse_score(field(4)?)?,
        };
        Some((
            ScannedLine::Record((field(0)?, field(2)?, score, field(5)?)),
            next,
        ))
    }
}

impl<'a> Iterator for RunLines<'a> {
    type Item = (usize, ScannedLine<'a>, usize);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let s = self.pos;
        if s >= self.masks.buf.len() {
            return None;
        }
        let (line, next) = match self.read_masked(s) {
            Some(read) => read,
            None => scan_run_line(self.masks.buf, s),
        };
        self.pos = next;
        Some((s, line, next))
    }
}

/// The three masks of one 64-byte block (see [`MaskedLines`]' fields), with SSE2.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn block_masks(bytes: &[u8; 64]) -> Option<(u64, u64, u64)> {
    use safe_arch::{
        bitandnot_m128i, bitor_m128i, cmp_eq_mask_i8_m128i, load_unaligned_m128i, max_u8_m128i,
        min_u8_m128i, move_mask_i8_m128i, set_splat_i8_m128i,
    };
    let space = set_splat_i8_m128i(0x20);
    let newline = set_splat_i8_m128i(b'\n' as i8);
    let tab = set_splat_i8_m128i(b'\t' as i8);
    let cr = set_splat_i8_m128i(b'\r' as i8);
    let (mut low, mut nl, mut bad) = (0u64, 0u64, 0u64);
    for (k, part) in bytes.chunks_exact(16).enumerate() {
        let v = load_unaligned_m128i(part.try_into().ok()?);
        // Unsigned compares through max/min: v <= 0x20 iff max(v, 0x20) == 0x20, and
        // 0x09 <= v <= 0x0d iff min(max(v, 0x09), 0x0d) == v.
        let at_most_space = cmp_eq_mask_i8_m128i(max_u8_m128i(v, space), space);
        let is_nl = cmp_eq_mask_i8_m128i(v, newline);
        let tab_to_cr = cmp_eq_mask_i8_m128i(min_u8_m128i(max_u8_m128i(v, tab), cr), v);
        let white = bitor_m128i(cmp_eq_mask_i8_m128i(v, space), tab_to_cr);
        let other = bitandnot_m128i(white, at_most_space);
        let bits = |m| u64::from(move_mask_i8_m128i(m) as u16) << (16 * k);
        low |= bits(at_most_space);
        nl |= bits(is_nl);
        bad |= bits(other);
    }
    Some((low, nl, bad))
}

/// Without SSE2 no masks: every line goes to [`scan_run_line`].
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline(always)]
fn block_masks(_bytes: &[u8; 64]) -> Option<(u64, u64, u64)> {
    None
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;
const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// Powers of ten up to the fraction digits a score of at most 8 bytes can have.
const POW10: [f64; 8] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7];

/// A score of `len` (1 to 8) bytes, read from the 8 bytes `w` that start with it
/// (little-endian): digits and at most one dot, at least one digit (`7`, `8.79`, `.5`, `5.`).
/// The value is [`parse_score`]'s: the integer of the digits (below 10^8) divided by a power
/// of ten, Clinger's exact case. `None` for anything else (a sign, an exponent, other bytes),
/// which [`parse_score`] then reads.
///
/// Word arithmetic, no branch per byte: a byte is a digit when its low 7 bits are in
/// `0x30..=0x39` and its high bit is clear (adding to the low 7 bits of a byte cannot carry
/// into the next); the dot is squeezed out by joining the bytes below it with those above it
/// shifted down; then the digits, left-aligned so that the bytes above the score's length
/// become leading zeros, are combined pairwise in three multiplications.
#[inline(always)]
pub(crate) fn parse_short(w: u64, len: usize) -> Option<f64> {
    if !(1..=8).contains(&len) {
        return None;
    }
    let mine = HIGH >> (8 * (8 - len));
    let low7 = w & LOW7;
    let ascii = !w & HIGH;
    let ge_0 = low7.wrapping_add(ONES * (0x80 - 0x30)) & HIGH;
    let le_9 = !low7.wrapping_add(ONES * (0x80 - 0x3a)) & HIGH;
    let digit = ge_0 & le_9 & ascii & mine;
    let t = w ^ (ONES * u64::from(b'.'));
    let dot = !((t & LOW7).wrapping_add(LOW7) | t) & HIGH & mine;
    if digit | dot != mine || dot & dot.wrapping_sub(1) != 0 || digit == 0 {
        return None;
    }
    let x = if len == 8 {
        w
    } else {
        w & ((1u64 << (8 * len)) - 1)
    };
    let (digits, n, frac) = if dot == 0 {
        (x, len, 0)
    } else {
        let p = (dot.trailing_zeros() / 8) as usize;
        let below = (1u64 << (8 * p)) - 1;
        ((x & below) | ((x >> 8) & !below), len - 1, len - 1 - p)
    };
    // `n` is at least 1 (a digit), so the shift is below 64.
    let v = (digits & (ONES * 0x0f)) << (8 * (8 - n));
    let v = (v.wrapping_mul(10) + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    let v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_ffff_0000_ffff;
    let mant = (v.wrapping_mul(10_000) + (v >> 32)) & 0xffff_ffff;
    Some(mant as f64 / POW10[frac])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`scan_run_line`] at each line start gives, in order.
    fn by_line(buf: &[u8]) -> Vec<(usize, String, usize)> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < buf.len() {
            let (line, next) = scan_run_line(buf, pos);
            out.push((pos, show(&line), next));
            pos = next;
        }
        out
    }

    fn show(line: &ScannedLine) -> String {
        match line {
            ScannedLine::Skip => "skip".into(),
            ScannedLine::Record((q, d, s, t)) => format!("{q:?} {d:?} {:x} {t:?}", s.to_bits()),
            ScannedLine::Bad(e) => format!("bad {e}"),
        }
    }

    fn check(buf: &[u8]) -> Result<(), proptest::test_runner::TestCaseError> {
        let got: Vec<_> = RunLines::new(buf, 0)
            .map(|(s, l, n)| (s, show(&l), n))
            .collect();
        proptest::prop_assert_eq!(got, by_line(buf));
        Ok(())
    }

    #[test]
    fn lines_through_the_masks_are_counted_on() {
        // The fast path reads this run (not only the fallback): 200 plain lines and one
        // line of each kind it hands over.
        let mut text = String::new();
        for i in 0..200 {
            text.push_str(&format!(
                "q{} Q0 d{} {} {}.{} run\n",
                i % 7,
                i,
                i,
                i % 10,
                i % 3
            ));
        }
        text.push_str("  q1 Q0 lead 1 2 t\n# comment\n\nq1 Q0 d 1 2\nq1 Q0 d 1 x t\n");
        text.push_str(&format!("q1 Q0 {} 1 2 t\n", "d".repeat(80)));
        text.push_str("q1 Q0 a\x01b 1 2 t\nq1\tQ0\td9\t1\t-2.5e3\tt\r\nq2 Q0 d 1 0.5 t x y\n");
        text.push_str(&"q3 Q0 d 1 1 t\n".repeat(10));
        check(text.as_bytes()).unwrap();
        let fast = RunLines::new(text.as_bytes(), 0)
            .filter(|&(s, _, _)| RunLines::new(text.as_bytes(), s).read_masked(s).is_some())
            .count();
        if cfg!(all(target_arch = "x86_64", target_feature = "sse2")) {
            assert!(fast >= 200, "{fast} lines read from the masks");
        }
    }

    #[test]
    fn short_scores_parse_as_parse_score_does() {
        for s in [
            "0", "7", "8.79", "8.2", ".5", "5.", "00000000", "99999999", "1234.567", "0.000001",
            "9999999.", ".9999999", "10.0", "3.14159",
        ] {
            let mut w = [b'x'; 8];
            w[..s.len()].copy_from_slice(s.as_bytes());
            let got = parse_short(u64::from_le_bytes(w), s.len());
            assert_eq!(
                got.map(f64::to_bits),
                parse_score(s.as_bytes()).map(f64::to_bits),
                "{s}"
            );
        }
        for s in [".", "-1", "+1", "1e5", "1.2.3", "1,5", "a", "1 2", "\u{b2}"] {
            let mut w = [b'0'; 8];
            w[..s.len()].copy_from_slice(s.as_bytes());
            assert_eq!(parse_short(u64::from_le_bytes(w), s.len()), None, "{s}");
        }
        assert_eq!(parse_short(0, 0), None);
        assert_eq!(parse_short(0, 9), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(2000))]

        /// Any 1-8 bytes (from an alphabet around the digits, or any byte) with anything
        /// after them: the same value as `parse_score`, or `None` where that refuses or the
        /// score is not a plain decimal.
        #[test]
        fn parse_short_agrees_with_parse_score(
            score in proptest::collection::vec(
                proptest::prop_oneof![
                    8 => proptest::sample::select(b"0123456789.".to_vec()),
                    1 => proptest::num::u8::ANY,
                ],
                1..=8,
            ),
            after in proptest::array::uniform8(proptest::num::u8::ANY),
        ) {
            let mut w = after;
            w[..score.len()].copy_from_slice(&score);
            let got = parse_short(u64::from_le_bytes(w), score.len());
            let plain = score.iter().filter(|&&b| b == b'.').count() <= 1
                && score.iter().all(|b| b.is_ascii_digit() || *b == b'.')
                && score.iter().any(u8::is_ascii_digit);
            if plain {
                proptest::prop_assert_eq!(
                    got.map(f64::to_bits),
                    parse_score(&score).map(f64::to_bits)
                );
            } else {
                proptest::prop_assert_eq!(got, None);
            }
        }

        /// Runs long enough for the masks (many lines): every kind of line the fast path
        /// takes or hands over, at every offset in the 64-byte blocks.
        #[test]
        fn run_lines_match_scan_run_line(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    6 => "q[0-9]{1,3} Q0 d[0-9a-z_]{1,14} [0-9]{1,3} [0-9]{0,4}\\.?[0-9]{0,6} t[a-z]{0,3}",
                    2 => "[ \t]{0,2}#?q[0-9\x01\u{e9}]{0,3}[ \t\r\x0b\x0c]{1,3}Q0[ \t]{1,2}d[0-9_#]{1,40}[ \t]{1,2}[0-9]{1,3}([ \t]{1,2}[-+]?[0-9.]{0,12}(e-?[0-9])?)?[ \t\x0b]{1,2}t[a-z\x01\x00]?([ \t]x)?[ \t\r]{0,2}",
                    1 => "[ \t#a-z0-9.\x01]{0,70}",
                ],
                1..120,
            ),
            tail in "[a-z0-9 .\n]{0,140}",
        ) {
            let text = format!("{}\n{tail}", lines.join("\n"));
            check(text.as_bytes())?;
            // From each of the first 48 line starts (as chunks other than the first begin,
            // each at another offset in the 64-byte blocks), and with the text cut at line
            // ends (as chunks end): the same lines.
            let buf = text.as_bytes();
            let all = by_line(buf);
            for (k, &(from, _, _)) in all.iter().enumerate().take(48) {
                let got: Vec<_> = RunLines::new(buf, from)
                    .map(|(s, l, n)| (s, show(&l), n))
                    .collect();
                proptest::prop_assert_eq!(&got[..], &all[k..]);
            }
            for &(_, _, end) in all.iter().step_by(5) {
                check(&buf[..end])?;
            }
        }
    }
}
