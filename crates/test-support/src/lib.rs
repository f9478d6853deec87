//! Dev-only helpers shared by routeval's test suites (never published, only a
//! `[dev-dependencies]` entry), in the spirit of rust-analyzer's `test-utils`:
//!
//! * [`json`]: the ONE strict comparison every golden JSON goes through — exact key set and
//!   key order, integers and floats kept apart, floats bit for bit unless the caller names a
//!   tolerance and its reason, `NaN` equal only to `NaN`, `Infinity` never equal to `null`,
//!   failures reported with their JSON path;
//! * [`pydump`]: CPython 3.11's `json.dumps` text of a parsed value (an implementation of its
//!   own, independent of the product's writers), for byte-for-byte checks;
//! * [`pyfloat`]: the GQR goldens' `{"repr", "hex"}` float spelling (CPython `repr` and
//!   `float.hex`), so GQR values go through the same strict comparison;
//! * [`golden`]: reading golden files and globbing golden folders, with count guards so a
//!   deleted or emptied file fails the test that reads it;
//! * [`gqr`]: the example GQR build the CLI suites score against;
//! * [`fifo`] (Unix): making and recognising named pipes.

#[cfg(unix)]
pub mod fifo;
pub mod golden;
pub mod gqr;
pub mod json;
pub mod pydump;
pub mod pyfloat;

pub use json::{JsonCompare, assert_json_eq, num};
