//! Progress bars on stderr: [`routeval_io::progress`] (indicatif, only on a terminal or with
//! `ROUTEVAL_PROGRESS=always`), under the names the subcommands use.

pub(crate) use routeval_io::progress::{Bar, bar, note};
