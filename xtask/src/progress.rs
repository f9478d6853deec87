//! The data build's progress bar: an indicatif bar on stderr, drawn only when stderr is a
//! terminal (`ROUTEVAL_PROGRESS=never` hides it), fed by `routeval_bench_data` through
//! [`routeval_core::Progress`].

use indicatif::{ProgressBar, ProgressStyle};
use routeval_core::progress::Unit;
use std::io::IsTerminal;

/// A bar that restarts for each stage (a target, a download).
pub(crate) struct Bar(ProgressBar);

impl Bar {
    /// A bar on stderr, or a hidden one when stderr is not a terminal.
    pub(crate) fn new() -> Self {
        let off = std::env::var("ROUTEVAL_PROGRESS").is_ok_and(|v| v.trim() == "never");
        Bar(if off || !std::io::stderr().is_terminal() {
            ProgressBar::hidden()
        } else {
            ProgressBar::no_length()
        })
    }
}

impl routeval_core::Progress for Bar {
    fn stage(&self, what: &str, total: Option<u64>, unit: Unit) {
        let template = match (unit, total.is_some()) {
            (Unit::Bytes, true) => {
                "{prefix} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}"
            }
            (Unit::Bytes, false) => "{spinner} {prefix} {binary_bytes} {binary_bytes_per_sec}",
            (Unit::Items, true) => "{prefix} [{bar:30}] {human_pos}/{human_len} eta {eta}",
            (Unit::Items, false) => "{spinner} {prefix} {msg}",
        };
        self.0.reset();
        match total {
            Some(n) => self.0.set_length(n),
            None => self.0.unset_length(),
        }
        self.0.set_prefix(what.to_string());
        self.0.set_style(
            ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
    }

    fn advance(&self, n: u64) {
        self.0.inc(n);
    }

    fn status(&self, text: &str) {
        self.0.set_message(text.to_string());
    }

    fn note(&self, line: &str) {
        self.0.suspend(|| eprintln!("{line}"));
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}
