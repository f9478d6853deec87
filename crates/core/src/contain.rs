//! Containing a panic inside a third-party library call.
//!
//! routeval never panics on input, but some libraries do: `parquet` asserts on malformed
//! metadata, and the `tokenizers` crate's regex step panics when Oniguruma gives up on a text
//! (its retry limit). [`contained`] runs such a call, turns a panic into an error message and
//! keeps the panic's default report off stderr (a front end prints its own one line).

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

thread_local!(static QUIET: Cell<bool> = const { Cell::new(false) });
static HOOK: std::sync::Once = std::sync::Once::new();

/// Run `step`; a panic inside it becomes `Err(message)` (the panic's text, or "unknown
/// failure"), and the default panic report is suppressed for this call only (other threads'
/// and other calls' panics are reported as before). The caller must not use what `step`
/// borrowed mutably after an `Err` (unwind safety is asserted, not checked).
pub fn contained<T>(step: impl FnOnce() -> T) -> Result<T, String> {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
    let outer = QUIET.with(|q| q.replace(true));
    let result = catch_unwind(AssertUnwindSafe(step));
    QUIET.with(|q| q.set(outer));
    result.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown failure".into())
    })
}

#[cfg(test)]
mod tests {
    use super::contained;

    #[test]
    fn a_panic_becomes_its_message_and_values_pass_through() {
        assert_eq!(contained(|| 7), Ok(7));
        let r: Result<(), String> = contained(|| panic!("gave up at {}", 3));
        assert_eq!(r, Err("gave up at 3".to_string()));
        let r: Result<(), String> = contained(|| std::panic::panic_any(5u8));
        assert_eq!(r, Err("unknown failure".to_string()));
        // Nested calls restore the outer state.
        assert_eq!(contained(|| contained(|| 1).unwrap() + 1), Ok(2));
    }
}
