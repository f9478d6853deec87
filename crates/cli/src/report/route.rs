//! `routeval route` report.
