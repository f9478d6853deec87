//! Named pipes for the tests that check a FIFO is refused or streamed, never written through
//! or renamed over (Unix only).

use std::path::Path;

/// Make a FIFO at `path` with the system's `mkfifo` (opening one for writing blocks until a
/// reader comes, which is what those tests guard against). Panics when `mkfifo` fails.
pub fn mkfifo(path: &Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(st.success(), "mkfifo {}", path.display());
}

/// Whether `path` itself (not a link's target) is a FIFO.
pub fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}
