//! Golden vectors for the many-system statistics (`tests/fixtures/gen_multi.py`: statsmodels
//! `anova_lm`, scipy `studentized_range`, the risk formulas in numpy, a numpy randomized
//! Tukey HSD). Every value is compared with an absolute and a relative tolerance, so a p-value
//! of 1e-20 must come out near 1e-20, not 0; every section's size is asserted.

use routeval_stats::{
    StudentizedRange, georisk, randomized_tukey, tukey_hsd, two_way_anova, urisk_trisk,
};
use serde_json::Value;

fn fixture() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/multi.json");
    let text = std::fs::read_to_string(path).expect("fixture multi.json");
    serde_json::from_str(&text).expect("valid JSON")
}

/// `|got − want| ≤ abs + rel·|want|`, and `None` exactly where the reference has none.
fn close(got: Option<f64>, want: &Value, abs: f64, rel: f64, what: &str) {
    match (got, want.as_f64()) {
        (None, None) => {}
        (Some(g), Some(w)) => assert!(
            (g - w).abs() <= abs + rel * w.abs(),
            "{what}: got {g:e}, reference {w:e} (diff {:e})",
            (g - w).abs()
        ),
        (g, w) => panic!("{what}: got {g:?}, reference {w:?}"),
    }
}

fn rows(case: &Value) -> Vec<Vec<f64>> {
    case["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        })
        .collect()
}

#[test]
fn anova_tukey_and_risk_match_statsmodels_and_scipy() {
    let fx = fixture();
    let cases = fx["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 40);
    let mut tukey_checked = 0;
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let x = rows(case);
        let t: Vec<&[f64]> = x.iter().map(Vec::as_slice).collect();
        let a = two_way_anova(&t).unwrap();
        let w = &case["anova"];
        close(a.f, &w["f"], 1e-9, 1e-9, &format!("{name} F"));
        close(a.p_value, &w["p_value"], 1e-12, 1e-9, &format!("{name} p"));
        for (got, key) in [
            (a.mse, "mse"),
            (a.ss_systems, "ss_systems"),
            (a.ss_queries, "ss_queries"),
            (a.ss_residual, "ss_residual"),
        ] {
            close(Some(got), &w[key], 1e-12, 1e-9, &format!("{name} {key}"));
        }
        assert_eq!(a.df_systems, w["df_systems"].as_u64().unwrap());
        assert_eq!(a.df_queries, w["df_queries"].as_u64().unwrap());
        assert_eq!(a.df_residual, w["df_residual"].as_u64().unwrap());

        let dist = StudentizedRange::new(t.len() as u32, a.df_residual as f64).unwrap();
        let pairs = tukey_hsd(&t, &a, &dist).unwrap();
        let want = case["tukey"].as_array().unwrap();
        assert_eq!(pairs.len(), want.len());
        for (p, w) in pairs.iter().zip(want) {
            assert_eq!(p.a as u64, w["a"].as_u64().unwrap());
            assert_eq!(p.b as u64, w["b"].as_u64().unwrap());
            close(
                p.q,
                &w["q"],
                1e-9,
                1e-9,
                &format!("{name} q {}-{}", p.a, p.b),
            );
            let pv = (!p.p_value.is_nan()).then_some(p.p_value);
            close(
                pv,
                &w["p_value"],
                1e-9,
                1e-6,
                &format!("{name} tukey p {}-{}", p.a, p.b),
            );
            tukey_checked += 1;
        }

        for alpha in fx["alphas"].as_array().unwrap() {
            let alpha = alpha.as_f64().unwrap();
            let key = format!("{alpha:.1}");
            let want = case["risk"][&key].as_array().unwrap();
            let g = georisk(&t, alpha).unwrap();
            for (i, w) in want.iter().enumerate() {
                if i > 0 {
                    let (u, tr) = urisk_trisk(&x[i], &x[0], alpha).unwrap();
                    close(
                        Some(u),
                        &w["urisk"],
                        1e-12,
                        1e-9,
                        &format!("{name} urisk {i} {alpha}"),
                    );
                    close(
                        tr,
                        &w["trisk"],
                        1e-9,
                        1e-9,
                        &format!("{name} trisk {i} {alpha}"),
                    );
                }
                close(
                    g[i],
                    &w["georisk"],
                    1e-12,
                    1e-9,
                    &format!("{name} georisk {i} {alpha}"),
                );
            }
        }
    }
    assert!(tukey_checked > 300, "{tukey_checked}");
}

#[test]
fn studentized_range_matches_scipy() {
    let fx = fixture();
    let v = fx["studentized_range"].as_array().unwrap();
    assert_eq!(v.len(), 8 * 6 * 7);
    let mut dists = std::collections::HashMap::new();
    for c in v {
        let (q, k, df) = (
            c["q"].as_f64().unwrap(),
            c["k"].as_u64().unwrap() as u32,
            c["df"].as_f64().unwrap(),
        );
        let d = dists
            .entry((k, df as u64))
            .or_insert_with(|| StudentizedRange::new(k, df).unwrap());
        let got = d.sf(q);
        close(
            Some(got),
            &c["sf"],
            1e-9,
            1e-6,
            &format!("sf({q}, {k}, {df})"),
        );
    }
}

#[test]
fn randomized_tukey_within_monte_carlo_error_of_numpy() {
    let fx = fixture();
    let mut checked = 0;
    for case in fx["cases"].as_array().unwrap() {
        let Some(rt) = case.get("randomized_tukey") else {
            continue;
        };
        let x = rows(case);
        let t: Vec<&[f64]> = x.iter().map(Vec::as_slice).collect();
        let iters = rt["iterations"].as_u64().unwrap();
        let got = randomized_tukey(&[t], iters, 11).unwrap();
        for (p, w) in got[0].iter().zip(rt["pairs"].as_array().unwrap()) {
            let want = w["p_value"].as_f64().unwrap();
            // Two independent estimates: the difference has sd √(2 p (1 − p) / N).
            let sd = (2.0 * want * (1.0 - want) / iters as f64).sqrt();
            assert!(
                (p.p_value - want).abs() <= 5.0 * sd + 2.0 / iters as f64,
                "{} {}-{}: {} vs {want}",
                case["name"],
                p.a,
                p.b,
                p.p_value
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "{checked}");
}
