//! The lexical similarity backend (rag-quality-check's default `Similarity`, spec 7): token
//! sets per thread, a run-wide cache of retrieved passages' sets, and coverage counted
//! through a bitmap.

use super::{RagError, Scorer, text};
use rustc_hash::FxHashMap;

/// Where a prepared token set lives: `(cached, start, len)` in [`Lexical::cache_ids`] or
/// [`Lexical::case_ids`].
pub(super) type Slot = (bool, usize, usize);

/// One slot of the run-wide passage cache ([`PassageTable`]): the passage's XXH3-128 hash
/// (`key`, its low 64 bits with the lowest bit set so that 0 marks a free slot; `check`, its
/// high 64 bits) and its id range in [`Lexical::cache_ids`].
#[derive(Clone, Copy, Default)]
pub(super) struct CachedPassage {
    pub(super) key: u64,
    pub(super) check: u64,
    pub(super) ids: (u32, u32),
}

/// The passage cache's table: open addressing with linear probing over a power-of-two
/// number of slots, at most half full. A table of our own rather than a `HashMap` so that a
/// case's lookups can first touch their slots all at once ([`PassageTable::touch`]): the
/// table of a 100k-case run is megabytes, and one cache miss after another was an eighth of
/// the run's time.
pub(super) struct PassageTable {
    pub(super) slots: Vec<CachedPassage>,
    pub(super) len: usize,
}

impl PassageTable {
    pub(super) fn new() -> Self {
        PassageTable {
            slots: vec![CachedPassage::default(); 1 << 10],
            len: 0,
        }
    }
    fn home(&self, key: u64) -> usize {
        // The lowest bit of a key is always set; the others are XXH3's.
        (key >> 1) as usize & (self.slots.len() - 1)
    }
    /// Read the home slot of each of `keys` (independent loads, so their misses overlap),
    /// ahead of [`get`](Self::get)s that then find them in cache.
    pub(super) fn touch(&self, keys: impl IntoIterator<Item = u64>) {
        let mut acc = 0u64;
        for k in keys {
            acc ^= self.slots[self.home(k)].key;
        }
        std::hint::black_box(acc);
    }
    /// The entry of `key`, if any (comparing its `check` is the caller's part).
    pub(super) fn get(&self, key: u64) -> Option<&CachedPassage> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let e = &self.slots[i];
            if e.key == key {
                return Some(e);
            }
            if e.key == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }
    /// Add `entry` (whose key is not in the table).
    pub(super) fn insert(&mut self, entry: CachedPassage) {
        if (self.len + 1) * 2 > self.slots.len() {
            let grown = vec![CachedPassage::default(); self.slots.len() * 2];
            let old = std::mem::replace(&mut self.slots, grown);
            self.len = 0;
            for e in old.into_iter().filter(|e| e.key != 0) {
                self.place(e);
            }
        }
        self.place(entry);
    }
    fn place(&mut self, entry: CachedPassage) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(entry.key);
        while self.slots[i].key != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = entry;
        self.len += 1;
    }
    /// Forget every entry (keeps the allocation).
    pub(super) fn clear(&mut self) {
        self.slots.fill(CachedPassage::default());
        self.len = 0;
    }
}

/// Token ids one thread's passage cache may hold before it is emptied (4 bytes each).
const PASSAGE_CACHE_IDS: usize = 8 << 20;

/// Passages one thread's passage cache may hold before it is emptied (passages without a
/// token add an entry but no ids, so the id cap alone would not bound the table).
pub(super) const PASSAGE_CACHE_ENTRIES: usize = 1 << 20;

/// Token ids below this are counted through [`Lexical::mark`] (a bitmap of 8 KiB).
pub(super) const MARK_IDS: u32 = 1 << 16;

/// Lexical similarity state of one worker thread. Token ids come from the thread's
/// [`text::Interner`], kept for the whole run (until it grows past 2^20 tokens), so token
/// sets of retrieved passages, which recur across cases, are computed once per thread and
/// kept in a run-wide cache (key: the passage's 128-bit XXH3 hash).
///
/// `score_h` compares one left set (a sentence, a query) with many right sets (the
/// passages) in a row, so the left set is kept as a bitmap over token ids (`mark`, for sets
/// whose ids are all below [`MARK_IDS`]; the interner numbers tokens in order of first
/// sight, so common words have small ids) and each right set is counted against it.
pub(super) struct Lexical {
    interner: text::Interner,
    sets: FxHashMap<String, text::IdSet>,
    /// Scratch for [`Scorer::weights`]: the sentences' token ids before stopword removal.
    raw: Vec<u32>,
    pub(super) slots: Vec<Slot>,
    case_ids: Vec<u32>,
    pub(super) cache: PassageTable,
    cache_ids: Vec<u32>,
    mark: Box<[u64]>,
    /// The slot whose ids are set in `mark`, and whether all of them fitted.
    marked: Option<(usize, bool)>,
}

impl Default for Lexical {
    fn default() -> Self {
        Lexical {
            interner: text::Interner::default(),
            sets: FxHashMap::default(),
            raw: Vec::new(),
            slots: Vec::new(),
            case_ids: Vec::new(),
            cache: PassageTable::new(),
            // Reserved once at its cap (virtual memory: pages are touched only as ids are
            // stored), so the arena never reallocates and copies itself as it grows.
            cache_ids: Vec::with_capacity(PASSAGE_CACHE_IDS + (1 << 16)),
            mark: vec![0u64; (MARK_IDS / 64) as usize].into_boxed_slice(),
            marked: None,
        }
    }
}

thread_local! {
    pub(super) static LEXICAL: std::cell::RefCell<Lexical> = std::cell::RefCell::new(Lexical::default());
}

impl Lexical {
    pub(super) fn reset(&mut self) {
        // First: the marked slot's ids must still be where the slot says.
        self.unmark();
        if self.interner.len() > 1 << 20 {
            self.interner.clear();
            self.clear_cache();
        } else if self.cache_ids.len() > PASSAGE_CACHE_IDS || self.cache.len > PASSAGE_CACHE_ENTRIES
        {
            self.clear_cache();
        }
        self.sets.clear();
        self.slots.clear();
        self.case_ids.clear();
    }
    /// Clear the bits of the marked slot (before its ids change or the slot is reused).
    fn unmark(&mut self) {
        if let Some((slot, _)) = self.marked.take() {
            let (cached, start, len) = self.slots[slot];
            let ids = if cached {
                &self.cache_ids[start..start + len]
            } else {
                &self.case_ids[start..start + len]
            };
            for &id in ids {
                if id < MARK_IDS {
                    self.mark[(id / 64) as usize] &= !(1u64 << (id % 64));
                }
            }
        }
    }
    /// `|left ∩ right| / |left|` of two prepared slots (0 for an empty left), as
    /// [`coverage_slices`]: through the bitmap when `left` fits in it.
    fn coverage(&mut self, left: usize, right: usize) -> f64 {
        if self.marked.map(|(s, _)| s) != Some(left) {
            self.unmark();
            let (cached, start, len) = self.slots[left];
            let ids = if cached {
                &self.cache_ids[start..start + len]
            } else {
                &self.case_ids[start..start + len]
            };
            let mut fits = true;
            for &id in ids {
                if id < MARK_IDS {
                    self.mark[(id / 64) as usize] |= 1u64 << (id % 64);
                } else {
                    fits = false;
                }
            }
            self.marked = Some((left, fits));
        }
        let l = self.slice(self.slots[left]);
        let r = self.slice(self.slots[right]);
        if l.is_empty() {
            return 0.0;
        }
        if !matches!(self.marked, Some((_, true))) {
            return coverage_slices(l, r);
        }
        // Both are sets (sorted, distinct), so the right ids found in the left set count
        // the intersection.
        let mut n = 0usize;
        for &id in r {
            if id < MARK_IDS {
                n += ((self.mark[(id / 64) as usize] >> (id % 64)) & 1) as usize;
            }
        }
        n as f64 / l.len() as f64
    }
    /// [`Scorer::prepare_passage`] of `text`, whose [`passage_hash`] is `(key, check)`.
    fn prepare_hashed(&mut self, text: &str, key: u64, check: u64) -> usize {
        match self.cache.get(key) {
            Some(e) if e.check == check => {
                let (start, end) = (e.ids.0 as usize, e.ids.1 as usize);
                self.slots.push((true, start, end - start));
                return self.slots.len() - 1;
            }
            // A collision of the key with another passage's: no caching.
            Some(_) => return self.prepare(text),
            None => {}
        }
        let start = self.cache_ids.len();
        self.interner.tokenize_into(text, &mut self.cache_ids);
        let end = self.cache_ids.len();
        if let (Ok(s32), Ok(e32)) = (u32::try_from(start), u32::try_from(end)) {
            self.cache.insert(CachedPassage {
                key,
                check,
                ids: (s32, e32),
            });
        }
        self.slots.push((true, start, end - start));
        self.slots.len() - 1
    }
    fn clear_cache(&mut self) {
        self.cache.clear();
        self.cache_ids.clear();
    }
    fn ensure(&mut self, s: &str) {
        if !self.sets.contains_key(s) {
            let set = self.interner.tokenize(s);
            self.sets.insert(s.to_string(), set);
        }
    }
    pub(super) fn slice(&self, slot: Slot) -> &[u32] {
        let (cached, start, len) = slot;
        if cached {
            &self.cache_ids[start..start + len]
        } else {
            &self.case_ids[start..start + len]
        }
    }
}

/// The passage cache's key and check: the two halves of the text's XXH3-128 hash (the key
/// with its lowest bit set: never 0, the free slot's mark).
fn passage_hash(s: &str) -> (u64, u64) {
    let h = twox_hash::XxHash3_128::oneshot(s.as_bytes());
    (h as u64 | 1, (h >> 64) as u64)
}

pub(super) fn coverage_slices(left: &[u32], right: &[u32]) -> f64 {
    if left.is_empty() {
        return 0.0;
    }
    text::sorted_intersection_len(left, right) as f64 / left.len() as f64
}

impl Scorer for Lexical {
    fn embeddings(&self) -> bool {
        false
    }
    fn score(&mut self, left: &str, right: &str) -> Result<f64, RagError> {
        if left.is_empty() || right.is_empty() {
            return Ok(0.0);
        }
        self.ensure(left);
        self.ensure(right);
        Ok(text::coverage_ids(&self.sets[left], &self.sets[right]))
    }
    fn weight(&mut self, sentence: &str) -> usize {
        self.ensure(sentence);
        self.sets[sentence].len()
    }
    fn weights(&mut self, text: &str, sentences: &[&str]) -> Vec<usize> {
        // The text's set comes with its sentences' (no token spans a sentence cut: the
        // proptest `sentence_raw_tokens_make_the_text_set`), so `score` does not tokenize
        // the text again; only when every sentence is new here (their raw tokens are not kept).
        if !self.sets.contains_key(text) {
            let mut raw = std::mem::take(&mut self.raw);
            raw.clear();
            let mut all_new = true;
            for &s in sentences {
                if self.sets.contains_key(s) {
                    all_new = false;
                    continue;
                }
                let set = self.interner.tokenize_keeping_raw(s, &mut raw);
                self.sets.insert(s.to_string(), set);
            }
            if all_new {
                let set = self.interner.set_from_raw(&mut raw);
                self.sets.insert(text.to_string(), set);
            }
            self.raw = raw;
        }
        sentences.iter().map(|s| self.weight(s)).collect()
    }
    fn prepare(&mut self, text: &str) -> usize {
        // An empty text tokenizes to the empty set, which scores 0 on either side, as
        // `score`'s early return does.
        let start = self.case_ids.len();
        match self.sets.get(text) {
            Some(set) => self.case_ids.extend_from_slice(set.ids()),
            None => {
                self.interner.tokenize_into(text, &mut self.case_ids);
            }
        }
        self.slots.push((false, start, self.case_ids.len() - start));
        self.slots.len() - 1
    }
    fn prepare_passage(&mut self, text: &str) -> usize {
        let (key, check) = passage_hash(text);
        self.prepare_hashed(text, key, check)
    }
    fn prepare_passages(&mut self, texts: &[&str]) -> Vec<usize> {
        let hashes: Vec<(u64, u64)> = texts.iter().map(|t| passage_hash(t)).collect();
        self.cache.touch(hashes.iter().map(|h| h.0));
        let handles: Vec<usize> = texts
            .iter()
            .zip(&hashes)
            .map(|(t, &(key, check))| self.prepare_hashed(t, key, check))
            .collect();
        // The same for the first id of each set, which `score_h` reads next.
        let mut acc = 0u32;
        for &slot in &handles {
            if let Some(&first) = self.slice(self.slots[slot]).first() {
                acc ^= first;
            }
        }
        std::hint::black_box(acc);
        handles
    }
    fn score_h(&mut self, left: usize, right: usize) -> Result<f64, RagError> {
        Ok(self.coverage(left, right))
    }
}
