//! Locating the shared test data (`$ROUTEVAL_SHARED`) from tests, benches and examples.
//!
//! Tests that need third-party or golden files read them from the directory named by the
//! environment variable `ROUTEVAL_SHARED` (CI exports the absolute path of `../shared`), because
//! third-party files are never committed. The rule every such test follows:
//! * variable set: return the directory; a file missing under it must fail the test loudly;
//! * variable unset: print `SKIPPED: <test> needs ROUTEVAL_SHARED` and skip;
//! * variable unset and `CI=true`: fail, since CI must never skip.
//!
//! This reads environment variables and checks that required files exist; opening and reading
//! them stays with the caller.

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

/// The shared subdirectory `sub` (e.g. `thirdparty/trec_eval`) for test `test`, after checking
/// that each of `files` exists in it; `None` when the test must be skipped (as
/// [`shared_dir`]).
///
/// # Panics
/// As [`shared_dir`]; and when the variable is set but one of `files` is missing (a missing
/// fixture fails loudly, naming the path).
pub fn shared_files(test: &str, sub: &str, files: &[&str]) -> Option<PathBuf> {
    let dir = shared_dir(test)?.join(sub);
    for f in files {
        let path = dir.join(f);
        assert!(path.is_file(), "{test}: missing {}", path.display());
    }
    Some(dir)
}
