//! The real offline sets in `$ROUTEVAL_SHARED/thirdparty/gqr/` through the real readers,
//! filters and OOD/unseen processing, with the row counts `specs/gqr.md` gives.

use routeval_bench_data::gqr::build::*;
use routeval_bench_data::gqr::registry::Registry;

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn offline_sets_row_counts() {
    let Some(root) = routeval_core::fixtures::shared_files(
        "offline_sets_row_counts",
        "thirdparty/gqr",
        &[
            "banking77_test.csv",
            "mmlu_professional_law_test.csv",
            "webquestions_test.json",
        ],
    ) else {
        return;
    };
    let reg = Registry::load().unwrap();
    let mut mirror = MirrorDir { root: root.clone() };
    // Raw loads: the sizes of the upstream splits.
    for (name, rows) in [
        ("web_questions", 2032),
        ("banking77", 3080),
        ("mmlu_professional_law", 1534),
    ] {
        let ds = reg.dataset(name).unwrap();
        let set = load_dataset(&reg, ds, &mut mirror).unwrap().unwrap();
        assert_eq!(set.rows_read, rows, "{name}");
        assert_eq!(set.texts.len() as u64, rows, "{name}: no filter drops rows");
        assert!(set.source.starts_with("release"), "{}", set.source);
        assert!(
            set.texts
                .iter()
                .all(|t| t.as_deref().is_some_and(|t| !t.is_empty()))
        );
    }
    let wq = load_dataset(&reg, reg.dataset("web_questions").unwrap(), &mut mirror)
        .unwrap()
        .unwrap();
    assert_eq!(
        wq.texts[0].as_deref(),
        Some("what does jamaican people speak?")
    );
    let mmlu = load_dataset(
        &reg,
        reg.dataset("mmlu_professional_law").unwrap(),
        &mut mirror,
    )
    .unwrap()
    .unwrap();
    assert!(
        mmlu.texts[0]
            .as_deref()
            .unwrap()
            .starts_with("One afternoon, a pilot was flying")
    );

    // The whole build on this partial mirror: OOD = web_questions only, unseen = 2 sets of
    // 1000 (banking77 3080 raw, mmlu 1534 raw), everything else listed as missing.
    let b = build_all(&reg, &mut mirror, &BuildOptions::default()).unwrap();
    let split = |n: &str| b.splits.iter().find(|(s, _)| s == n).map(|(_, r)| r);
    let ood = split("ood_test").expect("ood_test built");
    assert_eq!(ood.len(), 2032);
    assert!(
        ood.iter()
            .all(|r| r.label == 3 && r.dataset == "web_questions")
    );
    assert_eq!(ood[5].id, "ood_test/web_questions/5");
    let unseen = split("unseen_id").expect("unseen built");
    assert_eq!(
        unseen.iter().filter(|r| r.dataset == "banking77").count(),
        1000
    );
    assert_eq!(
        unseen
            .iter()
            .filter(|r| r.dataset == "mmlu_professional_law")
            .count(),
        1000
    );
    assert!(
        unseen
            .iter()
            .all(|r| (r.dataset == "banking77") == (r.label == 1))
    );
    assert!(split("id_test").is_none() && split("background_train").is_none());
    let missing: Vec<&str> = b.missing.iter().map(|m| m.name.as_str()).collect();
    for m in [
        "law",
        "finance",
        "healthcare",
        "jigsaw",
        "dkhate",
        "wikitext",
        "reddit_finance",
    ] {
        assert!(
            missing.contains(&m),
            "{m} should be listed missing: {missing:?}"
        );
    }
    assert!(b.warnings.iter().any(|w| w.contains("partial")));
    let stats = &b
        .side_files
        .iter()
        .find(|(n, _)| n.starts_with("unseen-id-audited-unescaped"))
        .unwrap()
        .1;
    let v: serde_json::Value = serde_json::from_str(stats).unwrap();
    assert_eq!(v["sets"]["banking77"]["raw"], 3080);
    assert_eq!(v["sets"]["banking77"]["used"], 1000);
    assert_eq!(v["sets"]["mmlu_professional_law"]["raw"], 1534);
    assert_eq!(v["rows"], 2000);
    // Deterministic.
    let b2 = build_all(&reg, &mut mirror, &BuildOptions::default()).unwrap();
    assert_eq!(b2.splits, b.splits);
}

#[test]
fn bad_sources_give_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let reg = Registry::load().unwrap();
    let ds = reg.dataset("banking77").unwrap();
    let mut mirror = MirrorDir {
        root: dir.path().to_path_buf(),
    };
    // Nothing there: unavailable, with a reason.
    let u = load_dataset(&reg, ds, &mut mirror).unwrap().unwrap_err();
    assert!(u.reason.contains("not available"), "{}", u.reason);
    // A missing column.
    std::fs::write(
        dir.path().join("banking77_test.csv"),
        "query,category\nhello there friend,x\n",
    )
    .unwrap();
    let e = load_dataset(&reg, ds, &mut mirror).unwrap_err().to_string();
    assert!(
        e.contains("column \"text\" not found") && e.contains("query"),
        "{e}"
    );
    // An empty source.
    std::fs::write(dir.path().join("banking77_test.csv"), "text,category\n").unwrap();
    let e = load_dataset(&reg, ds, &mut mirror).unwrap_err().to_string();
    assert!(e.contains("has no rows"), "{e}");
    // A malformed file.
    let wq = reg.dataset("web_questions").unwrap();
    std::fs::write(
        dir.path().join("webquestions_test.json"),
        "[{\"utterance\": 1},",
    )
    .unwrap();
    let e = load_dataset(&reg, wq, &mut mirror).unwrap_err().to_string();
    assert!(
        e.starts_with("web_questions: webquestions_test.json:"),
        "{e}"
    );
}
