//! Scoring 1M GQR predictions (synthetic labels made here): one pass, and rayon shards merged
//! through `Accumulator`.

use criterion::{Criterion, criterion_group, criterion_main};
use rayon::prelude::*;
use routeval_core::Accumulator;
use routeval_routing_scores::gqr::{GqrAccumulator, UnseenAccumulator};
use std::hint::black_box;

const OOD: [&str; 7] = [
    "jigsaw",
    "olid",
    "hate_xplain",
    "hate_speech_slovak ",
    "dkhate",
    "web_questions",
    "ml_questions",
];
const UNSEEN: [&str; 9] = [
    "banking77",
    "financial_qa_10k",
    "reddit_finance",
    "icliniq",
    "medquad",
    "med_flashcards",
    "legal_reddit",
    "legal_qa_v1",
    "mmlu_professional_law",
];

/// 1M rows: 600k ID (truth, prediction) and 400k OOD (set, prediction), xorshift-random.
/// ID rows `(truth, prediction)` and OOD rows `(set index, prediction)`.
type Rows = (Vec<(i64, i64)>, Vec<(usize, i64)>);

fn rows() -> Rows {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let id = (0..600_000)
        .map(|_| ((next() % 3) as i64, (next() % 4) as i64))
        .collect();
    let ood = (0..400_000)
        .map(|_| ((next() % 7) as usize, (next() % 4) as i64))
        .collect();
    (id, ood)
}

fn bench(c: &mut Criterion) {
    let (id, ood) = rows();
    let mut g = c.benchmark_group("gqr_score_1M");
    g.sample_size(20);
    g.bench_function("one_pass", |b| {
        b.iter(|| {
            let mut acc = GqrAccumulator::default();
            for &(t, p) in &id {
                acc.add_id(t, p);
            }
            for &(d, p) in &ood {
                acc.add_ood(OOD[d], p);
            }
            black_box(acc.finish())
        })
    });
    g.bench_function("rayon_shards_merged", |b| {
        b.iter(|| {
            let a = id
                .par_chunks(65_536)
                .map(|ch| {
                    let mut acc = GqrAccumulator::default();
                    for &(t, p) in ch {
                        acc.add_id(t, p);
                    }
                    acc
                })
                .reduce(GqrAccumulator::default, |mut x, y| {
                    x.merge(y);
                    x
                });
            let o = ood
                .par_chunks(65_536)
                .map(|ch| {
                    let mut acc = GqrAccumulator::default();
                    for &(d, p) in ch {
                        acc.add_ood(OOD[d], p);
                    }
                    acc
                })
                .reduce(GqrAccumulator::default, |mut x, y| {
                    x.merge(y);
                    x
                });
            let mut all = a;
            all.merge(o);
            black_box(all.finish())
        })
    });
    g.bench_function("one_pass_resolved_sets", |b| {
        b.iter(|| {
            let mut acc = GqrAccumulator::default();
            let ids: Vec<_> = OOD.iter().map(|n| acc.ood.set(n)).collect();
            for &(t, p) in &id {
                acc.add_id(t, p);
            }
            for &(d, p) in &ood {
                acc.add_ood_at(ids[d], p);
            }
            black_box(acc.finish())
        })
    });
    g.bench_function("unseen_one_pass", |b| {
        b.iter(|| {
            let mut acc = UnseenAccumulator::default();
            for (i, &(t, p)) in id.iter().enumerate() {
                acc.add_unseen(UNSEEN[i % 9], t, p);
            }
            for &(d, p) in &ood {
                acc.add_ood(OOD[d], p);
            }
            black_box(acc.finish())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
