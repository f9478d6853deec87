#![cfg(feature = "parquet")]
//! Inputs the fuzzers (`fuzz/`) found, kept as regression tests: each must give a clear error,
//! never a panic. The files are the fuzz targets' raw inputs (first byte: the target's flags).

use routeval_bench_data::gqr::registry::Format;
use routeval_bench_data::readers::{ReadError, for_each_row, read_rows};
use std::path::PathBuf;

fn input(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fuzz")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `gqr_readers`: a Parquet file whose column chunk metadata has a negative offset made the
/// `parquet` crate assert ("column start and length should not be negative").
#[test]
fn parquet_with_a_negative_column_start_is_an_error() {
    let data = input("gqr_readers-parquet-negative-column-start.bin");
    let bytes = &data[1..];
    for err in [
        read_rows("src.parquet", bytes, Format::Parquet, true, &[]).unwrap_err(),
        for_each_row(
            "src.parquet",
            bytes,
            Format::Parquet,
            true,
            &[],
            &mut |_| {},
        )
        .unwrap_err(),
    ] {
        assert!(matches!(err, ReadError::Parquet { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(msg.starts_with("src.parquet: parquet: "), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
    }
}
