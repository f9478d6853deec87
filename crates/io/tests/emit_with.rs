//! `routeval_io::output::emit_with`: an output written piece by piece lands atomically, a
//! failed write leaves the target as it was, and an input is never written over.
#![cfg(feature = "process")]

use routeval_io::output::{OutputError, emit_with, note_input};
use std::io;
use std::path::Path;

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".routeval-"))
        .collect()
}

/// One test in its own process, in this order: inputs are noted process-wide by device and
/// inode, so an input noted and deleted by another test in the same process could share its
/// inode with this test's output, which would then be refused.
#[test]
fn emit_with_writes_atomically_keeps_the_target_on_failure_and_refuses_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.json");
    std::fs::write(&target, "old\n").unwrap();
    emit_with(Some(&target), &mut |w| {
        w.write_all(b"{\"a\":")?;
        w.write_all(b"1}\n")
    })
    .unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "{\"a\":1}\n");
    assert!(leftovers(dir.path()).is_empty());

    // A failed write: the target keeps its content, no temporary file is left.
    let err = emit_with(Some(&target), &mut |w| {
        w.write_all(b"partial")?;
        Err(io::Error::other("serializer gave up"))
    })
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("out.json") && msg.contains("serializer gave up"),
        "{msg}"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "{\"a\":1}\n");
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );

    // An input is refused before anything is written.
    let input = dir.path().join("bank.jsonl");
    std::fs::write(&input, "{}\n").unwrap();
    note_input(&input);
    let mut called = false;
    let err = emit_with(Some(&input), &mut |_| {
        called = true;
        Ok(())
    })
    .unwrap_err();
    assert!(matches!(err, OutputError::SameAsInput { .. }), "{err}");
    assert!(!called, "nothing is written over an input");
    assert_eq!(std::fs::read_to_string(&input).unwrap(), "{}\n");
}
