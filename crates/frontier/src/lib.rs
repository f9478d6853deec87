//! # routeval-frontier
//!
//! Cost–quality frontiers of routers and the threshold rules that trace them. Pure logic: no
//! IO; parsers take [`std::io::BufRead`]ers.
//!
//! * [`numpy`]: the two numpy routines the references compute with, reproduced bit for bit:
//!   `np.trapz` (pairwise summation) and `np.interp`.
//! * [`ndch`]: RouterBench's non-decreasing convex hull (NDCH) of a system's (cost, quality)
//!   points, two ways ([`ndch::ndch_hull`], O(n log n); [`ndch::ndch_routerbench`], the
//!   reference's own pairwise algorithm with its quirks), AIQ ([`ndch::aiq`]) and the Pareto
//!   set ([`ndch::pareto`]). Source: withmartian/routerbench `evaluation/AIQ.py`.
//! * [`strong_share`]: RouteLLM's curve over the share of strong-model calls: AUC, APGR and
//!   CPT(x) ("x % qual"). Source: lm-sys/RouteLLM `routellm/evals/evaluate.py`.
//! * [`points`]: the JSONL inputs of `routeval frontier` and the typed reports it prints.
//! * [`threshold`]: router threshold rules (CommonRouterBench's cumulative tier rule, GQR-Bench's
//!   argmax-or-out-of-domain rule), probability validation, threshold grids, and picking a
//!   threshold on a calibration curve.
//!
//! **Architecture invariant:** depends only on `routeval-core`; never touches files,
//! processes or clocks.

pub mod ndch;
pub mod numpy;
pub mod points;
pub mod strong_share;
pub mod threshold;
