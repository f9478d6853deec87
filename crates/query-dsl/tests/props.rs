//! Property tests (issue 4): thread independence, scalar shorthand ≡ `eq`, `in` ≡ any `eq`,
//! shard merge ≡ one pass, and no panic on arbitrary queries and values.

use proptest::prelude::*;
use rayon::prelude::*;
use routeval_core::Accumulator;
use routeval_query_dsl::route::{QueryRoutedMetric, metrics::BuiltinMetric};
use routeval_query_dsl::{Doc, OnMissingKey, Query};
use serde_json::{Map, Value, json};

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("x".to_string()),
        Just("y".to_string()),
        Just("tags".to_string()),
        Just("0".to_string()),
        Just("*".to_string()),
        Just("in".to_string()),
        Just("gt".to_string()),
        Just("elem_match".to_string()),
        Just("regex".to_string()),
        "[a-z]{1,3}",
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..4).prop_map(Value::from),
        prop_oneof![Just(0.5f64), Just(1.0), Just(-0.0), Just(2.5), Just(1e16)]
            .prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        prop_oneof![
            Just("a".to_string()),
            Just("b".to_string()),
            Just("ab".to_string()),
            Just("é".to_string()),
            Just("^a".to_string()),
            Just("(".to_string()),
            Just("x.*".to_string()),
            Just("tags.-1".to_string()),
            Just("".to_string()),
            "[a-c(){}^$*+?.\\\\|\\[\\]]{0,6}",
        ]
        .prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn path() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            key(),
            Just("-1".to_string()),
            Just("1".to_string()),
            Just("".to_string())
        ],
        1..4,
    )
    .prop_map(|segs| segs.join("."))
}

fn operator() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "eq",
        "ne",
        "in",
        "not_in",
        "regex",
        "exists",
        "gt",
        "gte",
        "lt",
        "lte",
        "elem_match",
        "==",
        "!=",
        ">",
        ">=",
        "<",
        "<=",
        "nope",
    ])
    .prop_map(str::to_string)
}

fn condition() -> impl Strategy<Value = Value> {
    prop_oneof![
        scalar(),
        prop::collection::vec(scalar(), 0..4).prop_map(Value::Array),
        prop::collection::vec((operator(), json_value()), 0..3)
            .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
    ]
}

fn query_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        1 => json_value(),
        6 => prop::collection::vec((path(), condition()), 0..4)
            .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
    ]
}

fn omk() -> impl Strategy<Value = OnMissingKey> {
    prop_oneof![Just(OnMissingKey::Skip), Just(OnMissingKey::Error)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_queries_and_values_never_panic(q in query_value(), v in json_value(), m in omk()) {
        if let Ok(query) = Query::parse(&q) {
            let _ = query.matches(&v, m);
        }
    }

    /// The compact `Doc` path agrees with the `serde_json::Value` reference path (result and
    /// error) on arbitrary queries and values, also as the document root and nested.
    #[test]
    fn doc_path_agrees_with_value_path(q in query_value(), v in json_value(), w in json_value(), m in omk()) {
        if let Ok(query) = Query::parse(&q) {
            for root in [v.clone(), json!({"x": v, "y": [w.clone(), {"z": w}]})] {
                let doc = Doc::from_value(&root).unwrap();
                prop_assert_eq!(query.matches_doc(&doc, m), query.matches(&root, m));
            }
        }
    }

    /// Parsing text straight into a tape (`Doc::from_slice`, `Doc::parse_projected` and `_str`, the
    /// path of `routeval filter`) gives the tape of the parsed `Value` (with the unread
    /// top-level members removed), also for texts with repeated keys (last value wins at the
    /// first position, as in `json.loads`), and the same query results as the full `Value`.
    #[test]
    fn text_to_tape_agrees_with_value(
        q in query_value(),
        members in prop::collection::vec((key(), json_value()), 0..6),
        m in omk(),
    ) {
        let body: Vec<String> = members
            .iter()
            .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), v))
            .collect();
        let text = format!(" {{{}}} ", body.join(", "));
        let full: Value = serde_json::from_slice(text.as_bytes()).unwrap();
        prop_assert_eq!(Doc::from_slice(text.as_bytes()).unwrap(), Doc::from_value(&full).unwrap());
        if let Ok(query) = Query::parse(&q) {
            let keys = query.top_level_keys();
            let mut projected = full.clone();
            if let Value::Object(o) = &mut projected {
                o.retain(|k, _| keys.contains(&k.as_str()));
            }
            let mut doc = Doc::default();
            doc.parse_projected(text.as_bytes(), &keys).unwrap();
            prop_assert!(doc.is_object());
            prop_assert_eq!(&doc, &Doc::from_value(&projected).unwrap());
            prop_assert_eq!(query.matches_doc(&doc, m), query.matches(&full, m));
            let mut from_str = Doc::default();
            from_str.parse_projected_str(&text, &keys).unwrap();
            prop_assert_eq!(&from_str, &doc);
        }
    }

    #[test]
    fn scalar_shorthand_is_eq(x in scalar(), v in json_value(), m in omk()) {
        let a = Query::parse(&json!({"x": x.clone()})).unwrap();
        let b = Query::parse(&json!({"x": {"eq": x}})).unwrap();
        let root = json!({"x": v});
        prop_assert_eq!(a.matches(&root, m), b.matches(&root, m));
        let empty = json!({});
        prop_assert_eq!(a.matches(&empty, m), b.matches(&empty, m));
    }

    #[test]
    fn in_list_is_any_eq(items in prop::collection::vec(json_value(), 1..4), v in json_value(),
                         star in any::<bool>(), m in omk()) {
        let p = if star { "x.*" } else { "x" };
        let q_in = Query::parse(&json!({p: {"in": items.clone()}})).unwrap();
        let root = json!({"x": v});
        let got = q_in.matches(&root, m);
        let mut any = Ok(false);
        for it in &items {
            match Query::parse(&json!({p: {"eq": it}})).unwrap().matches(&root, m) {
                Ok(true) => { any = Ok(true); break; }
                Ok(false) => {}
                Err(e) => { any = Err(e); break; }
            }
        }
        prop_assert_eq!(got, any);
    }

    #[test]
    fn result_does_not_depend_on_threads(q in query_value(), vs in prop::collection::vec(json_value(), 1..24), m in omk()) {
        if let Ok(query) = Query::parse(&q) {
            let seq: Vec<_> = vs.iter().map(|v| query.matches(v, m)).collect();
            let par: Vec<_> = vs.par_iter().map(|v| query.matches(v, m)).collect();
            prop_assert_eq!(seq, par);
        }
    }

    #[test]
    fn shard_merge_equals_one_pass(
        rows in prop::collection::vec((0u8..3, "[ab ]{0,4}", prop::collection::vec("[ab]{0,3}", 0..3), 0u8..3, -2.0f64..2.0), 0..40),
        cuts in prop::collection::vec(0usize..40, 0..5),
    ) {
        let config = json!({
            "routes": [
                {"name": "all", "metrics": ["exact_match", "char_f1", "output_length_stats", "score:s"], "group_by": "g"},
                {"name": "k1", "where": {"k": 1}, "metrics": ["exact_match"], "group_by": "k"},
                {"name": "big", "where": {"s": {"gt": 0.5}}, "metrics": ["score:s"]},
            ],
        });
        let qr = QueryRoutedMetric::from_config(&config, BuiltinMetric::from_config).unwrap();
        let data: Vec<Value> = rows.iter().map(|(k, out, refs, g, s)| {
            let label = ["a", "b", "c"][*g as usize];
            json!({
                "lm_output": out, "references": refs, "s": s,
                "extra_info": {"k": k, "g": label, "s": s},
            })
        }).collect();
        let one = qr.evaluate(&data).unwrap();

        let mut bounds: Vec<usize> = cuts.into_iter().map(|c| c.min(data.len())).collect();
        bounds.push(0);
        bounds.push(data.len());
        bounds.sort_unstable();
        let shards: Vec<_> = bounds.windows(2).map(|w| {
            let mut acc = qr.accumulator();
            for (i, d) in data.iter().enumerate().take(w[1]).skip(w[0]) {
                qr.observe(&mut acc, i, d, &d["extra_info"]);
            }
            acc
        }).collect();
        // Merge in reverse: the result must not depend on shard order either.
        let merged = Accumulator::merge_all(shards.into_iter().rev());
        let lean = qr.finish_with(merged.clone(), false).unwrap();
        let got = qr.finish(merged).unwrap();
        prop_assert_eq!(&got, &one);
        // Without instance details: the same summary and counts, no details.
        prop_assert!(lean.instance_details.is_empty());
        prop_assert_eq!(lean.summary, one.summary);
        prop_assert_eq!(lean.selected, one.selected);
        prop_assert_eq!(lean.unmatched, one.unmatched);
        // Details computed again per instance equal the held ones.
        for (i, d) in data.iter().enumerate() {
            prop_assert_eq!(&qr.instance_details(d, &d["extra_info"]), &one.instance_details[i]);
        }
    }
}

/// A collision between two routes' prefixed instance keys (route `a` key `b/exact_match`
/// vs route `a/b` key `exact_match`) is an error with or without instance details, and
/// within one route two metrics giving the same instance key collide either way.
#[test]
fn key_collisions_do_not_depend_on_instance_details() {
    use routeval_query_dsl::route::{InstanceValues, MetricRoute, OnUnmatched, RouteMetric};
    struct Fixed(&'static str);
    impl RouteMetric for Fixed {
        fn instance(&self, _: &Value) -> Result<Map<String, Value>, String> {
            let mut m = Map::new();
            m.insert(self.0.into(), json!(1));
            Ok(m)
        }
        fn has_details(&self) -> bool {
            true
        }
        fn summarize(&self, rows: &[&InstanceValues]) -> Map<String, Value> {
            let mut m = Map::new();
            m.insert(format!("n_{}", self.0.replace('/', "_")), json!(rows.len()));
            m
        }
    }
    let all = || Query::parse(&json!({})).unwrap();
    let route = |name: &str, metrics: Vec<Fixed>| MetricRoute {
        name: name.into(),
        where_: all(),
        metrics,
        group_by: None,
    };
    let data = [json!({"x": 1}), json!({"x": 2})];
    let cases = [
        vec![
            route("a", vec![Fixed("b/k")]),
            route("a/b", vec![Fixed("k")]),
        ],
        vec![route("a", vec![Fixed("k"), Fixed("k")])],
    ];
    for routes in cases {
        let qr = QueryRoutedMetric::new(routes, OnUnmatched::Skip, OnMissingKey::Skip).unwrap();
        let mut acc = qr.accumulator();
        for (i, d) in data.iter().enumerate() {
            qr.observe(&mut acc, i, d, &json!({}));
        }
        let full = qr.finish_with(acc.clone(), true).unwrap_err();
        let lean = qr.finish_with(acc, false).unwrap_err();
        assert_eq!(full.kind(), "key_collision", "{full}");
        assert_eq!(full, lean);
    }
}
