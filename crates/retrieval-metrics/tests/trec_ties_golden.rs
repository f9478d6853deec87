//! `--ties` against the real trec_eval: `fixtures/ties_trec_eval.json` holds, for a random
//! collection with tie groups, the min, max and mean of every value trec_eval 10.0-rc3 printed
//! over every order of every tie group (made by `fixtures/gen_ties.py`, which runs trec_eval
//! on each order). Each range routeval gives must match those within trec_eval's printing
//! precision (`%.4f`: 5e-5), and match exactly the min and max (and to 1e-12 the mean) of
//! routeval's own values over the same orders.
//!
//! `ROUTEVAL_TIES_FIXTURE=PATH` checks another fixture (e.g. a fresh seed of the script).

use routeval_retrieval_metrics::trec::{self, EvalOptions, MeasureSet, Qrels};
use serde_json::Value;
use std::collections::BTreeMap;

fn fixture() -> Value {
    let path = std::env::var("ROUTEVAL_TIES_FIXTURE").unwrap_or_else(|_| {
        format!(
            "{}/tests/fixtures/ties_trec_eval.json",
            env!("CARGO_MANIFEST_DIR")
        )
    });
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).expect("fixture JSON")
}

/// Per query, its tie groups (docnos) in rank order, from the fixture's tied run.
fn groups(run: &str) -> Vec<(String, Vec<Vec<String>>)> {
    let mut out: Vec<(String, Vec<Vec<String>>)> = Vec::new();
    let mut last_score = String::new();
    for line in run.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (qid, docno, score) = (f[0], f[2], f[4]);
        if out.last().is_none_or(|(q, _)| q != qid) {
            out.push((qid.to_string(), Vec::new()));
            last_score.clear();
        }
        let gs = &mut out.last_mut().unwrap().1;
        if score != last_score {
            gs.push(Vec::new());
            last_score = score.to_string();
        }
        gs.last_mut().unwrap().push(docno.to_string());
    }
    out
}

fn permutations(items: &[String]) -> Vec<Vec<String>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let first = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, first.clone());
            out.push(p);
        }
    }
    out
}

/// The run realising combination `t` of every query's group orders (the script's scores:
/// groups 1.0 apart, tied documents 1e-6 apart in the chosen order), and the queries it is
/// new for.
fn combo_run(queries: &[(String, Vec<Vec<Vec<String>>>)], t: usize) -> (String, Vec<String>) {
    let mut run = String::new();
    let mut live = Vec::new();
    for (qid, perms) in queries {
        let count: usize = perms.iter().map(Vec::len).product();
        if t < count {
            live.push(qid.clone());
        }
        let mut k = if t < count { t } else { 0 };
        let base = perms.len() as f64 + 1.0;
        for (gi, p) in perms.iter().enumerate() {
            let order = &p[k % p.len()];
            k /= p.len();
            for (pos, d) in order.iter().enumerate() {
                let score = base - gi as f64 + (order.len() - pos) as f64 * 1e-6;
                run.push_str(&format!("{qid} Q0 {d} 0 {score:.7} ties\n"));
            }
        }
    }
    (run, live)
}

fn options(measures: &[String], args: &[String]) -> EvalOptions {
    let mut opts = EvalOptions {
        measures: MeasureSet::parse(measures).unwrap(),
        per_query: true,
        ..EvalOptions::default()
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-l" => opts.relevance_level = it.next().unwrap().parse().unwrap(),
            "-J" => opts.judged_only = true,
            other => panic!("option {other} not handled"),
        }
    }
    opts
}

#[test]
fn ties_match_trec_eval_over_every_order() {
    let fx = fixture();
    let qrels = Qrels::from_bytes(fx["qrels"].as_str().unwrap().as_bytes(), "qrels").unwrap();
    let run = fx["run"].as_str().unwrap();
    let measures: Vec<String> = fx["measures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    let queries: Vec<(String, Vec<Vec<Vec<String>>>)> = groups(run)
        .into_iter()
        .map(|(q, gs)| (q, gs.iter().map(|g| permutations(g)).collect()))
        .collect();
    let max_combos = queries
        .iter()
        .map(|(_, p)| p.iter().map(Vec::len).product::<usize>())
        .max()
        .unwrap();
    let mut checked = 0usize;
    let mut moved = 0usize;
    for config in fx["configs"].as_array().unwrap() {
        let args: Vec<String> = config["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect();
        let opts = options(&measures, &args);
        // routeval's own values over every order: (min, max, sum, count) per query and value.
        let mut own: BTreeMap<(String, String), (f64, f64, f64, usize)> = BTreeMap::new();
        for t in 0..max_combos {
            let (text, live) = combo_run(&queries, t);
            let ev = trec::evaluate_bytes(&qrels, text.as_bytes(), "run", &opts, "qrels").unwrap();
            for q in &ev.queries {
                let qid = String::from_utf8_lossy(&q.qid).to_string();
                if !live.contains(&qid) {
                    continue;
                }
                for meas in ev.measures.measures() {
                    for (k, name) in meas.names.iter().enumerate() {
                        let v = q.values[meas.offset + k];
                        let e = own.entry((qid.clone(), name.clone())).or_insert((
                            f64::INFINITY,
                            f64::NEG_INFINITY,
                            0.0,
                            0,
                        ));
                        e.0 = e.0.min(v);
                        e.1 = e.1.max(v);
                        e.2 += v;
                        e.3 += 1;
                    }
                }
            }
        }
        let tie_opts = EvalOptions {
            ties: true,
            ..opts.clone()
        };
        let ev = trec::evaluate_bytes(&qrels, run.as_bytes(), "run", &tie_opts, "qrels").unwrap();
        let slots = trec::format::tie_slots(&ev);
        assert!(slots.len() > 60, "{} reported values", slots.len());
        for q in &ev.queries {
            let qid = String::from_utf8_lossy(&q.qid).to_string();
            let te = &config["per_query"][&qid];
            for &(_, name, slot) in &slots {
                let got = q
                    .ties
                    .as_ref()
                    .map_or(trec::ties::TieRange::point(q.values[slot]), |r| r[slot]);
                let ctx = format!("{args:?} {qid} {name}: routeval {got:?}");
                let want = te[name]
                    .as_array()
                    .unwrap_or_else(|| panic!("{ctx}: not in the fixture"));
                let w: Vec<f64> = want.iter().map(|v| v.as_f64().unwrap()).collect();
                // trec_eval printed %.4f: each printed value is within 5e-5 of the exact one.
                let tol = 5e-5 + 1e-9;
                assert!((got.min - w[0]).abs() <= tol, "min {ctx} trec_eval {w:?}");
                assert!((got.max - w[1]).abs() <= tol, "max {ctx} trec_eval {w:?}");
                assert!(
                    (got.expected - w[2]).abs() <= tol,
                    "expected {ctx} trec_eval {w:?}"
                );
                let (lo, hi, sum, n) = own[&(qid.clone(), name.to_string())];
                assert_eq!(got.min, lo, "min {ctx} own {lo}");
                assert_eq!(got.max, hi, "max {ctx} own {hi}");
                let mean = sum / n as f64;
                assert!(
                    (got.expected - mean).abs() <= 1e-12 * mean.abs().max(hi.abs()).max(1e-300),
                    "expected {ctx} own {mean}"
                );
                checked += 1;
                moved += usize::from(!got.is_point());
            }
        }
        // Every measure trec_eval printed that routeval gives no range is listed unsupported.
        let unsupported = trec::format::tie_unsupported(&ev);
        for u in [
            "gm_map",
            "iprec_at_recall",
            "infAP",
            "G",
            "ndcg_rel",
            "Rndcg",
        ] {
            assert!(unsupported.contains(&u), "{u} not listed: {unsupported:?}");
        }
    }
    // The collection's ties do change values (the test would pass vacuously otherwise).
    assert!(
        moved > checked / 4,
        "{moved} of {checked} ranges are not points"
    );
}
