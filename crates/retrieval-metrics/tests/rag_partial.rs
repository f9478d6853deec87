//! `RagPartial`: a lexical rag evaluation sharded over positions, merged in any order and
//! round-tripped through its JSON state, equals the one-pass report exactly.

use routeval_retrieval_metrics::rag::{Options, PyValue, RagPartial, RagRun, evaluate, pyjson};

fn cases_json(n: usize, seed: u64) -> String {
    // A small deterministic generator (xorshift) of varied cases: ids, passages, graded and
    // empty `relevant`, estimated cases (no `relevant`), answers.
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let words = [
        "alpha", "beta", "gamma", "delta", "paris", "france", "river", "city",
    ];
    let mut out = Vec::new();
    for i in 0..n {
        let text = |next: &mut dyn FnMut(u64) -> u64| {
            (0..3 + next(5))
                .map(|_| words[next(8) as usize])
                .collect::<Vec<_>>()
                .join(" ")
        };
        let retrieved: Vec<String> = (0..next(6))
            .map(|j| {
                if next(2) == 0 {
                    format!("\"d{}\"", next(9))
                } else {
                    format!("{{\"id\": \"p{j}\", \"text\": \"{}\"}}", text(&mut next))
                }
            })
            .collect();
        let relevant = match next(4) {
            0 => String::new(),
            1 => ", \"relevant\": []".into(),
            2 => format!(
                ", \"relevant\": {{\"d{}\": 2, \"d{}\": 1}}",
                next(9),
                next(9)
            ),
            _ => format!(", \"relevant\": [\"d{}\", \"p0\"]", next(9)),
        };
        let answer = if next(2) == 0 {
            format!(", \"answer\": \"{}\"", text(&mut next))
        } else {
            String::new()
        };
        out.push(format!(
            "{{\"query\": \"q{i} {}\", \"retrieved\": [{}]{relevant}{answer}}}",
            text(&mut next),
            retrieved.join(", ")
        ));
    }
    format!("[{}]", out.join(", "))
}

#[test]
fn sharded_partials_equal_one_pass() {
    for seed in 1..30u64 {
        let n = 5 + (seed as usize * 7) % 50;
        let text = cases_json(n, seed);
        let parsed = pyjson::parse(&text).unwrap();
        let PyValue::List(items) = &parsed else {
            panic!("not a list")
        };
        let opts = Options {
            k: 1 + (seed % 5) as i64,
            threshold: [0.0, 0.25, 0.5, 1.0][seed as usize % 4],
        };
        let one = evaluate(items, &opts, None).unwrap();
        let cuts = [0, n / 3, n / 2, n];
        let mut parts: Vec<RagPartial> = cuts
            .windows(2)
            .map(|w| {
                let mut run = RagRun::new(&opts).unwrap();
                let idx: Vec<usize> = (w[0]..w[1]).collect();
                run.push_indexed(&items[w[0]..w[1]], Some(&idx));
                let p = run.into_partial().unwrap();
                // The pickled form round-trips exactly.
                RagPartial::from_json(&p.to_json()).unwrap()
            })
            .collect();
        parts.reverse();
        let mut merged = RagPartial::default();
        for p in parts {
            merged.try_merge(p).unwrap();
        }
        assert_eq!(merged.len(), n);
        let got = merged.finish();
        assert_eq!(got, one, "seed {seed}");
        assert_eq!(got.summary(), one.summary());
    }
}

#[test]
fn a_case_in_two_partials_is_refused() {
    let text = cases_json(3, 7);
    let parsed = pyjson::parse(&text).unwrap();
    let PyValue::List(items) = &parsed else {
        panic!("not a list")
    };
    let opts = Options {
        k: 3,
        threshold: 0.5,
    };
    let part = || {
        let mut run = RagRun::new(&opts).unwrap();
        run.push(items);
        run.into_partial().unwrap()
    };
    let mut a = part();
    let err = a.try_merge(part()).unwrap_err();
    assert!(err.to_string().contains("in both"), "{err}");
}
