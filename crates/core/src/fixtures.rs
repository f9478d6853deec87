//! Locating the shared test data (`$ROUTEVAL_SHARED`) from tests, benches and examples.
//!
//! Tests that need third-party or golden files read them from the directory named by the
//! environment variable `ROUTEVAL_SHARED` (CI exports the absolute path of `../shared`), because
//! third-party files are never committed. The rule every such test follows:
//! * variable set: return the directory; a file missing under it must fail the test loudly;
//! * variable unset: print `SKIPPED: <test> needs ROUTEVAL_SHARED` and skip;
//! * variable unset and `CI=true`: fail, since CI must never skip.
//!
//! This reads only environment variables; opening files stays with the caller.

use std::path::PathBuf;

/// The shared data directory for test `test`, or `None` when the test must be skipped.
///
/// # Panics
/// When `ROUTEVAL_SHARED` is unset and `CI` is `true`: a skip under CI is a failure.
pub fn shared_dir(test: &str) -> Option<PathBuf> {
    match std::env::var_os("ROUTEVAL_SHARED") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{test}: ROUTEVAL_SHARED must be set under CI=true (a skip is a failure)"
            );
            eprintln!("SKIPPED: {test} needs ROUTEVAL_SHARED");
            None
        }
    }
}
