//! Every function of `routeval_core::py` against CPython 3.11.7 / numpy 2.4 output:
//! `tests/fixtures/py_vectors.json`, written by `tests/fixtures/gen_py_vectors.py`.

use routeval_core::py::{
    DumpOptions, dumps, float_repr, is_printable, is_space, json_float, number_text, numpy_sum,
    repr_str, repr_value, rstrip, str_value, strip, write_json_str,
};
use serde_json::Value;

fn vectors() -> Value {
    let text = include_str!("fixtures/py_vectors.json");
    serde_json::from_str(text).expect("py_vectors.json")
}

fn f(bits: &Value) -> f64 {
    f64::from_bits(bits.as_u64().expect("bits"))
}

fn s(v: &Value) -> &str {
    v.as_str().expect("string")
}

#[test]
fn float_repr_and_json_float_match_cpython() {
    let v = vectors();
    let cases = v["floats"].as_array().unwrap();
    assert!(cases.len() > 1000);
    for c in cases {
        let x = f(&c["bits"]);
        assert_eq!(float_repr(x), s(&c["repr"]), "repr({x:?})");
        assert_eq!(json_float(x), s(&c["json"]), "json.dumps({x:?})");
    }
}

/// Code points in `ranges` (sorted inclusive pairs) against `pred`, over all of Unicode.
fn check_ranges(ranges: &Value, pred: fn(char) -> bool, name: &str) {
    let mut want = vec![false; 0x110000];
    for r in ranges.as_array().unwrap() {
        let (lo, hi) = (
            r[0].as_u64().unwrap() as usize,
            r[1].as_u64().unwrap() as usize,
        );
        want[lo..=hi].fill(true);
    }
    for (cp, &want) in want.iter().enumerate() {
        let Some(c) = char::from_u32(cp as u32) else {
            continue;
        };
        assert!(pred(c) == want, "{name}(U+{cp:04X}): want {want}");
    }
}

#[test]
fn is_space_matches_cpython_isspace_for_every_code_point() {
    check_ranges(&vectors()["space_ranges"], is_space, "str.isspace");
}

#[test]
fn is_printable_matches_cpython_isprintable_for_every_code_point() {
    check_ranges(
        &vectors()["printable_ranges"],
        is_printable,
        "str.isprintable",
    );
}

#[test]
fn string_functions_match_cpython() {
    let v = vectors();
    for c in v["strings"].as_array().unwrap() {
        let text = s(&c["s"]);
        assert_eq!(repr_str(text), s(&c["repr"]), "repr({text:?})");
        assert_eq!(strip(text), s(&c["strip"]), "{text:?}.strip()");
        assert_eq!(rstrip(text), s(&c["rstrip"]), "{text:?}.rstrip()");
        let mut out = String::new();
        write_json_str(&mut out, text, true);
        assert_eq!(out, s(&c["json_ascii"]), "json.dumps({text:?})");
        out.clear();
        write_json_str(&mut out, text, false);
        assert_eq!(
            out,
            s(&c["json"]),
            "json.dumps({text:?}, ensure_ascii=False)"
        );
    }
}

#[test]
fn value_forms_match_cpython() {
    let v = vectors();
    for c in v["values"].as_array().unwrap() {
        let text = s(&c["json"]);
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(str_value(&value), s(&c["str"]), "str({text})");
        assert_eq!(repr_value(&value), s(&c["repr"]), "repr({text})");
        let dump = |ensure_ascii, sort_keys, indent| {
            dumps(
                &value,
                DumpOptions {
                    ensure_ascii,
                    sort_keys,
                    indent,
                },
            )
        };
        assert_eq!(dump(false, false, None), s(&c["dumps"]), "dumps({text})");
        assert_eq!(
            dump(true, false, None),
            s(&c["dumps_ascii"]),
            "dumps({text})"
        );
        assert_eq!(
            dump(false, true, Some(2)),
            s(&c["dumps_sorted_indent2"]),
            "{text}"
        );
        assert_eq!(
            dump(true, false, Some(4)),
            s(&c["dumps_ascii_indent4"]),
            "{text}"
        );
        if let Value::Number(n) = &value {
            assert_eq!(number_text(n), s(&c["dumps"]), "number {text}");
        }
    }
}

#[test]
fn numpy_sum_matches_numpy() {
    let v = vectors();
    for c in v["numpy_sum"].as_array().unwrap() {
        let xs: Vec<f64> = c["bits"].as_array().unwrap().iter().map(f).collect();
        let got = numpy_sum(&xs);
        assert_eq!(
            got.to_bits(),
            f(&c["sum"]).to_bits(),
            "np.sum of {} values",
            xs.len()
        );
    }
}
