//! Outputs never destroy anything (issue 10, item 3): an output that is one of the inputs is
//! refused by device+inode whatever its spelling; files are written atomically (a failed write
//! leaves the old file); write errors (ENOSPC, EFBIG, EPIPE) are one stderr
//! line and exit 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_routeval"))
}

const QRELS: &str = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n";
const RUN: &str = "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.5 r\nq2 Q0 d3 1 0.7 r\n";

/// A temporary directory with `qrels` and `run`.
fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("qrels");
    let r = dir.path().join("run");
    std::fs::write(&q, QRELS).unwrap();
    std::fs::write(&r, RUN).unwrap();
    (dir, q, r)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit 2, exactly one stderr line containing `needle`, nothing on stdout.
fn assert_one_line_exit_2(o: &Output, needle: &str) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {e}");
    assert_eq!(e.lines().count(), 1, "one line expected: {e:?}");
    assert!(e.contains(needle), "{needle:?} not in {e:?}");
    assert!(o.stdout.is_empty(), "no partial stdout");
}

/// Temporary files of atomic writes left in `dir`.
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".routeval-"))
        .collect()
}

#[test]
fn output_over_an_input_is_refused_by_inode() {
    let (dir, q, r) = setup();
    // The same path, another spelling, a hard link and a symlink to the run: all refused.
    let link = dir.path().join("hardlink");
    std::fs::hard_link(&r, &link).unwrap();
    let sym = dir.path().join("symlink");
    std::os::unix::fs::symlink(&r, &sym).unwrap();
    let spelled = dir.path().join(".").join("run");
    for out in [&r, &spelled, &link, &sym, &q] {
        let o = bin()
            .arg("trec")
            .arg(&q)
            .arg(&r)
            .arg("-o")
            .arg(out)
            .output()
            .unwrap();
        assert_one_line_exit_2(&o, "refusing to write over the input");
        assert_eq!(std::fs::read_to_string(&r).unwrap(), RUN);
        assert_eq!(std::fs::read_to_string(&q).unwrap(), QRELS);
    }
    // Relative spelling from the directory itself.
    let o = bin()
        .current_dir(dir.path())
        .args(["trec", "qrels", "./run", "-o", "./qrels"])
        .output()
        .unwrap();
    assert_one_line_exit_2(&o, "refusing to write over the input");
    assert_eq!(std::fs::read_to_string(&q).unwrap(), QRELS);
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn stdout_redirected_to_an_input_is_refused() {
    let (_dir, q, r) = setup();
    let f = std::fs::OpenOptions::new().append(true).open(&r).unwrap();
    let o = bin()
        .arg("trec")
        .arg(&q)
        .arg(&r)
        .stdout(Stdio::from(f))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("refusing to write over the input"));
    assert_eq!(std::fs::read_to_string(&r).unwrap(), RUN);
}

#[test]
fn filter_and_route_refuse_their_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("outputs.jsonl");
    let text = "{\"lm_output\": \"a\", \"references\": [\"a\"], \"extra_info\": {\"x\": 1}}\n";
    std::fs::write(&data, text).unwrap();
    let o = bin()
        .args(["filter", "--where", "{}", "-o"])
        .arg(&data)
        .arg(&data)
        .output()
        .unwrap();
    assert_one_line_exit_2(&o, "refusing to write over the input");
    assert_eq!(std::fs::read_to_string(&data).unwrap(), text);

    // `route --out DIR` would write DIR/outputs.jsonl, which is the data.
    let cfg = dir.path().join("routes.json");
    std::fs::write(
        &cfg,
        r#"{"routes": [{"name": "all", "where": {}, "metrics": ["exact_match"]}]}"#,
    )
    .unwrap();
    let o = bin()
        .args(["route", "--config"])
        .arg(&cfg)
        .arg("--data")
        .arg(&data)
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("refusing to write over the input"));
    assert_eq!(std::fs::read_to_string(&data).unwrap(), text);
    assert!(!dir.path().join("metrics.json").exists(), "nothing written");
}

#[test]
fn a_failed_write_leaves_the_old_file() {
    // EFBIG: a file-size limit (ulimit -f) smaller than the new output. The write fails, the
    // old file stays as it was, no temporary file remains.
    let (dir, q, r) = setup();
    let out = dir.path().join("out.txt");
    std::fs::write(&out, "OLD\n").unwrap();
    let script = format!(
        "ulimit -f 1 && exec '{}' trec -q -m all_trec '{}' '{}' -o '{}'",
        env!("CARGO_BIN_EXE_routeval"),
        q.display(),
        r.display(),
        out.display()
    );
    let o = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    assert_one_line_exit_2(&o, "cannot write");
    assert!(stderr(&o).contains("out.txt"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "OLD\n");
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );

    // Without the limit the same command replaces the file in one piece.
    let o = bin()
        .args(["trec", "-q", "-m", "all_trec"])
        .arg(&q)
        .arg(&r)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let new = std::fs::read_to_string(&out).unwrap();
    assert!(new.len() > 2048 && new.contains("runid"), "{new}");
}

#[test]
fn unwritable_directory_leaves_the_old_file() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, q, r) = setup();
    let sub = dir.path().join("ro");
    std::fs::create_dir(&sub).unwrap();
    let out = sub.join("out.txt");
    std::fs::write(&out, "OLD\n").unwrap();
    std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o555)).unwrap();
    // root ignores directory permissions: nothing to test there.
    if std::fs::write(sub.join("probe"), "x").is_ok() {
        eprintln!("SKIPPED: running as root, a read-only directory is writable");
        let _ = std::fs::remove_file(sub.join("probe"));
    } else {
        let o = bin()
            .arg("trec")
            .arg(&q)
            .arg(&r)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert_one_line_exit_2(&o, "cannot write: Permission denied");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "OLD\n");
    }
    std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn permissions_and_symlinks_are_kept() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, q, r) = setup();
    let out = dir.path().join("out.txt");
    std::fs::write(&out, "OLD\n").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.path().join("link.txt");
    std::os::unix::fs::symlink(&out, &link).unwrap();
    let o = bin()
        .arg("trec")
        .arg(&q)
        .arg(&r)
        .arg("-o")
        .arg(&link)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(std::fs::read_to_string(&out).unwrap().starts_with("runid"));
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn stdout_full_is_one_line_exit_2() {
    let (_dir, q, r) = setup();
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = bin()
        .arg("trec")
        .arg(&q)
        .arg(&r)
        .stdout(Stdio::from(full))
        .output()
        .unwrap();
    assert_one_line_exit_2(&o, "<stdout>: cannot write");
    assert!(
        stderr(&o).contains("No space left on device"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn broken_pipe_is_one_line_exit_2() {
    let (_dir, q, r) = setup();
    for sub in [&["trec", "-q"][..], &["rag", "--qrels"][..]] {
        let mut cmd = bin();
        if sub[0] == "trec" {
            cmd.args(sub).arg(&q).arg(&r);
        } else {
            cmd.args(sub).arg(&q).arg("--run").arg(&r);
        }
        // A pipe whose reading end is already closed: every write gets EPIPE.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = cmd.stdout(writer).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{sub:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(stderr(&o).contains("Broken pipe"), "{}", stderr(&o));
    }
}
