//! `compare`'s statistics on arbitrary per-query scores: the bytes become a score matrix
//! (systems × queries, values from the bytes, including NaN, ±inf, ties and constant columns)
//! and run through `compare_systems` with a test, correction and the many-systems options the
//! flag bytes pick (Tukey HSD, randomized Tukey, the two-way ANOVA, risk weights).
//! Checks besides "no panic": every p-value is NaN (no test) or in [0, 1], and a comparison is
//! only significant with a finite adjusted p-value at or below alpha.
#![no_main]

use libfuzzer_sys::fuzz_target;
use routeval_stats::{CompareOptions, Correction, FamilyTest, PairedTest, SystemScores, compare_systems};

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let (flags, rest) = data.split_at(4);
    let n_sys = 2 + (flags[0] % 5) as usize; // 2..=6 systems
    let n_q = 1 + (flags[1] % 24) as usize; // 1..=24 queries
    let value = |i: usize| -> f64 {
        match rest.get(i) {
            None => 0.0,
            Some(255) => f64::NAN,
            Some(254) => f64::INFINITY,
            Some(253) => f64::NEG_INFINITY,
            Some(&b) => f64::from(b % 8) / 7.0, // few distinct values: ties on purpose
        }
    };
    let systems: Vec<SystemScores> = (0..n_sys)
        .map(|s| SystemScores {
            name: format!("s{s}"),
            path: format!("s{s}.run"),
            scores: vec![(0..n_q).map(|q| value(s * n_q + q)).collect()],
            means: None,
        })
        .collect();
    let mut opts = CompareOptions {
        test: PairedTest::ALL[(flags[2] % 4) as usize],
        iterations: 1 + u64::from(flags[3] % 64),
        ci_replicates: 1 + u64::from(flags[3] % 32),
        all_pairs: flags[2] & 8 != 0,
        anova: flags[2] & 16 != 0,
        correction: if flags[2] & 32 != 0 { Correction::Holm } else { Correction::Bonferroni },
        ..CompareOptions::default()
    };
    opts.family = match flags[2] >> 6 {
        1 => Some(FamilyTest::Tukey),
        2 => Some(FamilyTest::RandomizedTukey),
        _ => None,
    };
    if flags[1] & 128 != 0 {
        opts.risk_alphas = vec![0.0, 1.0, 5.0];
    }
    let Ok(report) = compare_systems(&["m".to_string()], &systems, &opts) else { return };
    for (_, _, _, c) in report.comparisons() {
        assert!(c.p_value.is_nan() || (0.0..=1.0).contains(&c.p_value), "p {}", c.p_value);
        assert!(c.p_adjusted.is_nan() || (0.0..=1.0).contains(&c.p_adjusted), "p_adj {}", c.p_adjusted);
        if c.significant {
            assert!(c.p_adjusted.is_finite() && c.p_adjusted <= opts.alpha);
        }
    }
    let _ = serde_json::to_string(&report);
});
