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

/// 32-bit FNV-1a.
pub(crate) fn fnv1a32(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811C_9DC5;
    for &b in bytes {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// The toy embedding `kind` of `text`.
pub(crate) fn toy(kind: &str, text: &str) -> Vec<f64> {
    match kind {
        "const" | "bad_rows" => vec![1.0, 0.0],
        "zero" => vec![0.0, 0.0],
        _ => {
            let mut v = vec![0.0; 64];
            let padded: Vec<char> = std::iter::once('^')
                .chain(text.chars())
                .chain(std::iter::once('$'))
                .collect();
            for w in padded.windows(3) {
                let s: String = w.iter().collect();
                let h = fnv1a32(s.as_bytes());
                let negative = kind == "tri64s" && h & 0x8000_0000 != 0;
                v[(h % 64) as usize] += if negative { -1.0 } else { 1.0 };
            }
            v
        }
    }
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
