//! Examples that cannot drift: every ```` ```console ```` block of `README.md` and
//! `docs/src/*.md` is run with the built `routeval` and its output compared with the block.
//!
//! Block format (trycmd's Markdown conventions): a line `$ COMMAND` (continued by a trailing
//! `\`) is run by `bash -c` with stderr merged into stdout; the lines up to the next `$ ` line
//! are its expected output, compared by snapbox with its elisions (`...` on a line of its own
//! matches any number of lines, `[..]` inside a line any text), so output that depends on time
//! or machine is elided, never skipped; a last line `? N` expects exit status N (default 0).
//! Every console block must run `routeval`; examples that cannot run here (network, Python, a
//! GQR build, files the reader has) use a ```` ```sh ```` fence instead.
//!
//! The commands run in a fresh temporary directory holding a symlink `examples` → the
//! repository's `examples/`, so `examples/data/...` paths read the shipped data and anything a
//! command writes stays in the temporary directory; `routeval` is first on `PATH`, the cache
//! directory is inside the temporary directory and progress bars are off. Each command has a
//! 120 s deadline and its output a 4 MiB cap.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One command of a console block and what it must print.
#[derive(Debug, Clone, PartialEq)]
struct Example {
    /// `FILE:LINE` of the `$ ` line.
    at: String,
    /// The command as bash reads it (continuation lines joined with their newlines).
    command: String,
    /// Expected stdout+stderr, `\n`-terminated lines.
    expected: String,
    /// Expected exit status.
    status: i32,
}

/// The console blocks of a Markdown text: the examples of each block in order.
fn console_blocks(name: &str, text: &str) -> Vec<Vec<Example>> {
    let mut blocks = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((_, line)) = lines.next() {
        if line.trim_end() != "```console" {
            // Other fences are skipped whole, so a ```console inside them is not a block.
            if line.starts_with("```") {
                for (_, l) in lines.by_ref() {
                    if l.starts_with("```") {
                        break;
                    }
                }
            }
            continue;
        }
        let mut block: Vec<Example> = Vec::new();
        while let Some((i, l)) = lines.next() {
            if l.starts_with("```") {
                break;
            }
            if let Some(cmd) = l.strip_prefix("$ ") {
                let mut command = cmd.to_string();
                while command.ends_with('\\') {
                    match lines.next() {
                        Some((_, more)) if !more.starts_with("```") => {
                            command.push('\n');
                            command.push_str(more);
                        }
                        _ => break,
                    }
                }
                block.push(Example {
                    at: format!("{name}:{}", i + 1),
                    command,
                    expected: String::new(),
                    status: 0,
                });
            } else if let Some(last) = block.last_mut() {
                match l.strip_prefix("? ").map(str::parse::<i32>) {
                    Some(Ok(status)) => last.status = status,
                    _ => {
                        last.expected.push_str(l);
                        last.expected.push('\n');
                    }
                }
            } else {
                panic!(
                    "{name}:{}: console block text before its first `$ ` line",
                    i + 1
                );
            }
        }
        blocks.push(block);
    }
    blocks
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// A temporary working directory whose `examples` is the repository's.
fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(root().join("examples"), dir.path().join("examples"))
        .expect("symlink examples");
    dir
}

/// Run one command under bash in `dir`; (exit status, stdout+stderr).
fn run(command: &str, dir: &Path) -> Result<(i32, String), String> {
    let bin = Path::new(env!("CARGO_BIN_EXE_routeval"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(format!("exec 2>&1\n{command}"))
        .current_dir(dir)
        .env("PATH", path)
        .env("ROUTEVAL_PROGRESS", "never")
        .env("ROUTEVAL_CACHE_DIR", dir.join(".cache"))
        .env("NO_COLOR", "1")
        .env_remove("ROUTEVAL_SHARED")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run bash: {e}"))?;
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut stdout).take(4 << 20).read_to_end(&mut buf);
        buf
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("did not finish within 120 s".into());
            }
        }
    };
    let out = reader.join().map_err(|_| "reader thread panicked")?;
    Ok((
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out).into_owned(),
    ))
}

/// Run every block of one Markdown text; one message per example that differs.
fn check(name: &str, text: &str) -> (usize, Vec<String>) {
    let assert = snapbox::Assert::new().normalize_paths(false);
    let mut failures = Vec::new();
    let mut count = 0;
    for block in console_blocks(name, text) {
        let Some(first) = block.first() else {
            failures.push(format!("{name}: an empty console block"));
            continue;
        };
        if !block
            .iter()
            .any(|e| e.command.trim_start().starts_with("routeval "))
        {
            failures.push(format!(
                "{}: a console block that runs no `routeval` command (use ```sh)",
                first.at
            ));
            continue;
        }
        let dir = workdir();
        for ex in block {
            count += 1;
            let (status, actual) = match run(&ex.command, dir.path()) {
                Ok(r) => r,
                Err(e) => {
                    failures.push(format!("{}: `{}`: {e}", ex.at, ex.command));
                    continue;
                }
            };
            if status != ex.status {
                failures.push(format!(
                    "{}: `{}` exited {status}, the block expects {} (a `? N` line)\n{actual}",
                    ex.at, ex.command, ex.status
                ));
                continue;
            }
            let expected = snapbox::Data::text(ex.expected.clone());
            if let Err(e) = assert.try_eq(Some(&ex.at), snapbox::Data::text(actual), expected) {
                failures.push(format!("{}: `{}`:\n{e}", ex.at, ex.command));
            }
        }
    }
    (count, failures)
}

fn check_files(files: &[PathBuf], at_least: usize) {
    let root = root();
    let mut failures = Vec::new();
    let mut count = 0;
    for f in files {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{f:?}: {e}"));
        let name = f.strip_prefix(&root).unwrap_or(f).display().to_string();
        let (n, mut fs) = check(&name, &text);
        count += n;
        failures.append(&mut fs);
    }
    assert!(
        failures.is_empty(),
        "{} of {count} console examples differ from the binary's output:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(
        count >= at_least,
        "only {count} console examples found (at least {at_least} expected)"
    );
}

#[test]
fn readme_console_blocks_match_the_binary() {
    check_files(&[root().join("README.md")], 6);
}

#[test]
fn book_console_blocks_match_the_binary() {
    let dir = root().join("docs/src");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("docs/src")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "{files:?}");
    check_files(&files, 20);
}

#[test]
fn blocks_are_parsed_as_trycmd_writes_them() {
    let md = "text\n```sh\n$ not a block\n```\n```console\n$ routeval a \\\n  b\nout 1\n\
              out [..]\n? 2\n$ routeval c\n...\n```\n";
    let blocks = console_blocks("x.md", md);
    assert_eq!(blocks.len(), 1);
    assert_eq!(
        blocks[0],
        [
            Example {
                at: "x.md:6".into(),
                command: "routeval a \\\n  b".into(),
                expected: "out 1\nout [..]\n".into(),
                status: 2,
            },
            Example {
                at: "x.md:11".into(),
                command: "routeval c".into(),
                expected: "...\n".into(),
                status: 0,
            },
        ]
    );
}

/// The test that proves the others can fail: a wrong expected line, a wrong status and a
/// block that runs no `routeval` are each reported, and the right one passes.
#[test]
fn a_wrong_expected_line_fails() {
    let good = "```console\n$ routeval trec --json -m map examples/data/trec/qrels.txt \
                examples/data/trec/run.txt\nnote: [..]\n{\"all\":{\"map\":[..]}}\n```\n";
    assert_eq!(check("good.md", good), (1, vec![]));
    let wrong = good.replace("[..]", "0.5");
    let (_, failures) = check("wrong.md", &wrong);
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].starts_with("wrong.md:2: `routeval trec"),
        "{}",
        failures[0]
    );
    let status = good.replace("[..]}}\n", "[..]}}\n? 3\n");
    let (_, failures) = check("status.md", &status);
    assert!(
        failures[0].contains("exited 0, the block expects 3"),
        "{failures:?}"
    );
    let (_, failures) = check("other.md", "```console\n$ echo hi\nhi\n```\n");
    assert!(failures[0].contains("runs no `routeval`"), "{failures:?}");
}
