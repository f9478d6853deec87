//! Property tests of the GQR procedures' invariants.

use proptest::prelude::*;
use routeval_bench_data::gqr::select::smallest_eligible;
use routeval_bench_data::gqr::text::{OverlapIndex, normalize, shingles};
use routeval_bench_data::nprandom::{hf_train_test_split, stratified_train_test_split};

proptest! {
    #[test]
    fn normalize_is_idempotent(s in "\\PC{0,40}") {
        let n = normalize(&s);
        prop_assert_eq!(normalize(&n), n.clone());
        prop_assert!(!n.starts_with(' ') && !n.ends_with(' ') && !n.contains("  "));
    }

    #[test]
    fn smallest_eligible_ignores_input_order(
        words in proptest::collection::vec("[a-e]{1,3}( [a-e]{1,3}){0,4}", 0..40),
        limit in 0usize..12,
        rot in 0usize..40,
    ) {
        let a = smallest_eligible(&words, limit, 42, "dolly");
        let mut w2 = words.clone();
        if !w2.is_empty() {
            let k = rot % w2.len();
            w2.rotate_left(k);
            w2.reverse();
        }
        prop_assert_eq!(smallest_eligible(&w2, limit, 42, "dolly"), a.clone());
        prop_assert!(a.len() <= limit);
    }

    #[test]
    fn indexed_texts_always_hit(texts in proptest::collection::vec("[a-z]{1,6}( [a-z]{1,6}){0,12}", 1..10)) {
        let ix = OverlapIndex::from_texts(&texts);
        for t in &texts {
            prop_assert!(ix.hit(t) || normalize(t).is_empty());
            prop_assert!(shingles(t, 8).len() <= t.split(' ').count().max(1));
        }
    }

    #[test]
    fn hf_split_partitions_rows(n in 2usize..300, ts in 0.05f64..0.95, seed in 0u64..5) {
        let n_test = (ts * n as f64).ceil() as usize;
        let r = hf_train_test_split(n, ts, seed);
        if n_test >= n {
            // Upstream raises: the train side would be empty.
            prop_assert!(r.is_err());
            return Ok(());
        }
        let (tr, te) = r.unwrap();
        prop_assert_eq!(te.len(), n_test);
        let mut all: Vec<usize> = tr.into_iter().chain(te).collect();
        all.sort_unstable();
        prop_assert_eq!(all, (0..n).collect::<Vec<_>>());
    }

    #[test]
    fn stratified_split_partitions_rows(y in proptest::collection::vec(0u8..3, 20..200), seed in 0u32..5) {
        let labels: Vec<String> = y.iter().map(|c| ["finance", "healthcare", "law"][*c as usize].to_string()).collect();
        match stratified_train_test_split(&labels, 0.2, seed) {
            Ok(s) => {
                let mut all: Vec<usize> = s.train.iter().chain(&s.test).copied().collect();
                all.sort_unstable();
                prop_assert_eq!(all, (0..labels.len()).collect::<Vec<_>>());
                prop_assert_eq!(s.n_test_per_class.iter().sum::<usize>(), s.test.len());
            }
            Err(e) => prop_assert!(e.to_string().contains("class"), "{}", e),
        }
    }
}
