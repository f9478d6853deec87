//! Data-driven tests: every vector in `$ROUTEVAL_SHARED/golden/gqr/helpers`.

mod common;

use common::*;
use routeval_bench_data::gqr::UNSEEN_SETS;
use routeval_bench_data::gqr::select::*;
use routeval_bench_data::gqr::text::*;
use routeval_core::Domain;
use routeval_test_support::golden::Tally;
use serde_json::Value;

fn s(v: &Value) -> &str {
    v.as_str().expect("string")
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| s(x).to_string())
        .collect()
}

fn opt(v: &Value) -> Option<&str> {
    v.as_str()
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn golden_helper_vectors() {
    let Some(shared) = shared("golden_helper_vectors") else {
        return;
    };
    let dir = shared.join("golden/gqr/helpers");
    let mut tally = Tally::new();
    for path in json_files(&dir) {
        let j = load_json(&path);
        let oj = Ordered::load(&path);
        let name = kind_of(
            &path,
            &[
                "normalize",
                "detokenize_wikitext",
                "shingles",
                "digest_rank_key",
                "fingerprint",
                "id_topic_hit",
                "overlap_index",
                "reddit_post_legal_qa",
                "smallest_eligible",
                "select_background",
                "select_unseen",
            ],
        );
        let cases = j["cases"].as_array().expect("cases");
        tally.add(name, cases.len());
        match name {
            "normalize" => {
                for c in cases {
                    let input = s(&c["input"]);
                    assert_eq!(py_lower(input), s(&c["lower"]), "lower {input:?}");
                    assert_eq!(normalize(input), s(&c["normalize"]), "normalize {input:?}");
                    let n = normalize(input);
                    let words: Vec<&str> = n.split(' ').filter(|w| !w.is_empty()).collect();
                    assert_eq!(words, strs(&c["split_words"]));
                }
            }
            "detokenize_wikitext" => {
                for c in cases {
                    let input = s(&c["input"]);
                    let d = detokenize_wikitext(input);
                    assert_eq!(d, s(&c["detokenize_wikitext"]), "detok {input:?}");
                    assert_eq!(normalize(input), s(&c["normalize_input"]));
                    assert_eq!(normalize(&d), s(&c["normalize_output"]));
                }
            }
            "shingles" => {
                for c in cases {
                    let k = c["k"].as_u64().unwrap() as usize;
                    let mut sh: Vec<String> = shingles(s(&c["input"]), k).into_iter().collect();
                    sh.sort();
                    assert_eq!(sh, strs(&c["shingles_sorted"]), "{}", c["input"]);
                    let mut d: Vec<u64> = sh.iter().map(|x| digest(x)).collect();
                    d.sort();
                    let mut want = u64s(&c["shingle_digests_u64_sorted"]);
                    want.sort();
                    assert_eq!(d, want);
                }
            }
            "digest_rank_key" => {
                for c in cases {
                    let text = s(&c["text"]);
                    if let Some(d) = c.get("digest_u64") {
                        assert_eq!(digest(text).to_string(), s(d), "digest {text:?}");
                    }
                    if let Some(h) = c.get("digest_hex") {
                        assert_eq!(format!("{:016x}", digest(text)), s(h));
                    }
                    if let Some(rk) = c.get("rank_key_u64").filter(|v| !v.is_null()) {
                        let seed = c["seed"].as_u64().unwrap();
                        let salt = s(&c["salt"]);
                        assert_eq!(
                            rank_key(text, seed, salt).to_string(),
                            s(rk),
                            "rank_key {c}"
                        );
                    }
                }
            }
            "fingerprint" => {
                for c in cases {
                    assert_eq!(fingerprint(&strs(&c["texts"])), s(&c["sha256"]));
                }
            }
            "id_topic_hit" => {
                let pats = &j["ID_TOPIC_PATTERNS"];
                for (name, p) in ID_TOPIC_PATTERNS {
                    assert_eq!(s(&pats[name]), p, "pattern {name} differs from the golden");
                }
                for c in cases {
                    let text = s(&c["text"]);
                    assert_eq!(id_topic_hit(text), opt(&c["id_topic_hit"]), "{text:?}");
                    assert_eq!(
                        id_topic_hit(&normalize(text)),
                        opt(&c["id_topic_hit_on_normalized"]),
                        "normalized {text:?}"
                    );
                    assert_eq!(
                        is_finance_question(text),
                        c["is_finance_question"].as_bool().unwrap()
                    );
                }
            }
            "overlap_index" => {
                let ix = OverlapIndex::from_texts(strs(&j["index_texts"]));
                let mut exact: Vec<&str> = ix.exact_texts().collect();
                exact.sort();
                assert_eq!(exact, strs(&j["exact_set_sorted"]));
                let mut d: Vec<u64> = ix.shingle_digests().collect();
                d.sort();
                let mut want = u64s(&j["shingle_digests_sorted"]);
                want.sort();
                assert_eq!(d, want);
                for c in cases {
                    assert_eq!(ix.hit(s(&c["query"])), c["hit"].as_bool().unwrap(), "{c}");
                }
            }
            "reddit_post_legal_qa" => {
                for c in cases {
                    if let Some(want) = c.get("reddit_post") {
                        let got = reddit_post(opt(&c["title"]), opt(&c["body"]));
                        assert_eq!(got.as_deref(), opt(want), "{c}");
                    }
                    if let Some(want) = c.get("legal_qa_question") {
                        let got = legal_qa_question(opt(&c["legal_qa_question_input"]));
                        assert_eq!(got.as_deref(), opt(want), "{c}");
                    }
                }
            }
            "smallest_eligible" => {
                let pool = strs(&j["pool"]);
                for c in cases {
                    let limit = c["limit"].as_u64().unwrap() as usize;
                    let seed = c["seed"].as_u64().unwrap();
                    let salt = s(&c["salt"]);
                    let out = smallest_eligible(&pool, limit, seed, salt);
                    assert_eq!(out, strs(&c["output"]), "limit {limit} seed {seed} {salt}");
                    let keys: Vec<u64> = out
                        .iter()
                        .map(|t| rank_key(&normalize(t), seed, salt))
                        .collect();
                    assert_eq!(keys, u64s(&c["output_rank_keys"]));
                    // The result depends only on the multiset of inputs.
                    let rev: Vec<&String> = pool.iter().rev().collect();
                    assert_eq!(smallest_eligible(rev, limit, seed, salt), out);
                }
            }
            "select_background" => {
                for (ci, c) in cases.iter().enumerate() {
                    let oc = oj.at("cases").at(&ci.to_string());
                    let pools: Vec<(String, Vec<String>)> = c["pools"]
                        .as_object()
                        .unwrap()
                        .iter()
                        .map(|(k, v)| (k.clone(), strs(v)))
                        .collect();
                    let ix = OverlapIndex::from_texts(strs(&c["test_index_texts"]));
                    let seed = c["seed"].as_u64().unwrap();
                    let r = select_background(
                        &pools,
                        &ix,
                        c["n_total"].as_u64().unwrap() as usize,
                        seed,
                    );
                    if let Some(err) = c.get("error") {
                        assert_eq!(
                            r.expect_err("expected shortfall").to_string(),
                            s(err),
                            "{}",
                            c["name"]
                        );
                        continue;
                    }
                    let r = r.unwrap();
                    assert_eq!(r.texts, strs(&c["texts"]), "{}", c["name"]);
                    assert_eq!(r.sources, strs(&c["sources"]));
                    let want: Vec<(String, u64)> = oc
                        .at("stats")
                        .keys()
                        .into_iter()
                        .map(|k| (k.clone(), c["stats"][&k].as_u64().unwrap()))
                        .collect();
                    let got_keys: Vec<&String> = r.stats.0.iter().map(|(k, _)| k).collect();
                    let want_keys: Vec<&String> = want.iter().map(|(k, _)| k).collect();
                    assert_eq!(got_keys, want_keys, "stats key order");
                    let got: Vec<(String, u64)> = r
                        .stats
                        .0
                        .iter()
                        .map(|(k, v)| match v {
                            StatValue::Int(n) => (k.clone(), *n),
                            StatValue::Str(_) => panic!("string stat"),
                        })
                        .collect();
                    let mut want_sorted = want.clone();
                    want_sorted.sort();
                    let mut got_sorted = got.clone();
                    got_sorted.sort();
                    assert_eq!(got_sorted, want_sorted);
                    if let Some(keys) = c.get("order_keys") {
                        let k: Vec<u64> = r
                            .texts
                            .iter()
                            .map(|t| rank_key(&normalize(t), seed, "order"))
                            .collect();
                        assert_eq!(k, u64s(keys));
                    }
                }
            }
            "select_unseen" => {
                let sets = j["UNSEEN_ID_SETS"].as_object().unwrap();
                let names = oj.at("UNSEEN_ID_SETS").keys();
                let ours: Vec<&str> = UNSEEN_SETS.iter().map(|(n, _)| *n).collect();
                assert_eq!(names, ours);
                for (n, d) in UNSEEN_SETS {
                    assert_eq!(s(&sets[n][0]), d.name());
                }
                for (ci, c) in cases.iter().enumerate() {
                    let oc = oj.at("cases").at(&ci.to_string());
                    let rawm = c["raw"].as_object().unwrap();
                    let raw: Vec<(String, Domain, Vec<Option<String>>)> = UNSEEN_SETS
                        .iter()
                        .filter_map(|(n, d)| {
                            rawm.get(*n).map(|v| {
                                let texts = v
                                    .as_array()
                                    .unwrap()
                                    .iter()
                                    .map(|x| x.as_str().map(str::to_string))
                                    .collect();
                                (n.to_string(), *d, texts)
                            })
                        })
                        .collect();
                    let seen = OverlapIndex::from_texts(strs(&c["seen_texts"]));
                    let (rows, stats) = select_unseen(
                        &raw,
                        &seen,
                        c["per_set"].as_u64().unwrap() as usize,
                        c["seed"].as_u64().unwrap(),
                    );
                    let r = &c["rows"];
                    let texts: Vec<String> = rows.iter().map(|x| x.text.clone()).collect();
                    assert_eq!(texts, strs(&r["text"]), "{}", c["name"]);
                    let labels: Vec<u64> = rows.iter().map(|x| x.domain.label() as u64).collect();
                    assert_eq!(labels, u64s(&r["label"]));
                    let doms: Vec<String> =
                        rows.iter().map(|x| x.domain.name().to_string()).collect();
                    assert_eq!(doms, strs(&r["domain"]));
                    let ds: Vec<String> = rows.iter().map(|x| x.dataset.clone()).collect();
                    assert_eq!(ds, strs(&r["dataset"]));
                    let want = c["stats"].as_object().unwrap();
                    let want_order = oc.at("stats").keys();
                    assert_eq!(stats.len(), want.len());
                    for ((name, st), wn) in stats.iter().zip(&want_order) {
                        let wv = &want[wn];
                        assert_eq!(name, wn);
                        assert_eq!(
                            serde_json::to_value(st).unwrap(),
                            *wv,
                            "{} {name}",
                            c["name"]
                        );
                    }
                }
            }
            other => panic!("unknown helpers golden file {other}: add a handler"),
        }
    }
    // Count guard (333 visible cases): at least the visible count of every file, since
    // held-back goldens may add cases (files are matched by name prefix).
    tally.assert_at_least(
        "gqr helpers",
        &[
            ("detokenize_wikitext", 14),
            ("digest_rank_key", 104),
            ("fingerprint", 8),
            ("id_topic_hit", 95),
            ("normalize", 37),
            ("overlap_index", 14),
            ("reddit_post_legal_qa", 33),
            ("select_background", 6),
            ("select_unseen", 6),
            ("shingles", 10),
            ("smallest_eligible", 6),
        ],
    );
}

/// Python `\w` is CPython 3.11's (Unicode 14): every code point against the golden dump
/// (`word_char_ranges` minus `mark_ranges`, since Mn/Mc are never `\w`).
#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn py_word_matches_unicode14() {
    let Some(shared) = shared("py_word_matches_unicode14") else {
        return;
    };
    let j = load_json(&shared.join("golden/rag/unicode14_tables.json"));
    // One flag per code point.
    let bitmap = |key: &str| -> Vec<bool> {
        let mut m = vec![false; 0x110000];
        for r in j[key]["ranges"].as_array().expect("ranges") {
            let (lo, hi) = (r[0].as_u64().unwrap(), r[1].as_u64().unwrap());
            for cp in lo..=hi {
                m[cp as usize] = true;
            }
        }
        m
    };
    let (word, marks) = (bitmap("word_char_ranges"), bitmap("mark_ranges"));
    let mut wrong = Vec::new();
    for cp in 0..=0x10FFFFu32 {
        let Some(c) = char::from_u32(cp) else {
            continue;
        };
        let want = word[cp as usize] && !marks[cp as usize];
        if is_py_word(c) != want {
            wrong.push(format!("U+{cp:04X}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} differ: {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(10)]
    );
}
