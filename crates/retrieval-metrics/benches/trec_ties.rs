//! Criterion benches for `--ties` (`trec::ties::query_ranges`): one query of 10,000 documents
//! that all share one score, and the same ranking split into groups of 10, over the measures
//! of `benches/trec.md`'s task and over every exactly supported measure.

use criterion::{Criterion, criterion_group, criterion_main};
use routeval_retrieval_metrics::trec::{
    EvalOptions, JudgedRanking, MeasureSet, compute_query, ties,
};
use std::hint::black_box;

/// 10,000 ranked documents: every 7th relevant (levels 1-3), every 5th not judged.
fn ranking(n: usize) -> JudgedRanking {
    let rels: Vec<i32> = (0..n)
        .map(|i| {
            if i % 7 == 0 {
                1 + (i % 3) as i32
            } else if i % 5 == 0 {
                -1
            } else {
                0
            }
        })
        .collect();
    let mut levels = vec![0u64; 4];
    for &r in &rels {
        if r >= 0 {
            levels[r as usize] += 1;
        }
    }
    levels[1] += 50;
    JudgedRanking {
        num_ret: n as i64,
        num_rel: (levels[1] + levels[2] + levels[3]) as i64,
        num_rel_ret: rels.iter().filter(|&&r| r >= 1).count() as i64,
        num_nonpool: rels.iter().filter(|&&r| r == -1).count() as i64,
        num_unjudged_in_pool: 0,
        rel_levels: levels,
        num_rel_levels: 4,
        rels,
    }
}

fn bench_ties(c: &mut Criterion) {
    let n = 10_000;
    let j = ranking(n);
    let sets: [(&str, &[&str]); 2] = [
        (
            "task",
            &[
                "P.10",
                "recall.10",
                "recip_rank",
                "ndcg_cut.10",
                "success.10",
                "map",
            ],
        ),
        (
            "all_exact",
            &[
                "P",
                "recall",
                "success",
                "recip_rank",
                "recip_rank_cut",
                "map",
                "map_cut",
                "ndcg",
                "dcg",
                "ndcg_cut",
                "Rprec",
                "Rprec_mult",
                "bpref",
                "binG",
                "relative_P",
                "unj",
                "rbp",
                "rbp_resid",
            ],
        ),
    ];
    for (label, measures) in sets {
        let opts = EvalOptions {
            measures: MeasureSet::parse(measures).unwrap(),
            ..EvalOptions::default()
        };
        let mut values = vec![0.0; opts.measures.n_values()];
        compute_query(&j, &opts, &mut values);
        let one_group = [n];
        let tens: Vec<usize> = (1..=n / 10).map(|g| g * 10).collect();
        c.bench_function(&format!("ties_10k_one_group_{label}"), |b| {
            b.iter(|| {
                black_box(ties::query_ranges(
                    black_box(&j),
                    &one_group,
                    &opts,
                    &values,
                ))
            })
        });
        c.bench_function(&format!("ties_10k_groups_of_10_{label}"), |b| {
            b.iter(|| black_box(ties::query_ranges(black_box(&j), &tens, &opts, &values)))
        });
        c.bench_function(&format!("plain_10k_{label}"), |b| {
            let mut v = values.clone();
            b.iter(|| compute_query(black_box(&j), &opts, &mut v))
        });
    }
}

criterion_group!(benches, bench_ties);
criterion_main!(benches);
