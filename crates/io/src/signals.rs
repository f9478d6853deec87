//! What must be undone when routeval is stopped by a signal (SIGINT, SIGTERM, SIGHUP): the
//! process groups of the child processes it started (killed, so no descendant of `sh -c`
//! survives) and the temporary files of atomic writes (removed; the targets are untouched).
//!
//! [`install`] (called once by the binary's `main`) starts one thread (signal-hook's iterator) that does this cleanup and exits
//! with 128 + the signal number, as a shell reports a process killed by it. SIGKILL cannot be
//! caught: a child's group then survives us only until its own stdin closes; a temporary
//! `.routeval-*.tmp` file may remain, but the target is never partial.
//!
//! SIGXFSZ (file size limit exceeded) is caught too, so that a write beyond `ulimit -f` fails
//! with EFBIG (one line, exit 2) instead of killing the process.
//!
//! This module is the registry the other modules report to ([`crate::child`] registers the
//! process groups it starts, [`crate::output`] its temporary files); it imports neither.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Process group ids of running children.
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());
/// The stop signal received (0: none yet), set before any cleanup starts.
static STOPPING: AtomicI32 = AtomicI32::new(0);
/// Temporary files of atomic writes in progress.
static TEMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Remember a child's process group (its pid; the child leads its own group).
pub fn register_group(pgid: i32) {
    lock(&GROUPS).push(pgid);
}

/// Forget a process group (it was killed and reaped).
pub fn unregister_group(pgid: i32) {
    lock(&GROUPS).retain(|&g| g != pgid);
}

/// Remember a temporary file to remove if we are stopped.
pub fn register_temp(path: &Path) {
    lock(&TEMPS).push(path.to_path_buf());
}

/// Forget a temporary file (renamed into place or removed).
pub fn unregister_temp(path: &Path) {
    lock(&TEMPS).retain(|p| p != path);
}

/// SIGKILL to process group `pgid` (errors, e.g. the group is already gone, are ignored).
pub fn kill_group(pgid: i32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pgid) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Send SIGKILL to every registered process group.
pub fn kill_all_groups() {
    for &g in lock(&GROUPS).iter() {
        kill_group(g);
    }
}

/// Install the handlers (once, at start-up). Failing to install them is not fatal. On
/// SIGINT, SIGTERM or SIGHUP the handler thread kills the registered groups, removes the
/// registered temporary files, prints `error: stopped by SIGINT` (etc.) on stderr and exits
/// with 128 + the signal number.
pub fn install() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGXFSZ};
    // A flag handler makes the kernel fail the write with EFBIG rather than kill us.
    let _ = signal_hook::flag::register(SIGXFSZ, std::sync::Arc::new(AtomicBool::new(false)));
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            STOPPING.store(sig, Ordering::SeqCst);
            kill_all_groups();
            for p in lock(&TEMPS).iter() {
                let _ = std::fs::remove_file(p);
            }
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("error: stopped by {}\n", signal_name(sig)).as_bytes(),
            );
            std::process::exit(128 + sig);
        }
    });
}

/// Called by a front end before it reports a failure: when a stop signal has arrived, the
/// failure is most likely the cleanup's doing (a child killed by it), so the run's exit is
/// the handler's (`error: stopped by SIGTERM`, 128 + the signal), not the failure's. Waits up
/// to 10 s for the handler thread to exit the process, then returns (never hangs).
pub fn wait_if_stopping() {
    if STOPPING.load(Ordering::SeqCst) == 0 {
        return;
    }
    for _ in 0..100 {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

fn signal_name(sig: i32) -> &'static str {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    match sig {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}
