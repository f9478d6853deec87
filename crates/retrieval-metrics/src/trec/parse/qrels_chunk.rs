//! Reading qrels text in chunks (one per rayon job): runs of one qid's consecutive lines,
//! the long ones built into their query while read. [`super::Qrels::from_bytes`] joins the
//! chunks' runs by qid.

use super::{Judgment, QueryQrels, SortScratch, is_skippable, parse_rel, same_id, split_fields};
use routeval_core::{Error, Location};

/// Where a run's judgments can be read again, to join it with other runs of its qid.
pub(super) enum RunSource<'b> {
    /// Lines of the text: `buf[bytes]` of its chunk, the line before the first numbered
    /// `line_before` (absolute once the chunk's base is added).
    Text {
        bytes: std::ops::Range<usize>,
        line_before: u64,
    },
    /// A run of one line, kept as read (line chunk-relative): files whose qid changes on
    /// every line are not read twice.
    Line(Judgment<'b>),
    /// Judgments given in code ([`super::Qrels::from_judgments`]), with absolute lines, in the order
    /// the query's build left them (by docno; their lines give file order back).
    Judgments(Vec<Judgment<'b>>),
}

/// Consecutive judgments of one qid (files keep a query's lines together, so there are few
/// runs): the query built from them alone, and how to read them again should the qid have
/// other runs.
pub(super) struct QrelRun<'b> {
    pub(super) qid: &'b [u8],
    /// Built while read for a run of at least [`EAGER_RUN`] judgments (boxed: files whose
    /// qid changes on every line make one run per line).
    pub(super) built: Option<Box<QueryQrels>>,
    pub(super) source: RunSource<'b>,
}

/// The runs read from one piece of the input.
#[derive(Default)]
pub(super) struct QrelChunk<'b> {
    /// The piece's bytes.
    pub(super) buf: &'b [u8],
    pub(super) runs: Vec<QrelRun<'b>>,
    /// Lines before this piece (added to its line numbers).
    pub(super) base: u64,
}

/// Call `f(line, start, qid, docno, rel)` for every judgment line of `buf` (blank and comment
/// lines skipped; `line` counts from `first_line + 1`, `start` is the line's offset in `buf`).
/// Returns the number of lines, or the first bad line's number and problem.
pub(super) fn for_each_qrel<'b>(
    buf: &'b [u8],
    first_line: u64,
    mut f: impl FnMut(u64, usize, &'b [u8], &'b [u8], i32),
) -> Result<u64, (u64, String)> {
    let mut line_no = first_line;
    let mut start = 0usize;
    let mut fields: [&'b [u8]; 4] = [&[]; 4];
    while start < buf.len() {
        let nl = memchr::memchr(b'\n', &buf[start..]).map_or(buf.len(), |i| start + i);
        line_no += 1;
        let line = &buf[start..nl];
        let line_start = start;
        start = nl + 1;
        if is_skippable(line) {
            continue;
        }
        let n = split_fields(line, &mut fields);
        if n < 4 {
            let what = ["qid", "iter", "docno", "rel"][n];
            let msg = format!(
                "missing column {} ({what}); qrels lines are 'qid iter docno rel'",
                n + 1
            );
            return Err((line_no, msg));
        }
        if n > 4 {
            let msg = "too many columns; qrels lines are 'qid iter docno rel'";
            return Err((line_no, msg.to_string()));
        }
        let rel = parse_rel(fields[3]).map_err(|p| (line_no, p))?;
        f(line_no, line_start, fields[0], fields[2], rel);
    }
    Ok(line_no - first_line)
}

/// Runs of at least this many judgments are built into their query while the chunk is read;
/// shorter ones (qids whose lines are interleaved) are built from their lines when grouped.
const EAGER_RUN: usize = 4;

/// Parse one chunk of qrels lines into runs, the long ones built into their query right away
/// (lines chunk-relative; no record of the chunk is kept), the number of lines in the chunk,
/// and the first error (with a chunk-relative line).
pub(super) fn parse_qrels_chunk<'b>(
    buf: &'b [u8],
    source: &str,
) -> (QrelChunk<'b>, u64, Option<Error>) {
    let mut chunk = QrelChunk {
        buf,
        ..QrelChunk::default()
    };
    let mut scratch = SortScratch::default();
    let mut js: Vec<Judgment<'b>> = Vec::new();
    // The open run: qid, first byte, line before its first line.
    let mut open: Option<(&'b [u8], usize, u64)> = None;
    let close = |open: (&'b [u8], usize, u64),
                 end: usize,
                 js: &mut Vec<Judgment<'b>>,
                 scratch: &mut SortScratch<'b>,
                 runs: &mut Vec<QrelRun<'b>>| {
        let (qid, first, line_before) = open;
        let source = match js[..] {
            [one] => RunSource::Line(one),
            _ => RunSource::Text {
                bytes: first..end,
                line_before,
            },
        };
        runs.push(QrelRun {
            qid,
            built: (js.len() >= EAGER_RUN).then(|| Box::new(QueryQrels::build(qid, js, scratch))),
            source,
        });
        js.clear();
    };
    let walked = for_each_qrel(buf, 0, |line, start, qid, docno, rel| {
        match open {
            Some((q, _, _)) if same_id(q, qid) => {}
            _ => {
                if let Some(o) = open.take() {
                    close(o, start, &mut js, &mut scratch, &mut chunk.runs);
                }
                open = Some((qid, start, line - 1));
            }
        }
        js.push((docno, rel, line));
    });
    match walked {
        Ok(lines) => {
            if let Some(o) = open.take() {
                close(o, buf.len(), &mut js, &mut scratch, &mut chunk.runs);
            }
            (chunk, lines, None)
        }
        Err((line, problem)) => (
            chunk,
            line,
            Some(Error::input(Location::at_line(source, line), problem)),
        ),
    }
}
