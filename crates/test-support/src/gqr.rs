//! The GQR build the CLI test suites score against: a build directory (`manifest.json`,
//! `id_test.jsonl`, `ood_test.jsonl`) made from the shipped `examples/data/gqr/rows.jsonl`.
//! One definition for every test file that needs it (it existed six times).

use std::path::Path;

/// The workspace's `examples/data` folder.
pub fn examples_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data")
}

/// Write the example GQR build into `dir` (created if needed) and return `dir` as a string.
/// `missing` lists `(set name, reason)` pairs recorded as missing sources (a partial build);
/// empty for a complete one. Panics on IO errors (test helper).
pub fn example_build(dir: &Path, missing: &[(&str, &str)]) -> String {
    let text = std::fs::read_to_string(examples_dir().join("gqr/rows.jsonl"))
        .expect("examples/data/gqr/rows.jsonl");
    let (mut id, mut ood) = (String::new(), String::new());
    for l in text.lines() {
        let t = if l.contains("\"id_test/") {
            &mut id
        } else {
            &mut ood
        };
        t.push_str(l);
        t.push('\n');
    }
    let manifest = if missing.is_empty() {
        format!(
            r#"{{"build": "gqr", "registry_blake3": "-", "files": [
        {{"path": "id_test.jsonl", "rows": {}, "blake3": "-"}},
        {{"path": "ood_test.jsonl", "rows": {}, "blake3": "-"}}],
        "missing": [], "datasets": [], "warnings": []}}"#,
            id.lines().count(),
            ood.lines().count()
        )
    } else {
        let missing: Vec<serde_json::Value> = missing
            .iter()
            .map(|(n, r)| serde_json::json!({"name": n, "reason": r}))
            .collect();
        serde_json::json!({
            "build": "gqr", "registry_blake3": "-",
            "files": [
                {"path": "id_test.jsonl", "rows": id.lines().count(), "blake3": "-"},
                {"path": "ood_test.jsonl", "rows": ood.lines().count(), "blake3": "-"}
            ],
            "missing": missing, "datasets": [], "warnings": []
        })
        .to_string()
    };
    std::fs::create_dir_all(dir).expect("build directory");
    std::fs::write(dir.join("manifest.json"), manifest).expect("manifest.json");
    std::fs::write(dir.join("id_test.jsonl"), id).expect("id_test.jsonl");
    std::fs::write(dir.join("ood_test.jsonl"), ood).expect("ood_test.jsonl");
    dir.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    /// The build shipped in `examples/data/gqr/build/` (used by the book's `gqr score --html`
    /// recipe) is the one the test suites write: the same rows byte for byte, the same
    /// manifest as JSON.
    #[test]
    fn example_build_equals_the_shipped_build() {
        let dir = std::env::temp_dir().join(format!("routeval-gqr-build-{}", std::process::id()));
        super::example_build(&dir, &[]);
        let shipped = super::examples_dir().join("gqr/build");
        for f in ["id_test.jsonl", "ood_test.jsonl"] {
            assert_eq!(
                std::fs::read(dir.join(f)).unwrap(),
                std::fs::read(shipped.join(f)).unwrap(),
                "{f}"
            );
        }
        let json = |p: std::path::PathBuf| -> serde_json::Value {
            serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
        };
        assert_eq!(
            json(dir.join("manifest.json")),
            json(shipped.join("manifest.json"))
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
