//! gzip and zstd inputs, by magic bytes (issue 14): every input kind gives the same output
//! compressed as plain, whatever the file is called, and through stdin.
//!
//! zstd fixtures: `tests/fixtures/compressed/*.zst`, made from `examples/data/` with
//! `zstd -19` (real compressed blocks); gzip is made here with `flate2`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example(rel: &str) -> PathBuf {
    root().join("examples/data").join(rel)
}

fn zst(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/compressed")
        .join(format!("{name}.zst"))
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn run(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_routeval"));
    c.args(args).current_dir(root());
    c.env(
        "ROUTEVAL_CACHE_DIR",
        std::env::temp_dir().join("routeval-compressed-tests"),
    );
    c.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    if let Some(b) = stdin {
        let mut i = child.stdin.take().unwrap();
        i.write_all(b).unwrap();
    }
    child.wait_with_output().unwrap()
}

fn ok(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The three forms of one input: the gzip copy (named `.bin`, so only magic bytes tell), the
/// zstd fixture copied to a name without extension, and the plain file.
struct Forms {
    _dir: tempfile::TempDir,
    gz: PathBuf,
    zst: PathBuf,
    gz_bytes: Vec<u8>,
    zst_bytes: Vec<u8>,
}

fn forms(plain: &Path, fixture: &str) -> Forms {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(plain).unwrap();
    let gz_bytes = gz(&bytes);
    let gzp = dir.path().join(format!("{fixture}-gz.bin"));
    std::fs::write(&gzp, &gz_bytes).unwrap();
    let zst_bytes = std::fs::read(zst(fixture)).unwrap();
    let zstp = dir.path().join(format!("{fixture}-zstd"));
    std::fs::write(&zstp, &zst_bytes).unwrap();
    Forms {
        _dir: dir,
        gz: gzp,
        zst: zstp,
        gz_bytes,
        zst_bytes,
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Run `args` with `{}` replaced by the plain, gzip and zstd forms of `input`; and with `-`
/// and the compressed bytes on stdin. All outputs equal.
fn same_output(args: &[&str], input: &str, fixture: &str) {
    let plain = example(input);
    let f = forms(&plain, fixture);
    let with = |p: &str| -> Vec<String> { args.iter().map(|a| a.replace("{}", p)).collect() };
    let go = |p: &str, stdin: Option<&[u8]>| {
        let a = with(p);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = ok(&run(&a, stdin));
        // `crb eval --json` names the bank file (`shard`) and the predictor spec
        // (`classifier`, `file:PATH`): not part of the comparison.
        match serde_json::from_str::<serde_json::Value>(&out) {
            Ok(serde_json::Value::Object(mut m)) => {
                m.remove("shard");
                m.remove("classifier");
                serde_json::Value::Object(m).to_string()
            }
            _ => out,
        }
    };
    let want = go(s(&plain), None);
    assert!(!want.is_empty());
    assert_eq!(go(s(&f.gz), None), want, "gzip {input}");
    assert_eq!(go(s(&f.zst), None), want, "zstd {input}");
    assert_eq!(go("-", Some(&f.gz_bytes)), want, "gzip stdin {input}");
    assert_eq!(go("-", Some(&f.zst_bytes)), want, "zstd stdin {input}");
}

#[test]
fn trec_qrels_gzip_and_zstd() {
    same_output(
        &["trec", "{}", s(&example("trec/run.txt"))],
        "trec/qrels.txt",
        "qrels.txt",
    );
}

#[test]
fn trec_run_gzip_and_zstd() {
    same_output(
        &["trec", "-q", s(&example("trec/qrels.txt")), "{}"],
        "trec/run.txt",
        "run.txt",
    );
}

#[test]
fn rag_cases_gzip_and_zstd() {
    same_output(
        &["rag", "{}", "--format", "jsonl"],
        "rag/cases.json",
        "cases.json",
    );
}

#[test]
fn rag_trec_input_gzip_and_zstd() {
    same_output(
        &[
            "rag",
            "--qrels",
            s(&example("trec/qrels.txt")),
            "--run",
            "{}",
        ],
        "trec/run.txt",
        "run.txt",
    );
}

#[test]
fn route_data_gzip_and_zstd() {
    same_output(
        &[
            "route",
            "--config",
            s(&example("dsl/routes.json")),
            "--data",
            "{}",
        ],
        "dsl/outputs.jsonl",
        "outputs.jsonl",
    );
}

#[test]
fn filter_input_gzip_and_zstd() {
    same_output(
        &["filter", "--where", r#"{"task": "qa"}"#, "{}"],
        "dsl/extra_info.jsonl",
        "extra_info.jsonl",
    );
}

#[test]
fn crb_bank_gzip_and_zstd() {
    same_output(
        &[
            "crb",
            "eval",
            "--predictor",
            "gold",
            "--json",
            "--bank",
            "{}",
        ],
        "crb/bank.jsonl",
        "bank.jsonl",
    );
}

#[test]
fn crb_predictions_gzip_and_zstd() {
    same_output(
        &[
            "crb",
            "eval",
            "--json",
            "--bank",
            s(&example("crb/bank.jsonl")),
            "--predictor",
            "file:{}",
        ],
        "crb/predictions.json",
        "predictions.json",
    );
}

#[test]
fn crb_manifest_gzip_and_zstd() {
    same_output(
        &[
            "crb",
            "eval",
            "--json",
            "--bank",
            s(&example("crb/bank.jsonl")),
            "--predictor",
            "gold",
            "--n",
            "4",
            "--manifest",
            "{}",
        ],
        "crb/manifest.json",
        "manifest.json",
    );
}

#[test]
fn crb_metrics_cases_gzip_and_zstd() {
    same_output(
        &["crb", "metrics", "--cases", "{}"],
        "crb/metrics_cases.json",
        "metrics_cases.json",
    );
}

#[test]
fn gqr_predictions_gzip_and_zstd() {
    let dir = tempfile::tempdir().unwrap();
    let build = dir.path().join("build");
    std::fs::create_dir_all(&build).unwrap();
    let rows = std::fs::read_to_string(example("gqr/rows.jsonl")).unwrap();
    let (mut id, mut ood) = (String::new(), String::new());
    for l in rows.lines().filter(|l| !l.trim().is_empty()) {
        if l.contains("\"id_test/") {
            id.push_str(l);
            id.push('\n');
        } else if l.contains("\"ood_test/") {
            ood.push_str(l);
            ood.push('\n');
        }
    }
    let manifest = format!(
        r#"{{"build": "gqr", "registry_blake3": "-", "files": [
        {{"path": "id_test.jsonl", "rows": {}, "blake3": "-"}},
        {{"path": "ood_test.jsonl", "rows": {}, "blake3": "-"}}],
        "missing": [], "datasets": [], "warnings": []}}"#,
        id.lines().count(),
        ood.lines().count()
    );
    std::fs::write(build.join("manifest.json"), manifest).unwrap();
    std::fs::write(build.join("id_test.jsonl"), id).unwrap();
    std::fs::write(build.join("ood_test.jsonl"), ood).unwrap();
    same_output(
        &[
            "gqr",
            "score",
            "--json",
            "--build-dir",
            s(&build),
            "--predictions",
            "{}",
        ],
        "gqr/predictions.jsonl",
        "predictions.jsonl",
    );
}

#[test]
fn corrupt_compressed_input_is_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = gz(&std::fs::read(example("trec/run.txt")).unwrap());
    let n = bytes.len();
    bytes.truncate(n / 2);
    let p = dir.path().join("run.gz");
    std::fs::write(&p, &bytes).unwrap();
    let o = run(&["trec", s(&example("trec/qrels.txt")), s(&p)], None);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        err.contains("run.gz") && err.contains("decompress"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}
