//! GQR-Bench source readers (`bench-data::readers`: CSV with pandas NA defaults, JSON, JSONL,
//! Parquet) and what a build does with each row: every registry dataset's filters and text
//! builder, then the text primitives (`normalize`, shingles, digests, the ID keyword filter).
//! The first byte picks the format and the CSV header rule. Nothing may panic; the streaming
//! reader and the collecting reader agree.
#![no_main]

use libfuzzer_sys::fuzz_target;
use routeval_bench_data::gqr::registry::{Format, Registry};
use routeval_bench_data::gqr::rows::{RowText, apply_filters};
use routeval_bench_data::gqr::text;
use routeval_bench_data::readers::{for_each_row, read_rows};
use std::sync::OnceLock;

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(|| Registry::load().expect("embedded registry"))
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, bytes)) = data.split_first() else { return };
    let format = [Format::Csv, Format::Json, Format::Jsonl, Format::Parquet][(flags & 3) as usize];
    let header = flags & 4 == 0;
    let columns: Vec<String> = if header { vec![] } else { vec!["text".into(), "label".into()] };
    let rows = match read_rows("src", bytes, format, header, &columns) {
        Ok(rows) => rows,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let mut n = 0usize;
    for_each_row("src", bytes, format, header, &columns, &mut |_| n += 1).expect("read twice");
    assert_eq!(n, rows.len());
    for ds in &registry().datasets {
        let (kept, _stats) = apply_filters(rows.clone(), &ds.filters);
        for row in &kept {
            if let RowText::Text(t) = ds.text.text(row) {
                let norm = text::normalize(&t);
                let _ = text::shingles_of_normalized(&norm, 5);
                let _ = text::rank_key(&t, 42, "fuzz");
                let _ = text::id_topic_hit(&t);
                let _ = text::truncate_chars(&t, 7);
            }
        }
    }
});
