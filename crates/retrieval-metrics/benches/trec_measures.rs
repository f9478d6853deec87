//! Criterion benches for the trec measure kernels, ranking, and parse+evaluate on a synthetic
//! run (deterministic data, no files).

use criterion::{Criterion, criterion_group, criterion_main};
use routeval_retrieval_metrics::trec::{
    self, EvalOptions, JudgedRanking, MeasureSet, Qrels, measures as m, rank_by_score,
};
use std::hint::black_box;

/// A tiny deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// qrels and run text: `nq` queries, `per` docs each, graded 0..3 judgments on a tenth.
fn synth(nq: usize, per: usize) -> (Vec<u8>, Vec<u8>) {
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let (mut q, mut r) = (String::new(), String::new());
    for qi in 0..nq {
        for d in 0..per * 2 {
            if rng.next().is_multiple_of(10) {
                q.push_str(&format!("q{qi} 0 d{d} {}\n", rng.next() % 4));
            }
        }
        for rank in 0..per {
            let d = rng.next() % (per as u64 * 2);
            let s = (rng.next() % 1000) as f64 / 100.0;
            r.push_str(&format!("q{qi} Q0 d{d}x{rank} {rank} {s} synth\n"));
        }
        q.push_str(&format!("q{qi} 0 d0x0 1\n"));
    }
    (q.into_bytes(), r.into_bytes())
}

fn ranking(n: usize) -> JudgedRanking {
    let mut rng = Rng(42);
    let rels: Vec<i32> = (0..n)
        .map(|_| match rng.next() % 10 {
            0 => 2,
            1 | 2 => 1,
            3..=5 => 0,
            _ => -1,
        })
        .collect();
    JudgedRanking {
        num_ret: n as i64,
        num_rel: (n / 4) as i64,
        num_rel_ret: rels.iter().filter(|&&r| r >= 1).count() as i64,
        num_nonpool: rels.iter().filter(|&&r| r == -1).count() as i64,
        num_unjudged_in_pool: 0,
        rel_levels: vec![(n / 2) as u64, (n / 6) as u64, (n / 12) as u64],
        num_rel_levels: 3,
        rels,
    }
}

fn kernels(c: &mut Criterion) {
    let j = ranking(1000);
    let cut = [5, 10, 15, 20, 30, 100, 200, 500, 1000];
    let mut out = [0.0; 9];
    c.bench_function("map/1000", |b| {
        b.iter(|| m::average_precision(black_box(&j), 1))
    });
    c.bench_function("P_cutoffs/1000", |b| {
        b.iter(|| m::precision(black_box(&j), 1, &cut, &mut out))
    });
    c.bench_function("ndcg_cut/1000", |b| {
        b.iter(|| m::ndcg_cut(black_box(&j), &cut, &mut out))
    });
    c.bench_function("ndcg/1000", |b| {
        b.iter(|| m::ndcg(black_box(&j), &m::Gains::new(&j, &[])))
    });
    c.bench_function("bpref/1000", |b| b.iter(|| m::bpref(black_box(&j), 1)));
    let all = EvalOptions {
        measures: MeasureSet::all_trec(),
        ..EvalOptions::default()
    };
    let mut values = vec![0.0; all.measures.n_values()];
    c.bench_function("all_trec/1000", |b| {
        b.iter(|| trec::compute_query(black_box(&j), &all, &mut values))
    });
    let mut rng = Rng(7);
    let docs: Vec<(String, f64)> = (0..1000)
        .map(|i| (format!("doc{i}"), (rng.next() % 100) as f64 / 10.0))
        .collect();
    c.bench_function("rank_by_score/1000", |b| {
        b.iter(|| {
            let mut d = docs.clone();
            rank_by_score(&mut d);
            d
        })
    });
}

fn end_to_end(c: &mut Criterion) {
    let (q, r) = synth(2000, 100);
    let qrels = Qrels::from_bytes(&q, "qrels").expect("valid qrels");
    let opts = EvalOptions {
        measures: MeasureSet::parse(&[
            "P.10",
            "recall.10",
            "recip_rank",
            "ndcg_cut.10",
            "success.10",
            "map",
        ])
        .expect("valid measures"),
        ..EvalOptions::default()
    };
    let mut g = c.benchmark_group("parse+evaluate");
    g.throughput(criterion::Throughput::Bytes(r.len() as u64));
    g.sample_size(20);
    g.bench_function("2000q_x_100docs", |b| {
        b.iter(|| trec::evaluate_bytes(&qrels, black_box(&r), "run", &opts, "qrels").expect("ok"))
    });
    g.bench_function("qrels_parse_2000q", |b| {
        b.iter(|| Qrels::from_bytes(black_box(&q), "qrels").expect("ok"))
    });
    // The same on one thread: the kernel's CPU time per run (the line scan, the score
    // parse, ranking and measures), without the second core's scheduling in the figure.
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a pool of one thread");
    g.bench_function("2000q_x_100docs_one_thread", |b| {
        b.iter(|| {
            one.install(|| {
                trec::evaluate_bytes(&qrels, black_box(&r), "run", &opts, "qrels").expect("ok")
            })
        })
    });
    g.finish();

    // Many small queries: the per-query structures (each query's judgments, its result slot)
    // rather than the per-line work dominate, as in the 100k-query benchmark of benches/trec.md.
    let (q, r) = synth(20_000, 10);
    let qrels = Qrels::from_bytes(&q, "qrels").expect("valid qrels");
    let mut g = c.benchmark_group("parse+evaluate");
    g.throughput(criterion::Throughput::Bytes(r.len() as u64));
    g.sample_size(20);
    g.bench_function("20000q_x_10docs", |b| {
        b.iter(|| trec::evaluate_bytes(&qrels, black_box(&r), "run", &opts, "qrels").expect("ok"))
    });
    g.bench_function("qrels_parse_20000q", |b| {
        b.iter(|| Qrels::from_bytes(black_box(&q), "qrels").expect("ok"))
    });
    g.finish();

    // trec_eval's `-q` text of the same 20,000 queries × 6 measures (120,000 lines, most of
    // them a `%6.4f` value).
    let per_query = EvalOptions {
        per_query: true,
        ..opts
    };
    let ev = trec::evaluate_bytes(&qrels, &r, "run", &per_query, "qrels").expect("ok");
    c.bench_function("render_text/20000q_per_query", |b| {
        b.iter(|| trec::format::render_text(black_box(&ev), true, true))
    });
}

criterion_group!(benches, kernels, end_to_end);
criterion_main!(benches);
