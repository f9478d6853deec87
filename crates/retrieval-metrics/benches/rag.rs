//! Criterion benchmarks for the rag-quality-check kernels: the five retrieval metrics on a
//! ranked gain list, the tokenizer, sentence splitting, the Python-compatible JSON reader,
//! and whole-run evaluation of id and text cases.
//!
//! `cargo bench -p routeval-retrieval-metrics --bench rag`

use criterion::{Criterion, criterion_group, criterion_main};
use routeval_retrieval_metrics::rag::{Options, evaluate, metrics, parse_cases, text};
use std::hint::black_box;

fn gains(n: usize) -> (Vec<f64>, Vec<f64>) {
    let g: Vec<f64> = (0..n)
        .map(|i| {
            if i % 7 == 3 || i % 11 == 0 {
                (i % 3 + 1) as f64
            } else {
                0.0
            }
        })
        .collect();
    let ideal: Vec<f64> = g.iter().copied().filter(|x| *x > 0.0).collect();
    (g, ideal)
}

fn id_cases(n: usize) -> String {
    let mut s = String::from("[");
    for q in 0..n {
        if q > 0 {
            s.push(',');
        }
        let retrieved: Vec<String> = (0..20)
            .map(|d| format!("\"d{}\"", q * 31 + d * 7))
            .collect();
        s.push_str(&format!(
            "{{\"query\": \"reset my password {q}\", \"retrieved\": [{}], \"relevant\": [\"d{}\", \"d{}\"]}}",
            retrieved.join(", "),
            q * 31 + 14,
            q * 31 + 999
        ));
    }
    s.push(']');
    s
}

fn text_cases(n: usize) -> String {
    text_cases_with(n, false)
}

/// Text cases; with `distinct`, every passage carries its own number, so a run of `n` cases
/// has `10 n` distinct passages (the passage cache is then megabytes, as in a large run).
fn text_cases_with(n: usize, distinct: bool) -> String {
    let words = [
        "account", "password", "reset", "billing", "plan", "cancel", "the", "your", "token",
        "server", "invoice", "refund",
    ];
    let sent = |seed: usize, len: usize| -> String {
        (0..len)
            .map(|i| words[(seed * 7 + i * 5) % words.len()])
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut s = String::from("[");
    for q in 0..n {
        if q > 0 {
            s.push(',');
        }
        let retrieved: Vec<String> = (0..10)
            .map(|d| {
                let tag = if distinct {
                    format!(" n{}", q * 10 + d)
                } else {
                    String::new()
                };
                format!(
                    "{{\"id\": \"d{d}\", \"text\": \"{}. {}{tag}.\"}}",
                    sent(q + d, 9),
                    sent(q * 3 + d, 12)
                )
            })
            .collect();
        s.push_str(&format!(
            "{{\"query\": \"{}\", \"retrieved\": [{}], \"relevant\": [\"d1\"], \"answer\": \"{}. {}.\", \"ground_truth\": \"{}\"}}",
            sent(q, 5),
            retrieved.join(", "),
            sent(q + 1, 9),
            sent(q + 77, 8),
            sent(q + 1, 6)
        ));
    }
    s.push(']');
    s
}

fn bench(c: &mut Criterion) {
    let (g, ideal) = gains(100);
    c.bench_function("rag/metrics_k10_len100", |b| {
        b.iter(|| {
            let g = black_box(&g);
            let ideal = black_box(&ideal);
            (
                metrics::precision_at_k(g, 10),
                metrics::recall_at_k(g, ideal, 10),
                metrics::mrr(g, 10),
                metrics::ndcg_at_k(g, ideal, 10),
                metrics::hit_rate(g, 10),
            )
        })
    });
    let passage = "To reset your password, open Settings and choose Reset. Straße café 中文検索 — the token expires in 24 hours!";
    c.bench_function("rag/tokenize_passage", |b| {
        b.iter(|| text::tokenize(black_box(passage)))
    });
    let mut interner = text::Interner::default();
    let mut out: Vec<u32> = Vec::new();
    c.bench_function("rag/intern_passage", |b| {
        b.iter(|| {
            out.clear();
            interner.tokenize_into(black_box(passage), &mut out)
        })
    });
    let ascii = "Monitor is you to of storage for report credit for. File a price setting you is latency token.";
    c.bench_function("rag/intern_ascii_passage", |b| {
        b.iter(|| {
            out.clear();
            interner.tokenize_into(black_box(ascii), &mut out)
        })
    });
    // 1,000 passages of 18 words drawn at random (a fixed-seed generator) from 120, ten of
    // them stopwords. `rag/intern_passage` above repeats one passage, whose token order the
    // branch predictor learns; real text does not allow that (sorting a set's ids costs
    // more in a run than there).
    let stopwords = [
        "the", "a", "of", "to", "is", "and", "in", "for", "you", "your",
    ];
    let vocabulary: Vec<String> = (0..120)
        .map(|i| match stopwords.get(i) {
            Some(w) => w.to_string(),
            None => format!("w{i}ord"),
        })
        .collect();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut draw = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let random_passages: Vec<String> = (0..1000)
        .map(|_| {
            let words: Vec<&str> = (0..18)
                .map(|_| vocabulary[(draw() % 120) as usize].as_str())
                .collect();
            format!("{}.", words.join(" "))
        })
        .collect();
    c.bench_function("rag/intern_1000_random_passages", |b| {
        b.iter(|| {
            out.clear();
            for p in &random_passages {
                interner.tokenize_into(black_box(p), &mut out);
            }
            out.len()
        })
    });
    c.bench_function("rag/split_sentences", |b| {
        b.iter(|| text::split_sentences(black_box(passage)))
    });
    let ids = id_cases(1000);
    let texts = text_cases(1000);
    c.bench_function("rag/parse_1000_id_cases", |b| {
        b.iter(|| parse_cases(black_box(&ids), "bench").unwrap())
    });
    c.bench_function("rag/parse_1000_text_cases", |b| {
        b.iter(|| parse_cases(black_box(&texts), "bench").unwrap())
    });
    let id_parsed = parse_cases(&ids, "bench").unwrap();
    let text_parsed = parse_cases(&texts, "bench").unwrap();
    let opts = Options {
        k: 10,
        threshold: 0.5,
    };
    c.bench_function("rag/evaluate_1000_id_cases", |b| {
        b.iter(|| evaluate(black_box(&id_parsed), &opts, None).unwrap())
    });
    c.bench_function("rag/evaluate_1000_text_cases", |b| {
        b.iter(|| evaluate(black_box(&text_parsed), &opts, None).unwrap())
    });
    // 200,000 distinct passages: the passage cache's table (about 12 MB per thread) misses
    // the processor's caches, which `prepare_passages` touches ahead of its lookups.
    let distinct = text_cases_with(20_000, true);
    let distinct_parsed = parse_cases(&distinct, "bench").unwrap();
    c.bench_function("rag/evaluate_20000_text_cases_distinct_passages", |b| {
        b.iter(|| evaluate(black_box(&distinct_parsed), &opts, None).unwrap())
    });
    let report = evaluate(&text_parsed, &opts, None).unwrap();
    c.bench_function("rag/to_json_1000_cases", |b| {
        b.iter(|| black_box(&report).to_json())
    });
    // Many batches and windows: results written in place by the workers (`RagRun::push`),
    // and the `--json` report written window by window while the next one is rendered (into
    // a reused buffer here, standing in for the output file's page cache).
    let many = id_cases(20_000);
    let many_parsed = parse_cases(&many, "bench").unwrap();
    c.bench_function("rag/evaluate_20000_id_cases", |b| {
        b.iter(|| evaluate(black_box(&many_parsed), &opts, None).unwrap())
    });
    let many_report = evaluate(&many_parsed, &opts, None).unwrap();
    let mut sink: Vec<u8> = Vec::with_capacity(64 << 20);
    c.bench_function("rag/write_json_20000_id_cases", |b| {
        b.iter(|| {
            sink.clear();
            black_box(&many_report).write_json(&mut sink).unwrap();
            sink.len()
        })
    });
    // The per-case rows (`--format jsonl|csv`), rendered a window at a time on the pool.
    c.bench_function("rag/rows_jsonl_20000_id_cases", |b| {
        b.iter(|| {
            sink.clear();
            black_box(&many_report).write_rows_jsonl(&mut sink).unwrap();
            sink.len()
        })
    });
    c.bench_function("rag/rows_csv_20000_id_cases", |b| {
        b.iter(|| {
            sink.clear();
            black_box(&many_report).write_rows_csv(&mut sink).unwrap();
            sink.len()
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
