//! `routeval gqr` report.
