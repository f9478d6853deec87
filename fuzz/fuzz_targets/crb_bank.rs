//! CommonRouterBench bank rows: JSONL bytes → `BankReader` rows → `check_row` (the eval's
//! validation) → the counted text of every message (`tier_cost::message::message_text`, the
//! Python `json.dumps`/`str()` spellings token counts depend on). Nothing may panic; every
//! error names the line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use routeval_bench_data::crb::{BankReader, check_row, id_repr};
use routeval_tier_cost::message::message_text;

fuzz_target!(|data: &[u8]| {
    for row in BankReader::new(data, "bank.jsonl") {
        let row = match row {
            Ok(r) => r,
            Err(e) => {
                assert!(e.to_string().starts_with("bank.jsonl"), "{e}");
                continue;
            }
        };
        match check_row(&row, "bank.jsonl") {
            Ok(c) => {
                let _ = id_repr(&c.id);
                assert!((0..=3).contains(&c.gold));
            }
            Err(e) => assert!(e.to_string().starts_with("bank.jsonl:"), "{e}"),
        }
        if let Some(msgs) = row.value.get("messages").and_then(|m| m.as_array()) {
            for m in msgs {
                let _ = message_text(m);
            }
        }
    }
});
