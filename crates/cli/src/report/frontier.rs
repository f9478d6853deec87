//! `routeval frontier` report.
