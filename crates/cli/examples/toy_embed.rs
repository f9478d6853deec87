//! A tiny embedding command for `routeval rag --embed-cmd`, and the protocol's reference
//! implementation: read one JSON array of texts per line on stdin, answer one JSON array of
//! vectors per line on stdout.
//!
//! It computes the toy embeddings of routeval's rag golden corpus (`cases/README.md`):
//! `tri64` (FNV-1a-hashed character trigrams of `^text$` into 64 buckets), `tri64s` (signed),
//! `const` (`[1, 0]`), `zero` (`[0, 0]`) and `bad_rows` (one row too few, to exercise the
//! error path). With `TOY_EMBED_LOG=PATH` every call's texts are appended to PATH as a JSON
//! line.
//!
//! ```text
//! cargo build --example toy_embed -p routeval-cli
//! routeval rag examples/data/rag/cases.json --embed-cmd "target/debug/examples/toy_embed tri64"
//! ```

use std::io::{BufRead, Write};

/// The toy embedding `kind` of `text` (`routeval_retrieval_metrics::rag::toy_embedding`;
/// `bad_rows` embeds as `const`, then drops a row).
pub(crate) fn toy(kind: &str, text: &str) -> Vec<f64> {
    let kind = if kind == "bad_rows" { "const" } else { kind };
    routeval_retrieval_metrics::rag::toy_embedding(kind, text)
}

#[allow(dead_code)]
fn main() {
    let kind = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "tri64".to_string());
    let log = std::env::var("TOY_EMBED_LOG").ok();
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let texts: Vec<String> = match serde_json::from_str(&line) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("toy_embed: bad request line: {e}");
                std::process::exit(2);
            }
        };
        if let Some(path) = &log
            && let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
        {
            let _ = writeln!(f, "{}", serde_json::to_string(&texts).unwrap_or_default());
        }
        let mut rows: Vec<Vec<f64>> = texts.iter().map(|t| toy(&kind, t)).collect();
        if kind == "bad_rows" {
            rows.pop();
        }
        let reply = serde_json::to_string(&rows).unwrap_or_default();
        if writeln!(out, "{reply}").and_then(|()| out.flush()).is_err() {
            break;
        }
    }
}
