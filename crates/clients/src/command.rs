//! Models behind a command: a persistent child process ([`LineChild`], its own process
//! group, killed with us) asked one JSON line at a time, each answer within a timeout:
//! `crb eval --predictor cmd:COMMAND` ([`CommandPredictor`]) and `gqr score --cmd`
//! ([`CommandRouter`]).

use routeval_core::Progress;
use routeval_core::progress::Unit;
use routeval_io::child::LineChild;
use routeval_routing_scores::crb::predictions::parse_command_answer;
use routeval_routing_scores::crb::records::TierPrediction;
use routeval_routing_scores::gqr::RawLabel;
use serde_json::Value;
use std::time::Duration;

/// A command model failed: one line naming the command and the row (the CLI exits 2 with it).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CommandError(pub String);

/// The `cmd:` predictor: a persistent child process ([`LineChild`]), one JSON row per line in,
/// one answer per line out (`0`..`3`, a tier name, `{"tier_id", "usage"}`, or `null`/`error: …`
/// = failed), each within the timeout. A process that exits before answering, stops
/// answering, or writes more lines than rows, is a hard error naming the row.
pub struct CommandPredictor {
    command: String,
    child: Option<LineChild>,
}

impl CommandPredictor {
    /// Start `command` (through the shell, in its own process group); `timeout` bounds each
    /// answer.
    ///
    /// # Errors
    /// The command cannot be started.
    pub fn spawn(command: &str, timeout: Duration) -> Result<Self, CommandError> {
        let child = LineChild::spawn(command, timeout)
            .map_err(|e| CommandError(format!("cmd:{command}: cannot start: {e}")))?;
        Ok(CommandPredictor {
            command: command.to_string(),
            child: Some(child),
        })
    }

    /// Predict every row in order (`ids` name the rows in messages), the stage and its
    /// per-row progress on `progress`; then close stdin and check nothing more was written.
    ///
    /// # Errors
    /// The process exited, stopped answering within the timeout, or wrote more lines than
    /// there were rows (desynchronised); the message names the row.
    pub fn run(
        mut self,
        rows: &[&Value],
        ids: &[String],
        progress: &dyn Progress,
    ) -> Result<Vec<Result<TierPrediction, String>>, CommandError> {
        let mut out = Vec::with_capacity(rows.len());
        let Some(mut child) = self.child.take() else {
            return Err(CommandError(format!("cmd:{}: not running", self.command)));
        };
        progress.stage(
            &format!("cmd:{}", self.command),
            Some(rows.len() as u64),
            Unit::Items,
        );
        let mut errors = 0u64;
        for (i, row) in rows.iter().enumerate() {
            let line = serde_json::to_string(row).map_err(|e| CommandError(e.to_string()))?;
            // Integers beyond 64 bits go out with their digits, as they came in.
            let line = routeval_core::py::unmark_big_ints(&line).into_owned();
            let id = ids.get(i).map(String::as_str).unwrap_or("?");
            let answer = child.ask(&line).map_err(|e| {
                CommandError(format!(
                    "cmd:{}: row {} (id {id}): {e}",
                    self.command,
                    i + 1
                ))
            })?;
            let p = parse_command_answer(answer.trim(), routeval_io::child::clip).map_err(
                |(e, unreadable)| {
                    if unreadable {
                        progress.note(&format!(
                            "warning: cmd:{}: row {}: {e}; counted as a predictor error",
                            self.command, id
                        ));
                    }
                    e
                },
            );
            if p.is_err() {
                errors += 1;
                progress.status(&format!("{errors} predictor errors"));
            }
            progress.advance(1);
            out.push(p);
        }
        let extra = child.finish(std::time::Duration::from_secs(5));
        if extra > 0 {
            return Err(CommandError(format!(
                "cmd:{}: wrote {extra} more non-empty line(s) than the {} input rows: desynchronised (exactly one answer line per row is required)",
                self.command,
                rows.len()
            )));
        }
        Ok(out)
    }
}

/// A persistent router process ([`LineChild`]): one JSON string per line in, one label per
/// line out, each answer within a timeout
/// (`routeval gqr score --cmd`).
pub struct CommandRouter {
    child: Option<LineChild>,
    cmd: String,
    line: u64,
}

impl CommandRouter {
    /// Start the router `cmd` (through the shell, in its own process group); `timeout`
    /// bounds each answer.
    ///
    /// # Errors
    /// The command cannot be started.
    pub fn spawn(cmd: &str, timeout: Duration) -> Result<CommandRouter, CommandError> {
        let child = LineChild::spawn(cmd, timeout)
            .map_err(|e| CommandError(format!("--cmd {cmd:?}: cannot start: {e}")))?;
        Ok(CommandRouter {
            child: Some(child),
            cmd: cmd.to_string(),
            line: 0,
        })
    }

    /// Output lines read so far (the line a label came from).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Route the text of row `id`: its integer (or float) label.
    ///
    /// # Errors
    /// The router exited, did not answer in time, or answered something else than a number;
    /// the message names the output line and the row.
    pub fn route(&mut self, text: &str, id: &str) -> Result<RawLabel, CommandError> {
        self.line += 1;
        let fail = |what: String| {
            CommandError(format!(
                "router {:?}: output line {} (row {id}): {what}",
                self.cmd, self.line
            ))
        };
        let msg = serde_json::to_string(text).unwrap_or_default();
        let Some(child) = self.child.as_mut() else {
            return Err(fail("the router was already closed".into()));
        };
        let reply = child.ask(&msg).map_err(|e| fail(e.to_string()))?;
        let t = reply.trim();
        match serde_json::from_str::<Value>(t)
            .ok()
            .and_then(|v| RawLabel::from_json(&v))
        {
            Some(l @ (RawLabel::Int(_) | RawLabel::Float(_))) => Ok(l),
            _ => Err(fail(format!(
                "expected an integer label, got {:?}",
                routeval_io::child::clip(t)
            ))),
        }
    }

    /// Close the router's stdin and check it wrote nothing beyond one line per input; the
    /// router's process group is killed afterwards.
    ///
    /// # Errors
    /// The router wrote more lines than it was given (desynchronised).
    pub fn finish(&mut self) -> Result<(), CommandError> {
        let Some(child) = self.child.take() else {
            return Ok(());
        };
        let extra = child.finish(std::time::Duration::from_secs(5));
        if extra > 0 {
            return Err(CommandError(format!(
                "router {:?}: wrote {extra} more non-empty line(s) than the {} inputs: desynchronised (exactly one output line per input line is required)",
                self.cmd, self.line
            )));
        }
        Ok(())
    }
}
