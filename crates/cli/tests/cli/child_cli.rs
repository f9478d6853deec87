//! Child processes (issue 10, item 2): `gqr score --cmd`, `crb eval --predictor cmd:` and
//! `rag --embed-cmd` share one process type. A router that hangs, never reads, closes stdout,
//! omits the last newline or answers with an over-long line ends with one clear line; every
//! descendant of `sh -c` is gone after routeval exits, also after SIGTERM to routeval.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_routeval"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A tiny GQR build directory (two ID rows, one OOD row).
fn tiny_build(dir: &Path) -> PathBuf {
    let b = dir.join("build");
    std::fs::create_dir_all(&b).unwrap();
    let manifest = r#"{"build": "gqr", "registry_blake3": "-", "files": [
        {"path": "id_test.jsonl", "rows": 2, "blake3": "-"},
        {"path": "ood_test.jsonl", "rows": 1, "blake3": "-"}],
        "missing": [], "datasets": [], "warnings": []}"#;
    std::fs::write(b.join("manifest.json"), manifest).unwrap();
    let id = "{\"id\": \"id_test/law/0\", \"text\": \"a contract\", \"label\": 0, \"domain\": \"law\", \"dataset\": \"law\"}\n\
              {\"id\": \"id_test/finance/0\", \"text\": \"a loan\", \"label\": 1, \"domain\": \"finance\", \"dataset\": \"finance\"}\n";
    std::fs::write(b.join("id_test.jsonl"), id).unwrap();
    let ood = "{\"id\": \"ood_test/jigsaw/0\", \"text\": \"hi\", \"label\": 3, \"domain\": \"ood\", \"dataset\": \"jigsaw\"}\n";
    std::fs::write(b.join("ood_test.jsonl"), ood).unwrap();
    b
}

fn gqr(build: &Path, router: &str, extra: &[&str]) -> Output {
    bin()
        .args(["gqr", "score", "--build-dir"])
        .arg(build)
        .args(["--cmd", router])
        .args(extra)
        .output()
        .unwrap()
}

fn crb(router: &str, extra: &[&str]) -> Output {
    crb_eval(&["--predictor", &format!("cmd:{router}")], extra)
}

/// `crb eval` on the example bank (cl100k only) with the given predictor arguments.
fn crb_eval(predictors: &[&str], extra: &[&str]) -> Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/crb");
    bin()
        .args(["crb", "eval", "--bank"])
        .arg(root.join("bank.jsonl"))
        .args(predictors)
        .args(["--tokenizer-setup", "all_cl100k"])
        .args(extra)
        .output()
        .unwrap()
}

/// Exit 2, one stderr line (other than `warning:`/notes) containing every needle, no stdout.
fn assert_one_error(o: &Output, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(o.stdout.is_empty(), "no partial stdout");
    let errors: Vec<&str> = e.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{e}");
    for n in needles {
        assert!(errors[0].contains(n), "{n:?} not in {e:?}");
    }
}

#[test]
fn a_hanging_router_times_out_naming_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let b = tiny_build(dir.path());
    let t = Instant::now();
    let o = gqr(&b, "sleep 1000", &["--cmd-timeout", "0.5"]);
    assert_one_error(
        &o,
        &[
            "did not answer within 0.5 s",
            "is the router flushing stdout? (python3 -u)",
            "id_test/law/0",
        ],
    );
    assert!(t.elapsed() < Duration::from_secs(20));
    let o = crb("sleep 1000", &["--cmd-timeout", "0.5"]);
    assert_one_error(
        &o,
        &[
            "did not answer within 0.5 s",
            "is the router flushing stdout? (python3 -u)",
            "row 1",
        ],
    );
}

#[test]
fn a_router_that_never_reads_or_closes_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let b = tiny_build(dir.path());
    // Closes its stdin at once and stays alive.
    let o = gqr(&b, "exec 0<&-; sleep 1000", &["--cmd-timeout", "5"]);
    assert_one_error(&o, &["id_test/law/0"]);
    // Closes its stdout and stays alive.
    let o = gqr(&b, "exec 1>&-; sleep 1000", &["--cmd-timeout", "5"]);
    assert_one_error(&o, &["closed its stdout before answering"]);
    // Exits with a status.
    let o = crb("exit 3", &[]);
    assert_one_error(&o, &["exited before answering", "exit status 3"]);
}

#[test]
fn a_last_answer_without_newline_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let b = tiny_build(dir.path());
    let o = gqr(
        &b,
        "read a; echo 0; read b; echo 1; read c; printf 3",
        &["--json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.to_string().contains("\"id_accuracy\":1.0"), "{v}");
}

#[test]
fn an_overlong_answer_is_cut_in_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let b = tiny_build(dir.path());
    let o = gqr(
        &b,
        "while read l; do printf 'x%.0s' $(seq 5000); echo; done",
        &[],
    );
    assert_one_error(&o, &["5000 characters"]);
    assert!(stderr(&o).len() < 700, "{}", stderr(&o));
}

/// The pid in `file`, waiting up to 10 s for it to be written.
fn wait_pid(file: &Path) -> i32 {
    let t = Instant::now();
    loop {
        if let Ok(s) = std::fs::read_to_string(file)
            && let Ok(p) = s.trim().parse()
        {
            return p;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "no pid file");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` is a live (not zombie) process.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            // The state follows the parenthesised command name.
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
    }
}

/// Wait up to 5 s for `pid` to die.
fn gone(pid: i32) -> bool {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(5) {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn grandchildren_die_with_the_router() {
    let dir = tempfile::tempdir().unwrap();
    let b = tiny_build(dir.path());
    let pidf = dir.path().join("pid");
    // A background grandchild, then a hang: the timeout kills the whole group.
    let router = format!("sleep 1000 & echo $! > '{}'; sleep 1000", pidf.display());
    let o = gqr(&b, &router, &["--cmd-timeout", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let pid = wait_pid(&pidf);
    assert!(gone(pid), "grandchild {pid} survived routeval (gqr)");

    // After a normal end too.
    std::fs::remove_file(&pidf).unwrap();
    let router = format!(
        "sleep 1000 & echo $! > '{}'; while read l; do echo 0; done",
        pidf.display()
    );
    let o = crb(&router, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let pid = wait_pid(&pidf);
    assert!(gone(pid), "grandchild {pid} survived routeval (crb)");

    // rag --embed-cmd.
    std::fs::remove_file(&pidf).unwrap();
    let router = format!("sleep 1000 & echo $! > '{}'; exit 1", pidf.display());
    let mut child = bin()
        .args(["rag", "-", "--embed-cmd", &router])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"[{"query": "q", "retrieved": ["a b"], "answer": "a"}]"#)
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let pid = wait_pid(&pidf);
    assert!(gone(pid), "grandchild {pid} survived routeval (rag)");
}

#[test]
fn sigterm_to_routeval_kills_the_router_group() {
    let dir = tempfile::tempdir().unwrap();
    let b = tiny_build(dir.path());
    let pidf = dir.path().join("pid");
    let router = format!("sleep 1000 & echo $! > '{}'; sleep 1000", pidf.display());
    for (sig, code) in [("TERM", 143), ("INT", 130)] {
        let _ = std::fs::remove_file(&pidf);
        let child = bin()
            .args(["gqr", "score", "--build-dir"])
            .arg(&b)
            .args(["--cmd", &router, "--cmd-timeout", "600"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = wait_pid(&pidf);
        assert!(alive(pid));
        let k = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(child.id().to_string())
            .status()
            .unwrap();
        assert!(k.success());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(code), "{}", stderr(&o));
        assert!(gone(pid), "grandchild {pid} survived SIG{sig} to routeval");
    }
}

#[test]
fn cmd_timeout_is_validated() {
    let dir = tempfile::tempdir().unwrap();
    let b = tiny_build(dir.path());
    for bad in ["0", "-1", "nan", "inf", "1e300", "x"] {
        let o = gqr(&b, "cat", &["--cmd-timeout", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert!(stderr(&o).contains("--cmd-timeout"), "{}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
}

/// `crb eval` turns transparent huge pages off for itself (`routeval_io::memory`), but not
/// when a `cmd:` router (`--predictor` or `--baseline-predictor`) would inherit the setting:
/// the router's descendants still see them allowed (`THP_enabled: 1` in `/proc/self/status`,
/// Linux 5.0+). Skipped where this process itself lacks that line, except under `CI=true`.
#[test]
#[cfg(target_os = "linux")]
fn a_cmd_router_keeps_transparent_huge_pages() {
    let own = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if !own.contains("THP_enabled:\t1") {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "no THP_enabled: 1 line in /proc/self/status, so this test cannot check anything"
        );
        eprintln!("skipped: this process has no THP_enabled: 1 line in /proc/self/status");
        return;
    }
    let router = "grep -q 'THP_enabled:[[:space:]]*1' /proc/self/status || exit 9; \
                  while read -r l; do echo high; done";
    let o = crb(router, &["--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The same router as the baseline of a constant predictor.
    let baseline = format!("cmd:{router}");
    let o = crb_eval(
        &["--predictor", "tier:low", "--baseline-predictor", &baseline],
        &["--json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
