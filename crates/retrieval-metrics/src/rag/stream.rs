//! The streaming lexical path of `rag` for a top-level JSON array: cases are decoded on one
//! thread and scored batch by batch on rayon's pool, so the decoded cases never all exist at
//! once.

#[cfg(doc)]
use super::evaluate;
use super::pyjson::{self, PyValue};
use super::{Options, RagError, RagReport, RagRun};
use routeval_core::Progress;
use routeval_core::progress::Unit;

/// Cases per parallel batch on the streaming path, at most. Each batch ends in a barrier (the
/// pool idles until the next one is handed over), so fewer, larger batches keep both cores
/// busier: 1,024 cases took the 100k-case text bench from 1.66 to 1.44 s against 512. But
/// about four batches are held at once (being parsed, queued, scored, being dropped), so a
/// batch grows with the run (see [`batch_len`]) and small inputs keep small batches.
const BATCH: usize = 1024;

/// Cases per parallel batch on the streaming path, at most, after `seen` cases: a
/// sixteenth of them, between 512 and [`BATCH`], so what the batches in flight hold stays
/// near a quarter of the cases scored (a 5,000-case text file peaks at 52 MB, not 67 MB).
fn batch_len(seen: usize) -> usize {
    (seen / 16).clamp(512, BATCH)
}

/// The lexical path for a top-level JSON array: parse and score it batch by batch, so the
/// decoded cases never all exist at once. `None` when the text is not a (valid) JSON array,
/// and also when the decoding thread could not be started or failed; the caller then reads
/// the text the reference's way (JSON value, else JSON Lines) and gets the same errors it
/// would.
///
/// `progress` gets the stage `scoring cases of ORIGIN` and the count of scored cases.
/// `consumed` is called on the calling thread after each batch is scored, with the byte offset
/// in `text` before which the stream reads nothing again (on the success path): a caller
/// holding `text` in a memory map can let those pages go (`|_| {}` otherwise). The
/// report equals [`evaluate`]'s on the parsed array (cases are pushed in order; means are
/// summed in case order).
pub fn stream_evaluate(
    text: &str,
    origin: &str,
    opts: &Options,
    progress: &dyn Progress,
    consumed: &dyn Fn(usize),
) -> Option<Result<RagReport, RagError>> {
    let stripped = text.trim_matches(super::text::is_space);
    if !stripped.starts_with('[') {
        return None;
    }
    // Offsets from the stream (in `stripped`) are reported in `text`.
    let base = stripped.as_ptr() as usize - text.as_ptr() as usize;
    let mut run = RagRun::new(opts);
    // Parse on one thread while the previous batch is scored on rayon's pool.
    // Each batch with the offset in `stripped` just past its last case.
    let (tx, rx) = std::sync::mpsc::sync_channel::<(Vec<PyValue>, usize)>(1);
    // Scored batches go back to the parser thread, which drops their values (freeing what it
    // allocated, mimalloc's fast local free) and reuses the vector, while the pool scores the
    // next batch: dropped on this thread, between batches, they held up the pool.
    let (spent_tx, spent_rx) = std::sync::mpsc::channel::<Vec<PyValue>>();
    let parsed = std::thread::scope(|scope| {
        // Its own stack size, not `RUST_MIN_STACK`'s: decoding recurses once per nesting
        // level, up to `pyjson::MAX_DEPTH` (about 0.5 MB in a release build).
        let parser = std::thread::Builder::new()
            .name("rag-decoder".into())
            .stack_size(pyjson::DECODER_STACK)
            .spawn_scoped(scope, move || {
                let mut batch: Vec<PyValue> = Vec::with_capacity(BATCH);
                let mut not_object: Option<usize> = None;
                let mut index = 0usize;
                let mut end = 0usize;
                let parsed = pyjson::stream_array(stripped, |v, next| {
                    end = next;
                    if not_object.is_none() && !matches!(v, PyValue::Dict(_)) {
                        not_object = Some(index);
                    }
                    index += 1;
                    if not_object.is_none() {
                        batch.push(v);
                        if batch.len() >= batch_len(index) {
                            // Every batch back by now is dropped here; one is reused.
                            let mut next = None;
                            while let Ok(mut spent) = spent_rx.try_recv() {
                                spent.clear();
                                next = Some(spent);
                            }
                            let next = next.unwrap_or_else(|| Vec::with_capacity(BATCH));
                            let full = std::mem::replace(&mut batch, next);
                            // The receiver only goes away once parsing is over.
                            let _ = tx.send((full, end));
                        }
                    }
                });
                if not_object.is_none() && !batch.is_empty() {
                    let _ = tx.send((batch, end));
                }
                (parsed, not_object)
            });
        // A thread that cannot be started leaves the input to the caller's reading (no
        // batch comes, so nothing is scored here).
        let Ok(parser) = parser else {
            return None;
        };
        // The receiver is moved in here, so a panic below drops it while unwinding and the
        // parser's blocked `send` fails instead of waiting forever (the scope joins the
        // parser before the panic goes on).
        let rx = rx;
        progress.stage(&format!("scoring cases of {origin}"), None, Unit::Items);
        let mut first = true;
        for (batch, end) in rx.iter() {
            if let Ok(run) = run.as_mut() {
                if first && end > 0 {
                    // Room for the whole file's results at the first batch's bytes per case
                    // (and a quarter more): the results are not copied as they grow, nor
                    // held twice while one growth copies them (39 MB instead of 26 MB at
                    // 100k cases).
                    let expected = (stripped.len() / end.div_ceil(batch.len())) * 5 / 4;
                    run.reserve(expected.saturating_sub(batch.len()));
                }
                run.push(&batch);
            }
            first = false;
            progress.advance(batch.len() as u64);
            consumed(base + end);
            // Once parsing is over the batch comes back here and is dropped.
            let _ = spent_tx.send(batch);
        }
        Some(parser.join())
    });
    let (parsed, not_object) = parsed?.ok()?;
    match parsed {
        Ok(true) => {}
        Ok(false) | Err(_) => return None,
    }
    if let Some(i) = not_object {
        return Some(Err(RagError::Input(format!(
            "{origin}: case {i} is not a JSON object"
        ))));
    }
    Some(run.and_then(RagRun::finish))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rag::{evaluate, parse_cases};
    use routeval_core::progress::NoProgress;

    /// A panic while the batches are scored (here: the progress sink, after the first batch)
    /// ends the call with that panic while the parser is still ahead: it does not leave the
    /// parser blocked on its full channel and the call waiting for it forever.
    #[test]
    fn a_panic_while_scoring_does_not_hang() {
        struct Panics;
        impl Progress for Panics {
            fn advance(&self, _: u64) {
                panic!("progress sink failed");
            }
        }
        let case =
            r#"{"query": "q w", "retrieved": [{"id": "d", "text": "w x"}], "relevant": ["d"]}"#;
        let text = format!("[{}]", vec![case; 20 * BATCH].join(","));
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let r = std::panic::catch_unwind(|| {
                stream_evaluate(&text, "t", &Options::default(), &Panics, &|_| {})
            });
            let _ = done_tx.send(r.is_err());
        });
        let panicked = done_rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("stream_evaluate hung after a panic");
        assert!(panicked);
    }

    /// The streamed report equals the whole-array one, and `consumed` hears, once per batch
    /// and in increasing order, offsets in the (unstripped) text just past a case: the last
    /// one is just past the last case.
    #[test]
    fn streamed_report_and_consumed_offsets() {
        // Long enough for the batches to grow from 512 cases to `BATCH`.
        let n = 17 * BATCH + 37;
        let cases: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    r#"{{"query": "q{i} w{}", "retrieved": [{{"id": "d{i}", "text": "w{} x"}}, "e{}"], "relevant": ["d{i}"]}}"#,
                    i % 7,
                    i % 5,
                    i % 3
                )
            })
            .collect();
        let text = format!("  \n[{}]\n", cases.join(",\n "));
        let opts = Options::default();
        let offsets = std::cell::RefCell::new(Vec::new());
        let streamed = stream_evaluate(&text, "t", &opts, &NoProgress, &|end| {
            offsets.borrow_mut().push(end)
        })
        .expect("an array")
        .unwrap();
        let whole = evaluate(&parse_cases(&text, "t").unwrap(), &opts, None).unwrap();
        assert_eq!(streamed, whole);
        let offsets = offsets.into_inner();
        // The last case of each batch, as the batches grow.
        let mut lasts = Vec::new();
        let mut len = 0;
        for seen in 1..=n {
            len += 1;
            if len >= batch_len(seen) {
                lasts.push(seen - 1);
                len = 0;
            }
        }
        if len > 0 {
            lasts.push(n - 1);
        }
        let sizes: Vec<usize> = std::iter::once(lasts[0] + 1)
            .chain(lasts.windows(2).map(|w| w[1] - w[0]))
            .collect();
        assert_eq!(sizes[0], 512);
        assert!(sizes.contains(&BATCH), "{sizes:?}");
        assert_eq!(offsets.len(), lasts.len());
        assert!(offsets.windows(2).all(|w| w[0] < w[1]));
        for (k, (&end, &last)) in offsets.iter().zip(&lasts).enumerate() {
            assert!(text[..end].ends_with(&cases[last]), "batch {k}");
        }
        assert_eq!(&text[*offsets.last().unwrap()..], "]\n");
        // A capacity hint changes nothing but capacity, and one beyond any allocator is
        // ignored (no abort).
        let parsed = parse_cases(&text, "t").unwrap();
        for hint in [0, 10, n, usize::MAX] {
            let mut run = RagRun::new(&opts).unwrap();
            run.reserve(hint);
            run.push(&parsed[..BATCH]);
            run.push(&parsed[BATCH..]);
            assert_eq!(run.finish().unwrap(), whole, "hint {hint}");
        }
        // Not an array: no offsets, the caller's fallback decides.
        let heard = std::cell::Cell::new(0);
        assert!(stream_evaluate("{}", "t", &opts, &NoProgress, &|_| heard.set(1)).is_none());
        assert_eq!(heard.get(), 0);
    }
}
