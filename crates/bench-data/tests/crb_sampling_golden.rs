//! Sampling, quota and RNG vectors from `$ROUTEVAL_SHARED/golden/crb/sampling/`, through the
//! library's `select_sample` (CommonRouterBench `select_question_bank_rows` with `n` set): the
//! selected ids and quotas, and every error vector's type and message as the library produces
//! them (`routeval crb eval` is checked on the same vectors in `crates/cli/tests/cli/crb_cli.rs`).
//!
//! Count guards: the golden README fixes these lists (8 RNG seeds, 76 sampling vectors, 8 error
//! vectors, quotas for n = 1..1000, 7 edge manifests) and none of them is held back, so the
//! counts are exact.

use routeval_bench_data::crb::{
    BankReader, Manifest, Quotas, SampleError, manifest_proportional_quotas, published_manifest,
    select_sample,
};
use routeval_bench_data::pyrandom::PyRandom;
use routeval_test_support::golden::{Count, array, assert_count, read_json};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn shared() -> PathBuf {
    routeval_core::fixtures::shared("crb_sampling_golden")
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn rng_vectors() {
    let g = read_json(&shared().join("golden/crb/sampling/rng_vectors.json"));
    let vectors = array(&g, "vectors", "rng_vectors.json");
    for v in vectors {
        let seed: i128 = v["seed"].to_string().parse().unwrap();
        let mut r = PyRandom::new(seed);
        for x in v["first_8_genrand_uint32"].as_array().unwrap() {
            assert_eq!(r.next_u32() as u64, x.as_u64().unwrap(), "seed {seed}");
        }
        let mut r = PyRandom::new(seed);
        for pair in v["randbelow_sequence"].as_array().unwrap() {
            assert_eq!(
                r.randbelow(pair[0].as_u64().unwrap()),
                pair[1].as_u64().unwrap(),
                "seed {seed}"
            );
        }
        let mut r = PyRandom::new(seed);
        for (i, x) in v["randint_1_n_for_n_1_to_29"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            assert_eq!(
                r.randint(1, i as i64 + 1),
                x.as_i64().unwrap(),
                "seed {seed}"
            );
        }
        let mut r = PyRandom::new(seed);
        let mut xs: Vec<i64> = (0..12).collect();
        r.shuffle(&mut xs);
        let exp: Vec<i64> = v["shuffle_range_12"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().unwrap())
            .collect();
        assert_eq!(xs, exp, "seed {seed}");
    }
    assert_count("crb rng vectors", vectors.len(), Count::Exact(8));
}

/// The reference's exception type for a sampling error.
fn py_type(e: &SampleError) -> &'static str {
    match e {
        SampleError::BankNotFound(_) => "FileNotFoundError",
        _ => "ValueError",
    }
}

/// `select_question_bank_rows(n, seed, shard=dir/bank, manifest)` through the library. The
/// bank's existence is the caller's check (the library takes rows); its error is the
/// library's `SampleError::BankNotFound`.
fn select(
    dir: &Path,
    bank: &str,
    manifest: &Manifest,
    n: i64,
    seed: i128,
) -> Result<(Quotas, Vec<String>), SampleError> {
    let path = dir.join(bank);
    let Ok(f) = std::fs::File::open(&path) else {
        assert!(
            !path.exists(),
            "{} exists but cannot be opened",
            path.display()
        );
        return Err(SampleError::BankNotFound(bank.to_string()));
    };
    let (q, rows) = select_sample(
        BankReader::new(std::io::BufReader::new(f), bank),
        manifest,
        n,
        seed,
    )
    .unwrap_or_else(|e| panic!("{bank}: unreadable row: {e}"))?;
    let ids = rows
        .iter()
        .map(|r| r.value["id"].as_str().unwrap().to_string())
        .collect();
    Ok((q, ids))
}

fn quotas_of(v: &Value) -> Quotas {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, x)| (k.clone(), x.as_i64().unwrap()))
        .collect()
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn sampling_vectors() {
    let dir = shared().join("golden/crb/sampling");
    let g = read_json(&dir.join("sampling_vectors.json"));
    let vectors = array(&g, "vectors", "sampling_vectors.json");
    for v in vectors {
        let m = Manifest {
            value: read_json(&dir.join(v["manifest"].as_str().unwrap())),
        };
        let (q, ids) = select(
            &dir,
            v["bank"].as_str().unwrap(),
            &m,
            v["n"].as_i64().unwrap(),
            v["seed"].as_i64().unwrap() as i128,
        )
        .unwrap_or_else(|e| panic!("n={} seed={}: {e}", v["n"], v["seed"]));
        assert_eq!(q, quotas_of(&v["quotas"]), "{v}");
        let exp: Vec<&str> = v["selected_ids_in_returned_order"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert_eq!(ids, exp, "n={} seed={}", v["n"], v["seed"]);
    }
    assert_count("crb sampling vectors", vectors.len(), Count::Exact(76));
}

/// Every error vector: the library raises the reference's exception type with its message.
#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn sampling_error_vectors() {
    let dir = shared().join("golden/crb/sampling");
    let g = read_json(&dir.join("sampling_vectors.json"));
    let errors = array(&g, "error_vectors", "sampling_vectors.json");
    let mut kinds = std::collections::HashSet::new();
    for v in errors {
        let m = Manifest {
            value: v["manifest"].clone(),
        };
        let n = v["n"].as_i64().unwrap();
        let err = select(
            &dir,
            v["bank"].as_str().unwrap(),
            &m,
            n,
            v["seed"].as_i64().unwrap() as i128,
        )
        .expect_err(&v.to_string());
        assert_eq!(
            (py_type(&err), err.to_string().as_str()),
            (
                v["error"]["type"].as_str().unwrap(),
                v["error"]["message"].as_str().unwrap()
            ),
            "{v}"
        );
        if n <= 0 {
            assert_eq!(err, SampleError::NonPositiveN, "{v}");
        }
        kinds.insert(std::mem::discriminant(&err));
    }
    assert_count("crb sampling error vectors", errors.len(), Count::Exact(8));
    // Six distinct failures: not enough rows, n <= 0, bad sources, missing line_count,
    // non-positive sum, bank not found.
    assert_count("crb sampling error kinds", kinds.len(), Count::Exact(6));
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn quota_vectors() {
    let sh = shared();
    let g = read_json(&sh.join("golden/crb/sampling/quota_vectors.json"));
    let shipped = Manifest {
        value: read_json(&sh.join("golden/crb/sampling/manifest_shipped.json")),
    };
    let names: Vec<&str> = array(&g, "shipped_manifest_sorted_sources", "quota_vectors.json")
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    let published = published_manifest();
    let by_n = g["shipped_manifest_quotas_by_n"].as_object().unwrap();
    for (n, exp) in by_n {
        let n: i64 = n.parse().unwrap();
        let exp_list = exp.as_array().unwrap();
        assert_eq!(exp_list.len(), names.len(), "n={n}");
        let exp: Vec<(String, i64)> = names
            .iter()
            .zip(exp_list)
            .map(|(k, x)| (k.to_string(), x.as_i64().unwrap()))
            .collect();
        assert_eq!(
            manifest_proportional_quotas(&shipped, n).unwrap(),
            exp,
            "n={n}"
        );
        assert_eq!(
            manifest_proportional_quotas(&published, n).unwrap(),
            exp,
            "published n={n}"
        );
    }
    let ns: Vec<i64> = by_n.keys().map(|k| k.parse().unwrap()).collect();
    assert_eq!(ns, (1..=1000).collect::<Vec<_>>(), "quotas for n = 1..1000");
    assert_count(
        "crb shipped-manifest quotas",
        by_n.len(),
        Count::Exact(1000),
    );
    let edges = array(&g, "edge_cases", "quota_vectors.json");
    for c in edges {
        let m = Manifest {
            value: c["manifest"].clone(),
        };
        assert_eq!(
            manifest_proportional_quotas(&m, c["total"].as_i64().unwrap()).unwrap(),
            quotas_of(&c["quotas"]),
            "{c}"
        );
    }
    assert_count("crb quota edge cases", edges.len(), Count::Exact(7));
}
