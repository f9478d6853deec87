//! Checks that keep the architecture as ARCHITECTURE.md describes it (issue 10, item 10):
//!
//! * no pure crate (a row of the layering table whose "may do IO?" cell starts with "no")
//!   uses `std::fs`, `std::process`, `std::net`, `ureq` or `indicatif` in its `src/`, nor
//!   depends on `ureq` or `indicatif` in its manifest;
//! * every repository path ARCHITECTURE.md names exists.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn architecture() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md")
}

/// `crates/<dir>` of every layering-table row whose "may do IO?" cell starts with "no".
fn pure_crates(doc: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in doc.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | `crates/core` (`routeval-core`) | layer | may do IO? | depends on |
        if cells.len() < 5 || !cells[1].starts_with("`crates/") {
            continue;
        }
        let dir = cells[1]
            .trim_start_matches('`')
            .split('`')
            .next()
            .unwrap_or_default();
        if cells[3].starts_with("no") {
            out.push(dir.to_string());
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The forbidden uses on one line of code (comments removed), e.g. `std::fs`.
fn forbidden_uses(code: &str) -> Vec<&'static str> {
    const PATHS: [&str; 3] = ["std::fs", "std::process", "std::net"];
    const CRATES: [&str; 2] = ["ureq", "indicatif"];
    let mut found = Vec::new();
    for p in PATHS {
        if code.contains(p) {
            found.push(p);
        }
    }
    // `use std::{fs, io}` and the like.
    if let Some(i) = code.find("std::{") {
        let group = &code[i..code[i..].find('}').map_or(code.len(), |j| i + j)];
        for (name, p) in [("fs", PATHS[0]), ("process", PATHS[1]), ("net", PATHS[2])] {
            if group
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == name)
            {
                found.push(p);
            }
        }
    }
    for c in CRATES {
        let is_word = code
            .split(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
            .any(|w| w == c);
        if is_word && (code.contains(&format!("{c}::")) || code.contains("extern crate")) {
            found.push(c);
        }
    }
    found
}

/// A line without its `//` comment (string literals containing `//` are rare enough in the
/// pure crates that this simple rule is kept; a false alarm names the line).
fn code_part(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

#[test]
fn the_layering_table_names_the_pure_crates() {
    let pure = pure_crates(&architecture());
    for c in ["crates/core", "crates/stats", "crates/retrieval-metrics"] {
        assert!(pure.contains(&c.to_string()), "{c} missing from {pure:?}");
    }
    assert!(!pure.contains(&"crates/cli".to_string()));
    assert!(!pure.contains(&"crates/bench-data".to_string()));
}

#[test]
fn pure_crates_do_no_io() {
    let root = root();
    let mut problems = Vec::new();
    for krate in pure_crates(&architecture()) {
        let mut files = Vec::new();
        rust_files(&root.join(&krate).join("src"), &mut files);
        assert!(!files.is_empty(), "{krate}/src has no Rust files");
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (i, line) in text.lines().enumerate() {
                for u in forbidden_uses(code_part(line)) {
                    problems.push(format!(
                        "{}:{}: pure crate uses {u}",
                        f.strip_prefix(&root).unwrap_or(&f).display(),
                        i + 1
                    ));
                }
            }
        }
        let manifest = std::fs::read_to_string(root.join(&krate).join("Cargo.toml")).unwrap();
        for dep in ["ureq", "indicatif"] {
            if manifest.lines().any(|l| {
                let l = l.trim_start();
                l.starts_with(&format!("{dep} ")) || l.starts_with(&format!("{dep}."))
            }) {
                problems.push(format!("{krate}/Cargo.toml: pure crate depends on {dep}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn forbidden_use_detection() {
    assert_eq!(forbidden_uses("use std::fs::File;"), ["std::fs"]);
    assert_eq!(
        forbidden_uses("use std::{io, net::TcpStream};"),
        ["std::net"]
    );
    assert_eq!(
        forbidden_uses("let r = ureq::get(url);"),
        ["ureq"],
        "a crate path"
    );
    assert!(forbidden_uses("use std::io::Read; // no std::fs here").len() == 1);
    assert!(forbidden_uses(code_part("use std::io::Read; // no std::fs here")).is_empty());
    assert!(forbidden_uses("let procured = 1; let netting = 2;").is_empty());
}

/// Where a path named in ARCHITECTURE.md may live: the root, `crates/`, any crate, any
/// crate's `src/`.
fn resolves(root: &Path, token: &str) -> bool {
    let token = token.trim_end_matches('/');
    let mut bases = vec![root.to_path_buf(), root.join("crates")];
    if let Ok(entries) = std::fs::read_dir(root.join("crates")) {
        for e in entries.flatten() {
            bases.push(e.path());
            bases.push(e.path().join("src"));
        }
    }
    if bases.iter().any(|b| b.join(token).exists()) {
        return true;
    }
    // A bare file name (`rng.rs`): some crate's source tree has it.
    if !token.contains('/') {
        let mut files = Vec::new();
        rust_files(&root.join("crates"), &mut files);
        rust_files(&root.join("xtask"), &mut files);
        return files
            .iter()
            .any(|f| f.file_name().is_some_and(|n| n == token));
    }
    false
}

#[test]
fn paths_named_in_architecture_md_exist() {
    let root = root();
    let doc = architecture();
    let mut missing = Vec::new();
    let mut checked = 0;
    for (i, line) in doc.lines().enumerate() {
        for (j, token) in line.split('`').enumerate() {
            if j % 2 == 0 {
                continue; // outside backticks
            }
            let looks_like_path = token.contains('/') || token.ends_with(".rs");
            let skip = token.is_empty()
                || token.contains(['$', '<', '…', ' ', '*', ':'])
                || token.starts_with(['-', '.'])
                // The shared specs and goldens live beside the checkout, not in it.
                || ["seeds/", "specs/", "golden/", "thirdparty/"]
                    .iter()
                    .any(|p| token.starts_with(p));
            if !looks_like_path || skip {
                continue;
            }
            checked += 1;
            if !resolves(&root, token) {
                missing.push(format!(
                    "ARCHITECTURE.md:{}: `{token}` does not exist",
                    i + 1
                ));
            }
        }
    }
    assert!(
        checked > 40,
        "only {checked} paths found: is the parser broken?"
    );
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
