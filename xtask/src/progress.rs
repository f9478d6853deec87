//! The data build's progress bar: an indicatif bar on stderr, drawn only when stderr is a
//! terminal, fed by `routeval_bench_data` through [`routeval_core::Progress`]. As in the
//! `routeval` binary, `ROUTEVAL_PROGRESS=never` hides it and `ROUTEVAL_PROGRESS=always` draws
//! it on a stderr that is not a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use routeval_core::progress::Unit;
use std::io::IsTerminal;
use std::sync::RwLock;

/// Where bars are drawn, or `None` when they are off.
fn target() -> Option<ProgressDrawTarget> {
    match std::env::var("ROUTEVAL_PROGRESS")
        .ok()
        .as_deref()
        .map(str::trim)
    {
        Some("never") => None,
        Some("always") => Some(ProgressDrawTarget::term_like_with_hz(
            Box::new(console::Term::stderr()),
            20,
        )),
        _ if std::io::stderr().is_terminal() => Some(ProgressDrawTarget::stderr()),
        _ => None,
    }
}

/// A bar that is replaced by a fresh one for each stage (a target, a download).
pub(crate) struct Bar(RwLock<ProgressBar>);

impl Bar {
    /// No bar drawn until the first stage.
    pub(crate) fn new() -> Self {
        Bar(RwLock::new(ProgressBar::hidden()))
    }

    fn current(&self) -> ProgressBar {
        match self.0.read() {
            Ok(b) => b.clone(),
            Err(e) => e.into_inner().clone(),
        }
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
        // Configured while hidden, then put on stderr: no half-configured frame.
        let next = ProgressBar::with_draw_target(total, ProgressDrawTarget::hidden());
        next.set_style(
            ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        next.set_prefix(what.to_string());
        if let Some(t) = target() {
            next.set_draw_target(t);
        }
        let previous = match self.0.write() {
            Ok(mut b) => std::mem::replace(&mut *b, next.clone()),
            Err(e) => std::mem::replace(&mut *e.into_inner(), next.clone()),
        };
        previous.finish_and_clear();
        next.tick();
    }

    fn advance(&self, n: u64) {
        if let Ok(b) = self.0.read() {
            b.inc(n);
        }
    }

    fn status(&self, text: &str) {
        self.current().set_message(text.to_string());
    }

    fn note(&self, line: &str) {
        let b = self.current();
        if b.is_hidden() {
            eprintln!("{line}");
        } else {
            b.suspend(|| eprintln!("{line}"));
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.current().finish_and_clear();
    }
}
