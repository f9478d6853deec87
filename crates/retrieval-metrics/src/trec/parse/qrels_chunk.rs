//! Reading qrels text in chunks (one per rayon job): runs of one qid's consecutive lines,
//! the long ones built into their query while read. [`super::Qrels::from_bytes`] joins the
//! chunks' runs by qid.

use super::run_lines::MaskedLines;
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

/// Call `f_line(line, start, qid, docno, rel)` for every judgment line of `buf` (blank and comment
/// lines skipped; `line` counts from `first_line + 1`, `start` is the line's offset in `buf`).
/// Returns the number of lines, or the first bad line's number and problem.
pub(super) fn for_each_qrel<'b>(
    buf: &'b [u8],
    first_line: u64,
    f_line: impl FnMut(u64, usize, &'b [u8], &'b [u8], i32),
) -> Result<u64, (u64, String)> {
    walk_qrels::<true>(buf, first_line, f_line)
}

/// [`for_each_qrel`], with the common lines read from byte masks (`MASKS`) or every line by
/// the general reader (`memchr`, `is_skippable`, `split_fields`, `parse_rel`: the tests'
/// reference).
fn walk_qrels<'b, const MASKS: bool>(
    buf: &'b [u8],
    first_line: u64,
    mut f_line: impl FnMut(u64, usize, &'b [u8], &'b [u8], i32),
) -> Result<u64, (u64, String)> {
    let mut line_no = first_line;
    let mut start = 0usize;
    let mut fields: [&'b [u8]; 4] = [&[]; 4];
    let mut masks = MaskedLines::new(buf);
    while start < buf.len() {
        line_no += 1;
        // The common line: four fields read from the byte masks (a bad relevance is reported
        // here, with the message the general reader would give). Any other line goes through
        // the general reader.
        if MASKS
            && let Some((f, false, next)) = masks.fields::<4>(start)
            && let (Some(qid), Some(docno), Some(rel)) = (
                buf.get(f[0].0..f[0].1),
                buf.get(f[2].0..f[2].1),
                buf.get(f[3].0..f[3].1),
            )
        {
            let rel = parse_rel(rel).map_err(|p| (line_no, p))?;
            f_line(line_no, start, qid, docno, rel);
            start = next;
            continue;
        }
        let nl = memchr::memchr(b'\n', &buf[start..]).map_or(buf.len(), |i| start + i);
        let line = &buf[start..nl];
        let line_start = start;
        start = nl + 1;
        if is_skippable(line) {
            continue;
        }
        let n = split_fields(line, &mut fields);
        if let Some(problem) = column_problem(n) {
            return Err((line_no, problem));
        }
        let rel = parse_rel(fields[3]).map_err(|p| (line_no, p))?;
        f_line(line_no, line_start, fields[0], fields[2], rel);
    }
    Ok(line_no - first_line)
}

/// The problem with a qrels line of `n` fields (`None` for the four it must have).
fn column_problem(n: usize) -> Option<String> {
    match n {
        0..=3 => {
            let what = ["qid", "iter", "docno", "rel"][n];
            Some(format!(
                "missing column {} ({what}); qrels lines are 'qid iter docno rel'",
                n + 1
            ))
        }
        4 => None,
        _ => Some("too many columns; qrels lines are 'qid iter docno rel'".to_string()),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// [`for_each_qrel`] reads `buf` as the general reader alone does: the same judgments,
    /// line numbers and offsets, and the same error on the same line.
    fn check(buf: &[u8]) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut got = Vec::new();
        let r = for_each_qrel(buf, 0, |l, s, q, d, rel| got.push((l, s, q, d, rel)));
        let mut want = Vec::new();
        let want_r = walk_qrels::<false>(buf, 0, |l, s, q, d, rel| want.push((l, s, q, d, rel)));
        proptest::prop_assert_eq!(got, want);
        // The same line fails, with the same message.
        proptest::prop_assert_eq!(r, want_r);
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(1000))]

        /// Qrels long enough for the byte masks: plain lines, and every kind the masks hand
        /// over (blank, comment, leading blanks, tabs and CR, control bytes, too few or too
        /// many columns, long lines, relevances that are not plain integers).
        #[test]
        fn qrels_lines_read_as_line_by_line(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    8 => "q[0-9]{1,3} 0 d[0-9a-z_]{1,14} [0-9]{1,2}",
                    2 => "[ \t]{0,2}#?q[0-9\x01\u{e9}]{0,3}[ \t\r\x0b\x0c]{1,3}0[ \t]{1,2}d[0-9_#]{1,60}[ \t]{1,2}(-?[0-9]{1,6}|1\\.0|x)([ \t]x)?[ \t\r]{0,2}",
                    1 => "[ \t#a-z0-9.\x01]{0,70}",
                ],
                1..150,
            ),
            tail in "[a-z0-9 .\n]{0,140}",
        ) {
            let text = format!("{}\n{tail}", lines.join("\n"));
            check(text.as_bytes())?;
        }
    }

    #[test]
    fn plain_qrels_read_as_line_by_line() {
        let mut text = String::new();
        for i in 0..300 {
            text.push_str(&format!("q{} 0 doc{} {}\n", i % 11, i, i % 4));
        }
        check(text.as_bytes()).unwrap();
        text.push_str("q1 0 d 99999999\n");
        text.push_str(&"q2 0 d 1\n".repeat(20));
        check(text.as_bytes()).unwrap();
    }
}
