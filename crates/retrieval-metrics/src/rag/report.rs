//! Per-case results, the run report, and their renderings: `summary()` text, `to_dict()` JSON
//! (byte-equal to `json.dumps(indent=2, ensure_ascii=False)`), and per-case rows (the
//! reference's `to_frame()` columns) as CSV or JSON Lines.

use super::pyfmt::{
    fmt_g, json_float, json_round6, json_round6_into, json_str_into, repr_str, shorten,
};
use super::{Metric, SimilarityKind, Tally};
use rayon::prelude::*;
use routeval_core::Accumulator;
use std::io::Write;

/// One case's result (`CaseResult` in the reference).
#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    /// The query as scored (`str()`-coerced; falsy values become `""`).
    pub query: String,
    /// 0-based case index.
    pub index: usize,
    /// Cut-off.
    pub k: usize,
    /// Threshold (fraction).
    pub threshold: f64,
    /// Length of the raw `retrieved` list (duplicates included).
    pub n_retrieved: usize,
    /// Items left after de-duplication by id.
    pub n_unique: usize,
    /// Ids with gain > 0 (labelled), or retrieved items judged relevant (estimated).
    pub n_relevant: usize,
    /// True when relevance was estimated from similarity (no `relevant` key).
    pub estimated: bool,
    /// Metrics computed, in insertion order (precision, mrr, hit_rate, recall, ndcg, answer
    /// metrics); each a fraction in 0..1.
    pub metrics: Vec<(Metric, f64)>,
    /// Metrics that could not be computed.
    pub excluded: Vec<Metric>,
    /// Everything that changed how a number was produced.
    pub notes: Vec<String>,
    /// Plain-language failures.
    pub failures: Vec<String>,
    /// The case's own `id` field, if it has one (carried through to the per-case rows; not
    /// part of the reference's `to_dict()`). Boxed, as `meta`: a report holds one result per
    /// case, and an inline `Value` would make each 72 bytes larger even where it is absent.
    pub id: Option<Box<serde_json::Value>>,
    /// The case's own `meta` field, if it has one (carried through to the per-case rows).
    pub meta: Option<Box<serde_json::Value>>,
}

impl CaseResult {
    pub(crate) fn new(query: String, index: usize, k: usize, threshold: f64) -> Self {
        CaseResult {
            query,
            index,
            k,
            threshold,
            n_retrieved: 0,
            n_unique: 0,
            n_relevant: 0,
            estimated: false,
            metrics: Vec::new(),
            excluded: Vec::new(),
            notes: Vec::new(),
            failures: Vec::new(),
            id: None,
            meta: None,
        }
    }

    /// The value of `m`, if computed.
    pub fn metric(&self, m: Metric) -> Option<f64> {
        self.metrics.iter().find(|(n, _)| *n == m).map(|(_, v)| *v)
    }

    /// `score = (Σ metric values, insertion order, left to right) / count`; 0.0 without
    /// metrics. A triage handle mixing retrieval and answer metrics with equal weight.
    pub fn score(&self) -> f64 {
        if self.metrics.is_empty() {
            return 0.0;
        }
        let mut s = 0.0;
        for (_, v) in &self.metrics {
            s += v;
        }
        s / self.metrics.len() as f64
    }

    /// No failures.
    pub fn ok(&self) -> bool {
        self.failures.is_empty()
    }

    /// Each failure's reason: its text without the `case N 'query': ` prefix every failure
    /// starts with (the whole text should one lack it).
    pub fn failure_reasons(&self) -> impl Iterator<Item = &str> {
        let prefix = format!(
            "case {} {}: ",
            self.index,
            repr_str(&shorten(&self.query, 60))
        );
        self.failures
            .iter()
            .map(move |f| f.strip_prefix(prefix.as_str()).unwrap_or(f))
    }

    /// `CaseResult.summary()` text (no trailing newline).
    pub fn summary(&self) -> String {
        let mut lines = Vec::new();
        let mut head = format!(
            "[{}] {}  score {:.2}",
            self.index,
            repr_str(&shorten(&self.query, 64)),
            self.score()
        );
        if self.estimated {
            head.push_str("  (estimated relevance)");
        }
        lines.push(head);
        lines.push(format!(
            "  retrieved {} unique of {}, top-{}, {} relevant id(s) known",
            self.n_unique, self.n_retrieved, self.k, self.n_relevant
        ));
        for m in Metric::ALL {
            if let Some(v) = self.metric(m) {
                lines.push(format!("  {:<18} {:.3}", m.name(), v));
            }
        }
        for n in &self.notes {
            lines.push(format!("  note: {n}"));
        }
        for f in &self.failures {
            lines.push(format!("  FAIL: {f}"));
        }
        lines.join("\n")
    }

    /// This case's `to_dict()` row as JSON, indented by `ind` spaces. `threshold` is the
    /// report's threshold with its text (`json_float`), written when it is this case's (a
    /// report's cases share theirs), so each row does not format it again.
    fn write_json(&self, out: &mut String, ind: usize, threshold: (f64, &str)) {
        // Written straight into `out` (no text per field): this runs once per case, and the
        // per-case rows are most of a large report. Keys and metric names are plain
        // identifiers, written without the escape check.
        fn indent(out: &mut String, n: usize) {
            const SPACES: &str = "                                ";
            match SPACES.get(..n) {
                Some(s) => out.push_str(s),
                None => out.extend(std::iter::repeat_n(' ', n)),
            }
        }
        fn name(out: &mut String, k: &str) {
            debug_assert!(k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
            out.push('"');
            out.push_str(k);
            out.push('"');
        }
        fn key(out: &mut String, ind: usize, k: &str) {
            indent(out, ind);
            name(out, k);
            out.push_str(": ");
        }
        fn int(out: &mut String, n: usize) {
            out.push_str(itoa::Buffer::new().format(n));
        }
        fn strings<'s>(
            out: &mut String,
            ind: usize,
            items: impl ExactSizeIterator<Item = &'s str>,
            write: fn(&mut String, &str),
        ) {
            let n = items.len();
            if n == 0 {
                out.push_str("[]");
                return;
            }
            out.push_str("[\n");
            for (i, it) in items.enumerate() {
                indent(out, ind + 2);
                write(out, it);
                if i + 1 < n {
                    out.push(',');
                }
                out.push('\n');
            }
            indent(out, ind);
            out.push(']');
        }
        let f = ind + 2;
        out.push_str("{\n");
        key(out, f, "index");
        int(out, self.index);
        out.push_str(",\n");
        key(out, f, "query");
        json_str_into(out, &self.query);
        out.push_str(",\n");
        key(out, f, "k");
        int(out, self.k);
        out.push_str(",\n");
        key(out, f, "threshold");
        let (t, text) = threshold;
        if t.to_bits() == self.threshold.to_bits() {
            out.push_str(text);
        } else {
            out.push_str(&json_float(self.threshold));
        }
        out.push_str(",\n");
        key(out, f, "n_retrieved");
        int(out, self.n_retrieved);
        out.push_str(",\n");
        key(out, f, "n_unique");
        int(out, self.n_unique);
        out.push_str(",\n");
        key(out, f, "n_relevant");
        int(out, self.n_relevant);
        out.push_str(",\n");
        key(out, f, "estimated");
        out.push_str(if self.estimated { "true" } else { "false" });
        out.push_str(",\n");
        key(out, f, "score");
        json_round6_into(out, self.score());
        out.push_str(",\n");
        key(out, f, "metrics");
        if self.metrics.is_empty() {
            out.push_str("{}");
        } else {
            out.push_str("{\n");
            let n = self.metrics.len();
            for (i, (m, v)) in self.metrics.iter().enumerate() {
                key(out, f + 2, m.name());
                json_round6_into(out, *v);
                if i + 1 < n {
                    out.push(',');
                }
                out.push('\n');
            }
            indent(out, f);
            out.push('}');
        }
        out.push_str(",\n");
        key(out, f, "excluded");
        strings(out, f, self.excluded.iter().map(|m| m.name()), name);
        out.push_str(",\n");
        key(out, f, "notes");
        strings(out, f, self.notes.iter().map(String::as_str), json_str_into);
        out.push_str(",\n");
        key(out, f, "failures");
        strings(
            out,
            f,
            self.failures.iter().map(String::as_str),
            json_str_into,
        );
        out.push('\n');
        indent(out, ind);
        out.push('}');
    }
}

fn py_bool_json(b: bool) -> String {
    if b { "true".into() } else { "false".into() }
}

fn json_string(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    json_str_into(&mut o, s);
    o
}

fn json_map(items: &[(String, String)], ind: usize) -> String {
    if items.is_empty() {
        return "{}".into();
    }
    let pad = " ".repeat(ind);
    let pad2 = " ".repeat(ind + 2);
    let mut o = String::from("{\n");
    for (i, (k, v)) in items.iter().enumerate() {
        o.push_str(&pad2);
        json_str_into(&mut o, k);
        o.push_str(": ");
        o.push_str(v);
        if i + 1 < items.len() {
            o.push(',');
        }
        o.push('\n');
    }
    o.push_str(&pad);
    o.push('}');
    o
}

/// Mergeable run totals: per-metric plain sums and counts plus the run-level tallies.
///
/// The parity path folds cases one at a time in case order, which reproduces the
/// reference's left-to-right sums bit for bit; merging shards agrees within 1e-12 relative.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RagTotals {
    /// Σ value per metric (canonical order).
    pub sums: [f64; 9],
    /// Number of cases that produced each metric.
    pub counts: [u64; 9],
    /// Cases with estimated relevance.
    pub n_estimated: u64,
    /// Cases listing `recall_at_k` in `excluded`.
    pub recall_excluded: u64,
    /// Labelled (not unanswerable) cases.
    pub labelled: u64,
    /// Labelled cases where some retrieved id has gain > 0.
    pub id_matched: u64,
    /// Cases with an answer but only ids retrieved.
    pub answers_without_text: u64,
}

impl RagTotals {
    fn add_case(&mut self, r: &CaseResult, t: &Tally) {
        for (m, v) in &r.metrics {
            self.sums[m.position()] += v;
            self.counts[m.position()] += 1;
        }
        self.n_estimated += r.estimated as u64;
        self.recall_excluded += r.excluded.contains(&Metric::RecallAtK) as u64;
        self.labelled += t.labelled as u64;
        self.id_matched += (t.labelled && t.id_matched) as u64;
        self.answers_without_text += t.answer_without_text as u64;
    }
}

impl Accumulator for RagTotals {
    fn merge(&mut self, other: Self) {
        for i in 0..9 {
            self.sums[i] += other.sums[i];
            self.counts[i] += other.counts[i];
        }
        self.n_estimated += other.n_estimated;
        self.recall_excluded += other.recall_excluded;
        self.labelled += other.labelled;
        self.id_matched += other.id_matched;
        self.answers_without_text += other.answers_without_text;
    }
}

/// The run report (`RagReport` in the reference).
#[derive(Debug, Clone, PartialEq)]
pub struct RagReport {
    /// Mean of each metric over the cases that produced it, canonical order.
    pub metrics: Vec<(Metric, f64)>,
    /// Number of cases behind each mean.
    pub support: Vec<(Metric, usize)>,
    /// Per-case results, in input order.
    pub per_case: Vec<CaseResult>,
    /// Run-level notes (after every case's notes in [`notes`](Self::notes)).
    run_notes: Vec<String>,
    n_case_notes: usize,
    n_failures: usize,
    /// Cut-off.
    pub k: usize,
    /// Threshold.
    pub threshold: f64,
    /// Similarity backend.
    pub similarity: SimilarityKind,
    /// Number of cases.
    pub n_cases: usize,
    /// Number of estimated cases.
    pub n_estimated: usize,
}

pub(crate) fn assemble(
    k: usize,
    threshold: f64,
    similarity: SimilarityKind,
    results: Vec<(CaseResult, Tally)>,
) -> RagReport {
    let n = results.len();
    let mut rep = RagReport {
        metrics: Vec::new(),
        support: Vec::new(),
        per_case: Vec::new(),
        run_notes: Vec::new(),
        n_case_notes: 0,
        n_failures: 0,
        k,
        threshold,
        similarity,
        n_cases: n,
        n_estimated: 0,
    };
    if n == 0 {
        rep.run_notes
            .push("no cases were given, so there is nothing to measure".into());
        return rep;
    }
    let mut totals = RagTotals::default();
    let (mut notes, mut failures) = (0usize, 0usize);
    // Collected in place (the results' allocation is reused, not copied into a new one).
    rep.per_case = results
        .into_iter()
        .map(|(r, t)| {
            totals.add_case(&r, &t);
            notes += r.notes.len();
            failures += r.failures.len();
            r
        })
        .collect();
    rep.n_case_notes = notes;
    rep.n_failures = failures;
    rep.n_estimated = totals.n_estimated as usize;
    for m in Metric::ALL {
        let c = totals.counts[m.position()];
        if c > 0 {
            rep.metrics.push((m, totals.sums[m.position()] / c as f64));
            rep.support.push((m, c as usize));
        }
    }
    if totals.recall_excluded > 0 {
        rep.run_notes.push(format!(
            "recall_at_k is excluded for {} of {n} case(s); the reported mean covers the other {}",
            totals.recall_excluded,
            rep.support_of(Metric::RecallAtK)
        ));
    }
    if rep.n_estimated > 0 {
        rep.run_notes.push(format!(
            "{} of {n} case(s) had no 'relevant' ids: those retrieval numbers are estimated from similarity, not measured",
            rep.n_estimated
        ));
    }
    if totals.labelled > 1 && totals.id_matched == 0 {
        rep.run_notes.push(format!("no 'relevant' id matched any retrieved id in any of the {} labelled case(s); check that both sides use the same id form (upper/lower case, prefixes, str against int) - if they do not, every retrieval number above is 0 for that reason, not because the retriever found nothing", totals.labelled));
    }
    if totals.answers_without_text > 0 {
        rep.run_notes.push(format!("{} of {n} case(s) with an 'answer' had no passage text in 'retrieved', only ids: groundedness and citation_coverage are excluded there rather than reported as 0", totals.answers_without_text));
    }
    rep
}

/// How [`write_windowed`] renders one case's items into a text, each item after a `,\n    `
/// separator.
type ItemRender<'r> = &'r (dyn Fn(&CaseResult, &mut String) + Sync);

/// Cases per window of [`write_windowed`] (rendered as four parts on the pool).
const WINDOW: usize = 2048;

/// Write the items `render` makes of `cases`, in case order: the cases are rendered on rayon's
/// pool a window of [`WINDOW`] at a time, and each window is written while the next one is
/// rendered, so two windows of text are alive at a time. The first byte written (the comma of
/// the list's first separator) is dropped while `*first` holds; `*first` is false once an item
/// was written.
///
/// The part buffers are handed back once written and rendered into again: freed instead, by
/// another thread than the one that allocated them, they were not reused in time, and the
/// resident set grew by a window each time (100k id cases: +35 MB).
///
/// # Errors
/// Write errors from `w`.
fn write_windowed<W: Write + Send>(
    w: &mut W,
    cases: &[CaseResult],
    render: ItemRender<'_>,
    first: &mut bool,
) -> std::io::Result<()> {
    let spare: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let render_window = |window: &[CaseResult]| -> Vec<String> {
        window
            .par_chunks(WINDOW / 4)
            .map(|chunk| {
                let reused = spare.lock().unwrap_or_else(|p| p.into_inner()).pop();
                let mut part = reused.unwrap_or_default();
                for c in chunk {
                    render(c, &mut part);
                }
                part
            })
            .collect()
    };
    let mut windows = cases.chunks(WINDOW);
    let mut pending: Option<Vec<String>> = windows.next().map(render_window);
    while let Some(mut parts) = pending.take() {
        let next = windows.next();
        let (written, rendered) = rayon::join(
            || -> std::io::Result<()> {
                for part in &mut parts {
                    let skip = usize::from(*first && !part.is_empty());
                    *first &= part.is_empty();
                    w.write_all(&part.as_bytes()[skip..])?;
                    part.clear();
                }
                spare
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .append(&mut parts);
                Ok(())
            },
            || next.map(render_window),
        );
        written?;
        pending = rendered;
    }
    Ok(())
}

/// Gates (`--fail-under`) on a RAG report: every metric name ([`Metric::ALL`]); a metric no
/// case produced has no value (so a gate on it fails).
impl routeval_core::gate::NamedMetrics for RagReport {
    fn metric_names(&self) -> Vec<String> {
        Metric::ALL.iter().map(|m| m.name().to_string()).collect()
    }
    fn metric_value(&self, name: &str) -> Option<f64> {
        self.metric(name).filter(|v| v.is_finite())
    }
    /// Every RAG metric is a fraction in `[0, 1]` except the two embedding cosines
    /// (`answer_relevance`, `answer_correctness`), which are in `[-1, 1]`.
    fn metric_range(&self, name: &str) -> Option<routeval_core::gate::MetricRange> {
        use routeval_core::gate::MetricRange;
        match name {
            "answer_relevance" | "answer_correctness" => Some(MetricRange {
                min: -1.0,
                ..MetricRange::FRACTION
            }),
            _ => Some(MetricRange::FRACTION),
        }
    }
}

/// Notes sharing one text (see [`RagReport::grouped_notes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteGroup<'a> {
    /// The text after `case N: ` (the whole note for run-level notes).
    pub text: &'a str,
    /// The first note of the group, as written.
    pub first: &'a str,
    /// How many notes (one per case) have this text.
    pub count: usize,
}

impl<'a> NoteGroup<'a> {
    fn single(note: &'a str) -> Self {
        NoteGroup {
            text: note,
            first: note,
            count: 1,
        }
    }

    /// The summary line: the note itself when alone, else `N cases: TEXT`.
    pub fn line(&self) -> String {
        if self.count == 1 {
            self.first.to_string()
        } else {
            format!("{} cases: {}", self.count, self.text)
        }
    }
}

/// The base columns of [`RagReport::write_rows_csv`] / `to_frame()`, before the metric columns.
pub const FRAME_BASE_COLUMNS: [&str; 7] = [
    "index",
    "query",
    "n_retrieved",
    "n_unique",
    "n_relevant",
    "estimated",
    "score",
];

impl RagReport {
    /// Percentile bootstrap confidence intervals of each metric's mean (`rag --ci`), in
    /// [`metrics`](Self::metrics) order: for each metric, the cases that produced it (its
    /// [`support`](Self::support)) are resampled with replacement `replicates` times
    /// (replicate `r` draws from `StatsRng::for_replicate(seed, r)`) and the mean recomputed;
    /// `level` is a fraction in (0, 1). Units: `"cases supporting each metric"`. Deterministic
    /// for a seed on any number of threads; values are fractions, like the means.
    pub fn intervals(&self, level: f64, replicates: u64, seed: u64) -> routeval_stats::Intervals {
        let intervals = self
            .metrics
            .iter()
            .map(|&(m, _)| {
                let values: Vec<f64> = self
                    .per_case
                    .iter()
                    .filter_map(|c| c.metrics.iter().find(|(cm, _)| *cm == m).map(|(_, v)| *v))
                    .collect();
                (
                    m.name().to_string(),
                    routeval_stats::mean_ci(&values, replicates, seed, level),
                )
            })
            .collect();
        routeval_stats::Intervals {
            level,
            replicates,
            seed,
            units: "cases supporting each metric".into(),
            intervals,
        }
    }

    /// The mean of a metric by name (`"mrr"`), if any case produced it.
    pub fn metric(&self, name: &str) -> Option<f64> {
        let m = Metric::from_name(name)?;
        self.metrics.iter().find(|(n, _)| *n == m).map(|(_, v)| *v)
    }

    /// Number of cases behind a metric's mean (0 if none).
    pub fn support_of(&self, m: Metric) -> usize {
        self.support
            .iter()
            .find(|(n, _)| *n == m)
            .map_or(0, |(_, c)| *c)
    }

    /// Any case estimated.
    pub fn estimated(&self) -> bool {
        self.n_estimated > 0
    }

    /// At least one case and every case estimated.
    pub fn fully_estimated(&self) -> bool {
        self.n_cases > 0 && self.n_estimated == self.n_cases
    }

    /// No failures.
    pub fn ok(&self) -> bool {
        self.n_failures == 0
    }

    /// Every note: each case's notes in case order, then the run-level notes (the reference's
    /// `RagReport.notes`).
    pub fn notes(&self) -> impl Iterator<Item = &str> {
        self.per_case
            .iter()
            .flat_map(|c| c.notes.iter())
            .chain(self.run_notes.iter())
            .map(String::as_str)
    }

    /// Number of [`notes`](Self::notes).
    pub fn n_notes(&self) -> usize {
        self.n_case_notes + self.run_notes.len()
    }

    /// Every case failure in case order (the reference's `RagReport.failures`).
    pub fn failures(&self) -> impl Iterator<Item = &str> {
        self.per_case
            .iter()
            .flat_map(|c| c.failures.iter())
            .map(String::as_str)
    }

    /// Number of [`failures`](Self::failures).
    pub fn n_failures(&self) -> usize {
        self.n_failures
    }

    /// The `n` weakest cases that have at least one metric, by (unrounded score, index);
    /// empty for `n <= 0`.
    pub fn weakest(&self, n: i64) -> Vec<&CaseResult> {
        if n <= 0 {
            return Vec::new();
        }
        let mut scored: Vec<(f64, &CaseResult)> = self
            .per_case
            .iter()
            .filter(|c| !c.metrics.is_empty())
            .map(|c| (c.score(), c))
            .collect();
        scored.sort_by(|a, b| {
            a.0.partial_cmp(&b.0)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.1.index.cmp(&b.1.index))
        });
        scored
            .into_iter()
            .take(n as usize)
            .map(|(_, c)| c)
            .collect()
    }

    /// `RagReport.summary()` exactly, header `rag-quality-check: ...`.
    pub fn summary(&self) -> String {
        self.summary_as("rag-quality-check")
    }

    /// [`summary`](Self::summary) with another program name in the header line.
    pub fn summary_as(&self, program: &str) -> String {
        self.summary_styled(program, false, true)
    }

    /// The summary text; `group_notes` and `weakest_block` select routeval's two documented
    /// deviations (see [`render`](Self::render)); `(false, true)` is the reference's.
    fn summary_styled(&self, program: &str, group_notes: bool, weakest_block: bool) -> String {
        let mut lines = Vec::new();
        let kind = self.similarity.as_str();
        lines.push(format!(
            "{program}: {} case(s), top-{}, threshold {}, similarity by {kind}.",
            self.n_cases,
            self.k,
            fmt_g(self.threshold)
        ));
        if self.estimated() {
            let scope = if self.fully_estimated() {
                "every case".to_string()
            } else {
                format!("{} of {} cases", self.n_estimated, self.n_cases)
            };
            lines.push(format!(
                "  ESTIMATED: {scope} had no 'relevant' ids, so relevance was guessed from"
            ));
            lines.push(format!(
                "  {kind} against the query. Those numbers are estimated, not measured;"
            ));
            lines.push("  label them as such before comparing two systems.".into());
        }
        if self.metrics.is_empty() {
            lines.push("  no metric could be computed; see the notes below.".into());
        }
        for (group, names) in [
            ("retrieval", &Metric::RETRIEVAL[..]),
            ("answer", &Metric::ANSWER[..]),
        ] {
            let present: Vec<(Metric, f64)> = self
                .metrics
                .iter()
                .copied()
                .filter(|(m, _)| names.contains(m))
                .collect();
            if present.is_empty() {
                continue;
            }
            lines.push(format!("{group}:"));
            for (m, v) in present {
                lines.push(format!(
                    "  {:<18} {:.3}   {} ({} case(s))",
                    m.name(),
                    v,
                    m.help(),
                    self.support_of(m)
                ));
            }
        }
        let n_notes = self.n_notes();
        if n_notes > 0 {
            lines.push(format!("notes ({n_notes}):"));
            if group_notes && n_notes > 10 {
                let groups = self.grouped_notes();
                let mut shown = 0usize;
                for g in groups.iter().take(10) {
                    shown += g.count;
                    lines.push(format!("  - {}", g.line()));
                }
                if n_notes > shown {
                    lines.push(format!("  - ... {} more note(s)", n_notes - shown));
                }
            } else {
                for n in self.notes().take(10) {
                    lines.push(format!("  - {n}"));
                }
                if n_notes > 10 {
                    lines.push(format!("  - ... {} more note(s)", n_notes - 10));
                }
            }
        }
        let n_fail = self.n_failures;
        if n_fail > 0 {
            lines.push(format!("failures ({n_fail}):"));
            for f in self.failures().take(10) {
                lines.push(format!("  - {f}"));
            }
            if n_fail > 10 {
                lines.push(format!("  - ... {} more failure(s)", n_fail - 10));
            }
        } else {
            lines.push("failures: none.".into());
        }
        let weakest = if weakest_block {
            self.weakest(3)
        } else {
            Vec::new()
        };
        if !weakest.is_empty() && self.n_cases > 1 {
            lines.push("weakest cases:".into());
            for c in weakest {
                lines.push(format!(
                    "  [{}] {:.2}  {}",
                    c.index,
                    c.score(),
                    repr_str(&shorten(&c.query, 58))
                ));
            }
        }
        lines.join("\n")
    }

    /// The notes with the same text grouped, in order of first appearance: a case note
    /// `case N: TEXT` joins the other cases' notes with that TEXT; run-level notes stay alone.
    pub fn grouped_notes(&self) -> Vec<NoteGroup<'_>> {
        let mut groups: Vec<NoteGroup<'_>> = Vec::new();
        let mut by_text: std::collections::HashMap<&str, usize> = Default::default();
        for c in &self.per_case {
            let prefix = format!("case {}: ", c.index);
            for n in &c.notes {
                let Some(text) = n.strip_prefix(&prefix) else {
                    groups.push(NoteGroup::single(n));
                    continue;
                };
                match by_text.get(text) {
                    Some(&g) => groups[g].count += 1,
                    None => {
                        by_text.insert(text, groups.len());
                        groups.push(NoteGroup {
                            text,
                            first: n,
                            count: 1,
                        });
                    }
                }
            }
        }
        groups.extend(self.run_notes.iter().map(|n| NoteGroup::single(n)));
        groups
    }

    /// The CLI's text report: the summary, then — when `weakest > 0` and there is any —
    /// `worst {m} case(s) in detail:` and each case's summary (no trailing newline).
    ///
    /// Two documented deviations from rag-quality-check's CLI, both outside its defaults'
    /// common case: with `weakest <= 0` the summary's own `weakest cases:` list is left out too
    /// ("0 for none"); with more than 10 notes (where the reference shows the first 10 and
    /// `... N more note(s)`) notes with the same text are grouped, `23 cases: TEXT`, up to 10
    /// lines. With 10 notes or fewer and `weakest > 0` the text is the reference's.
    pub fn render(&self, program: &str, weakest: i64) -> String {
        let mut out = self.summary_styled(program, true, weakest > 0);
        let shown = self.weakest(weakest);
        if !shown.is_empty() {
            out.push_str(&format!("\n\nworst {} case(s) in detail:", shown.len()));
            for c in shown {
                out.push('\n');
                out.push_str(&c.summary());
            }
        }
        out
    }

    /// `json.dumps(report.to_dict(), indent=2, ensure_ascii=False)` (no trailing newline):
    /// every float rounded to 6 decimals and spelled like Python's `repr`.
    pub fn to_json(&self) -> String {
        let mut buf = Vec::with_capacity(512 + self.per_case.len() * 512);
        // Writing into a Vec cannot fail.
        let _ = self.write_json(&mut buf);
        String::from_utf8(buf).unwrap_or_default()
    }

    /// [`to_json`](Self::to_json), streamed to `w` case by case (no trailing newline). The
    /// cases are rendered on rayon's pool, a window of 2,048 at a time, and each window is
    /// written while the next one is rendered (the write may run on a pool thread, hence
    /// `W: Send`).
    ///
    /// # Errors
    /// Write errors from `w`.
    pub fn write_json<W: Write + Send>(&self, w: &mut W) -> std::io::Result<()> {
        self.write_json_open(w)?;
        w.write_all(b"\n}")
    }

    /// [`write_json`](Self::write_json) without the object's closing `\n}`: the report's
    /// members end with `"per_case"`'s closing bracket, so that a caller can append members
    /// of its own (`,\n  "key": value`, as `routeval rag --ci` adds `"ci"`) and then close the
    /// object, streaming the whole report.
    ///
    /// # Errors
    /// Write errors from `w`.
    pub fn write_json_open<W: Write + Send>(&self, w: &mut W) -> std::io::Result<()> {
        let mut out = String::with_capacity(4096);
        out.push_str("{\n");
        let metrics: Vec<(String, String)> = self
            .metrics
            .iter()
            .map(|(m, v)| (m.name().to_string(), json_round6(*v)))
            .collect();
        let support: Vec<(String, String)> = self
            .support
            .iter()
            .map(|(m, c)| (m.name().to_string(), c.to_string()))
            .collect();
        let fields: Vec<(&str, String)> = vec![
            ("k", self.k.to_string()),
            ("threshold", json_float(self.threshold)),
            ("similarity", json_string(self.similarity.as_str())),
            ("n_cases", self.n_cases.to_string()),
            ("n_estimated", self.n_estimated.to_string()),
            ("estimated", py_bool_json(self.estimated())),
            ("metrics", json_map(&metrics, 2)),
            ("support", json_map(&support, 2)),
        ];
        for (k, v) in &fields {
            out.push_str("  ");
            json_str_into(&mut out, k);
            out.push_str(": ");
            out.push_str(v);
            out.push_str(",\n");
        }
        // notes and failures are streamed like the cases (below): they can be as large as
        // the cases (90k notes and 86k failures, 29 MB, on the 100k-case text bench), and
        // escaping them on this thread alone left the pool idle.
        let t_text = json_float(self.threshold);
        // (key, items, how a case's items are rendered, items after the cases')
        let lists: [(&str, usize, ItemRender, &[String]); 3] = [
            (
                "notes",
                self.n_notes(),
                &|c, part| {
                    for note in &c.notes {
                        part.push_str(",\n    ");
                        json_str_into(part, note);
                    }
                },
                &self.run_notes,
            ),
            (
                "failures",
                self.n_failures,
                &|c, part| {
                    for failure in &c.failures {
                        part.push_str(",\n    ");
                        json_str_into(part, failure);
                    }
                },
                &[],
            ),
            (
                "per_case",
                self.per_case.len(),
                &|c, part| {
                    part.push_str(",\n    ");
                    c.write_json(part, 4, (self.threshold, &t_text));
                },
                &[],
            ),
        ];
        for (i, (key, count, render, tail)) in lists.into_iter().enumerate() {
            out.push_str("  ");
            json_str_into(&mut out, key);
            out.push_str(": ");
            if count == 0 {
                out.push_str("[]");
            } else {
                // Every item is rendered after a `,\n    ` separator; the list's first item
                // takes it without the comma.
                out.push('[');
                w.write_all(out.as_bytes())?;
                out.clear();
                let mut first = true;
                write_windowed(w, &self.per_case, render, &mut first)?;
                for item in tail {
                    out.push_str(if first { "\n    " } else { ",\n    " });
                    first = false;
                    json_str_into(&mut out, item);
                }
                out.push_str("\n  ]");
            }
            // `per_case` is the last member here (see the doc above).
            if i + 1 < lists.len() {
                out.push_str(",\n");
            }
        }
        w.write_all(out.as_bytes())
    }

    /// The metric columns of the per-case rows: every metric some case produced, canonical
    /// order.
    pub fn frame_metric_columns(&self) -> Vec<Metric> {
        Metric::ALL
            .into_iter()
            .filter(|m| self.per_case.iter().any(|c| c.metric(*m).is_some()))
            .collect()
    }

    /// Whether any case has an `id` field, and whether any has a `meta` field: the per-case
    /// rows then carry an `id` column after `index` and a `meta` column at the end.
    pub fn carried_columns(&self) -> (bool, bool) {
        (
            self.per_case.iter().any(|c| c.id.is_some()),
            self.per_case.iter().any(|c| c.meta.is_some()),
        )
    }

    /// Column names of the per-case rows (`to_frame()` columns): the base columns, the
    /// metric columns, then `failures` (the count). When some case has an `id` (or `meta`)
    /// field, an `id` column follows `index` (and a `meta` column ends the row); without
    /// them the columns are exactly the reference's.
    pub fn frame_columns(&self) -> Vec<String> {
        let (has_id, has_meta) = self.carried_columns();
        let mut cols: Vec<String> = FRAME_BASE_COLUMNS.iter().map(|s| s.to_string()).collect();
        if has_id {
            cols.insert(1, "id".into());
        }
        cols.extend(
            self.frame_metric_columns()
                .iter()
                .map(|m| m.name().to_string()),
        );
        cols.push("failures".into());
        if has_meta {
            cols.push("meta".into());
        }
        cols
    }

    /// Column names of the per-case rows written by [`write_rows_csv`](Self::write_rows_csv)
    /// and [`write_rows_jsonl`](Self::write_rows_jsonl): the base columns, every metric (in
    /// canonical order, whether or not a case produced it, so every file has the same
    /// schema), `failures` (the count) and `failure_reasons` (the failures' texts without their
    /// `case N 'query': ` prefix). `to_frame()` ([`frame_columns`](Self::frame_columns)) has
    /// only the metrics some case produced and no reasons.
    pub fn row_columns() -> Vec<String> {
        FRAME_BASE_COLUMNS
            .iter()
            .map(|s| s.to_string())
            .chain(Metric::ALL.iter().map(|m| m.name().to_string()))
            .chain(["failures".to_string(), "failure_reasons".to_string()])
            .collect()
    }

    /// Per-case rows as CSV (header [`row_columns`](Self::row_columns), one row per case).
    /// Scores and metrics unrounded, in Python `repr` spelling; a metric a case did not
    /// produce is an empty field (pandas writes NaN so); `estimated` is `True`/`False`;
    /// `failure_reasons` joins the reasons with `"; "`. When some case has an `id` (or
    /// `meta`) field, an `id` column follows `index` (and a `meta` column ends the row): a
    /// string `id` as is, any other `id` and every `meta` as compact JSON, absent ones empty.
    ///
    /// # Errors
    /// Write errors from `w`.
    pub fn write_rows_csv<W: Write>(&self, mut w: W) -> std::io::Result<()> {
        let (has_id, has_meta) = self.carried_columns();
        let mut header = Self::row_columns();
        if has_id {
            header.insert(1, "id".into());
        }
        if has_meta {
            header.push("meta".into());
        }
        // One writer's settings for the header and every part (the parts are records only).
        let csv_writer = || csv::WriterBuilder::new().from_writer(Vec::new());
        let mut head = csv_writer();
        head.write_record(header)?;
        w.write_all(&head.into_inner().map_err(|e| e.into_error())?)?;
        let cols = Metric::ALL;
        let text = |v: Option<&serde_json::Value>| match v {
            None => String::new(),
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        self.write_rows_in_windows(&mut w, |chunk| {
            let mut wr = csv_writer();
            for c in chunk {
                let mut row: Vec<String> = vec![
                    c.index.to_string(),
                    c.query.clone(),
                    c.n_retrieved.to_string(),
                    c.n_unique.to_string(),
                    c.n_relevant.to_string(),
                    if c.estimated { "True" } else { "False" }.to_string(),
                    super::pyfmt::float_repr(c.score()),
                ];
                for m in &cols {
                    row.push(
                        c.metric(*m)
                            .map(super::pyfmt::float_repr)
                            .unwrap_or_default(),
                    );
                }
                row.push(c.failures.len().to_string());
                row.push(c.failure_reasons().collect::<Vec<_>>().join("; "));
                if has_id {
                    row.insert(1, text(c.id.as_deref()));
                }
                if has_meta {
                    row.push(match &c.meta {
                        Some(m) => m.to_string(),
                        None => String::new(),
                    });
                }
                wr.write_record(&row)?;
            }
            wr.into_inner().map_err(|e| e.into_error())
        })?;
        w.flush()
    }

    /// Per-case rows as JSON Lines: one object per case with the [`row_columns`](Self::row_columns)
    /// (Self::row_columns) keys; a missing metric is `null`; `failure_reasons` is a list of
    /// strings.
    /// `id` and `meta` (when some case has them) are the case's own JSON values, `null` where
    /// a case lacks them (`id` after `index`, `meta` last).
    ///
    /// # Errors
    /// Write errors from `w`.
    pub fn write_rows_jsonl<W: Write>(&self, mut w: W) -> std::io::Result<()> {
        let cols = Metric::ALL;
        let (has_id, has_meta) = self.carried_columns();
        let json = |v: Option<&serde_json::Value>| v.map_or("null".into(), |v| v.to_string());
        let row = |o: &mut String, c: &CaseResult| {
            o.push_str("{\"index\": ");
            o.push_str(itoa::Buffer::new().format(c.index));
            if has_id {
                o.push_str(", \"id\": ");
                o.push_str(&json(c.id.as_deref()));
            }
            o.push_str(", \"query\": ");
            json_str_into(o, &c.query);
            o.push_str(", \"n_retrieved\": ");
            o.push_str(itoa::Buffer::new().format(c.n_retrieved));
            o.push_str(", \"n_unique\": ");
            o.push_str(itoa::Buffer::new().format(c.n_unique));
            o.push_str(", \"n_relevant\": ");
            o.push_str(itoa::Buffer::new().format(c.n_relevant));
            o.push_str(", \"estimated\": ");
            o.push_str(if c.estimated { "true" } else { "false" });
            o.push_str(", \"score\": ");
            o.push_str(&json_float(c.score()));
            for m in &cols {
                o.push_str(", ");
                json_str_into(o, m.name());
                o.push_str(": ");
                match c.metric(*m) {
                    Some(v) => o.push_str(&json_float(v)),
                    None => o.push_str("null"),
                }
            }
            o.push_str(", \"failures\": ");
            o.push_str(itoa::Buffer::new().format(c.failures.len()));
            o.push_str(", \"failure_reasons\": [");
            for (i, reason) in c.failure_reasons().enumerate() {
                if i > 0 {
                    o.push_str(", ");
                }
                json_str_into(o, reason);
            }
            o.push(']');
            if has_meta {
                o.push_str(", \"meta\": ");
                o.push_str(&json(c.meta.as_deref()));
            }
            o.push_str("}\n");
        };
        self.write_rows_in_windows(&mut w, |chunk| {
            let mut part = String::with_capacity(chunk.len() * 400);
            for c in chunk {
                row(&mut part, c);
            }
            Ok(part)
        })?;
        w.flush()
    }

    /// Render the per-case rows a window at a time on rayon's pool (each window as four
    /// parts, `render(cases)` giving a part's bytes) and write each window in order: the rows
    /// of 100,000 cases are tens of MB, so they are neither rendered on one thread nor held
    /// whole. The first rendering error is returned, nothing of its window written.
    fn write_rows_in_windows<W: Write, P: AsRef<[u8]> + Send>(
        &self,
        w: &mut W,
        render: impl Fn(&[CaseResult]) -> std::io::Result<P> + Sync,
    ) -> std::io::Result<()> {
        const WINDOW: usize = 8192;
        for window in self.per_case.chunks(WINDOW) {
            let parts: Vec<P> = window
                .par_chunks(WINDOW / 4)
                .map(&render)
                .collect::<std::io::Result<_>>()?;
            for part in &parts {
                w.write_all(part.as_ref())?;
            }
        }
        Ok(())
    }
}
