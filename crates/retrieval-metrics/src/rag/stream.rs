//! The streaming lexical path of `rag` for a top-level JSON array: cases are decoded on one
//! thread and scored batch by batch on rayon's pool, so the decoded cases never all exist at
//! once.

#[cfg(doc)]
use super::evaluate;
use super::pyjson::{self, PyValue};
use super::{Options, RagError, RagReport, RagRun};
use routeval_core::Progress;
use routeval_core::progress::Unit;

/// Cases per parallel batch on the streaming path.
const BATCH: usize = 512;

/// The lexical path for a top-level JSON array: parse and score it batch by batch, so the
/// decoded cases never all exist at once. `None` when the text is not a (valid) JSON array;
/// the caller then reads it the reference's way (JSON value, else JSON Lines) and gets the
/// same errors it would.
///
/// `progress` gets the stage `scoring cases of ORIGIN` and the count of scored cases. The
/// report equals [`evaluate`]'s on the parsed array (cases are pushed in order; means are
/// summed in case order).
pub fn stream_evaluate(
    text: &str,
    origin: &str,
    opts: &Options,
    progress: &dyn Progress,
) -> Option<Result<RagReport, RagError>> {
    let stripped = text.trim_matches(super::text::is_space);
    if !stripped.starts_with('[') {
        return None;
    }
    let mut run = RagRun::new(opts);
    // Parse on one thread while the previous batch is scored on rayon's pool.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<PyValue>>(1);
    let parsed = std::thread::scope(|scope| {
        let parser = scope.spawn(move || {
            let mut batch: Vec<PyValue> = Vec::with_capacity(BATCH);
            let mut not_object: Option<usize> = None;
            let mut index = 0usize;
            let parsed = pyjson::stream_array(stripped, |v| {
                if not_object.is_none() && !matches!(v, PyValue::Dict(_)) {
                    not_object = Some(index);
                }
                index += 1;
                if not_object.is_none() {
                    batch.push(v);
                    if batch.len() == BATCH {
                        let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                        // The receiver only goes away once parsing is over.
                        let _ = tx.send(full);
                    }
                }
            });
            if not_object.is_none() && !batch.is_empty() {
                let _ = tx.send(batch);
            }
            (parsed, not_object)
        });
        progress.stage(&format!("scoring cases of {origin}"), None, Unit::Items);
        for batch in rx.iter() {
            if let Ok(run) = run.as_mut() {
                run.push(&batch);
            }
            progress.advance(batch.len() as u64);
        }
        parser.join()
    });
    let (parsed, not_object) = parsed.ok()?;
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
