//! # routeval-routing-scores
//!
//! Router scores as pure functions of predictions and gold labels: CommonRouterBench's
//! `scores_v2`, `section_11`, `router_accounting` ([`crb`], `specs/crb.md`) and GQR-Bench's
//! ID/OOD accuracy and GQR score ([`gqr`], `specs/gqr.md`). Pure: no IO.

pub mod crb;
pub mod gqr;
