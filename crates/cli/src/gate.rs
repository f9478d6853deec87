//! `--fail-under METRIC=VALUE` (repeatable), the quality gate of every subcommand that
//! produces metrics. Parsing and checking live in `routeval_core::gate`; this module is the
//! flag and the rendering: one stderr line per failing gate, exit 3.

use crate::common::{CmdResult, EXIT_OK, EXIT_STRICT, Failure};
use routeval_core::gate::{self, Gate, NamedMetrics};
use std::io::Write;

/// The `--fail-under` flag, flattened into a subcommand's arguments.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct GateArgs {
    /// Quality gate: exit 3 when METRIC is below VALUE, or was not computed (repeatable; one
    /// stderr line per failing gate). METRIC as the `--json` output names it, VALUE in its
    /// units (fractions for trec, rag and gqr; percent for crb's `*_percent`); an unknown
    /// METRIC, or a VALUE outside the metric's range or in the other unit (0.8 for a percent
    /// metric, 80 for a fraction), is a usage error (exit 2) naming the unit.
    #[arg(long = "fail-under", value_name = "METRIC=VALUE", value_parser = parse_gate)]
    pub(crate) fail_under: Vec<Gate>,
}

fn parse_gate(s: &str) -> Result<Gate, String> {
    s.parse::<Gate>().map_err(|e| e.to_string())
}

impl GateArgs {
    /// Check the gates name metrics of `names` (before the work, when the names are known).
    pub(crate) fn validate(&self, names: &[String]) -> Result<(), Failure> {
        gate::validate(&self.fail_under, names).map_err(Failure::bad_input)
    }

    /// Check the gates against `report`: `Ok(0)` when all pass; else one stderr line per
    /// failing gate and `Ok(3)`. An unknown metric is a usage error (exit 2).
    pub(crate) fn apply<R: NamedMetrics + ?Sized>(&self, report: &R) -> CmdResult {
        apply(&self.fail_under, report, "error")
    }
}

/// [`GateArgs::apply`] for callers with their own flag parsing (`rag`); `prefix` starts each
/// stderr line (`error`, or `routeval rag: error`).
pub(crate) fn apply<R: NamedMetrics + ?Sized>(
    gates: &[Gate],
    report: &R,
    prefix: &str,
) -> CmdResult {
    let failures = gate::check(gates, report).map_err(Failure::bad_input)?;
    let mut err = std::io::stderr().lock();
    // A passing gate with a caveat (a partial score) says what it checked.
    let passed: Vec<Gate> = gates
        .iter()
        .filter(|g| !failures.iter().any(|f| &f.gate == *g))
        .cloned()
        .collect();
    for n in gate::notes(&passed, report) {
        let _ = writeln!(err, "note: {n}");
    }
    if failures.is_empty() {
        return Ok(EXIT_OK);
    }
    for f in &failures {
        let _ = writeln!(err, "{prefix}: {f}");
    }
    Ok(EXIT_STRICT)
}
