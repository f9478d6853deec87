//! Shared helpers for tests that read `$ROUTEVAL_SHARED`.
#![allow(dead_code)]

use std::path::PathBuf;

/// The shared folder, or `None` (after printing SKIPPED) when `ROUTEVAL_SHARED` is unset.
/// Under `CI=true` a missing variable is a failure.
pub(crate) fn shared(test: &str) -> Option<PathBuf> {
    routeval_core::fixtures::shared_dir(test)
}

/// Read and parse a JSON file under the shared folder; a missing file fails loudly.
pub(crate) fn load_json(path: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("missing shared fixture {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: bad JSON: {e}", path.display()))
}

/// Every `*.json` file in `dir` (sorted), failing loudly if the folder is missing or empty.
pub(crate) fn json_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("missing shared folder {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no JSON files in {}", dir.display());
    v
}

/// A float golden `{"repr", "hex"}` (or a bare number / "NaN") as f64.
pub(crate) fn golden_f64(v: &serde_json::Value) -> f64 {
    match v {
        serde_json::Value::Object(m) => {
            let hex = m["hex"].as_str().expect("hex");
            parse_hex_float(hex)
        }
        serde_json::Value::Number(n) => n.as_f64().unwrap(),
        serde_json::Value::String(s) => match s.as_str() {
            "NaN" | "nan" => f64::NAN,
            "Infinity" | "inf" => f64::INFINITY,
            "-Infinity" | "-inf" => f64::NEG_INFINITY,
            _ => s.parse().unwrap(),
        },
        _ => panic!("not a float: {v}"),
    }
}

/// Parse Python's `float.hex()` output.
pub(crate) fn parse_hex_float(s: &str) -> f64 {
    match s {
        "nan" => return f64::NAN,
        "inf" => return f64::INFINITY,
        "-inf" => return f64::NEG_INFINITY,
        _ => {}
    }
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let s = s.strip_prefix("0x").expect("0x");
    let (mant, exp) = s.split_once('p').expect("p");
    let exp: i32 = exp.parse().unwrap();
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let mut m: u128 = u128::from_str_radix(int, 16).unwrap();
    for c in frac.chars() {
        m = m * 16 + c.to_digit(16).unwrap() as u128;
    }
    let e = exp - 4 * frac.len() as i32;
    let v = (m as f64) * 2f64.powi(e);
    if neg { -v } else { v }
}

/// A JSON array of unsigned integers (numbers or decimal strings).
pub(crate) fn usizes(v: &serde_json::Value) -> Vec<usize> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| match x {
            serde_json::Value::String(s) => s.parse().unwrap(),
            _ => x.as_u64().unwrap() as usize,
        })
        .collect()
}

/// A JSON array of u64 (numbers or decimal strings).
pub(crate) fn u64s(v: &serde_json::Value) -> Vec<u64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| match x {
            serde_json::Value::String(s) => s.parse().unwrap(),
            _ => x.as_u64().unwrap(),
        })
        .collect()
}

/// A JSON value that keeps object key order (serde_json's `Map` sorts keys unless the
/// workspace-wide `preserve_order` feature is on, which would change other crates).
#[derive(Debug, Clone)]
pub(crate) enum Ordered {
    /// Any non-object value.
    Leaf,
    /// An array.
    Arr(Vec<Ordered>),
    /// An object with keys in file order.
    Obj(Vec<(String, Ordered)>),
}

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Ordered, E> {
                Ok(Ordered::Leaf)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Ordered, E> {
                Ok(Ordered::Leaf)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Ordered, E> {
                Ok(Ordered::Leaf)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Ordered, E> {
                Ok(Ordered::Leaf)
            }
            fn visit_str<E>(self, _: &str) -> Result<Ordered, E> {
                Ok(Ordered::Leaf)
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Leaf)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Ordered, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(Ordered::Arr(v))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Ordered, A::Error> {
                let mut v = Vec::new();
                while let Some((k, x)) = a.next_entry::<String, Ordered>()? {
                    v.push((k, x));
                }
                Ok(Ordered::Obj(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl Ordered {
    /// Load a file keeping key order.
    pub(crate) fn load(path: &std::path::Path) -> Ordered {
        let text = std::fs::read_to_string(path).expect("read");
        serde_json::from_str(&text).expect("json")
    }

    /// The member `key` of an object, or element `key` (a number) of an array.
    pub(crate) fn at(&self, key: &str) -> &Ordered {
        match self {
            Ordered::Obj(v) => {
                &v.iter()
                    .find(|(k, _)| k == key)
                    .unwrap_or_else(|| panic!("no key {key}"))
                    .1
            }
            Ordered::Arr(v) => &v[key.parse::<usize>().expect("index")],
            Ordered::Leaf => panic!("leaf has no {key}"),
        }
    }

    /// The keys of an object in file order.
    pub(crate) fn keys(&self) -> Vec<String> {
        match self {
            Ordered::Obj(v) => v.iter().map(|(k, _)| k.clone()).collect(),
            _ => panic!("not an object"),
        }
    }
}

/// Which known kind a golden file is: the longest of `kinds` that prefixes its file name
/// (so held-back files such as `select_unseen_more.json` reach the right handler).
pub(crate) fn kind_of<'a>(path: &std::path::Path, kinds: &[&'a str]) -> &'a str {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    kinds
        .iter()
        .filter(|k| name.starts_with(*k))
        .max_by_key(|k| k.len())
        .copied()
        .unwrap_or_else(|| panic!("unknown golden file {name}: add a handler"))
}
