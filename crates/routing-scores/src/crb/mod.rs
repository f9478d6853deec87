//! CommonRouterBench tier-routing scores (`specs/crb.md`), bit-equal to the reference
//! (CommonRouterBench 0.1.0 under CPython 3.11).
//!
//! * [`records`]: the [`records::TierPredictor`] trait and built-in predictors, per-row
//!   evaluation records;
//! * [`walk`]: the trajectory walk that prices every evaluable step on three paths
//!   (always-high baseline, gold, predicted) with prompt caching;
//! * [`scores`]: `section_11`, `router_accounting`, `scores_v2`, `by_benchmark` and the eval summary;
//! * [`resample`]: `scores_v2` on bootstrap samples of whole trajectories (for confidence
//!   intervals and paired comparisons);
//! * [`predictions`]: the `file:` predictions file and the `cmd:` answer line, parsed;
//! * [`metrics`]: `main.metrics` (`CaseMetrics`, `aggregate_routerbench_metrics`,
//!   `routing_supervision_accuracy`);
//! * [`sweep`]: one threshold-sweep point (the blocks `crb eval` prints) for a tier assignment;
//! * [`table`]: the `crb eval` summary table as a typed value ([`table::EvalTable`]);
//! * [`eval`]: one `crb eval` run as a typed report ([`eval::EvalReport`]: summary, table,
//!   intervals, baseline comparison);
//! * [`cases`]: `crb metrics --cases FILE` (the cases file's text in, errors with lines);
//! * [`classifier`]: the pure parts of the reference's OpenAI-compatible digit classifier
//!   (prompt linearisation, request body, reply parsing).

pub mod cases;
pub mod classifier;
pub mod eval;
pub mod metrics;
pub mod predictions;
pub mod records;
pub mod resample;
pub mod scores;
pub mod sweep;
pub mod table;
pub mod walk;
