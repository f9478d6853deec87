//! `routeval compare` report.
