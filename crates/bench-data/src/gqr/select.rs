//! Hash-ranked selection for the v2 background class and GQR-unseen (`specs/gqr.md` §4.3,
//! §4.4, §5). No RNG: every choice is a BLAKE2b-64 seeded content hash, so the result depends
//! only on the multiset of inputs.

use super::text::{OverlapIndex, id_topic_hit, normalize, py_strip, rank_key, truncate_chars};
use routeval_core::Domain;
use std::collections::{BTreeSet, HashMap};

/// Background passages are cut to this many code points (`MAX_CHARS`).
pub const BACKGROUND_MAX_CHARS: usize = 2000;
/// Unseen texts are cut to this many code points (`unseen.MAX_CHARS`).
pub const UNSEEN_MAX_CHARS: usize = 4000;
/// Unseen texts need at least this many normalized words (`MIN_WORDS`).
pub const UNSEEN_MIN_WORDS: usize = 3;
/// Unseen texts kept per set (`PER_SET`).
pub const UNSEEN_PER_SET: usize = 1000;
/// Candidate oversampling per background source (`OVERSAMPLE`).
pub const OVERSAMPLE: f64 = 1.25;

/// An ordered statistics record (`dict` in insertion order), as upstream writes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats(pub Vec<(String, StatValue)>);

/// A statistics value: a count or a string (the fingerprint).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatValue {
    /// A count.
    Int(u64),
    /// A string (e.g. `sha256`).
    Str(String),
}

impl Stats {
    /// Append `key = value`.
    pub fn push(&mut self, key: impl Into<String>, value: u64) {
        self.0.push((key.into(), StatValue::Int(value)));
    }

    /// Append `key = "value"`.
    pub fn push_str(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.0.push((key.into(), StatValue::Str(value.into())));
    }

    /// The count stored under `key`.
    pub fn get(&self, key: &str) -> Option<u64> {
        self.0.iter().find_map(|(k, v)| match v {
            StatValue::Int(n) if k == key => Some(*n),
            _ => None,
        })
    }

    /// Python's `repr(dict)`: `{'a': 1, 'b': 'x'}`.
    pub fn py_repr(&self) -> String {
        let items: Vec<String> = self
            .0
            .iter()
            .map(|(k, v)| match v {
                StatValue::Int(n) => format!("'{k}': {n}"),
                StatValue::Str(s) => format!("'{k}': '{s}'"),
            })
            .collect();
        format!("{{{}}}", items.join(", "))
    }

    /// `json.dumps(stats, indent=2)` (no trailing newline).
    pub fn to_json_indent2(&self) -> String {
        if self.0.is_empty() {
            return "{}".to_string();
        }
        let items: Vec<String> = self
            .0
            .iter()
            .map(|(k, v)| {
                let k = serde_json::to_string(k).unwrap_or_default();
                match v {
                    StatValue::Int(n) => format!("  {k}: {n}"),
                    StatValue::Str(s) => {
                        format!("  {k}: {}", py_json_str(s))
                    }
                }
            })
            .collect();
        format!("{{\n{}\n}}", items.join(",\n"))
    }

    /// As a JSON object (key order kept only by the text form; see
    /// [`to_json_indent2`](Self::to_json_indent2)).
    pub fn to_json_value(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        for (k, v) in &self.0 {
            let v = match v {
                StatValue::Int(n) => serde_json::Value::from(*n),
                StatValue::Str(s) => serde_json::Value::from(s.as_str()),
            };
            m.insert(k.clone(), v);
        }
        serde_json::Value::Object(m)
    }
}

/// A JSON string as Python's `json.dumps` (ensure_ascii=True) writes it
/// ([`routeval_core::py::write_json_str`]).
pub fn py_json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    routeval_core::py::write_json_str(&mut out, s, true);
    out
}

/// `smallest_eligible(texts, limit, seed, salt)`: stream `texts`, keep the `limit` normalized
/// groups with the smallest `rank_key(n, seed, salt)` that pass the ID keyword filter, each
/// represented by its lexicographically smallest stripped, 2000-code-point text; return the
/// representatives in ascending `(key, n)` order.
pub fn smallest_eligible<I, S>(texts: I, limit: usize, seed: u64, salt: &str) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut held: HashMap<String, (u64, String)> = HashMap::new();
    let mut order: BTreeSet<(u64, String)> = BTreeSet::new();
    for raw in texts {
        let t = truncate_chars(py_strip(raw.as_ref()), BACKGROUND_MAX_CHARS);
        let n = normalize(t);
        if n.is_empty() {
            continue;
        }
        if let Some((_, rep)) = held.get_mut(&n) {
            if t < rep.as_str() {
                *rep = t.to_string();
            }
            continue;
        }
        let key = rank_key(&n, seed, salt);
        if held.len() >= limit {
            match order.last() {
                Some((max, _)) if key >= *max => continue,
                None if limit == 0 => continue,
                _ => {}
            }
        }
        if id_topic_hit(&n).is_some() {
            continue;
        }
        order.insert((key, n.clone()));
        held.insert(n, (key, t.to_string()));
        if let Some((_, evicted)) = (held.len() > limit).then(|| order.pop_last()).flatten() {
            held.remove(&evicted);
        }
    }
    order
        .into_iter()
        .map(|(_, n)| held.remove(&n).map(|(_, rep)| rep).unwrap_or_default())
        .collect()
}

/// The candidate limit per background source: `ceil(ceil(n_total / 3) * 1.25)`.
pub fn candidate_limit(n_total: usize, n_sources: usize) -> usize {
    let per = n_total.div_ceil(n_sources.max(1));
    (per as f64 * OVERSAMPLE).ceil() as usize
}

/// The background selection failed: a source ran out of clean candidates.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "background source '{source_name}' has {have} clean candidates, needs {need}; stats so far: {stats}"
)]
pub struct BackgroundShortfall {
    /// The source.
    pub source_name: String,
    /// Clean candidates it has.
    pub have: usize,
    /// Candidates needed (`per_source`).
    pub need: usize,
    /// `repr` of the statistics recorded so far.
    pub stats: String,
}

/// The result of [`select_background`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackgroundSelection {
    /// The selected texts, in hash order.
    pub texts: Vec<String>,
    /// The source of each text.
    pub sources: Vec<String>,
    /// Per-source filter statistics, in upstream's order.
    pub stats: Stats,
}

/// `select_background(pools, test_index, n_total, seed)`: source-balanced selection of
/// `n_total` background texts (`specs/gqr.md` §4.4). `pools` maps a source name to its
/// candidate texts; sources are handled in alphabetical order.
pub fn select_background(
    pools: &[(String, Vec<String>)],
    test_index: &OverlapIndex,
    n_total: usize,
    seed: u64,
) -> Result<BackgroundSelection, BackgroundShortfall> {
    let mut sources: Vec<&(String, Vec<String>)> = pools.iter().collect();
    sources.sort_by(|a, b| a.0.cmp(&b.0));
    let per_source = n_total.div_ceil(sources.len().max(1));
    // Per source: normalized text -> representative, in first-appearance order.
    let mut groups: Vec<(Vec<String>, HashMap<String, String>)> = Vec::new();
    let mut owner: HashMap<String, usize> = HashMap::new();
    for (si, (_, texts)) in sources.iter().enumerate() {
        let mut order = Vec::new();
        let mut reps: HashMap<String, String> = HashMap::new();
        for t in texts {
            let n = normalize(t);
            if n.is_empty() || id_topic_hit(&n).is_some() {
                continue;
            }
            match reps.get_mut(&n) {
                Some(rep) => {
                    if t.as_str() < rep.as_str() {
                        *rep = t.clone();
                    }
                }
                None => {
                    order.push(n.clone());
                    owner.entry(n.clone()).or_insert(si);
                    reps.insert(n, t.clone());
                }
            }
        }
        groups.push((order, reps));
    }
    let mut stats = Stats::default();
    let mut picked: Vec<(u64, String, String)> = Vec::new();
    for (si, (src, _)) in sources.iter().enumerate() {
        let (order, reps) = &groups[si];
        stats.push(format!("{src}_candidates"), order.len() as u64);
        let owned: Vec<&String> = order
            .iter()
            .filter(|n| owner.get(*n) == Some(&si))
            .collect();
        stats.push(
            format!("{src}_cross_source_duplicates_dropped"),
            (order.len() - owned.len()) as u64,
        );
        let clean: Vec<&String> = owned
            .iter()
            .copied()
            .filter(|n| !test_index.hit(&reps[*n]))
            .collect();
        stats.push(
            format!("{src}_test_overlap_dropped"),
            (owned.len() - clean.len()) as u64,
        );
        let mut ranked: Vec<(u64, usize, &String)> = clean
            .iter()
            .enumerate()
            .map(|(i, n)| (rank_key(n, seed, src), i, *n))
            .collect();
        ranked.sort();
        if ranked.len() < per_source {
            return Err(BackgroundShortfall {
                source_name: src.clone(),
                have: ranked.len(),
                need: per_source,
                stats: stats.py_repr(),
            });
        }
        for (_, _, n) in ranked.iter().take(per_source) {
            let t = &reps[*n];
            picked.push((
                rank_key(&normalize(t), seed, "order"),
                t.clone(),
                src.clone(),
            ));
        }
        stats.push(format!("{src}_used"), per_source as u64);
    }
    picked.sort();
    picked.truncate(n_total);
    let (texts, sources) = picked.into_iter().map(|(_, t, s)| (t, s)).unzip();
    Ok(BackgroundSelection {
        texts,
        sources,
        stats,
    })
}

/// Per-set statistics of [`select_unseen`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UnseenSetStats {
    /// Texts read.
    pub raw: u64,
    /// Texts with fewer than 3 normalized words.
    pub too_short: u64,
    /// Repeats within the set, of a leaked text, or of a text claimed by an earlier set.
    pub duplicate: u64,
    /// Texts that overlap GQR-Bench (train, eval, ID test, OOD test, v2 background).
    pub gqr_overlap: u64,
    /// Texts kept.
    pub used: u64,
}

/// One GQR-unseen row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnseenRow {
    /// The text (stripped, at most 4000 code points).
    pub text: String,
    /// The set's domain (label 0..=2).
    pub domain: Domain,
    /// The set name.
    pub dataset: String,
}

/// `select_unseen(raw, seen, per_set, seed)`: the leakage screen, cross-set dedup and cap of
/// GQR-unseen (`specs/gqr.md` §5). `raw` holds `(set name, domain, texts)` in processing
/// order; `None` texts count as empty. Returns the rows (sets concatenated in order, each in
/// ascending `rank_key(n, seed, "unseen:<name>")`) and per-set stats.
pub fn select_unseen(
    raw: &[(String, Domain, Vec<Option<String>>)],
    seen: &OverlapIndex,
    per_set: usize,
    seed: u64,
) -> (Vec<UnseenRow>, Vec<(String, UnseenSetStats)>) {
    let mut claimed: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut rows = Vec::new();
    let mut all_stats = Vec::new();
    for (name, domain, texts) in raw {
        let mut st = UnseenSetStats::default();
        let mut order: Vec<String> = Vec::new();
        let mut cands: HashMap<String, String> = HashMap::new();
        let mut leaked: std::collections::HashSet<String> = std::collections::HashSet::new();
        for x in texts {
            st.raw += 1;
            let t = truncate_chars(py_strip(x.as_deref().unwrap_or("")), UNSEEN_MAX_CHARS);
            let n = normalize(t);
            if n.split(' ').filter(|w| !w.is_empty()).count() < UNSEEN_MIN_WORDS {
                st.too_short += 1;
                continue;
            }
            if let Some(rep) = cands.get_mut(&n) {
                st.duplicate += 1;
                if t < rep.as_str() {
                    *rep = t.to_string();
                }
                continue;
            }
            if leaked.contains(&n) || claimed.contains(&n) {
                st.duplicate += 1;
                continue;
            }
            if seen.hit_normalized(&n) {
                st.gqr_overlap += 1;
                leaked.insert(n);
                continue;
            }
            order.push(n.clone());
            cands.insert(n, t.to_string());
        }
        let salt = format!("unseen:{name}");
        let mut ranked: Vec<(u64, usize, String)> = order
            .into_iter()
            .enumerate()
            .map(|(i, n)| (rank_key(&n, seed, &salt), i, n))
            .collect();
        ranked.sort();
        ranked.truncate(per_set);
        st.used = ranked.len() as u64;
        for (_, _, n) in ranked {
            let text = cands.remove(&n).unwrap_or_default();
            claimed.insert(n);
            rows.push(UnseenRow {
                text,
                domain: *domain,
                dataset: name.clone(),
            });
        }
        all_stats.push((name.clone(), st));
    }
    (rows, all_stats)
}
