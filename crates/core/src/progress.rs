//! Progress of long operations, reported by library code to whatever the front end draws.
//!
//! Libraries stay free of terminals: a long operation takes a `&dyn Progress` and says what
//! it is doing ([`Progress::stage`]), how far it got ([`Progress::advance`]) and what the user
//! should read while it runs ([`Progress::note`]); the CLI implements the trait with an
//! indicatif bar on stderr (drawn only on a terminal), tests with a recorder, and everybody
//! else passes [`NoProgress`].

/// What a stage counts, so a front end can print `12.3 MiB/40 MiB` or `1200/5000`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Bytes (of a file read or a download).
    Bytes,
    /// Items: queries, cases, rows, texts, files.
    Items,
}

/// A sink for progress reports. Every method has an empty default, so an implementation
/// overrides only what it draws. Implementations must be cheap: [`Progress::advance`] may be
/// called once per query from several threads.
pub trait Progress: Sync {
    /// A new stage `what` (e.g. `"evaluating queries"`, `"downloading tokenizer.json"`) of
    /// `total` units of `unit` (`None` = unknown); the count restarts at 0.
    fn stage(&self, what: &str, total: Option<u64>, unit: Unit) {
        let _ = (what, total, unit);
    }

    /// `n` more units of the current stage are done.
    fn advance(&self, n: u64) {
        let _ = n;
    }

    /// A short live status of the current stage (e.g. `"2 retries, 1 error"`).
    fn status(&self, text: &str) {
        let _ = text;
    }

    /// A line the user must read (a warning, a retry): printed so that it does not garble
    /// a bar that is being drawn.
    fn note(&self, line: &str) {
        let _ = line;
    }
}

/// Reports nothing (the default for library callers and tests).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// A shareable, cloneable handle on a [`Progress`] sink, for option structs and long-lived
/// workers (e.g. a downloader) that outlive one call. [`Default`] is [`NoProgress`].
#[derive(Clone)]
pub struct SharedProgress(pub std::sync::Arc<dyn Progress + Send + Sync>);

impl Default for SharedProgress {
    fn default() -> Self {
        SharedProgress(std::sync::Arc::new(NoProgress))
    }
}

impl std::fmt::Debug for SharedProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedProgress(..)")
    }
}

impl Progress for SharedProgress {
    fn stage(&self, what: &str, total: Option<u64>, unit: Unit) {
        self.0.stage(what, total, unit);
    }
    fn advance(&self, n: u64) {
        self.0.advance(n);
    }
    fn status(&self, text: &str) {
        self.0.status(text);
    }
    fn note(&self, line: &str) {
        self.0.note(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl Progress for Recorder {
        fn stage(&self, what: &str, total: Option<u64>, _unit: Unit) {
            self.0.lock().unwrap().push(format!("{what} {total:?}"));
        }
        fn advance(&self, n: u64) {
            self.0.lock().unwrap().push(format!("+{n}"));
        }
    }

    #[test]
    fn defaults_do_nothing_and_overrides_are_called() {
        let none: &dyn Progress = &NoProgress;
        none.stage("x", Some(3), Unit::Items);
        none.advance(1);
        none.status("s");
        none.note("n");
        let r = Recorder::default();
        let p: &dyn Progress = &r;
        p.stage("reading", Some(10), Unit::Bytes);
        p.advance(4);
        p.note("ignored by the recorder");
        assert_eq!(*r.0.lock().unwrap(), vec!["reading Some(10)", "+4"]);
    }
}
