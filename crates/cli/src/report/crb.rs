//! `routeval crb` report.
