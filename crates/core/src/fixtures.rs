//! Locating the shared test data (`$ROUTEVAL_SHARED`) from tests, benches and examples.
//!
//! Tests that need third-party or golden files read them from the directory named by the
//! environment variable `ROUTEVAL_SHARED` (CI exports the absolute path of `../shared`), because
//! third-party files are never committed. The rule every such test follows:
//! * it is marked `#[ignore = "needs ROUTEVAL_SHARED"]`, so a plain `cargo test` lists it as
//!   *ignored* in its summary (visible, unlike a skip inside a passing test);
//! * it runs with `cargo test -- --include-ignored` (what `.ci/run` does) and then needs the
//!   variable: unset, the test fails with a message saying how to set it (never a silent skip);
//! * with the variable set, a file missing under it fails the test loudly, naming the path.
//!
//! This reads environment variables and checks that required files exist; opening and reading
//! them stays with the caller.

use std::path::PathBuf;

/// The shared data directory `$ROUTEVAL_SHARED`, for test `test`.
///
/// # Panics
/// When `ROUTEVAL_SHARED` is unset or empty: a test that needs the shared data is `#[ignore]`d
/// by default, so it only runs when asked for (`--include-ignored`, `--ignored`), and then a
/// missing variable is a failure, not a skip.
pub fn shared(test: &str) -> PathBuf {
    match std::env::var_os("ROUTEVAL_SHARED") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => panic!(
            "{test} needs the shared test data: set ROUTEVAL_SHARED to the absolute path of \
             ../shared (as .ci/run does), e.g. `ROUTEVAL_SHARED=$PWD/../shared cargo test \
             --workspace -- --include-ignored`; without it, run plain `cargo test`, which \
             lists this test as ignored"
        ),
    }
}

/// [`shared`] as an `Option` (always `Some`), for callers written as
/// `let Some(dir) = shared_dir(..) else { return }`: it no longer skips.
///
/// # Panics
/// As [`shared`].
pub fn shared_dir(test: &str) -> Option<PathBuf> {
    Some(shared(test))
}

/// The shared subdirectory `sub` (e.g. `thirdparty/trec_eval`) for test `test`, after checking
/// that each of `files` exists in it (always `Some`; see [`shared_dir`]).
///
/// # Panics
/// As [`shared`]; and when one of `files` is missing (a missing fixture fails loudly, naming
/// the path).
pub fn shared_files(test: &str, sub: &str, files: &[&str]) -> Option<PathBuf> {
    let dir = shared(test).join(sub);
    for f in files {
        let path = dir.join(f);
        assert!(path.is_file(), "{test}: missing {}", path.display());
    }
    Some(dir)
}

/// For a test that runs on in-repository data and *also* checks the shared copy when there is
/// one (e.g. goldens copied as fixtures): `Some($ROUTEVAL_SHARED)` when set, `None` when unset
/// outside CI, so a plain `cargo test` still runs the in-repository part.
///
/// # Panics
/// When the variable is unset and `CI=true`: CI must check the shared copy too.
pub fn shared_if_set(test: &str) -> Option<PathBuf> {
    match std::env::var_os("ROUTEVAL_SHARED") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => Some(shared(test)),
        _ => None,
    }
}
