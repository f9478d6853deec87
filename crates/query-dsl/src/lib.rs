//! # routeval-query-dsl
//!
//! The `where` query language over instance metadata (flexeval's `QueryRoutedMetric`
//! semantics, `specs/query-dsl.md` Part B): compile a `where` JSON object once, evaluate it on
//! many `serde_json::Value`s. Pure: no IO.
