//! `$ROUTEVAL_SHARED/golden/crb/metrics/metrics_vectors.json`: aggregate (with/without cap),
//! error sets, routing_supervision_accuracy.

use routeval_routing_scores::crb::metrics::{
    aggregate_routerbench_metrics, case_metrics_from_value, routing_supervision_accuracy,
};
use routeval_test_support::JsonCompare;
use routeval_test_support::golden::{Count, assert_count};
use serde_json::Value;

fn vectors() -> Option<Value> {
    let sh = routeval_core::fixtures::shared_dir("crb_metrics")?;
    let p = std::path::Path::new(&sh).join("golden/crb/metrics/metrics_vectors.json");
    Some(
        serde_json::from_slice(
            &std::fs::read(&p).unwrap_or_else(|e| panic!("missing {}: {e}", p.display())),
        )
        .unwrap(),
    )
}

/// Strict comparison (key order, int vs float, bits); the library's values are serde_json,
/// which holds NaN as `null`.
fn same(exp: &Value, got: &Value, path: &str) {
    JsonCompare::strict()
        .nan_as_null("routeval's CRB JSON writes NaN as null (README: CommonRouterBench)")
        .assert_eq(exp, got, path);
}

fn run(cases: &Value, cap: bool) -> Result<Value, String> {
    let cs = cases
        .as_array()
        .unwrap()
        .iter()
        .map(case_metrics_from_value)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    aggregate_routerbench_metrics(&cs, cap).map_err(|e| e.to_string())
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn aggregate_vectors() {
    let Some(v) = vectors() else { return };
    let mut n = 0;
    for (name, c) in v["aggregate_routerbench_metrics"].as_object().unwrap() {
        same(&c["result"], &run(&c["cases"], false).unwrap(), name);
        same(
            &c["result_cap_cost_score_at_100"],
            &run(&c["cases"], true).unwrap(),
            name,
        );
        n += 1;
    }
    // The vector file is fixed (no held-back metrics vectors): exact counts.
    assert_count("crb aggregate case sets", n, Count::Exact(8));
    let mut errors = 0;
    for (name, c) in v["aggregate_routerbench_metrics_errors"]
        .as_object()
        .unwrap()
    {
        errors += 1;
        let err = run(&c["cases"], false).unwrap_err();
        let msg = c["result"]["error"]["message"].as_str().unwrap();
        let msg = if c["result"]["error"]["type"] == "KeyError" {
            format!("missing key {msg}")
        } else {
            msg.to_string()
        };
        assert_eq!(err, msg, "{name}");
    }
    assert_count("crb aggregate error sets", errors, Count::Exact(8));
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn supervision_accuracy_vectors() {
    let Some(v) = vectors() else { return };
    let cases = v["routing_supervision_accuracy"].as_array().unwrap();
    let (mut values, mut errors) = (0, 0);
    for c in cases {
        let got = routing_supervision_accuracy(
            c["gold_rows"].as_array().unwrap(),
            c["predictions_by_id"].as_object().unwrap(),
        );
        match (&c["result"].get("value"), got) {
            (Some(exp), Ok(g)) => {
                same(exp, &g, c["name"].as_str().unwrap());
                values += 1;
            }
            (None, Err(e)) => {
                assert_eq!(
                    e.to_string(),
                    c["result"]["error"]["message"].as_str().unwrap(),
                    "{}",
                    c["name"]
                );
                errors += 1;
            }
            (exp, got) => panic!("{}: {exp:?} vs {got:?}", c["name"]),
        }
    }
    assert_count(
        "crb supervision accuracy vectors",
        cases.len(),
        Count::Exact(10),
    );
    assert!(
        values >= 1 && errors >= 1,
        "{values} values, {errors} errors"
    );
}

/// Nominal costs: numbers and booleans (1/0, Python arithmetic) are read; a non-numeric cost
/// a passed case needs is `CostNotNumber` (the reference's `TypeError`); one it never reads
/// (failed case, or replaced by `*_steps`) is ignored.
#[test]
fn non_numeric_costs() {
    use routeval_routing_scores::crb::metrics::MetricsError;
    let case = |v: Value| case_metrics_from_value(&v);
    let e = case(serde_json::json!({"case_id": 1, "task_passed": true,
        "baseline_cost_nominal": "1.0", "optimal_cost_nominal": 0.5, "test_cost_nominal": 0.6}))
    .unwrap_err();
    assert_eq!(
        e,
        MetricsError::CostNotNumber {
            key: "baseline_cost_nominal",
            got: "\"1.0\"".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "baseline_cost_nominal must be a number (USD), got \"1.0\""
    );
    let failed = case(serde_json::json!({"case_id": 1, "task_passed": false,
        "baseline_cost_nominal": [1]}))
    .unwrap();
    assert_eq!(failed.baseline_cost_nominal, None);
    let replaced = case(serde_json::json!({"case_id": 1, "task_passed": true,
        "test_cost_nominal": "x", "test_steps": [{"completion_tokens": 10, "tier": "low"}],
        "baseline_cost_nominal": true, "optimal_cost_nominal": false}))
    .unwrap();
    let (b, o, t) = replaced.resolved_costs().unwrap();
    assert_eq!((b, o), (1.0, 0.0));
    assert_eq!(t, 10.0 * 0.5 / 1_000_000.0);
}
