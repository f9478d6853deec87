//! `routeval rag` report.
