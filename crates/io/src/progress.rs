//! Progress bars (indicatif) on stderr, drawn only when stderr is a terminal.
//!
//! `ROUTEVAL_PROGRESS=never` hides every bar; `ROUTEVAL_PROGRESS=always` draws them even when
//! stderr is not a terminal (for tests, and for terminals that do not say they are one).
//! Library code reports through [`routeval_core::Progress`]; [`Bar`] implements it. Lines
//! printed while a bar is drawn go through [`note`], which lifts the bar, prints, and draws
//! it again. The bars of `routeval` and of `cargo xtask build-data` are these.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use routeval_core::progress::Unit;
use std::io::IsTerminal;
use std::sync::{Mutex, RwLock};

/// The environment variable that overrides the terminal test (`always` / `never`).
pub const ENV: &str = "ROUTEVAL_PROGRESS";

/// Whether bars are drawn: `ROUTEVAL_PROGRESS=always|never`, else whether stderr is a terminal.
fn mode() -> Option<bool> {
    match std::env::var(ENV).ok().as_deref().map(str::trim) {
        Some("always") => Some(true),
        Some("never") => Some(false),
        _ => None,
    }
}

/// Where bars are drawn: stderr (a forced one as if it were a terminal, at most 20 frames a
/// second), or `None` when bars are off.
fn target() -> Option<ProgressDrawTarget> {
    match mode() {
        Some(false) => None,
        Some(true) => Some(ProgressDrawTarget::term_like_with_hz(
            Box::new(console::Term::stderr()),
            20,
        )),
        None if std::io::stderr().is_terminal() => Some(ProgressDrawTarget::stderr()),
        None => None,
    }
}

/// A bar of `len` steps (`None` = a spinner) with `style`, configured while hidden and only
/// then put on stderr (no frame is drawn half-configured), or a hidden bar when bars are off.
fn new_bar(len: Option<u64>, style: ProgressStyle, prefix: &str) -> ProgressBar {
    let b = ProgressBar::with_draw_target(len, ProgressDrawTarget::hidden());
    b.set_style(style);
    b.set_prefix(prefix.to_string());
    if let Some(t) = target() {
        b.set_draw_target(t);
    }
    b
}

/// The bar currently drawn, if any ([`note`] prints around it).
static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

fn set_active(bar: Option<&ProgressBar>) {
    if let Ok(mut a) = ACTIVE.lock() {
        *a = bar.cloned();
    }
}

/// Print `line` on stderr without garbling a bar being drawn (the bar is lifted, the line
/// printed, the bar drawn again); a plain `eprintln!` when no bar is active.
pub fn note(line: &str) {
    let active = ACTIVE.lock().ok().and_then(|a| a.clone());
    match active {
        Some(b) if !b.is_hidden() => b.suspend(|| eprintln!("{line}")),
        _ => eprintln!("{line}"),
    }
}

/// Set the live status (the `{msg}` field) of the bar currently drawn, if any.
pub fn status(text: &str) {
    if let Some(b) = ACTIVE.lock().ok().and_then(|a| a.clone()) {
        b.set_message(text.to_string());
    }
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

/// A bar of `len` steps with `template` (indicatif's syntax); hidden unless stderr is a
/// terminal (or `ROUTEVAL_PROGRESS=always`), so logs and pipes never see it.
pub fn bar(len: u64, template: &str) -> ProgressBar {
    new_bar(Some(len), style(template), "")
}

/// The style of a stage counting `unit`, with a known or unknown total.
fn stage_style(unit: Unit, known: bool) -> ProgressStyle {
    match (unit, known) {
        (Unit::Bytes, true) => style(
            "{prefix} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta} {msg}",
        ),
        (Unit::Bytes, false) => {
            style("{spinner} {prefix} {binary_bytes} {binary_bytes_per_sec} {msg}")
        }
        (Unit::Items, true) => style("{prefix} [{bar:30}] {human_pos}/{human_len} eta {eta} {msg}"),
        (Unit::Items, false) => style("{spinner} {prefix} {human_pos} {msg}"),
    }
}

/// A progress bar for library code: implements [`routeval_core::Progress`] (each stage is a
/// fresh bar with its own total and unit, replacing the previous one) and is the bar [`note`]
/// prints around while it lives. Cleared from the terminal when dropped.
pub struct Bar {
    bar: RwLock<ProgressBar>,
}

impl Default for Bar {
    fn default() -> Self {
        Bar::new()
    }
}

impl Bar {
    /// A new bar, not yet in any stage (nothing is drawn until the first stage).
    pub fn new() -> Self {
        Bar {
            bar: RwLock::new(ProgressBar::hidden()),
        }
    }

    /// A new bar already in stage `what`.
    pub fn with_stage(what: &str, total: Option<u64>, unit: Unit) -> Self {
        let b = Bar::new();
        routeval_core::Progress::stage(&b, what, total, unit);
        b
    }

    /// The current stage's bar (a cheap handle).
    fn current(&self) -> ProgressBar {
        match self.bar.read() {
            Ok(b) => b.clone(),
            Err(e) => e.into_inner().clone(),
        }
    }
}

impl routeval_core::Progress for Bar {
    fn stage(&self, what: &str, total: Option<u64>, unit: Unit) {
        let next = new_bar(total, stage_style(unit, total.is_some()), what);
        let previous = match self.bar.write() {
            Ok(mut b) => std::mem::replace(&mut *b, next.clone()),
            Err(e) => std::mem::replace(&mut *e.into_inner(), next.clone()),
        };
        previous.finish_and_clear();
        set_active(Some(&next));
        // Drawn now (a ticking bar ignores `tick`), then a spinner keeps turning while a step
        // runs (a request, a command); a bar moves on each step.
        next.tick();
        if total.is_none() && !next.is_hidden() {
            next.enable_steady_tick(std::time::Duration::from_millis(150));
        }
    }

    fn advance(&self, n: u64) {
        if let Ok(b) = self.bar.read() {
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
        set_active(None);
    }
}
