//! Matching 100k parsed instances against the 5 routes of
//! `$ROUTEVAL_SHARED/bench/query_bench_gen.py` (target: <= 52 ms, 1/20 of the Python model's
//! 1.04 s). Data: `$QUERY_BENCH_DIR` (default `target/query-bench`), generated with
//! `python3 $ROUTEVAL_SHARED/bench/query_bench_gen.py DIR` when missing.

use criterion::{Criterion, criterion_group, criterion_main};
use routeval_query_dsl::{Doc, OnMissingKey, Query};
use serde_json::Value;
use std::hint::black_box;
use std::path::PathBuf;

fn data_dir() -> PathBuf {
    let dir = std::env::var("QUERY_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/query-bench")
        });
    if !dir.join("data.jsonl").exists() {
        let shared = std::env::var("ROUTEVAL_SHARED").unwrap_or_else(|_| "../shared".into());
        let script = PathBuf::from(shared).join("bench/query_bench_gen.py");
        let status = std::process::Command::new("python3")
            .arg(&script)
            .arg(&dir)
            .status()
            .expect("run query_bench_gen.py (set ROUTEVAL_SHARED or QUERY_BENCH_DIR)");
        assert!(status.success(), "{} failed", script.display());
    }
    dir
}

/// CPU time of this thread in ns (`/proc/thread-self/schedstat`), when available: wall-clock
/// figures are unreliable on a machine shared with other builds.
fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn bench(c: &mut Criterion) {
    let dir = data_dir();
    let text = std::fs::read_to_string(dir.join("data.jsonl")).expect("data.jsonl");
    let instances: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let routes: serde_json::Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("routes.json")).expect("routes"))
            .expect("routes.json");
    let queries: Vec<(String, Query)> = routes
        .iter()
        .map(|(k, w)| (k.clone(), Query::parse(w).expect("route compiles")))
        .collect();
    assert!(
        queries.len() <= 8,
        "the rayon Doc bench sums up to 8 routes"
    );
    let counts: Vec<usize> = queries
        .iter()
        .map(|(_, q)| {
            instances
                .iter()
                .filter(|i| q.matches(i, OnMissingKey::Skip).unwrap())
                .count()
        })
        .collect();
    eprintln!("matches per route: {counts:?}");
    let mut total_cpu = 0u64;
    for (name, q) in &queries {
        let t = std::time::Instant::now();
        let c0 = thread_cpu_ns();
        let n = instances
            .iter()
            .filter(|i| q.matches(i, OnMissingKey::Skip).unwrap())
            .count();
        let cpu = c0.zip(thread_cpu_ns()).map(|(a, b)| b - a).unwrap_or(0);
        total_cpu += cpu;
        eprintln!(
            "  {name}: {n} matches, one pass: wall {:?}, thread CPU {:.1} ms",
            t.elapsed(),
            cpu as f64 / 1e6
        );
    }
    eprintln!(
        "  all 5 routes, route-major: thread CPU {:.1} ms",
        total_cpu as f64 / 1e6
    );
    let t = std::time::Instant::now();
    let c0 = thread_cpu_ns();
    let mut per_route = vec![0usize; queries.len()];
    for inst in &instances {
        for (k, (_, q)) in queries.iter().enumerate() {
            per_route[k] += usize::from(q.matches(inst, OnMissingKey::Skip).unwrap());
        }
    }
    let cpu = c0.zip(thread_cpu_ns()).map(|(a, b)| b - a).unwrap_or(0);
    assert_eq!(per_route, counts);
    eprintln!(
        "  all 5 routes, instance-major: wall {:?}, thread CPU {:.1} ms",
        t.elapsed(),
        cpu as f64 / 1e6
    );

    // The compact representation: one `Doc` tape per instance, built once (not timed).
    let t = std::time::Instant::now();
    let docs: Vec<Doc> = instances
        .iter()
        .map(|v| Doc::from_value(v).expect("Doc"))
        .collect();
    let doc_bytes: usize = docs.iter().map(Doc::heap_bytes).sum();
    eprintln!(
        "  built {} Docs in {:?} ({:.1} MB of tape + text)",
        docs.len(),
        t.elapsed(),
        doc_bytes as f64 / 1e6
    );
    for pass in 0..3 {
        let t = std::time::Instant::now();
        let c0 = thread_cpu_ns();
        let mut per_route = vec![0usize; queries.len()];
        for d in &docs {
            for (k, (_, q)) in queries.iter().enumerate() {
                per_route[k] += usize::from(q.matches_doc(d, OnMissingKey::Skip).unwrap());
            }
        }
        let cpu = c0.zip(thread_cpu_ns()).map(|(a, b)| b - a).unwrap_or(0);
        assert_eq!(
            per_route, counts,
            "Doc path counts differ from the Value path"
        );
        eprintln!(
            "  all 5 routes on Docs, instance-major, pass {pass}: wall {:?}, thread CPU {:.1} ms",
            t.elapsed(),
            cpu as f64 / 1e6
        );
    }

    {
        // Compute floor: the first 64 instances, evaluated repeatedly (all in cache).
        let few = &instances[..64];
        let c0 = thread_cpu_ns();
        let mut n = 0usize;
        for _ in 0..(100_000 / 64) {
            for inst in few {
                for (_, q) in &queries {
                    n += usize::from(q.matches(black_box(inst), OnMissingKey::Skip).unwrap());
                }
            }
        }
        let cpu = c0.zip(thread_cpu_ns()).map(|(a, b)| b - a).unwrap_or(0);
        eprintln!(
            "  cached floor (~100k x 5): thread CPU {:.1} ms ({n})",
            cpu as f64 / 1e6
        );
        for (name, q) in &queries {
            let c0 = thread_cpu_ns();
            for _ in 0..(100_000 / 64) {
                for inst in few {
                    n += usize::from(q.matches(black_box(inst), OnMissingKey::Skip).unwrap());
                }
            }
            let cpu = c0.zip(thread_cpu_ns()).map(|(a, b)| b - a).unwrap_or(0);
            eprintln!("    {name}: cached {:.1} ms", cpu as f64 / 1e6);
        }
        black_box(n);
    }
    let mut g = c.benchmark_group("query_dsl");
    g.sample_size(20);
    g.bench_function("match_100k_x_5_routes_sequential", |b| {
        b.iter(|| {
            // Instance-major, as `route` evaluates (each instance is hot in cache for all
            // routes).
            let mut n = 0usize;
            for inst in &instances {
                for (_, q) in &queries {
                    n += usize::from(q.matches(black_box(inst), OnMissingKey::Skip).unwrap());
                }
            }
            n
        })
    });
    g.bench_function("match_100k_x_5_routes_rayon", |b| {
        use rayon::prelude::*;
        b.iter(|| {
            instances
                .par_iter()
                .with_min_len(1024)
                .map(|inst| {
                    queries
                        .iter()
                        .map(|(_, q)| {
                            usize::from(q.matches(black_box(inst), OnMissingKey::Skip).unwrap())
                        })
                        .sum::<usize>()
                })
                .sum::<usize>()
        })
    });
    g.bench_function("match_100k_x_5_routes_doc_sequential", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for d in &docs {
                for (_, q) in &queries {
                    n += usize::from(q.matches_doc(black_box(d), OnMissingKey::Skip).unwrap());
                }
            }
            n
        })
    });
    g.bench_function("match_100k_x_5_routes_doc_rayon", |b| {
        use rayon::prelude::*;
        b.iter(|| {
            // Instance-major chunks; per-route counts summed exactly (thread-independent).
            docs.par_chunks(4096)
                .map(|chunk| {
                    let mut per_route = [0usize; 8];
                    for d in chunk {
                        for (k, (_, q)) in queries.iter().enumerate() {
                            per_route[k] += usize::from(
                                q.matches_doc(black_box(d), OnMissingKey::Skip).unwrap(),
                            );
                        }
                    }
                    per_route
                })
                .reduce(
                    || [0usize; 8],
                    |mut a, b| {
                        for (x, y) in a.iter_mut().zip(b) {
                            *x += y;
                        }
                        a
                    },
                )
        })
    });
    g.bench_function("compile_5_routes", |b| {
        b.iter(|| {
            routes
                .values()
                .map(|w| Query::parse(black_box(w)).unwrap())
                .collect::<Vec<_>>()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
