//! Every byte routeval writes goes through this module: `-o/--output`, `route --out DIR`, the
//! `crb` LLM cache, the reports, stdout.
//!
//! Three rules (issue 10, item 3):
//!
//! * **Never over an input.** Every input file is noted when it is opened ([`note_input`],
//!   [`note_input_file`]); an output that is the same file as an input (same device and inode,
//!   whatever the spelling: `./x`, a hard link, a symlink) is refused with exit 2 before anything
//!   is written ([`OutputError::SameAsInput`]). `-` (stdout) is never an input file, but
//!   stdout redirected to an input (`>> qrels`) is refused too.
//! * **Atomic.** A file is written to a temporary file in the target's directory, flushed,
//!   fsynced and renamed over the target, so an interrupted or failed write leaves the old file
//!   or the complete new one, never a partial one. A target that exists keeps its permission
//!   bits; a new one gets `0666 & !umask`, as `open(2)` would give it. A symlink target is
//!   followed (the file it points to is replaced, the link stays).
//! * **Devices and pipes are written in place.** A target that exists and is not a regular
//!   file (a character or block device such as `/dev/null`, a FIFO, a socket), a symlink to
//!   one, and the descriptor names `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` and
//!   `/proc/self/fd/N` (a `>(gzip > x.gz)` process substitution) are opened and written
//!   directly: no temporary file, no rename, so `-o /dev/null` leaves `/dev/null` a device
//!   (even as root) and a FIFO's reader gets the bytes. A directory is refused.
//! * **One file, one output.** Every output of a command is noted before anything is written
//!   ([`note_output`], [`check_outputs`]); two outputs that are the same file (same device and
//!   inode when it exists, else the same canonical parent directory and file name) are refused
//!   ([`OutputError::SameOutput`]), so `--html P -o P` cannot lose one of them. Character devices (`/dev/null`,
//!   a terminal) may take several outputs.
//! * **Write errors are one line** ([`OutputError::Write`]; the CLI exits 2): ENOSPC, EFBIG and EPIPE (a stdout whose reader
//!   went away, `routeval ... | head -1`: the rest of the output was lost, so that is not a
//!   success). A stdout closed before start (`>&-`) cannot be seen: the Rust runtime reopens
//!   a closed fd 1 on `/dev/null` before `main`.
//!
//! The temporary files of writes in progress are registered with [`crate::signals`], which
//! removes them when the process is stopped by a signal.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Why an output was refused or its write failed. `Display` is the one-line message.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The output is the same file as an input noted before.
    #[error("{name}: refusing to write over the input {input} (the same file)")]
    SameAsInput {
        /// The output as given.
        name: String,
        /// The input, as named when it was opened.
        input: String,
    },
    /// stdout is redirected to an input.
    #[error("<stdout>: refusing to write over the input {input} (stdout is redirected to it)")]
    StdoutIsInput {
        /// The input, as named when it was opened.
        input: String,
    },
    /// Two outputs of one command are the same file.
    #[error(
        "{name}: {flag} and {other} name the same file (one output would be lost); give each output its own path"
    )]
    SameOutput {
        /// The output as given.
        name: String,
        /// Its flag (`-o`, `--html`, ...).
        flag: String,
        /// The other output's flag, followed by its path when spelled differently.
        other: String,
    },
    /// The target is a directory.
    #[error("{name}: cannot write: is a directory")]
    IsADirectory {
        /// The output as given.
        name: String,
    },
    /// Creating, writing, syncing or renaming failed (ENOSPC, EFBIG, EPIPE, EACCES, ...).
    #[error("{name}: cannot write: {source}")]
    Write {
        /// The output as given (`<stdout>` for stdout).
        name: String,
        /// The OS error.
        source: io::Error,
    },
}

/// An input file's identity.
#[derive(Debug, Clone)]
struct InputId {
    dev: u64,
    ino: u64,
    name: String,
}

/// The inputs opened so far (process-wide: one subcommand runs per process).
static INPUTS: Mutex<Vec<InputId>> = Mutex::new(Vec::new());

fn remember(meta: &std::fs::Metadata, name: String) {
    // Only regular files can be overwritten by an output; a pipe or terminal cannot.
    if !meta.is_file() {
        return;
    }
    let id = InputId {
        dev: meta.dev(),
        ino: meta.ino(),
        name,
    };
    let mut inputs = INPUTS.lock().unwrap_or_else(|p| p.into_inner());
    if !inputs.iter().any(|i| i.dev == id.dev && i.ino == id.ino) {
        inputs.push(id);
    }
}

/// Note `path` as an input of this run (`-` and paths that do not exist are ignored).
pub fn note_input(path: &Path) {
    if path == Path::new("-") {
        return;
    }
    if let Ok(meta) = std::fs::metadata(path) {
        remember(&meta, path.display().to_string());
    }
}

/// Note an opened file as an input of this run (the identity of what was opened, so a file
/// renamed after opening is still recognised).
pub fn note_input_file(file: &File, path: &Path) {
    if let Ok(meta) = file.metadata() {
        remember(&meta, path.display().to_string());
    }
}

/// The input files noted so far, as named when opened, in the order they were opened (for a
/// report's provenance).
pub fn noted_inputs() -> Vec<String> {
    let inputs = INPUTS.lock().unwrap_or_else(|p| p.into_inner());
    inputs.iter().map(|i| i.name.clone()).collect()
}

/// The input with this device and inode, if any.
fn input_with(dev: u64, ino: u64) -> Option<String> {
    let inputs = INPUTS.lock().unwrap_or_else(|p| p.into_inner());
    inputs
        .iter()
        .find(|i| i.dev == dev && i.ino == ino)
        .map(|i| i.name.clone())
}

/// The input that `meta` is, if any.
fn input_named(meta: &std::fs::Metadata) -> Option<String> {
    input_with(meta.dev(), meta.ino())
}

/// Refuse ([`OutputError::SameAsInput`]) when `path` is the same file as one of the inputs.
pub fn check_not_input(path: &Path) -> Result<(), OutputError> {
    if path == Path::new("-") {
        return Ok(());
    }
    if let Ok(meta) = std::fs::metadata(path)
        && let Some(input) = input_named(&meta)
    {
        return Err(OutputError::SameAsInput {
            name: path.display().to_string(),
            input,
        });
    }
    Ok(())
}

/// What an output resolves to, for [`note_output`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum OutputKey {
    /// An existing file: device and inode (whatever the spelling).
    Inode(u64, u64),
    /// A file that does not exist yet: its canonical parent directory joined with its name.
    Name(PathBuf),
}

/// The outputs noted so far: `(key, flag, path as given)`.
static OUTPUTS: Mutex<Vec<(OutputKey, String, String)>> = Mutex::new(Vec::new());

/// `path` made absolute with its longest existing ancestor canonicalized (symlinks resolved)
/// and the rest appended lexically (`.` dropped, `..` popped): the file a not-yet-existing
/// output will be, whatever the spelling.
fn resolve_missing(path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(path)
    };
    let comps: Vec<Component<'_>> = abs.components().collect();
    // The longest prefix that exists.
    for split in (0..=comps.len()).rev() {
        let prefix: PathBuf = comps[..split].iter().collect();
        let Ok(mut base) = std::fs::canonicalize(&prefix) else {
            continue;
        };
        for c in &comps[split..] {
            match c {
                Component::CurDir => {}
                Component::ParentDir => {
                    base.pop();
                }
                other => base.push(other.as_os_str()),
            }
        }
        return Some(base);
    }
    None
}

/// The key of an output path; `None` for stdout (`-`) and character devices, which may take
/// several outputs.
fn output_key(path: &Path) -> Option<OutputKey> {
    use std::os::unix::fs::FileTypeExt;
    if path == Path::new("-") {
        return None;
    }
    match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_char_device() => None,
        Ok(m) => Some(OutputKey::Inode(m.dev(), m.ino())),
        Err(_) => resolve_missing(path).map(OutputKey::Name),
    }
}

/// Note `path` as an output of this run, written by `flag` (`-o`, `--html`, `--rows`, ...).
/// Refuses ([`OutputError::SameOutput`], naming both flags) a path that is the same file as an
/// output noted before: one of the two would be lost. `-` (stdout) and character devices are never
/// refused. Call it for every output before anything is written.
pub fn note_output(flag: &str, path: &Path) -> Result<(), OutputError> {
    let Some(key) = output_key(path) else {
        return Ok(());
    };
    let name = path.display().to_string();
    let mut outputs = OUTPUTS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, other_flag, other_name)) = outputs.iter().find(|(k, _, _)| *k == key) {
        let same = if *other_name == name {
            String::new()
        } else {
            format!(" {other_name}")
        };
        return Err(OutputError::SameOutput {
            name,
            flag: flag.to_string(),
            other: format!("{other_flag}{same}"),
        });
    }
    outputs.push((key, flag.to_string(), name));
    Ok(())
}

/// [`note_output`] for each `(flag, path)` that is given, in order.
pub fn check_outputs(outputs: &[(&str, Option<&Path>)]) -> Result<(), OutputError> {
    for (flag, path) in outputs {
        if let Some(p) = path {
            note_output(flag, p)?;
        }
    }
    Ok(())
}

/// Whether `path` names an open descriptor rather than a file (`/dev/stdout`, `/dev/stderr`,
/// `/dev/fd/N`, `/proc/self/fd/N`): written in place, never replaced.
fn names_descriptor(path: &Path) -> bool {
    let s = path.as_os_str().as_encoded_bytes();
    s == b"/dev/stdout"
        || s == b"/dev/stderr"
        || s.starts_with(b"/dev/fd/")
        || s.starts_with(b"/proc/self/fd/")
}

/// Open a target that is not a regular file for writing in place (no create, no truncate:
/// a device or pipe has nothing to truncate). `/dev/stdout` and `/dev/stderr` are the
/// process's own descriptors, duplicated (opening them would fail for a socket).
fn open_in_place(path: &Path) -> io::Result<File> {
    use std::os::fd::AsFd;
    let s = path.as_os_str().as_encoded_bytes();
    let fd = match s {
        b"/dev/stdout" | b"/dev/fd/1" | b"/proc/self/fd/1" => {
            Some(io::stdout().as_fd().try_clone_to_owned()?)
        }
        b"/dev/stderr" | b"/dev/fd/2" | b"/proc/self/fd/2" => {
            Some(io::stderr().as_fd().try_clone_to_owned()?)
        }
        _ => None,
    };
    match fd {
        Some(fd) => Ok(File::from(fd)),
        None => std::fs::OpenOptions::new().write(true).open(path),
    }
}

/// A failed write, one line naming the file.
fn write_failure(name: &str, e: io::Error) -> OutputError {
    OutputError::Write {
        name: name.to_string(),
        source: e,
    }
}

/// tempfile wraps an OS error with the temporary file's path (and drops its number); give back
/// a plain OS error of the same kind, whose message does not name a random temporary file.
fn plain_os_error(e: io::Error) -> io::Error {
    use rustix::io::Errno;
    let errno = match e.kind() {
        io::ErrorKind::NotFound => Errno::NOENT,
        io::ErrorKind::PermissionDenied => Errno::ACCESS,
        io::ErrorKind::ReadOnlyFilesystem => Errno::ROFS,
        io::ErrorKind::StorageFull => Errno::NOSPC,
        io::ErrorKind::NotADirectory => Errno::NOTDIR,
        io::ErrorKind::QuotaExceeded => Errno::DQUOT,
        _ => return e,
    };
    io::Error::from_raw_os_error(errno.raw_os_error())
}

/// The temporary file, written through its `File`: `NamedTempFile`'s own writes wrap every
/// error with the temporary path, which would hide the errno (`rag`'s `[Errno 27]` line) and
/// name a file the user never gave.
struct TempWriter(tempfile::NamedTempFile);

impl Write for TempWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.as_file_mut().write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.as_file_mut().flush()
    }
}

/// Where an [`AtomicFile`]'s bytes go.
enum Sink {
    /// A temporary file in the target's directory, renamed over the target on commit.
    Temp(io::BufWriter<TempWriter>),
    /// The target itself (a device, FIFO, socket or descriptor name), written in place.
    InPlace(io::BufWriter<File>),
}

impl Sink {
    fn writer(&mut self) -> &mut dyn Write {
        match self {
            Sink::Temp(w) => w,
            Sink::InPlace(w) => w,
        }
    }
}

/// A file being written atomically: write to it, then [`AtomicFile::commit`]. Dropped without
/// a commit, the temporary file is removed and the target is untouched. A target that is not
/// a regular file (device, FIFO, socket, `/dev/stdout`, `/dev/fd/N`) is written in place
/// instead (see the module doc).
pub struct AtomicFile {
    /// Buffered writer on the temporary file (in the target's directory) or on the target.
    writer: Option<Sink>,
    /// Where the file lands.
    target: PathBuf,
    /// The path as the user spelled it (for messages).
    name: String,
    /// The first write error, reported by `commit`.
    error: Option<io::Error>,
}

impl AtomicFile {
    /// Start writing `path`: refuses an input or a directory and creates the temporary file.
    pub fn create(path: &Path) -> Result<AtomicFile, OutputError> {
        check_not_input(path)?;
        let name = path.display().to_string();
        if let Ok(m) = std::fs::metadata(path)
            && m.is_dir()
        {
            return Err(OutputError::IsADirectory { name });
        }
        AtomicFile::create_io(path).map_err(|e| write_failure(&name, e))
    }

    /// [`AtomicFile::create`] without the input check, for callers that report IO errors
    /// their own way (`rag`, whose messages follow the reference's `OSError` text).
    pub fn create_io(path: &Path) -> io::Result<AtomicFile> {
        let name = path.display().to_string();
        // Not a regular file (followed through symlinks): write in place, never rename over it.
        let meta = std::fs::metadata(path);
        if let Ok(m) = &meta
            && m.is_dir()
        {
            return Err(io::Error::from(io::ErrorKind::IsADirectory));
        }
        if names_descriptor(path) || meta.as_ref().is_ok_and(|m| !m.is_file()) {
            let f = open_in_place(path)?;
            return Ok(AtomicFile {
                writer: Some(Sink::InPlace(io::BufWriter::with_capacity(1 << 16, f))),
                target: path.to_path_buf(),
                name,
                error: None,
            });
        }
        // Replace what a symlink points to, not the link.
        let target = match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path)?,
            _ => path.to_path_buf(),
        };
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".routeval-").suffix(".tmp");
        {
            use std::os::unix::fs::PermissionsExt;
            // open(2) applies the umask to this, as it would for a plain create.
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let tmp = builder.tempfile_in(&dir).map_err(plain_os_error)?;
        crate::signals::register_temp(tmp.path());
        Ok(AtomicFile {
            writer: Some(Sink::Temp(io::BufWriter::with_capacity(
                1 << 16,
                TempWriter(tmp),
            ))),
            target,
            name,
            error: None,
        })
    }

    /// Flush, fsync and rename over the target (keeping an existing target's permissions);
    /// an output that became an input is refused.
    pub fn commit(self) -> Result<(), OutputError> {
        let name = self.name.clone();
        let target = self.target.clone();
        check_not_input(&target)?;
        self.commit_io().map_err(|e| write_failure(&name, e))
    }

    /// The first write or flush error met so far (the file's own, with its errno), taken out:
    /// for a caller whose writing failed, which then drops the file uncommitted (the
    /// temporary file is removed, the target untouched) and reports this error.
    pub fn take_error(&mut self) -> Option<io::Error> {
        self.error.take()
    }

    /// [`AtomicFile::commit`] returning the IO error itself.
    pub fn commit_io(mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let target = self.target.clone();
        let writer = match self.writer.take() {
            None => return Err(io::Error::other("already committed")),
            Some(Sink::InPlace(mut w)) => {
                w.flush()?;
                // A pipe or device cannot be synced (EINVAL); that is no error.
                let _ = w.get_ref().sync_all();
                return Ok(());
            }
            Some(Sink::Temp(w)) => w,
        };
        let TempWriter(tmp) = writer.into_inner().map_err(|e| e.into_error())?;
        let tmp_path = tmp.path().to_path_buf();
        let result = (|| -> io::Result<()> {
            if let Ok(meta) = std::fs::metadata(&target) {
                // The target turned into a device, FIFO or directory since `create`: never
                // rename over it.
                if !meta.is_file() {
                    return Err(io::Error::other(
                        "the target is no longer a regular file; not replaced",
                    ));
                }
                tmp.as_file().set_permissions(meta.permissions())?;
            }
            tmp.as_file().sync_all()?;
            tmp.persist(&target).map_err(|e| e.error)?;
            Ok(())
        })();
        crate::signals::unregister_temp(&tmp_path);
        result?;
        // Make the rename itself durable; a directory that cannot be synced is no error.
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some(w) = self.writer.as_mut() else {
            return Err(io::Error::other("already committed"));
        };
        match w.writer().write(buf) {
            Ok(n) => Ok(n),
            Err(e) => {
                let again = io::Error::new(e.kind(), e.to_string());
                self.error.get_or_insert(e);
                Err(again)
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        let Some(w) = self.writer.as_mut() else {
            return Ok(());
        };
        match w.writer().flush() {
            Ok(()) => Ok(()),
            Err(e) => {
                let again = io::Error::new(e.kind(), e.to_string());
                self.error.get_or_insert(e);
                Err(again)
            }
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // An uncommitted file: NamedTempFile removes itself; forget it for the signal handler.
        if let Some(Sink::Temp(w)) = &self.writer {
            crate::signals::unregister_temp(w.get_ref().0.path());
        }
    }
}

/// Write `bytes` to `path` atomically (see [`AtomicFile`]); refuses an input.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let mut f = AtomicFile::create(path)?;
    if let Err(e) = f.write_all(bytes) {
        return Err(write_failure(&path.display().to_string(), e));
    }
    f.commit()
}

/// Write `bytes` to `path` atomically without the input check; the IO error as is.
pub fn write_file_io(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create_io(path)?;
    f.write_all(bytes)?;
    f.commit_io()
}

/// Refuse stdout when it was redirected to one of the inputs (`routeval filter x >> x`).
pub fn check_stdout_not_input() -> Result<(), OutputError> {
    let Ok(st) = rustix::fs::fstat(io::stdout()) else {
        return Ok(());
    };
    if let Some(input) = input_with(st.st_dev, st.st_ino) {
        return Err(OutputError::StdoutIsInput { input });
    }
    Ok(())
}

/// Write `bytes` to stdout and flush; any error (EPIPE included) is an [`OutputError::Write`]
/// naming `<stdout>`.
pub fn write_stdout(bytes: &[u8]) -> Result<(), OutputError> {
    check_stdout_not_input()?;
    let stdout = io::stdout();
    let mut lock = stdout.lock();
    lock.write_all(bytes)
        .and_then(|()| lock.flush())
        .map_err(|e| write_failure("<stdout>", e))
}

/// Map a stdout write error (for writers that stream to stdout themselves): the same kind
/// and message, naming `<stdout>`.
pub fn stdout_failure(e: &io::Error) -> OutputError {
    write_failure("<stdout>", io::Error::new(e.kind(), e.to_string()))
}

/// [`emit`] for an output written piece by piece: `write` gets the destination (the atomic
/// file of `output`, or stdout, buffered) and writes to it; a write error names the output as
/// [`emit`]'s do. Nothing lands at `output` unless `write` succeeds.
pub fn emit_with(
    output: Option<&PathBuf>,
    write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> Result<(), OutputError> {
    match output {
        Some(path) if path != Path::new("-") => {
            let mut f = AtomicFile::create(path)?;
            if let Err(e) = write(&mut f) {
                return Err(write_failure(&path.display().to_string(), e));
            }
            f.commit()
        }
        _ => {
            check_stdout_not_input()?;
            let stdout = io::stdout();
            let mut w = io::BufWriter::with_capacity(1 << 16, stdout.lock());
            write(&mut w)
                .and_then(|()| w.flush())
                .map_err(|e| write_failure("<stdout>", e))
        }
    }
}

/// Write what would be printed: to `output` when given (`-o/--output PATH`, atomically), else
/// to stdout (`-` also means stdout).
pub fn emit(output: Option<&PathBuf>, bytes: &[u8]) -> Result<(), OutputError> {
    match output {
        Some(path) if path != Path::new("-") => write_file(path, bytes),
        _ => write_stdout(bytes),
    }
}
