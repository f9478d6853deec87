//! Outputs that are not regular files, and outputs that collide (issue 24).
//!
//! * A target that exists and is not a regular file (FIFO, character device, `/dev/stdout`, a
//!   `>(...)` process substitution, a symlink to one) is written in place: the reader gets the
//!   bytes and the node is still what it was (before, the atomic rename replaced it with a
//!   regular file: as root `-o /dev/null` replaced the machine's `/dev/null`, and a FIFO's
//!   reader blocked forever). A directory is refused.
//! * Two outputs of one command that are the same file (`--html P -o P`, `--rows P --html P`,
//!   `route --out D --html D/metrics.json`, any spelling) are refused with exit 2 and one
//!   stderr line before anything is written.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_routeval"));
    c.current_dir(root()).stdin(Stdio::null());
    c
}

const QRELS: &str = "examples/data/trec/qrels.txt";
const RUN: &str = "examples/data/trec/run.txt";

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `trec QRELS RUN` printed to stdout: what every in-place target must receive.
fn expected_trec() -> Vec<u8> {
    let o = bin().args(["trec", QRELS, RUN]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!o.stdout.is_empty());
    o.stdout
}

/// Run `cmd` with a time limit (a writer that blocks on a FIFO must not hang the suite).
fn run_limited(cmd: &mut Command, limit: Duration) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(o) => o.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
            panic!("routeval did not finish within {limit:?}");
        }
    }
}

fn mkfifo(p: &Path) {
    let st = Command::new("mkfifo").arg(p).status().unwrap();
    assert!(st.success(), "mkfifo {}", p.display());
}

/// A reader thread on the FIFO `p`: its bytes, or `None` when nothing came within the limit.
fn read_fifo(p: &Path) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let p = p.to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Ok(mut f) = std::fs::File::open(&p) {
            let _ = std::io::Read::read_to_end(&mut f, &mut buf);
        }
        let _ = tx.send(buf);
    });
    rx
}

#[test]
fn fifo_gets_the_bytes_and_stays_a_fifo() {
    let want = expected_trec();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.fifo");
    mkfifo(&fifo);
    let rx = read_fifo(&fifo);
    let o = run_limited(
        bin().args(["trec", QRELS, RUN, "-o"]).arg(&fifo),
        Duration::from_secs(20),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let meta = std::fs::symlink_metadata(&fifo).unwrap();
    assert!(
        meta.file_type().is_fifo(),
        "the FIFO was replaced: {meta:?}"
    );
    let got = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the FIFO's reader got nothing (blocked)");
    assert_eq!(got, want);
    // No temporary file was left beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn symlink_to_a_fifo_writes_the_fifo() {
    let want = expected_trec();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.fifo");
    mkfifo(&fifo);
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    let rx = read_fifo(&fifo);
    let o = run_limited(
        bin().args(["trec", QRELS, RUN, "-o"]).arg(&link),
        Duration::from_secs(20),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), want);
}

#[test]
fn html_report_into_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("report.fifo");
    mkfifo(&fifo);
    let rx = read_fifo(&fifo);
    let o = run_limited(
        bin().args(["trec", QRELS, RUN, "--html"]).arg(&fifo),
        Duration::from_secs(20),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    let got = String::from_utf8(rx.recv_timeout(Duration::from_secs(10)).unwrap()).unwrap();
    assert!(
        got.starts_with("<!DOCTYPE html>"),
        "{}",
        &got[..got.len().min(80)]
    );
}

/// A private character device (the same major/minor as `/dev/null`), made with mknod: tests
/// run as root. Skipped (with a line saying so) where mknod or opening devices is not allowed.
#[test]
fn character_device_is_written_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("null");
    let made = Command::new("mknod")
        .arg(&dev)
        .args(["c", "1", "3"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !made || std::fs::OpenOptions::new().write(true).open(&dev).is_err() {
        eprintln!("SKIPPED: cannot make or open a character device here");
        return;
    }
    let o = bin()
        .args(["trec", QRELS, RUN, "-o"])
        .arg(&dev)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let meta = std::fs::symlink_metadata(&dev).unwrap();
    assert!(meta.file_type().is_char_device(), "replaced: {meta:?}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn dev_null_stays_a_device() {
    for args in [
        &["trec", QRELS, RUN, "-o", "/dev/null"][..],
        &["trec", QRELS, RUN, "--html", "/dev/null", "-o", "/dev/null"][..],
    ] {
        let o = bin().args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty());
        let meta = std::fs::symlink_metadata("/dev/null").unwrap();
        assert!(
            meta.file_type().is_char_device(),
            "/dev/null replaced: {meta:?}"
        );
    }
}

#[test]
fn dev_stdout_is_stdout() {
    let want = expected_trec();
    let o = bin()
        .args(["trec", QRELS, RUN, "-o", "/dev/stdout"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(o.stdout, want);
    // stdout redirected to a regular file: written through the descriptor, not renamed over.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stdout.txt");
    let f = std::fs::File::create(&file).unwrap();
    let o = bin()
        .args(["trec", QRELS, RUN, "-o", "/dev/stdout"])
        .stdout(Stdio::from(f))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read(&file).unwrap(), want);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn process_substitution_works() {
    let want = expected_trec();
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("x.txt");
    // `-o >(cat > x.txt)`: a /dev/fd/N pipe; bash waits for nothing, so poll for the file.
    let script = format!(
        "{} trec {QRELS} {RUN} -o >(cat > '{}'); echo rc=$?",
        env!("CARGO_BIN_EXE_routeval"),
        gz.display()
    );
    let o = run_limited(
        Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(root()),
        Duration::from_secs(20),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("rc=0"), "{out} {}", stderr(&o));
    let start = std::time::Instant::now();
    loop {
        if std::fs::read(&gz).is_ok_and(|b| b == want) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the substitution's reader never got the bytes"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .args(["trec", QRELS, RUN, "-o"])
        .arg(dir.path())
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    let errors: Vec<&str> = e.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{e}");
    assert!(errors[0].contains("is a directory"), "{e}");
    assert!(dir.path().is_dir());
}

/// Exit 2 with one stderr line naming both flags; nothing on stdout.
fn assert_same_file_refused(o: &Output, flags: [&str; 2]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {e}");
    assert_eq!(e.lines().count(), 1, "one line expected: {e:?}");
    assert!(e.contains("name the same file"), "{e}");
    for f in flags {
        assert!(e.contains(f), "{f} not in {e}");
    }
    assert!(o.stdout.is_empty());
}

/// The entries of `dir` (sorted).
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn html_and_output_on_one_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("report");
    let ps = p.to_str().unwrap();
    let spelled = dir.path().join(".").join("report");
    let sp = spelled.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["trec", QRELS, RUN],
        vec![
            "compare",
            "examples/data/compare/qrels",
            "examples/data/compare/base.run",
            "examples/data/compare/better.run",
            "--no-ci",
        ],
        vec!["frontier", "examples/data/frontier/points.jsonl"],
    ];
    for cmd in &commands {
        // Same spelling, another spelling (the file does not exist yet).
        for (a, b) in [(ps, ps), (ps, sp)] {
            let mut args = cmd.clone();
            args.extend(["--html", a, "-o", b]);
            let o = bin().args(&args).output().unwrap();
            assert_same_file_refused(&o, ["--html", "-o"]);
            assert!(entries(dir.path()).is_empty(), "{args:?} wrote something");
        }
    }
    // An existing file reached through a symlink: refused by inode, the file untouched.
    std::fs::write(&p, "keep").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&p, &link).unwrap();
    let o = bin()
        .args(["trec", QRELS, RUN, "-o", ps, "--html"])
        .arg(&link)
        .output()
        .unwrap();
    assert_same_file_refused(&o, ["--html", "-o"]);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "keep");
    // Different files are fine.
    let q = dir.path().join("other.html");
    let o = bin()
        .args(["trec", QRELS, RUN, "-o", ps, "--html"])
        .arg(&q)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(q.is_file());
}

/// A GQR build directory (manifest + id_test + ood_test) from `examples/data/gqr/rows.jsonl`.
fn gqr_build(dir: &Path) -> PathBuf {
    routeval_test_support::gqr::example_build(dir, &[]).into()
}

#[test]
fn gqr_score_outputs_on_one_file_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let build = gqr_build(&tmp.path().join("build"));
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let p = out.join("p");
    let base = |extra: &[&str]| {
        let mut c = bin();
        c.args([
            "gqr",
            "score",
            "--predictions",
            "examples/data/gqr/predictions.jsonl",
            "--build-dir",
        ])
        .arg(&build)
        .args(extra);
        c
    };
    let ps = p.to_str().unwrap();
    for (args, flags) in [
        (vec!["--html", ps, "-o", ps], ["-o", "--html"]),
        (vec!["--rows", ps, "--html", ps], ["--rows", "--html"]),
        (vec!["--rows", ps, "-o", ps], ["-o", "--rows"]),
    ] {
        let o = base(&args).output().unwrap();
        assert_same_file_refused(&o, flags);
        assert!(entries(&out).is_empty(), "{args:?} wrote something");
    }
    // The same command with distinct paths succeeds and writes all three.
    let (r, h, t) = (out.join("rows"), out.join("r.html"), out.join("t.txt"));
    let o = base(&[])
        .arg("--rows")
        .arg(&r)
        .arg("--html")
        .arg(&h)
        .arg("-o")
        .arg(&t)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(entries(&out), ["r.html", "rows", "t.txt"]);
}

#[test]
fn route_out_dir_and_html_on_one_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("outputs_in.jsonl");
    std::fs::write(
        &data,
        "{\"lm_output\": \"a\", \"references\": [\"a\"], \"extra_info\": {\"x\": 1}}\n",
    )
    .unwrap();
    let cfg = dir.path().join("routes.json");
    std::fs::write(
        &cfg,
        r#"{"routes": [{"name": "all", "where": {}, "metrics": ["exact_match"]}]}"#,
    )
    .unwrap();
    let d = dir.path().join("D");
    let route = |extra: &[&std::ffi::OsStr]| {
        let mut c = bin();
        c.arg("route")
            .arg("--config")
            .arg(&cfg)
            .arg("--data")
            .arg(&data)
            .arg("--out")
            .arg(&d)
            .args(extra);
        c
    };
    // D does not exist yet: D/metrics.json is the file --out would write.
    let html = d.join("metrics.json");
    let o = route(&["--html".as_ref(), html.as_os_str()])
        .output()
        .unwrap();
    assert_same_file_refused(&o, ["--html", "--out"]);
    assert!(!d.exists(), "nothing created");
    let o = route(&["-o".as_ref(), d.join("./outputs.jsonl").as_os_str()])
        .output()
        .unwrap();
    assert_same_file_refused(&o, ["-o", "--out"]);
    assert!(!d.exists());
}
