//! Readers for TREC qrels (`qid iter docno rel`) and runs (`qid Q0 docno rank score tag`).
//!
//! Rules follow trec_eval 10.0-rc3's `get_qrels.c` and `get_trec_results.c`: fields are separated
//! by any run of ASCII whitespace (space, tab, `\r`, `\v`, `\f`), so CRLF files and trailing
//! blanks are fine; lines whose first non-blank character is `#` are comments; blank lines are
//! skipped; a qrels line has exactly 4 fields; a run line has at least 6 (extra fields are
//! ignored, as is the rank column). Problems are reported as [`Error::Input`] naming the source
//! and the 1-based line.
//!
//! Parsers take bytes or readers, never paths. Identifiers (qid, docno, tag) are kept as raw
//! bytes: trec_eval compares them with `strcmp`, i.e. by unsigned byte order.

use routeval_core::{Error, Location};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{BufRead, Read};

mod qrels_chunk;
mod run_lines;
use qrels_chunk::{QrelChunk, QrelRun, RunSource, for_each_qrel, parse_qrels_chunk};
pub(crate) use run_lines::RunLines;

/// The largest relevance value accepted in qrels (trec_eval documents < 128; per-level counts
/// are kept in an array, so the value bounds memory).
pub const MAX_REL: i32 = 65_535;

/// A small, fast, non-cryptographic hasher for short identifiers (FNV-1a over 8-byte words).
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0 ^ 0xcbf2_9ce4_8422_2325;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            h = (h ^ w).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(29);
        }
        for &b in chunks.remainder() {
            h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = h ^ (h >> 32);
    }
}

/// `HashMap` with [`IdHasher`].
pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

const SPACE: [bool; 256] = {
    let mut t = [false; 256];
    t[b' ' as usize] = true;
    t[b'\t' as usize] = true;
    t[b'\n' as usize] = true;
    t[b'\r' as usize] = true;
    t[0x0b] = true;
    t[0x0c] = true;
    t
};

/// C `isspace` in the "C" locale.
#[inline(always)]
pub(crate) fn is_space(b: u8) -> bool {
    SPACE[b as usize]
}

/// A fast 64-bit hash of an identifier (FNV-style over 8-byte words, then mixed). The 1-7
/// bytes after the last whole word are read with two overlapping loads instead of a byte loop;
/// the length is mixed in first, so the overlap still tells identifiers apart.
#[inline]
pub(crate) fn hash_id(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15 ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h ^ w).wrapping_mul(0xff51_afd7_ed55_8ccd).rotate_left(31);
    }
    let rem = chunks.remainder();
    let r = rem.len();
    let last = if r >= 4 {
        let lo = u32::from_le_bytes(rem[..4].try_into().expect("4 bytes"));
        let hi = u32::from_le_bytes(rem[r - 4..].try_into().expect("4 bytes"));
        u64::from(lo) | (u64::from(hi) << 32)
    } else if r > 0 {
        u64::from(rem[0]) | (u64::from(rem[r / 2]) << 8) | (u64::from(rem[r - 1]) << 16)
    } else {
        0
    };
    h = (h ^ last).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 29)
}

/// Byte equality of two identifiers, inlined for the short ones qids and docnos usually are
/// (at most 16 bytes: two overlapping word compares) instead of a call to `memcmp`.
#[inline(always)]
pub(crate) fn same_id(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let w8 = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
    let w4 = |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().expect("4 bytes"));
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
        8..=16 => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8),
        _ => a == b,
    }
}

/// Split `line` into whitespace-separated fields, filling `out`; returns how many fields the
/// line has (may exceed `out.len()`; only the first `out.len()` are stored).
#[inline]
pub(crate) fn split_fields<'a>(line: &'a [u8], out: &mut [&'a [u8]]) -> usize {
    let mut n = 0;
    let mut i = 0;
    let len = line.len();
    while i < len {
        while i < len && is_space(line[i]) {
            i += 1;
        }
        if i >= len {
            break;
        }
        let start = i;
        i = field_end(line, i);
        if n < out.len() {
            out[n] = &line[start..i];
        }
        n += 1;
        if n > out.len() {
            // Caller only needs to know there are more; count one extra and stop.
            return n;
        }
    }
    n
}

/// The end of the field starting at `i`: the position of the first C `isspace` byte at or
/// after `i`, or `line.len()`. Eight bytes at a time: every `isspace` byte is below `0x21`, and
/// the lowest byte flagged by the word test below is exactly the first byte below `0x21`
/// (higher flags can be borrow artefacts), so each candidate is checked with [`is_space`].
#[inline(always)]
pub(crate) fn field_end(line: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x2121_2121_2121_2121;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(word) = line.get(i..i + 8) {
        let w = u64::from_le_bytes([
            word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7],
        ]);
        let m = w.wrapping_sub(ONES) & !w & HIGH;
        if m == 0 {
            i += 8;
            continue;
        }
        let j = i + (m.trailing_zeros() / 8) as usize;
        if is_space(line[j]) {
            return j;
        }
        i = j + 1;
    }
    while i < line.len() && !is_space(line[i]) {
        i += 1;
    }
    i
}

/// Whether a line is blank or a comment (first non-blank byte `#`).
#[inline]
pub(crate) fn is_skippable(line: &[u8]) -> bool {
    match line.iter().position(|&b| !is_space(b)) {
        None => true,
        Some(i) => line[i] == b'#',
    }
}

const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The UTF-8 byte order mark some editors put at the start of a file.
const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// `buf` without a leading UTF-8 byte order mark. trec_eval would read the mark as part of the
/// first query id and silently drop that line's query; routeval ignores it instead.
pub(crate) fn strip_bom(buf: &[u8]) -> &[u8] {
    buf.strip_prefix(UTF8_BOM).unwrap_or(buf)
}

/// Parse a run score as C's `strtod` would for a complete number (correctly rounded), refusing
/// anything that is not entirely a number and refusing NaN.
///
/// Plain decimals of at most 16 bytes (so at most 15 digits) take an exact fast path (Clinger:
/// an integer below 2^53 divided by an exact power of ten is correctly rounded); everything
/// else (exponents, `inf`, long mantissas) goes through `fast_float2`, whose grammar and
/// correctly rounded results are `str::parse::<f64>`'s (checked in the tests).
#[inline]
pub fn parse_score(s: &[u8]) -> Option<f64> {
    // Short plain decimals (at most 15 digits, so the integer is below 2^53): Clinger's exact
    // fast path.
    if s.len() <= 16 {
        let (neg, digits) = match s.first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let mut mant: u64 = 0;
        let mut ndig = 0usize;
        let mut frac = 0usize;
        let mut seen_dot = false;
        let mut ok = !digits.is_empty() && digits != b".";
        for &b in digits {
            match b {
                b'0'..=b'9' => {
                    mant = mant * 10 + (b - b'0') as u64;
                    ndig += 1;
                    if seen_dot {
                        frac += 1;
                    }
                }
                b'.' if !seen_dot => seen_dot = true,
                _ => {
                    ok = false;
                    break;
                }
            }
        }
        if ok && ndig <= 15 {
            let v = mant as f64 / POW10[frac];
            return Some(if neg { -v } else { v });
        }
    }
    // Everything else (long mantissas such as Python's 17-digit `repr`, exponents, `inf`):
    // fast_float2, the Eisel-Lemire conversion `str::parse` also uses, with the same grammar,
    // read from the bytes.
    let v: f64 = fast_float2::parse(s).ok()?;
    (!v.is_nan()).then_some(v)
}

/// Parse an integer relevance value; `1.0`-style values with a zero fraction are accepted.
fn parse_rel(s: &[u8]) -> Result<i32, String> {
    if !s.is_empty() && s.len() <= 5 && s.iter().all(u8::is_ascii_digit) {
        let v = s.iter().fold(0i32, |a, &b| a * 10 + (b - b'0') as i32);
        if v <= MAX_REL {
            return Ok(v);
        }
    }
    let text = String::from_utf8_lossy(s);
    if let Ok(v) = text.parse::<i64>() {
        return check_rel(v, &text);
    }
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v.fract() == 0.0 => check_rel(v as i64, &text),
        Ok(_) => Err(format!("relevance '{text}' is not an integer")),
        Err(_) => Err(format!("non-numeric relevance '{text}'")),
    }
}

fn check_rel(v: i64, text: &str) -> Result<i32, String> {
    if v > MAX_REL as i64 || v < i32::MIN as i64 {
        Err(format!("relevance '{text}' out of range (max {MAX_REL})"))
    } else {
        Ok(v as i32)
    }
}

/// The judgments of one query: docnos sorted by byte order with their relevance values.
///
/// Four allocations per query (qid, docno bytes, judgments, level counts): a qrels file of
/// 100,000 queries is that many small structures, so their number and size are the memory of
/// [`Qrels`].
#[derive(Debug, Clone, Default)]
pub struct QueryQrels {
    qid: Box<[u8]>,
    /// The docnos, concatenated in order.
    arena: Box<[u8]>,
    /// One entry per docno, same order.
    judged: Box<[Judged]>,
    /// Judged documents per relevance level `0..=max` (trec_eval's `rel_levels`).
    rel_levels: Vec<u64>,
    /// First duplicated docno and the line of its second occurrence, if any.
    duplicate: Option<Box<(Box<[u8]>, u64)>>,
}

/// One judgment of a [`QueryQrels`]: where its docno ends in the arena, and its relevance
/// value. Eight bytes: the docno's [`hash_id`] is computed when a query is evaluated (a few
/// nanoseconds for a short docno) rather than stored, which made the qrels of the 100k
/// benchmark (1.6M judgments) 13 MB smaller, all of it fresh memory the kernel zeroes.
#[derive(Debug, Clone, Copy, Default)]
struct Judged {
    end: u32,
    rel: i32,
}

impl QueryQrels {
    /// The query id (raw bytes).
    pub fn qid(&self) -> &[u8] {
        &self.qid
    }

    /// Number of judgment lines.
    pub fn len(&self) -> usize {
        self.judged.len()
    }

    /// Whether the query has no judgments.
    pub fn is_empty(&self) -> bool {
        self.judged.is_empty()
    }

    /// The `i`-th judged docno in byte order.
    pub fn docno(&self, i: usize) -> &[u8] {
        let start = if i == 0 {
            0
        } else {
            self.judged[i - 1].end as usize
        };
        &self.arena[start..self.judged[i].end as usize]
    }

    /// Load the last judgment and the last docno byte (the values unused), so that their
    /// cache lines are requested ahead of the evaluation that reads them.
    #[inline]
    pub(crate) fn touch(&self) {
        std::hint::black_box((
            self.judged.last().map(|j| j.end),
            self.arena.last().copied(),
        ));
    }

    /// [`hash_id`] of the `i`-th docno.
    #[inline]
    pub(crate) fn docno_hash(&self, i: usize) -> u64 {
        hash_id(self.docno(i))
    }

    /// The `i`-th relevance value (same order as [`QueryQrels::docno`]).
    pub fn rel_at(&self, i: usize) -> i32 {
        self.judged[i].rel
    }

    /// The relevance of `docno`, or `None` when it was not judged (not in the pool).
    pub fn rel(&self, docno: &[u8]) -> Option<i32> {
        let (mut lo, mut hi) = (0usize, self.judged.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.docno(mid).cmp(docno) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(self.judged[mid].rel),
            }
        }
        None
    }

    /// Judged documents per relevance level `0..=max_rel` (negative levels are not counted).
    pub fn rel_levels(&self) -> &[u64] {
        &self.rel_levels
    }

    /// trec_eval's `num_rel_levels`: one more than the highest level with a judgment.
    pub fn num_rel_levels(&self) -> usize {
        self.rel_levels
            .iter()
            .rposition(|&n| n > 0)
            .map_or(0, |i| i + 1)
    }

    /// Relevant documents at `relevance_level` (`-l`): judged with rel >= level.
    pub fn num_rel(&self, relevance_level: i64) -> u64 {
        self.rel_levels
            .iter()
            .enumerate()
            .filter(|(i, _)| *i as i64 >= relevance_level)
            .map(|(_, n)| n)
            .sum()
    }

    /// The first duplicated docno and the line of its second occurrence: trec_eval refuses
    /// such a query when it is evaluated.
    pub fn duplicate(&self) -> Option<(&[u8], u64)> {
        self.duplicate.as_deref().map(|(d, l)| (&d[..], *l))
    }

    fn build<'b>(
        qid: &[u8],
        recs: &mut [Judgment<'b>],
        scratch: &mut SortScratch<'b>,
    ) -> QueryQrels {
        sort_docnos(recs, scratch);
        let mut arena = Vec::with_capacity(recs.iter().map(|r| r.0.len()).sum());
        let mut judged = Vec::with_capacity(recs.len());
        let mut rel_levels: Vec<u64> = Vec::new();
        let mut duplicate = None;
        let mut prev: Option<&[u8]> = None;
        for &(docno, rel, line) in recs.iter() {
            if prev.is_some_and(|p| same_id(p, docno)) && duplicate.is_none() {
                duplicate = Some(Box::new((docno.into(), line)));
            }
            prev = Some(docno);
            arena.extend_from_slice(docno);
            judged.push(Judged {
                end: arena.len() as u32,
                rel,
            });
            if rel >= 0 {
                let r = rel as usize;
                if rel_levels.len() <= r {
                    rel_levels.resize(r + 1, 0);
                }
                rel_levels[r] += 1;
            }
        }
        QueryQrels {
            qid: qid.into(),
            arena: arena.into_boxed_slice(),
            judged: judged.into_boxed_slice(),
            rel_levels,
            duplicate,
        }
    }
}

/// `(docno, relevance, line)` of one judgment.
type Judgment<'b> = (&'b [u8], i32, u64);

/// Buffers reused for every query one rayon job builds (the judgments gathered, the sort
/// keys, the sorted copy): a few allocations per job (`map_init` makes one per split of the
/// work) instead of three per query.
#[derive(Default)]
struct SortScratch<'b> {
    judgments: Vec<Judgment<'b>>,
    keyed: Vec<u128>,
    sorted: Vec<Judgment<'b>>,
}

/// Sort judgments by docno (byte order), then line: docnos of one query often share a long
/// prefix (`doc123_7`, `doc123_42`), so the bytes after the common prefix are compared as one
/// big-endian word first (zero-padded, which keeps byte order), whole docnos only on a tie.
fn sort_docnos<'b>(recs: &mut [Judgment<'b>], scratch: &mut SortScratch<'b>) {
    let Some(first) = recs.first().map(|r| r.0) else {
        return;
    };
    let common = recs.iter().fold(first.len(), |n, r| {
        n.min(r.0.iter().zip(first).take_while(|(a, b)| a == b).count())
    });
    let word = |d: &[u8]| be_prefix(&d[common..]);
    // (word << 64 | file position): one integer sort; equal words (a longer shared prefix,
    // or the same docno) are then ordered by the whole docno, file order kept.
    let keyed = &mut scratch.keyed;
    keyed.clear();
    keyed.extend(
        recs.iter()
            .enumerate()
            .map(|(i, r)| ((word(r.0) as u128) << 64) | i as u128),
    );
    // Already in order when the words increase strictly and hold every docno whole.
    let longest = recs.iter().map(|r| r.0.len()).max().unwrap_or(0);
    if longest <= common + 8 && keyed.windows(2).all(|w| w[0] >> 64 < w[1] >> 64) {
        return;
    }
    sort_keyed(keyed, |i| recs[i].0);
    let sorted = &mut scratch.sorted;
    sorted.clear();
    sorted.extend(keyed.iter().map(|k| recs[*k as u64 as usize]));
    recs.copy_from_slice(sorted);
}

/// The first 8 bytes of `bytes` as a big-endian word, zero-padded: comparing words is byte
/// order as far as 8 bytes tell. Read with loads of the slice itself (two overlapping 4-byte
/// loads for 4 to 7 bytes, three byte loads below 4), not through a copy into a zeroed stack
/// array: the wide load of that array waited on the narrow stores before it (a
/// store-forwarding stall, a fifth of `QueryQrels::build`'s samples).
#[inline]
fn be_prefix(bytes: &[u8]) -> u64 {
    let k = bytes.len();
    let be4 = |at: usize| {
        u64::from(u32::from_be_bytes([
            bytes[at],
            bytes[at + 1],
            bytes[at + 2],
            bytes[at + 3],
        ]))
    };
    match k {
        0 => 0,
        1..=3 => {
            let at = |i: usize| u64::from(bytes[i]) << (56 - 8 * i);
            at(0) | at(k / 2) | at(k - 1)
        }
        4..=7 => (be4(0) << 32) | (be4(k - 4) << (8 * (8 - k))),
        _ => (be4(0) << 32) | be4(4),
    }
}

/// Sort `(word << 64 | index)` keys: by word, then, where words agree, by `id(index)` in byte
/// order, then by index (file order). The word is a big-endian prefix of the id (or of the id
/// after a shared prefix), so this is byte order of the ids with ties in file order, and
/// whole ids are compared only where the words cannot tell.
fn sort_keyed<'b>(keyed: &mut [u128], id: impl Fn(usize) -> &'b [u8]) {
    keyed.sort_unstable();
    let mut i = 0;
    while i < keyed.len() {
        let mut j = i + 1;
        while j < keyed.len() && keyed[j] >> 64 == keyed[i] >> 64 {
            j += 1;
        }
        if j - i > 1 {
            // Stable: equal ids keep index order (ascending here).
            keyed[i..j].sort_by(|a, b| id(*a as u64 as usize).cmp(id(*b as u64 as usize)));
        }
        i = j;
    }
}

/// Split `buf` at line starts into about `n` chunks of at least `min` bytes; returns the
/// boundaries (first 0, last `buf.len()`).
pub(crate) fn line_chunks(buf: &[u8], n: usize, min: usize) -> Vec<usize> {
    let n = (buf.len() / min.max(1)).clamp(1, n.max(1));
    let mut bounds = vec![0usize];
    for k in 1..n {
        let approx = buf.len() * k / n;
        let b = match memchr::memchr(b'\n', &buf[approx..]) {
            Some(i) => approx + i + 1,
            None => buf.len(),
        };
        if b > *bounds.last().unwrap_or(&0) && b < buf.len() {
            bounds.push(b);
        }
    }
    bounds.push(buf.len());
    bounds
}

/// All relevance judgments, queries sorted by qid in byte order (trec_eval's evaluation order).
#[derive(Debug, Clone, Default)]
pub struct Qrels {
    queries: Vec<QueryQrels>,
    /// Positions in `queries`, hashed by their qid's [`hash_id`] (no second copy of the qids).
    index: hashbrown::HashTable<usize>,
}

impl Qrels {
    /// Read qrels from a reader (the whole input is read, then parsed).
    ///
    /// `source` names the input in errors (a path, or `<stdin>`).
    pub fn from_reader<R: Read>(mut reader: R, source: &str) -> Result<Qrels, Error> {
        let mut buf = Vec::new();
        reader
            .read_to_end(&mut buf)
            .map_err(|e| Error::io(Location::new(source), e))?;
        Qrels::from_bytes(&buf, source)
    }

    /// Parse qrels text. Lines are `qid iter docno rel`; `rel` is an integer (negative means
    /// "in the pool but unjudged", trec_eval's -1).
    ///
    /// Errors: a line with fewer or more than 4 fields, a non-integer relevance, a relevance
    /// above [`MAX_REL`], or no judgment at all. Duplicate (qid, docno) pairs are recorded, not
    /// refused here: trec_eval refuses them only for queries it evaluates.
    pub fn from_bytes(buf: &[u8], source: &str) -> Result<Qrels, Error> {
        use rayon::prelude::*;
        let buf = strip_bom(buf);
        // Parse chunks of lines in parallel (64 KiB and up: the queries are built in this pass,
        // so a small file is split too); line numbers are fixed up per chunk afterwards.
        let bounds = line_chunks(buf, rayon::current_num_threads().max(1) * 4, 64 << 10);
        // One rayon job per chunk (`with_max_len(1)`), so that no thread is left reading a
        // range of chunks alone at the end (rayon's default splitting).
        let parsed: Vec<(QrelChunk, u64, Option<Error>)> = bounds
            .par_windows(2)
            .with_max_len(1)
            .map(|w| parse_qrels_chunk(&buf[w[0]..w[1]], source))
            .collect();
        let mut chunks: Vec<QrelChunk> = Vec::with_capacity(parsed.len());
        let mut base = 0u64;
        for (mut chunk, lines, err) in parsed {
            if let Some(e) = err {
                return Err(match e {
                    Error::Input { at, problem } => Error::input(
                        Location::at_line(at.source, at.line.unwrap_or(0) + base),
                        problem,
                    ),
                    other => other,
                });
            }
            chunk.base = base;
            chunks.push(chunk);
            base += lines;
        }
        if chunks.iter().all(|c| c.runs.is_empty()) {
            return Err(Error::input(
                Location::at_line(source, base.max(1)),
                "empty qrels file (no judgment lines)",
            ));
        }
        Ok(Qrels::group(chunks))
    }

    /// Group records by qid: queries in qid byte order, each query's records in file order.
    /// `chunks` are consecutive pieces of the file in order, their records already cut into
    /// runs of one qid; only the runs are sorted (stably, so a query split across the file
    /// keeps file order): on one integer key, the qid's first 8 bytes (big-endian,
    /// zero-padded: byte order) above the run's file position, then runs whose keys agree
    /// are compared whole. The queries are then built in parallel.
    fn group(mut chunks: Vec<QrelChunk<'_>>) -> Qrels {
        use rayon::prelude::*;
        // Each run's qid, chunk and position, in file order (its query stays in its chunk).
        let mut runs: Vec<(&[u8], usize, usize)> =
            Vec::with_capacity(chunks.iter().map(|c| c.runs.len()).sum());
        for (c, ch) in chunks.iter_mut().enumerate() {
            let base = ch.base;
            for (r, run) in ch.runs.iter_mut().enumerate() {
                if let (Some(q), RunSource::Text { .. }) = (run.built.as_mut(), &run.source)
                    && let Some(d) = q.duplicate.as_mut()
                {
                    d.1 += base;
                }
                runs.push((run.qid, c, r));
            }
        }
        let mut order: Vec<u128> = runs
            .iter()
            .enumerate()
            .map(|(i, r)| (u128::from(be_prefix(r.0)) << 64) | i as u128)
            .collect();
        sort_keyed(&mut order, |i| runs[i].0);
        // The run an `order` key stands for (its low 64 bits are the run's index).
        let run = |o: u128| runs[o as u64 as usize];
        let mut groups: Vec<std::ops::Range<usize>> = Vec::with_capacity(runs.len());
        let mut g = 0;
        for i in 1..=order.len() {
            // Different prefix words are different qids: the qids themselves (scattered over
            // the input, a cache miss each) are read only where the words agree.
            if i == order.len()
                || order[i] >> 64 != order[g] >> 64
                || !same_id(run(order[i]).0, run(order[g]).0)
            {
                groups.push(g..i);
                g = i;
            }
        }
        // A qid read in one long run keeps the query built from it; a qid with several runs,
        // or one short one, is built from all its judgments in file order (the runs are
        // sorted stably).
        let mut queries: Vec<Option<QueryQrels>> = groups
            .iter()
            .map(|g| {
                if g.len() == 1 {
                    let (_, c, r) = run(order[g.start]);
                    chunks[c].runs[r].built.take().map(|q| *q)
                } else {
                    None
                }
            })
            .collect();
        let todo: Vec<usize> = (0..groups.len())
            .filter(|&k| queries[k].is_none())
            .collect();
        let chunks = &chunks;
        let rebuilt: Vec<(usize, QueryQrels)> = todo
            .par_iter()
            .map_init(SortScratch::default, |scratch, &k| {
                let g = &groups[k];
                let mut js = std::mem::take(&mut scratch.judgments);
                js.clear();
                let mut given = false;
                for &o in &order[g.clone()] {
                    let (_, c, r) = run(o);
                    let ch = &chunks[c];
                    match &ch.runs[r].source {
                        RunSource::Text { bytes, line_before } => {
                            // Read before without error: the walk cannot fail.
                            let _ = for_each_qrel(
                                &ch.buf[bytes.clone()],
                                line_before + ch.base,
                                |line, _, _, docno, rel| js.push((docno, rel, line)),
                            );
                        }
                        &RunSource::Line((docno, rel, line)) => {
                            js.push((docno, rel, line + ch.base));
                        }
                        RunSource::Judgments(j) => {
                            given = true;
                            js.extend_from_slice(j);
                        }
                    }
                }
                // Judgments given in code were kept sorted by docno: file order is line order.
                if given {
                    js.sort_unstable_by_key(|j| j.2);
                }
                let qid = run(order[g.start]).0;
                let q = QueryQrels::build(qid, &mut js, scratch);
                scratch.judgments = js;
                (k, q)
            })
            .collect();
        for (k, q) in rebuilt {
            queries[k] = Some(q);
        }
        // Every slot is filled above (a group is either taken or rebuilt); mapped in place (an
        // `Option<QueryQrels>` is a `QueryQrels` in size), not collected into a second vector.
        let queries: Vec<QueryQrels> = queries.into_iter().map(Option::unwrap_or_default).collect();
        let mut index = hashbrown::HashTable::with_capacity(queries.len());
        for (i, q) in queries.iter().enumerate() {
            // The qids are distinct (grouped above).
            index.insert_unique(hash_id(&q.qid), i, |&j| hash_id(&queries[j].qid));
        }
        Qrels { queries, index }
    }

    /// Build qrels in code from `(qid, [(docno, rel)])` groups (pytrec_eval's
    /// `{qid: {docno: rel}}`), as if each group were read as qrels lines in that order (line
    /// numbers count from 1 across all groups). Groups with no judgment are left out, as
    /// pytrec_eval leaves them out. Groups repeating a qid are joined; a docno repeated within
    /// a query is recorded as a duplicate ([`QueryQrels::duplicate`]), like the text reader.
    /// Relevance values above [`MAX_REL`] are refused.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a relevance value out of range.
    pub fn from_judgments<'a, G, J>(groups: G) -> Result<Qrels, Error>
    where
        G: IntoIterator<Item = (&'a [u8], J)>,
        J: IntoIterator<Item = (&'a [u8], i64)>,
    {
        use rayon::prelude::*;
        let mut read: Vec<(&'a [u8], Vec<Judgment<'a>>)> = Vec::new();
        let mut line = 0u64;
        for (qid, judgments) in groups {
            let mut js: Vec<Judgment<'a>> = Vec::new();
            for (docno, rel) in judgments {
                line += 1;
                // The text is only needed for the message: format it only when out of range.
                let rel = i32::try_from(rel)
                    .ok()
                    .filter(|&r| r <= MAX_REL)
                    .map_or_else(|| check_rel(rel, &rel.to_string()), Ok)
                    .map_err(|p| {
                        Error::Invalid(format!(
                            "query '{}', document '{}': {p}",
                            String::from_utf8_lossy(qid),
                            String::from_utf8_lossy(docno)
                        ))
                    })?;
                js.push((docno, rel, line));
            }
            if !js.is_empty() {
                read.push((qid, js));
            }
        }
        // The groups are read in order (the iterator may be a caller's, such as a Python
        // dict's), then their queries are built in parallel. Each run keeps its judgments
        // (sorted by the build; their lines give file order back) for joining with other
        // runs of its qid.
        let runs = read
            .into_par_iter()
            .map_init(SortScratch::default, |scratch, (qid, mut js)| {
                let built = Box::new(QueryQrels::build(qid, &mut js, scratch));
                QrelRun {
                    qid,
                    built: Some(built),
                    source: RunSource::Judgments(js),
                }
            })
            .collect();
        let chunk = QrelChunk {
            runs,
            ..QrelChunk::default()
        };
        Ok(Qrels::group(vec![chunk]))
    }

    /// The queries, sorted by qid (byte order).
    pub fn queries(&self) -> &[QueryQrels] {
        &self.queries
    }

    /// The position of `qid` in [`Qrels::queries`].
    pub fn position(&self, qid: &[u8]) -> Option<usize> {
        self.index
            .find(hash_id(qid), |&i| same_id(&self.queries[i].qid, qid))
            .copied()
    }

    /// The judgments of `qid`.
    pub fn get(&self, qid: &[u8]) -> Option<&QueryQrels> {
        self.position(qid).map(|i| &self.queries[i])
    }

    /// Number of queries.
    pub fn len(&self) -> usize {
        self.queries.len()
    }

    /// Whether there are no queries.
    pub fn is_empty(&self) -> bool {
        self.queries.is_empty()
    }
}

/// One line of a run file, borrowed from the reader's buffer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunRecord<'a> {
    /// Query id.
    pub qid: &'a [u8],
    /// Document id.
    pub docno: &'a [u8],
    /// Retrieval score (higher first); never NaN.
    pub score: f64,
    /// Run tag (6th column).
    pub tag: &'a [u8],
    /// 1-based line number.
    pub line: u64,
}

/// `(qid, docno, score, tag)` of a run line.
pub(crate) type RunFields<'a> = (&'a [u8], &'a [u8], f64, &'a [u8]);

/// Parse one run line (already known not to be blank or a comment).
#[inline]
pub(crate) fn parse_run_line(line: &[u8]) -> Result<RunFields<'_>, String> {
    // Hot path: six whitespace-separated fields scanned in one pass.
    let mut f: [&[u8]; 6] = [&[]; 6];
    let len = line.len();
    let mut i = 0usize;
    let mut n = 0usize;
    while n < 6 {
        while i < len && is_space(line[i]) {
            i += 1;
        }
        if i >= len {
            break;
        }
        let start = i;
        i = field_end(line, i);
        f[n] = &line[start..i];
        n += 1;
    }
    if n < 6 {
        let what = ["qid", "iter", "docno", "rank", "score", "tag"][n];
        return Err(format!(
            "missing column {} ({what}); run lines are 'qid Q0 docno rank score tag'",
            n + 1
        ));
    }
    let score = parse_score(f[4]).ok_or_else(|| {
        let s = String::from_utf8_lossy(f[4]);
        if s.eq_ignore_ascii_case("nan")
            || s.eq_ignore_ascii_case("-nan")
            || s.eq_ignore_ascii_case("+nan")
        {
            format!("score is NaN ('{s}')")
        } else {
            format!("non-numeric score '{s}'")
        }
    })?;
    Ok((f[0], f[2], score, f[5]))
}

/// One line of a run scanned in place by [`scan_run_line`].
pub(crate) enum ScannedLine<'a> {
    /// A blank or comment line.
    Skip,
    /// A result line's `(qid, docno, score, tag)`.
    Record(RunFields<'a>),
    /// A malformed result line ([`parse_run_line`]'s message).
    Bad(String),
}

/// Scan the line starting at `start` in `buf` (a line ends at `\n` or at the end of `buf`)
/// in one pass: fields and the line end together, so no separate search for the newline.
/// The same lines are skipped, accepted and refused as with [`is_skippable`] +
/// [`parse_run_line`] over the line (tested against them). Returns the line and the start of
/// the next line.
#[inline]
pub(crate) fn scan_run_line(buf: &[u8], start: usize) -> (ScannedLine<'_>, usize) {
    if let Some(fast) = scan_plain_run_line(buf, start) {
        return fast;
    }
    let len = buf.len();
    let mut f: [&[u8]; 6] = [&[]; 6];
    let mut n = 0usize;
    let mut i = start;
    while n < 6 {
        while i < len && buf[i] != b'\n' && is_space(buf[i]) {
            i += 1;
        }
        if i >= len || buf[i] == b'\n' {
            break;
        }
        if n == 0 && buf[i] == b'#' {
            let next = memchr::memchr(b'\n', &buf[i..]).map_or(len, |k| i + k + 1);
            return (ScannedLine::Skip, next);
        }
        let s = i;
        i = field_end(buf, i);
        f[n] = &buf[s..i];
        n += 1;
    }
    let next = if i < len && buf[i] == b'\n' {
        i + 1
    } else {
        memchr::memchr(b'\n', &buf[i.min(len)..]).map_or(len, |k| i + k + 1)
    };
    if n == 0 {
        return (ScannedLine::Skip, next);
    }
    if n < 6 {
        let line_end = if next > start && buf.get(next - 1) == Some(&b'\n') {
            next - 1
        } else {
            next
        };
        return match parse_run_line(&buf[start..line_end]) {
            Err(e) => (ScannedLine::Bad(e), next),
            Ok(r) => (ScannedLine::Record(r), next),
        };
    }
    match parse_score(f[4]) {
        Some(score) => (ScannedLine::Record((f[0], f[2], score, f[5])), next),
        None => {
            let line_end = if buf.get(next.wrapping_sub(1)) == Some(&b'\n') {
                next - 1
            } else {
                next
            };
            match parse_run_line(&buf[start..line_end]) {
                Err(e) => (ScannedLine::Bad(e), next),
                Ok(r) => (ScannedLine::Record(r), next),
            }
        }
    }
}

/// The common case of [`scan_run_line`], 8 bytes at a time: a line that starts with a field
/// (not blank, not a comment), has at least six fields separated by runs of whitespace, and
/// ends with `\n` at least 8 bytes before the end of `buf`. Each word's bytes below `0x21` are
/// found exactly (no borrow between bytes) and visited in order: `\n` ends the line, other C
/// whitespace ends a field, any other control byte (field content for trec_eval) gives up.
/// `None` leaves the line to the general scanner (also for a score `parse_score` refuses, so
/// that the error message is the general one).
#[inline]
fn scan_plain_run_line(buf: &[u8], start: usize) -> Option<(ScannedLine<'_>, usize)> {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    if is_space(*buf.get(start)?) || buf[start] == b'#' {
        return None;
    }
    let mut f: [&[u8]; 6] = [&[]; 6];
    let mut n = 0usize;
    let mut field = start;
    let mut pos = start;
    loop {
        let word = buf.get(pos..pos + 8)?;
        let w = u64::from_le_bytes(word.try_into().ok()?);
        // High bit of each byte >= 0x21 (exact: adding 0x5f to the low 7 bits cannot carry
        // into the next byte), so `lows` marks exactly the bytes below 0x21.
        let mut lows = !((w & LOW7).wrapping_add(0x5f5f_5f5f_5f5f_5f5f) | w) & HIGH;
        while lows != 0 {
            let at = pos + (lows.trailing_zeros() / 8) as usize;
            lows &= lows - 1;
            let b = buf[at];
            if b != b'\n' && !is_space(b) {
                return None;
            }
            if at > field {
                if n < 6 {
                    f[n] = &buf[field..at];
                }
                n += 1;
            }
            field = at + 1;
            if b == b'\n' {
                if n < 6 {
                    return None;
                }
                let score = parse_score(f[4])?;
                return Some((ScannedLine::Record((f[0], f[2], score, f[5])), at + 1));
            }
        }
        pos += 8;
    }
}

/// A streaming run reader: yields one [`RunRecord`] per result line, skipping blank and
/// comment lines, with file:line errors. Memory is one line.
pub struct RunReader<R> {
    reader: R,
    source: String,
    buf: Vec<u8>,
    line: u64,
    records: u64,
}

impl<R: BufRead> RunReader<R> {
    /// Wrap `reader`; `source` names it in errors.
    pub fn new(reader: R, source: impl Into<String>) -> Self {
        RunReader {
            reader,
            source: source.into(),
            buf: Vec::with_capacity(256),
            line: 0,
            records: 0,
        }
    }

    /// The next record, `Ok(None)` at the end. An input without any record is an error
    /// (trec_eval refuses an empty run file).
    #[allow(clippy::should_implement_trait)]
    pub fn next_record(&mut self) -> Result<Option<RunRecord<'_>>, Error> {
        loop {
            self.buf.clear();
            let n = self.reader.read_until(b'\n', &mut self.buf).map_err(|e| {
                Error::io(Location::at_line(self.source.as_str(), self.line + 1), e)
            })?;
            if n == 0 {
                if self.records == 0 {
                    return Err(Error::input(
                        Location::at_line(self.source.as_str(), self.line.max(1)),
                        "empty run file (no result lines)",
                    ));
                }
                return Ok(None);
            }
            self.line += 1;
            if self.line == 1 && self.buf.starts_with(UTF8_BOM) {
                self.buf.drain(..UTF8_BOM.len());
            }
            if !is_skippable(&self.buf) {
                break;
            }
        }
        self.records += 1;
        let line = self.line;
        let source = &self.source;
        let (qid, docno, score, tag) = parse_run_line(&self.buf)
            .map_err(|p| Error::input(Location::at_line(source.as_str(), line), p))?;
        Ok(Some(RunRecord {
            qid,
            docno,
            score,
            tag,
            line,
        }))
    }
}

/// One retrieved document of a materialized [`Run`].
#[derive(Debug, Clone, PartialEq)]
pub struct RunDoc {
    /// Document id.
    pub docno: Box<[u8]>,
    /// Score.
    pub score: f64,
    /// 1-based line in the run file (0 when built in code).
    pub line: u64,
}

/// A whole run in memory: documents per query, in file order. For large files prefer
/// [`crate::trec::evaluate_bytes`], which never materializes the run.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Documents per query id, in file order.
    pub queries: IdMap<Box<[u8]>, Vec<RunDoc>>,
    /// The tag of the last result line (trec_eval's `runid`).
    pub runid: Box<[u8]>,
    /// The input's name (for error messages).
    pub source: String,
}

impl Run {
    /// Read a run from a buffered reader, streaming.
    pub fn from_reader<R: BufRead>(reader: R, source: &str) -> Result<Run, Error> {
        let mut rr = RunReader::new(reader, source);
        let mut run = Run {
            source: source.to_string(),
            ..Run::default()
        };
        while let Some(rec) = rr.next_record()? {
            run.runid = rec.tag.into();
            let doc = RunDoc {
                docno: rec.docno.into(),
                score: rec.score,
                line: rec.line,
            };
            match run.queries.get_mut(rec.qid) {
                Some(v) => v.push(doc),
                None => {
                    run.queries.insert(rec.qid.into(), vec![doc]);
                }
            }
        }
        Ok(run)
    }

    /// Parse a run from bytes.
    pub fn from_bytes(buf: &[u8], source: &str) -> Result<Run, Error> {
        Run::from_reader(buf, source)
    }

    /// Build a run in code from `(qid, docno, score)` triples and a run tag.
    pub fn from_triples<'a, I>(triples: I, runid: &str) -> Run
    where
        I: IntoIterator<Item = (&'a str, &'a str, f64)>,
    {
        let mut run = Run {
            runid: runid.as_bytes().into(),
            source: "<memory>".to_string(),
            ..Run::default()
        };
        for (q, d, s) in triples {
            run.queries
                .entry(q.as_bytes().into())
                .or_default()
                .push(RunDoc {
                    docno: d.as_bytes().into(),
                    score: s,
                    line: 0,
                });
        }
        run
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_parse_like_strtod() {
        for s in [
            "1.5",
            "-0.25",
            "2",
            "10.123456789",
            ".5",
            "5.",
            "+3.25",
            "1e3",
            "-1.5E-2",
            "inf",
            "-inf",
            "0.1",
            "0.3",
            "123456789012345678901",
            "0.41409363333403515",
            "-0.41409363333403515",
            "+0.7265982097017339",
            "1.0000000000000002",
            "9007199254740993",
            "0.30000000000000004441",
            "2.2250738585072011e-308",
            "000000000000000000001.5",
        ] {
            let want: f64 = s.parse().unwrap();
            assert_eq!(
                parse_score(s.as_bytes()).map(f64::to_bits),
                Some(want.to_bits()),
                "{s}"
            );
        }
        for s in ["", "abc", "1.2.3", "nan", "NaN", "1,5", "1.5x", ".", "-"] {
            assert_eq!(parse_score(s.as_bytes()), None, "{s}");
        }
    }

    proptest::proptest! {
        /// `parse_score` is `str::parse::<f64>` bit for bit, NaN refused, on numbers of every
        /// length (both sides of the 16-byte fast path) and on near-numbers.
        #[test]
        fn scores_parse_like_std(
            s in "[-+]?[0-9]{0,20}(\\.[0-9]{0,20})?([eE][-+]?[0-9]{1,3})?|[-+0-9.eEinfatyINFATY]{0,12}"
        ) {
            let want = s.parse::<f64>().ok().filter(|v| !v.is_nan()).map(f64::to_bits);
            proptest::prop_assert_eq!(parse_score(s.as_bytes()).map(f64::to_bits), want, "{}", s);
        }

        /// Scores as run writers print them (shortest round-trip text like Python's `repr`,
        /// fixed precisions up to 22 digits, exponents) parse bit for bit as `str::parse`,
        /// on both sides of the 16-byte fast path.
        #[test]
        fn printed_scores_parse_like_std(bits in proptest::prelude::any::<u64>(), prec in 0usize..=22) {
            let v = f64::from_bits(bits);
            proptest::prop_assume!(v.is_finite());
            let scaled = if v.abs() > 1e6 || v.abs() < 1e-6 { v.fract() } else { v };
            for text in [format!("{v}"), format!("{scaled}"), format!("{scaled:.prec$}"), format!("{v:e}")] {
                let want = text.parse::<f64>().unwrap().to_bits();
                proptest::prop_assert_eq!(parse_score(text.as_bytes()).map(f64::to_bits), Some(want), "{}", text);
            }
        }
    }

    #[test]
    fn qrels_accept_crlf_comments_blank_and_sort() {
        let q = Qrels::from_bytes(b"# c\n2 0 b 1\r\n\n1 0 z 0  \n1 0 a 2\t\n", "q").unwrap();
        assert_eq!(q.len(), 2);
        assert_eq!(q.queries()[0].qid(), b"1");
        assert_eq!(q.queries()[0].docno(0), b"a");
        assert_eq!(q.get(b"1").unwrap().rel(b"z"), Some(0));
        assert_eq!(q.get(b"1").unwrap().rel(b"y"), None);
        assert_eq!(q.get(b"1").unwrap().rel_levels(), &[1, 0, 1]);
    }

    #[test]
    fn qrels_errors_name_line() {
        let e = Qrels::from_bytes(b"1 0 a 1\n1 0 b\n", "q.txt").unwrap_err();
        assert_eq!(
            e.to_string(),
            "q.txt:2: missing column 4 (rel); qrels lines are 'qid iter docno rel'"
        );
        let e = Qrels::from_bytes(b"1 0 a x\n", "q").unwrap_err();
        assert!(
            e.to_string().starts_with("q:1: non-numeric relevance"),
            "{e}"
        );
        let e = Qrels::from_bytes(b"1 0 a 1 5\n", "q").unwrap_err();
        assert!(e.to_string().contains("too many columns"));
        assert!(Qrels::from_bytes(b"\n#x\n", "q").is_err());
        assert_eq!(
            Qrels::from_bytes(b"1 0 a 2.0\n", "q").unwrap().queries()[0].rel_at(0),
            2
        );
        assert!(Qrels::from_bytes(b"1 0 a 1.5\n", "q").is_err());
    }

    #[test]
    fn errors_escape_control_bytes_of_the_fields_they_quote() {
        // An ESC sequence in a score or relevance field (a hostile or corrupted file) is shown
        // escaped, so the message cannot recolour the terminal or move its cursor.
        let e = Run::from_bytes(b"q1 Q0 d1 1 \x1b[31mred t\n", "r\x07.txt").unwrap_err();
        assert_eq!(
            e.to_string(),
            "r\\x07.txt:1: non-numeric score '\\x1b[31mred'"
        );
        let e = Qrels::from_bytes(b"q1 0 d1 \x1b]0;x\x07\n", "q").unwrap_err();
        assert_eq!(e.to_string(), "q:1: non-numeric relevance '\\x1b]0;x\\x07'");
        let e = Qrels::from_bytes(b"q1 0 d1 \xe2\x80\xae9\n", "q").unwrap_err();
        assert_eq!(e.to_string(), "q:1: non-numeric relevance '\\u{202e}9'");
    }

    #[test]
    fn qrels_duplicates_recorded() {
        let q = Qrels::from_bytes(b"1 0 a 1\n1 0 b 0\n1 0 a 0\n", "q").unwrap();
        assert_eq!(q.queries()[0].duplicate(), Some((&b"a"[..], 3)));
    }

    /// Queries split across the file and across parse chunks (inputs of several MB) are
    /// grouped as a plain sort by (qid, docno, line) would group them: docnos in byte order,
    /// the first duplicate's second line recorded, per-level counts, from bytes and from
    /// judgments alike.
    #[test]
    fn qrels_grouping_matches_a_plain_sort() {
        let mut text = String::new();
        let mut lines: Vec<(String, String, i32, u64)> = Vec::new();
        let mut x: u64 = 7;
        for line in 1..=200_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Queries interleave in blocks; a third of the qids share their first 8 bytes
            // (sorted on the whole id); docnos share long prefixes; some repeat.
            let n = (line / 37 + (x >> 60)) % 900;
            let q = if n.is_multiple_of(3) {
                format!("qid_long_{n}")
            } else {
                format!("q{n}")
            };
            let d = format!("doc_prefix_{}_{}", (x >> 20) % 3, (x >> 33) % 4000);
            let r = ((x >> 45) % 4) as i32 - 1;
            text.push_str(&format!("{q} 0 {d} {r}\n"));
            lines.push((q, d, r, line));
        }
        let mut want = lines.clone();
        want.sort_by(|a, b| (&a.0, &a.1, a.3).cmp(&(&b.0, &b.1, b.3)));
        let from_bytes = Qrels::from_bytes(text.as_bytes(), "q").unwrap();
        let from_judgments = Qrels::from_judgments(
            lines
                .iter()
                .map(|(q, d, r, _)| (q.as_bytes(), std::iter::once((d.as_bytes(), *r as i64)))),
        )
        .unwrap();
        for q in [&from_bytes, &from_judgments] {
            assert_queries_are(q, &want);
        }
    }

    /// `q`'s queries are `want`'s records (qid, docno, rel, line; sorted by qid, docno, line)
    /// grouped by qid, each query's first duplicate named by its second line; returns the
    /// number of queries with a duplicate.
    fn assert_queries_are(q: &Qrels, want: &[(String, String, i32, u64)]) -> usize {
        let (mut at, mut dups) = (0, 0);
        for qq in q.queries() {
            let group: Vec<_> = want[at..]
                .iter()
                .take_while(|w| w.0.as_bytes() == qq.qid())
                .collect();
            assert_eq!(qq.len(), group.len());
            let mut dup = None;
            for (i, w) in group.iter().enumerate() {
                assert_eq!((qq.docno(i), qq.rel_at(i)), (w.1.as_bytes(), w.2));
                if dup.is_none() && i > 0 && group[i - 1].1 == w.1 {
                    dup = Some((w.1.as_bytes(), w.3));
                }
            }
            assert_eq!(qq.duplicate(), dup);
            dups += usize::from(dup.is_some());
            at += group.len();
        }
        assert_eq!(at, want.len());
        dups
    }

    /// Queries in contiguous blocks (one run each, the common file shape), blank and comment
    /// lines inside and between them, several chunks: every query keeps its judgments by
    /// docno then line, and a duplicate names its absolute line, also in later chunks.
    #[test]
    fn qrels_in_blocks_keep_absolute_lines_across_chunks() {
        let mut text = String::new();
        let mut lines: Vec<(String, String, i32, u64)> = Vec::new();
        let mut line = 0u64;
        let mut x: u64 = 11;
        for n in 0..3000u64 {
            let q = format!("query_{:05}", (n * 7919) % 3000);
            for j in 0..60u64 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                if j % 17 == 5 {
                    line += 1;
                    text.push_str(if j % 2 == 0 { "\n" } else { "  # note\n" });
                }
                // Every query repeats one docno (a duplicate to report).
                let d = if j == 3 || j == 40 + n % 9 {
                    "doc_7".to_string()
                } else {
                    format!("doc_{}", (x >> 30) % 100_000 + 8)
                };
                let r = ((x >> 45) % 3) as i32;
                line += 1;
                text.push_str(&format!("{q} 0 {d} {r}\n"));
                lines.push((q.clone(), d, r, line));
            }
        }
        assert!(text.len() > (4 << 20), "several chunks: {}", text.len());
        let mut want = lines.clone();
        want.sort_by(|a, b| (&a.0, &a.1, a.3).cmp(&(&b.0, &b.1, b.3)));
        let q = Qrels::from_bytes(text.as_bytes(), "q").unwrap();
        let dups = assert_queries_are(&q, &want);
        assert_eq!(dups, 3000);
    }

    proptest::proptest! {
        /// `be_prefix` is the first 8 bytes, zero-padded, as a big-endian word.
        #[test]
        fn be_prefix_is_the_padded_big_endian_prefix(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..20)) {
            let mut b = [0u8; 8];
            let k = bytes.len().min(8);
            b[..k].copy_from_slice(&bytes[..k]);
            proptest::prop_assert_eq!(be_prefix(&bytes), u64::from_be_bytes(b));
        }
    }

    proptest::proptest! {
        /// The in-place line scanner splits, skips, accepts and refuses exactly as
        /// `memchr` + `is_skippable` + `parse_run_line` over each line do.
        #[test]
        fn scan_run_line_matches_line_parsing(
            text in "(( ?q[0-9]\tQ0 d[0-9]{1,2} [0-9] -?[0-9]{1,3}(\\.[0-9]{0,20})?(e-?[0-9])? t[a-z]?( x)?\r?\n)|(([ \t\r\x0b\x0c]{0,2}(#|[a-z0-9.#-]{1,4})){0,8}[ \t\r]{0,2}\n?)){0,8}"
        ) {
            check_scan(text.as_bytes())?;
        }

        /// The same on run-shaped lines long enough for the 8-byte fast path: mixed
        /// separators (tabs, CR, vertical tab), control bytes inside fields (content for
        /// trec_eval, so the fast path gives up), comments, too few columns, extra columns.
        #[test]
        fn run_shaped_lines_scan_like_line_parsing(
            lines in proptest::collection::vec(
                "[ \t]?#?q[0-9\x01]{0,3}[ \t\r]{1,2}Q0[ \t]{1,2}d[0-9_]{1,12}[ \t]{1,2}[0-9]{1,3}([ \t]{1,2}-?[0-9]{1,3}(\\.[0-9]{0,18})?)?[ \t\x0b]{1,2}t[a-z\x01]?([ \t]x)?\r?",
                1..30,
            ),
            tail in "[a-z0-9 .]{0,12}",
        ) {
            let text = format!("{}\n{tail}", lines.join("\n"));
            check_scan(text.as_bytes())?;
        }
    }

    /// Every line of `buf` scanned in place as `memchr` + `is_skippable` + `parse_run_line`
    /// read it.
    fn check_scan(buf: &[u8]) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut pos = 0;
        while pos < buf.len() {
            let nl = memchr::memchr(b'\n', &buf[pos..]).map_or(buf.len(), |k| pos + k);
            let line = &buf[pos..nl];
            let want = if is_skippable(line) {
                None
            } else {
                Some(parse_run_line(line).map(|(q, d, s, t)| (q, d, s.to_bits(), t)))
            };
            let (got, next) = scan_run_line(buf, pos);
            let got = match got {
                ScannedLine::Skip => None,
                ScannedLine::Record((q, d, s, t)) => Some(Ok((q, d, s.to_bits(), t))),
                ScannedLine::Bad(e) => Some(Err(e)),
            };
            proptest::prop_assert_eq!(got, want);
            proptest::prop_assert_eq!(next, (nl + 1).min(buf.len()));
            pos = nl + 1;
        }
        Ok(())
    }

    #[test]
    fn run_reader_streams_and_reports() {
        let data = b"1 Q0 a 1 2.5 t\r\n\n# x\n1 Q0 b 2 1 t extra\n";
        let mut r = RunReader::new(&data[..], "r");
        let a = r.next_record().unwrap().unwrap();
        assert_eq!(
            (a.qid, a.docno, a.score, a.line),
            (&b"1"[..], &b"a"[..], 2.5, 1)
        );
        let b = r.next_record().unwrap().unwrap();
        assert_eq!((b.docno, b.line), (&b"b"[..], 4));
        assert!(r.next_record().unwrap().is_none());
        let e = RunReader::new(&b"1 Q0 a 1 nan t\n"[..], "r")
            .next_record()
            .unwrap_err();
        assert_eq!(e.to_string(), "r:1: score is NaN ('nan')");
        let e = RunReader::new(&b"\n"[..], "r").next_record().unwrap_err();
        assert!(e.to_string().contains("empty run"));
        let e = RunReader::new(&b"1 Q0 a 1 2.5\n"[..], "r")
            .next_record()
            .unwrap_err();
        assert!(e.to_string().contains("missing column 6 (tag)"));
    }
}
