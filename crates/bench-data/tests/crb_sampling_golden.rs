//! Sampling, quota and RNG vectors from `$ROUTEVAL_SHARED/golden/crb/sampling/`.

use routeval_bench_data::crb::{
    BankReader, Manifest, manifest_proportional_quotas, proportional_reservoir_sample,
};
use routeval_bench_data::pyrandom::PyRandom;
use serde_json::Value;
use std::path::PathBuf;

fn shared() -> Option<PathBuf> {
    match std::env::var("ROUTEVAL_SHARED") {
        Ok(p) => Some(PathBuf::from(p)),
        Err(_) => {
            assert_ne!(
                std::env::var("CI").as_deref(),
                Ok("true"),
                "ROUTEVAL_SHARED must be set under CI"
            );
            eprintln!("SKIPPED: crb_sampling_golden needs ROUTEVAL_SHARED");
            None
        }
    }
}

fn load(p: PathBuf) -> Value {
    let b = std::fs::read(&p).unwrap_or_else(|e| panic!("missing {}: {e}", p.display()));
    serde_json::from_slice(&b).unwrap()
}

#[test]
fn rng_vectors() {
    let Some(sh) = shared() else { return };
    let g = load(sh.join("golden/crb/sampling/rng_vectors.json"));
    let mut n = 0;
    for v in g["vectors"].as_array().unwrap() {
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
        n += 1;
    }
    assert!(n >= 8);
}

fn sample(
    dir: &std::path::Path,
    bank: &str,
    manifest: &Manifest,
    n: i64,
    seed: i128,
) -> Result<(routeval_bench_data::crb::Quotas, Vec<String>), String> {
    if n <= 0 {
        return Err("n must be positive when set".into());
    }
    let path = dir.join(bank);
    let f = std::fs::File::open(&path).map_err(|_| format!("Question bank not found: {bank}"))?;
    let q = manifest_proportional_quotas(manifest, n).map_err(|e| e.to_string())?;
    let mut rng = PyRandom::new(seed);
    let rows = proportional_reservoir_sample(
        BankReader::new(std::io::BufReader::new(f), bank),
        &mut rng,
        &q,
    )
    .map_err(|e| e.to_string())?
    .map_err(|e| e.to_string())?;
    Ok((
        q,
        rows.iter()
            .map(|r| r.value["id"].as_str().unwrap().to_string())
            .collect(),
    ))
}

#[test]
fn sampling_vectors() {
    let Some(sh) = shared() else { return };
    let dir = sh.join("golden/crb/sampling");
    let g = load(dir.join("sampling_vectors.json"));
    let mut n = 0;
    for v in g["vectors"].as_array().unwrap() {
        let m = Manifest {
            value: load(dir.join(v["manifest"].as_str().unwrap())),
        };
        let (q, ids) = sample(
            &dir,
            v["bank"].as_str().unwrap(),
            &m,
            v["n"].as_i64().unwrap(),
            v["seed"].as_i64().unwrap() as i128,
        )
        .unwrap();
        let exp_q: Vec<(String, i64)> = v["quotas"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, x)| (k.clone(), x.as_i64().unwrap()))
            .collect();
        assert_eq!(q, exp_q, "{v}");
        let exp: Vec<&str> = v["selected_ids_in_returned_order"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert_eq!(ids, exp, "n={} seed={}", v["n"], v["seed"]);
        n += 1;
    }
    assert!(n >= 76, "{n}");
    for v in g["error_vectors"].as_array().unwrap() {
        let m = Manifest {
            value: v["manifest"].clone(),
        };
        let err = sample(
            &dir,
            v["bank"].as_str().unwrap(),
            &m,
            v["n"].as_i64().unwrap(),
            v["seed"].as_i64().unwrap() as i128,
        )
        .unwrap_err();
        assert_eq!(err, v["error"]["message"].as_str().unwrap());
    }
}

#[test]
fn quota_vectors() {
    let Some(sh) = shared() else { return };
    let g = load(sh.join("golden/crb/sampling/quota_vectors.json"));
    let shipped = Manifest {
        value: load(sh.join("golden/crb/sampling/manifest_shipped.json")),
    };
    let names: Vec<&str> = g["shipped_manifest_sorted_sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    let published = routeval_bench_data::crb::published_manifest();
    for (n, exp) in g["shipped_manifest_quotas_by_n"].as_object().unwrap() {
        let n: i64 = n.parse().unwrap();
        let exp: Vec<(String, i64)> = names
            .iter()
            .zip(exp.as_array().unwrap())
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
    for c in g["edge_cases"].as_array().unwrap() {
        let m = Manifest {
            value: c["manifest"].clone(),
        };
        let exp: Vec<(String, i64)> = c["quotas"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, x)| (k.clone(), x.as_i64().unwrap()))
            .collect();
        assert_eq!(
            manifest_proportional_quotas(&m, c["total"].as_i64().unwrap()).unwrap(),
            exp,
            "{c}"
        );
    }
}
