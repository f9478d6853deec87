//! The one child-process type of routeval ([`LineChild`]): `gqr score --cmd`, `crb eval
//! --predictor cmd:` and `rag --embed-cmd` all run a user command the same way (issue 10,
//! item 2).
//!
//! * `sh -c COMMAND` in its own process group; the whole group (the shell and everything it
//!   started) is killed with SIGKILL on every exit path: when the [`LineChild`] is dropped
//!   (normal end, error, panic unwinding), and on SIGINT/SIGTERM/SIGHUP to routeval
//!   ([`crate::signals`]).
//! * A line protocol: one request line in, one answer line out. Writing and reading happen on
//!   two helper threads, so a child that never reads its stdin or never answers cannot block
//!   us: each answer has a deadline ([`LineChild::ask`]).
//! * An answer line longer than [`MAX_LINE`] bytes is an error; a last answer without its
//!   newline (the child closed stdout after it) is accepted.
//! * [`clip`] cuts answer text to 200 characters for messages.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Longest answer line accepted, in bytes (a 256 × 3072 embedding batch as JSON is ~16 MB).
pub(crate) const MAX_LINE: u64 = 256 << 20;

/// Characters of an answer quoted in a message.
pub(crate) const CLIP_CHARS: usize = 200;

/// The advice every timeout message carries.
pub(crate) const FLUSH_HINT: &str = "is the router flushing stdout? (python3 -u)";

/// `s` cut to [`CLIP_CHARS`] characters (with `…` and the full length when cut).
pub(crate) fn clip(s: &str) -> String {
    let n = s.chars().count();
    if n <= CLIP_CHARS {
        s.to_string()
    } else {
        let head: String = s.chars().take(CLIP_CHARS).collect();
        format!("{head}… ({n} characters)")
    }
}

/// SIGKILL to process group `pgid` (errors, e.g. the group is already gone, are ignored).
pub(crate) fn kill_group(pgid: i32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pgid) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Why [`LineChild::ask`] got no answer.
#[derive(Debug)]
pub(crate) enum AskError {
    /// No answer line within the deadline.
    Timeout(Duration),
    /// The child's stdout ended before an answer (usually: it exited); the exit status when
    /// it is known.
    Closed(Option<ExitStatus>),
    /// The child stopped reading its stdin (the write failed) and gave no answer.
    NotReading(String),
    /// Reading stdout failed, or an answer line was too long.
    Read(String),
}

impl std::fmt::Display for AskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AskError::Timeout(d) => write!(
                f,
                "did not answer within {} s: {FLUSH_HINT}",
                d.as_secs_f64()
            ),
            AskError::Closed(None) => write!(
                f,
                "closed its stdout before answering (the process is still running)"
            ),
            AskError::Closed(Some(status)) => {
                write!(f, "exited before answering")?;
                match status.code() {
                    Some(127) => write!(f, " (exit status 127: command not found or cannot start)"),
                    Some(c) => write!(f, " (exit status {c})"),
                    None => write!(f, " ({status})"),
                }
            }
            AskError::NotReading(e) => {
                write!(f, "stopped reading its stdin ({e})")
            }
            AskError::Read(e) => write!(f, "cannot read the answer: {e}"),
        }
    }
}

/// A running `sh -c COMMAND` spoken to one line at a time.
pub(crate) struct LineChild {
    child: Child,
    pgid: i32,
    to_child: Option<SyncSender<Vec<u8>>>,
    write_error: Arc<Mutex<Option<String>>>,
    lines: Receiver<io::Result<String>>,
    timeout: Duration,
}

impl LineChild {
    /// Start `sh -c command` with piped stdin/stdout (stderr passes through) in a new process
    /// group; `timeout` is the deadline of each answer.
    pub(crate) fn spawn(command: &str, timeout: Duration) -> io::Result<LineChild> {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0)
            .spawn()?;
        let pgid = i32::try_from(child.id()).unwrap_or(0);
        crate::signals::register_group(pgid);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();

        // Writer: the requests, in order; on the first error it records it and stops (which
        // closes the child's stdin).
        let (to_child, requests) = sync_channel::<Vec<u8>>(1);
        let write_error = Arc::new(Mutex::new(None));
        let we = write_error.clone();
        std::thread::spawn(move || {
            let Some(mut stdin) = stdin else { return };
            for req in requests {
                if let Err(e) = stdin.write_all(&req).and_then(|()| stdin.flush()) {
                    *we.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
                    return;
                }
            }
        });

        // Reader: answer lines (without the line end); a last line without newline counts.
        let (tx, lines) = sync_channel::<io::Result<String>>(16);
        std::thread::spawn(move || {
            let Some(stdout) = stdout else { return };
            let mut reader = BufReader::with_capacity(1 << 16, stdout);
            loop {
                let mut buf = Vec::new();
                match (&mut reader).take(MAX_LINE + 1).read_until(b'\n', &mut buf) {
                    Ok(0) => return,
                    Ok(_) => {
                        if buf.len() as u64 > MAX_LINE {
                            let _ = tx.send(Err(io::Error::other(format!(
                                "an answer line is longer than {} MiB",
                                MAX_LINE >> 20
                            ))));
                            return;
                        }
                        if buf.last() == Some(&b'\n') {
                            buf.pop();
                            if buf.last() == Some(&b'\r') {
                                buf.pop();
                            }
                        }
                        let line = String::from_utf8(buf)
                            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
                        if tx.send(Ok(line)).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        Ok(LineChild {
            child,
            pgid,
            to_child: Some(to_child),
            write_error,
            lines,
            timeout,
        })
    }

    fn write_error(&self) -> Option<String> {
        self.write_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The exit status, waiting up to `wait` for the child to exit.
    fn status_within(&mut self, wait: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + wait;
        loop {
            match self.child.try_wait() {
                Ok(Some(s)) => return Some(s),
                Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(10)),
                _ => return None,
            }
        }
    }

    /// Send `request` (a newline is appended) and wait for one answer line.
    pub(crate) fn ask(&mut self, request: &str) -> Result<String, AskError> {
        let mut bytes = Vec::with_capacity(request.len() + 1);
        bytes.extend_from_slice(request.as_bytes());
        bytes.push(b'\n');
        let deadline = Instant::now() + self.timeout;
        let sent = match &self.to_child {
            // The writer may still be busy with an earlier request; wait for it within the
            // same deadline.
            Some(tx) => {
                let mut pending = Some(bytes);
                loop {
                    match tx.try_send(pending.take().unwrap_or_default()) {
                        Ok(()) => break true,
                        Err(std::sync::mpsc::TrySendError::Full(b)) => {
                            if Instant::now() >= deadline {
                                return Err(AskError::Timeout(self.timeout));
                            }
                            pending = Some(b);
                            std::thread::sleep(Duration::from_millis(1));
                        }
                        Err(std::sync::mpsc::TrySendError::Disconnected(_)) => break false,
                    }
                }
            }
            None => false,
        };
        // Wait in slices: once the request could not be written (the command closed its
        // stdin), an answer can only be one already on its way, so wait briefly, not the
        // whole deadline.
        // Likewise once the command itself has exited: a process it left in the background
        // may hold stdout open for good, and waiting out the deadline would then blame a
        // "hang" on a command that exited.
        let mut deadline = deadline;
        let mut shortened = false;
        let mut exited: Option<ExitStatus> = None;
        loop {
            if exited.is_none()
                && let Ok(Some(status)) = self.child.try_wait()
            {
                exited = Some(status);
                shortened = false;
            }
            if !shortened && (!sent || self.write_error().is_some() || exited.is_some()) {
                deadline = deadline.min(Instant::now() + Duration::from_millis(500));
                shortened = true;
            }
            let now = Instant::now();
            let slice = deadline
                .saturating_duration_since(now)
                .min(Duration::from_millis(50));
            match self.lines.recv_timeout(slice) {
                Ok(Ok(line)) => return Ok(line),
                Ok(Err(e)) => return Err(AskError::Read(e.to_string())),
                Err(RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
                Err(RecvTimeoutError::Timeout) => {
                    if let Some(status) = exited {
                        return Err(AskError::Closed(Some(status)));
                    }
                    return match self.write_error() {
                        Some(e) => Err(AskError::NotReading(e)),
                        None if !sent => Err(AskError::NotReading("stdin closed".into())),
                        None => Err(AskError::Timeout(self.timeout)),
                    };
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(AskError::Closed(self.status_within(Duration::from_secs(1))));
                }
            }
        }
    }

    /// Close the child's stdin (the end-of-input signal), then count the non-empty lines it
    /// still writes until it closes stdout, waiting at most `grace`; the group is killed
    /// afterwards. A non-zero count means the answers were misaligned (more lines than
    /// requests).
    pub(crate) fn finish(mut self, grace: Duration) -> usize {
        drop(self.to_child.take());
        let mut end = Instant::now() + grace;
        let mut exited = false;
        let mut extra = 0;
        loop {
            // Once the command has exited, lines still in the pipe arrive at once; a process
            // it left in the background may hold stdout open, so do not wait out the grace.
            if !exited && matches!(self.child.try_wait(), Ok(Some(_))) {
                exited = true;
                end = end.min(Instant::now() + Duration::from_millis(500));
            }
            let left = end
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(50));
            if left.is_zero() {
                break;
            }
            match self.lines.recv_timeout(left) {
                Err(RecvTimeoutError::Timeout) => continue,
                Ok(Ok(l)) if !l.trim().is_empty() => extra += 1,
                Ok(Ok(_)) => {}
                Ok(Err(_)) | Err(_) => break,
            }
        }
        // Give the shell the rest of the grace period to exit on its own.
        let _ = self.status_within(end.saturating_duration_since(Instant::now()));
        extra
    }
}

impl Drop for LineChild {
    fn drop(&mut self) {
        drop(self.to_child.take());
        // Kill the group before reaping the leader, so the group id cannot be reused.
        kill_group(self.pgid);
        let _ = self.child.kill();
        let _ = self.child.wait();
        crate::signals::unregister_group(self.pgid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_cuts_long_text_only() {
        assert_eq!(clip("abc"), "abc");
        let long = "é".repeat(250);
        let c = clip(&long);
        assert!(c.starts_with(&"é".repeat(200)));
        assert!(c.ends_with("… (250 characters)"));
    }

    #[test]
    fn answers_and_extra_lines() {
        let mut c = LineChild::spawn(
            "while read l; do echo \"got $l\"; done",
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(c.ask("a").unwrap(), "got a");
        assert_eq!(c.ask("b").unwrap(), "got b");
        assert_eq!(c.finish(Duration::from_secs(5)), 0);
    }

    #[test]
    fn last_line_without_newline_is_an_answer() {
        let mut c = LineChild::spawn("read l; printf 'x'", Duration::from_secs(10)).unwrap();
        assert_eq!(c.ask("a").unwrap(), "x");
        assert!(matches!(
            c.ask("b"),
            Err(AskError::Closed(_) | AskError::NotReading(_))
        ));
    }

    #[test]
    fn hang_times_out() {
        let mut c = LineChild::spawn("sleep 1000", Duration::from_millis(300)).unwrap();
        let t = Instant::now();
        let e = c.ask("a").unwrap_err();
        assert!(matches!(e, AskError::Timeout(_)), "{e}");
        assert!(e.to_string().contains(FLUSH_HINT));
        assert!(t.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn an_exit_is_reported_though_a_leftover_process_holds_stdout() {
        // The shell exits 3 without answering; its background `sleep` keeps stdout open.
        let mut c = LineChild::spawn("sleep 1000 & exit 3", Duration::from_secs(30)).unwrap();
        let t = Instant::now();
        let e = c.ask("x").unwrap_err();
        assert!(
            matches!(e, AskError::Closed(Some(s)) if s.code() == Some(3)),
            "{e}"
        );
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }

    #[test]
    fn exit_status_is_reported() {
        let mut c = LineChild::spawn("exit 7", Duration::from_secs(10)).unwrap();
        let e = c.ask("a").unwrap_err().to_string();
        assert!(
            e.contains("exit status 7") || e.contains("stopped reading"),
            "{e}"
        );
    }
}
