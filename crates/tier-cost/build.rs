//! Build-time step: cl100k_base's rank table, taken from tiktoken-rs (the same release the
//! library links) and written to `$OUT_DIR/cl100k_ranks.bin`, which `tokens.rs` embeds.
//!
//! Building tiktoken-rs's encoder at run time only to read its ranks back cost 36–41 ms of
//! every `routeval crb eval` (base64-decoding 100k lines, a `Vec` per token, two hash maps and
//! two regexes the counter never uses). The table is the vocabulary tiktoken-rs embeds, read
//! back through its own `decode_bytes`, so the ranks are the library's by construction; a test
//! (`tests/cl100k.rs`) compares every rank with tiktoken-rs's encoder at run time.
//!
//! Format: `b"RVCL"`, the entry count (u32 LE), then per entry in id order: id (u32 LE), length
//! (u16 LE), the token's bytes.

use std::io::Write;

/// cl100k_base's special-token ids: not byte sequences, not in the table.
const SPECIAL_IDS: [u32; 5] = [100257, 100258, 100259, 100260, 100276];

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let bpe = tiktoken_rs::cl100k_base().expect("tiktoken-rs builds cl100k_base");
    let last = SPECIAL_IDS.iter().copied().max().unwrap_or(0);
    let mut entries: Vec<(u32, Vec<u8>)> = Vec::with_capacity(100_256);
    for id in (0..=last).filter(|id| !SPECIAL_IDS.contains(id)) {
        if let Ok(bytes) = bpe.decode_bytes(&[id]) {
            entries.push((id, bytes));
        }
    }
    let mut out = Vec::with_capacity(1 << 20);
    out.extend_from_slice(b"RVCL");
    out.extend_from_slice(&u32::try_from(entries.len()).expect("count").to_le_bytes());
    for (id, bytes) in &entries {
        out.extend_from_slice(&id.to_le_bytes());
        let len = u16::try_from(bytes.len()).expect("a cl100k token is under 64 KiB");
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(bytes);
    }
    let dir = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
    let path = std::path::Path::new(&dir).join("cl100k_ranks.bin");
    let mut f = std::fs::File::create(&path).expect("create cl100k_ranks.bin");
    f.write_all(&out).expect("write cl100k_ranks.bin");
}
