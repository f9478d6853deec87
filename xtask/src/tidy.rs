//! Tidy tests: the invariants ARCHITECTURE.md states, checked against the workspace itself
//! (rust-analyzer's `xtask/src/tidy.rs` is the model). Run with `cargo test -p xtask tidy`;
//! they are part of `cargo test --workspace` and so of CI. Each "Architecture invariant" line
//! in ARCHITECTURE.md names the test that enforces it, and `every_invariant_names_its_test`
//! checks that every such name is a test that exists.
//!
//! The Rust files are read with `syn` (comments and string literals are not code; line numbers
//! from proc-macro2's span locations). **Test code** is what `cargo build` does not compile:
//! files under `tests/`, `benches/` and `examples/`, an item (module, fn, impl, ...) carrying
//! `#[cfg(test)]` (or a `cfg` naming `test` outside a `not(..)`) or `#[test]`, and every file
//! module declared by such an item (`#[cfg(test)] mod tests;`). Tests may read fixtures, so
//! the IO rule skips test code; the unsafe rule does not.
//!
//! | test | invariant |
//! |---|---|
//! | `tidy_layering_table_matches_cargo_metadata` | the "depends on" column = the manifests' routeval dependencies (normal and build), and dependencies only point up the table |
//! | `tidy_pure_crates_do_no_io` | no pure crate names `std::fs`, `std::process`, `std::net`, `std::os`, a clock (`SystemTime`, `Instant`, `UNIX_EPOCH`) or an HTTP/terminal crate in non-test code, nor depends on one; only `report` depends on plotters/minijinja |
//! | `tidy_unsafe_only_where_allowed` | `unsafe` (and `allow(unsafe_code)`) only in [`UNSAFE_ALLOWED`], each block with a `SAFETY:` note; `unsafe_code` denied in every manifest |
//! | `tidy_no_new_module_cycles` | no module import cycle within a crate beyond [`KNOWN_CYCLES`] (which may only shrink) |
//! | `tidy_pub_items_have_docs` | every `pub`/`pub(crate)` item of the binaries (`cli`, `xtask`) has a doc comment (`missing_docs` covers the libraries' public API) |
//! | `tidy_files_are_not_too_long` | no Rust source file over [`MAX_LINES`] lines, except generated tables and [`LONG_FILES`] (each under its ceiling) |
//! | `tidy_bench_data_io_stays_in_its_io_modules` | in `routeval-bench-data`, only [`BENCH_DATA_IO_MODULES`] touch files, processes or the network |
//! | `tidy_query_dsl_keeps_serde_json_preserve_order` | `routeval-query-dsl` builds serde_json with `preserve_order` |
//! | `tidy_every_invariant_names_its_test` | every "Architecture invariant" paragraph of ARCHITECTURE.md names its tests, and they exist |
//! | `tidy_paths_named_in_architecture_md_exist` | every repository path ARCHITECTURE.md names exists |

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use syn::visit::{self, Visit};

/// The longest a Rust source file may be (lines).
const MAX_LINES: usize = 1500;

/// Files allowed over [`MAX_LINES`], each with the ceiling it must stay under (a little above
/// its size when listed: split it rather than raise the number). An entry whose file is back
/// under [`MAX_LINES`] must be removed.
const LONG_FILES: &[(&str, usize)] = &[];

/// The only files that may contain `unsafe` or `allow(unsafe_code)` (ARCHITECTURE.md,
/// "Invariants that hold everywhere"), each block under a `SAFETY:` comment.
const UNSAFE_ALLOWED: &[&str] = &[
    // `map_regular`: memory-mapped whole-file inputs (the CLI's `rag`/`filter`, the Python
    // package's `evaluate_files`); `InputBytes::release`/`text_released`: pages of a map
    // already read leave the resident set.
    "crates/io/src/map.rs",
    // Borrowed reads of run and qrels dicts and of `str` text through CPython's C API.
    "crates/python/src/dictscan.rs",
    // The `Split` pre-tokenizers' regex search through Oniguruma's C API (a search error is a
    // value, not the `onig` crate's panic; no match parameter allocated per search).
    "crates/tier-cost/src/tokens/split.rs",
];

/// Module import cycles tolerated, as the sorted files of each cycle (one strongly connected
/// component of the `crate::`/`super::` import graph, edges between a module and its own
/// ancestors ignored). The four that existed when this test was written (issue 25) are broken,
/// so the list is empty: any cycle fails the test (and an entry that is no longer a cycle would).
const KNOWN_CYCLES: &[&[&str]] = &[];

/// Paths a pure crate's non-test code must not name, as leading segments.
const FORBIDDEN_PATHS: &[&[&str]] = &[
    &["std", "fs"],
    &["std", "process"],
    &["std", "net"],
    &["std", "os"],
    &["ureq"],
    &["reqwest"],
    &["hyper"],
    &["curl"],
    &["indicatif"],
];

/// Clock types a pure crate must not name, anywhere in a path.
const CLOCKS: &[&str] = &["SystemTime", "Instant", "UNIX_EPOCH"];

/// Packages a pure crate must not depend on (normal or build dependencies).
const IO_PACKAGES: &[&str] = &["ureq", "reqwest", "hyper", "curl", "indicatif", "console"];

/// Presentation packages that only `routeval-report` (and the IO crates) may depend on.
const PRESENTATION_PACKAGES: &[&str] = &["plotters", "minijinja", "minijinja-contrib"];

/// The modules of `routeval-bench-data` that may touch files or the network (ARCHITECTURE.md,
/// GQR-Bench code map); every other module of the crate is held to the pure crates' rule.
const BENCH_DATA_IO_MODULES: &[&str] = &[
    "download",
    "build_data",
    "build_data::tokenizers",
    "crb::public",
    "gqr::build",
    "gqr::data",
    "gqr::hub",
    "gqr::store",
    "net",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn architecture() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md")
}

fn rel(path: &Path) -> String {
    let root = root();
    path.strip_prefix(&root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

// ---------------------------------------------------------------------------------------
// The layering table.

/// One row of ARCHITECTURE.md's layering table.
#[derive(Debug, Clone)]
struct Row {
    /// `crates/core`, `xtask`, `root`.
    dir: String,
    /// `routeval-core` (the row's package name; `xtask` and `routeval` for those rows).
    package: String,
    /// The "may do IO?" cell starts with "no".
    pure: bool,
    /// The "depends on" cell's crate names (short: `core`, `tier-cost`), parentheses dropped.
    depends_on: BTreeSet<String>,
    /// 1-based line in ARCHITECTURE.md.
    line: usize,
}

fn layering_table(doc: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    for (i, line) in doc.lines().enumerate() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | `crates/core` (`routeval-core`) | layer | may do IO? | depends on |
        if cells.len() < 6 || !(cells[1].starts_with('`') || cells[1].starts_with("root (")) {
            continue;
        }
        let mut ticks = cells[1].split('`').skip(1).step_by(2);
        let Some(dir) = ticks.next() else { continue };
        let dir = if cells[1].starts_with("root") {
            "root".to_string()
        } else {
            dir.to_string()
        };
        if !(dir.starts_with("crates/") || dir == "xtask" || dir == "root") {
            continue;
        }
        let package = match dir.as_str() {
            "root" => "routeval".to_string(),
            "xtask" => "xtask".to_string(),
            _ => ticks
                .next()
                .unwrap_or_default()
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .trim_end_matches(',')
                .to_string(),
        };
        rows.push(Row {
            dir,
            package,
            pure: cells[3].starts_with("no"),
            depends_on: depends_cell(cells[4]),
            line: i + 1,
        });
    }
    rows
}

/// `core, frontier, bench-data (its row types, ...)` → {core, frontier, bench-data}; `—` → {}.
fn depends_cell(cell: &str) -> BTreeSet<String> {
    let mut plain = String::new();
    let mut depth = 0usize;
    for c in cell.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    plain
        .split(',')
        .map(|s| s.trim().trim_matches('`').to_string())
        .filter(|s| !s.is_empty() && s != "—" && s != "-")
        .collect()
}

/// Short name of a routeval package as the table writes it: `routeval-tier-cost` → `tier-cost`.
fn short(package: &str) -> String {
    match package {
        "routeval-cli" => "cli".to_string(),
        p => p.strip_prefix("routeval-").unwrap_or(p).to_string(),
    }
}

/// `cargo metadata --format-version 1 --no-deps` of one manifest, with a deadline.
fn cargo_metadata(manifest: &Path) -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut child = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .arg("--manifest-path")
        .arg(manifest)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("cargo metadata starts");
    let mut stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        // Far above any metadata of this workspace: the size cap of the child's output.
        let _ =
            std::io::Read::read_to_end(&mut std::io::Read::take(&mut stdout, 64 << 20), &mut buf);
        buf
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                assert!(status.success(), "cargo metadata failed for {manifest:?}");
                break;
            }
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("cargo metadata did not finish within 120 s");
            }
        }
    }
    let bytes = reader.join().expect("reader thread");
    serde_json::from_slice(&bytes).expect("cargo metadata prints JSON")
}

/// package name → (manifest dir relative to the root, routeval dependencies (normal and
/// build), every normal/build dependency's name).
type Manifests = BTreeMap<String, (String, BTreeSet<String>, BTreeSet<String>)>;

fn manifests() -> Manifests {
    let root = root();
    let mut out = Manifests::new();
    // One workspace: the Python package (crates/python) is a member too.
    let meta = cargo_metadata(&root.join("Cargo.toml"));
    for p in meta["packages"].as_array().expect("packages") {
        let name = p["name"].as_str().unwrap_or_default().to_string();
        let dir = Path::new(p["manifest_path"].as_str().unwrap_or_default())
            .parent()
            .map(rel)
            .unwrap_or_default();
        let dir = if dir.is_empty() || dir == root.to_string_lossy() {
            "root".to_string()
        } else {
            dir
        };
        let mut ours = BTreeSet::new();
        let mut all = BTreeSet::new();
        for d in p["dependencies"].as_array().into_iter().flatten() {
            if d["kind"].as_str() == Some("dev") {
                continue;
            }
            let dep = d["name"].as_str().unwrap_or_default().to_string();
            if dep.starts_with("routeval-") {
                ours.insert(short(&dep));
            }
            all.insert(dep);
        }
        out.insert(name, (dir, ours, all));
    }
    out
}

#[test]
fn tidy_layering_table_matches_cargo_metadata() {
    let rows = layering_table(&architecture());
    assert!(rows.len() >= 14, "layering table not found: {rows:?}");
    let manifests = manifests();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, row) in rows.iter().enumerate() {
        let Some((dir, deps, _)) = manifests.get(&row.package) else {
            problems.push(format!(
                "ARCHITECTURE.md:{}: no package `{}` in the manifests",
                row.line, row.package
            ));
            continue;
        };
        seen.insert(row.package.clone());
        if dir != &row.dir {
            problems.push(format!(
                "ARCHITECTURE.md:{}: `{}` lives in {dir}, not {}",
                row.line, row.package, row.dir
            ));
        }
        if deps != &row.depends_on {
            problems.push(format!(
                "ARCHITECTURE.md:{}: `{}` depends on {:?} (cargo metadata), the table says {:?}",
                row.line, row.package, deps, row.depends_on
            ));
        }
        // Dependencies only point up the table.
        let above: BTreeSet<String> = rows[..i].iter().map(|r| short(&r.package)).collect();
        for d in deps {
            if !above.contains(d) {
                problems.push(format!(
                    "ARCHITECTURE.md:{}: `{}` depends on `{d}`, which is not above it in the table",
                    row.line, row.package
                ));
            }
        }
    }
    for name in manifests.keys() {
        if !seen.contains(name) {
            problems.push(format!(
                "ARCHITECTURE.md: package `{name}` has no row in the layering table"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn tidy_layering_table_parser() {
    let rows = layering_table(&architecture());
    let pure: Vec<&str> = rows
        .iter()
        .filter(|r| r.pure)
        .map(|r| r.dir.as_str())
        .collect();
    for c in ["crates/core", "crates/stats", "crates/retrieval-metrics"] {
        assert!(pure.contains(&c), "{c} missing from {pure:?}");
    }
    assert!(!pure.contains(&"crates/cli"));
    assert!(!pure.contains(&"crates/bench-data"));
    assert_eq!(
        depends_cell("core, frontier, bench-data (its row types, `check_row`; no features)"),
        ["bench-data", "core", "frontier"]
            .into_iter()
            .map(String::from)
            .collect()
    );
    assert!(depends_cell("—").is_empty());
}

// ---------------------------------------------------------------------------------------
// Reading Rust files.

/// One Rust source file reached from a crate root through `mod` declarations.
struct SourceFile {
    /// Path relative to the workspace root.
    rel: String,
    /// Module path inside its crate (`["trec", "eval"]`); empty for the crate root.
    module: Vec<String>,
    /// Compiled only for tests (under `tests/`, or declared by a test-only `mod`).
    test_only: bool,
    /// The file's text.
    text: String,
    /// The parsed file.
    ast: syn::File,
}

fn parse(path: &Path) -> (String, syn::File) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let ast = syn::parse_file(&text).unwrap_or_else(|e| {
        panic!(
            "{}:{}: syn cannot parse: {e}",
            rel(path),
            e.span().start().line
        )
    });
    (text, ast)
}

fn is_test_attr(attr: &syn::Attribute) -> bool {
    if attr.path().is_ident("test") {
        return true;
    }
    if !attr.path().is_ident("cfg") {
        return false;
    }
    let tokens = quote_tokens(&attr.meta);
    tokens
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|w| w == "test")
        && !tokens.contains("not")
}

fn quote_tokens(meta: &syn::Meta) -> String {
    match meta {
        syn::Meta::Path(p) => path_text(p),
        syn::Meta::List(l) => format!("{}({})", path_text(&l.path), l.tokens),
        syn::Meta::NameValue(nv) => path_text(&nv.path),
    }
}

fn path_text(p: &syn::Path) -> String {
    p.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

fn is_test_item(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(is_test_attr)
}

/// `#[path = "..."]` of a `mod` item.
fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| {
        if !a.path().is_ident("path") {
            return None;
        }
        if let syn::Meta::NameValue(nv) = &a.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            return Some(s.value());
        }
        None
    })
}

/// Every file of the crate whose root is `root_file`, following `mod name;` declarations
/// (inline modules included, `#[path]` honoured).
fn crate_files(root_file: &Path, test_only: bool) -> Vec<SourceFile> {
    let mut out = Vec::new();
    let dir = root_file
        .parent()
        .expect("a file's directory")
        .to_path_buf();
    load_module(root_file, dir, Vec::new(), test_only, &mut out);
    out
}

fn load_module(
    file: &Path,
    child_dir: PathBuf,
    module: Vec<String>,
    test_only: bool,
    out: &mut Vec<SourceFile>,
) {
    let (text, ast) = parse(file);
    let mut decls = Vec::new();
    collect_mod_decls(
        &ast.items,
        &child_dir,
        file.parent().expect("dir"),
        &module,
        test_only,
        &mut decls,
    );
    out.push(SourceFile {
        rel: rel(file),
        module,
        test_only,
        text,
        ast,
    });
    for (path, dir, module, test_only) in decls {
        load_module(&path, dir, module, test_only, out);
    }
}

type ModDecl = (PathBuf, PathBuf, Vec<String>, bool);

fn collect_mod_decls(
    items: &[syn::Item],
    child_dir: &Path,
    file_dir: &Path,
    module: &[String],
    test_only: bool,
    out: &mut Vec<ModDecl>,
) {
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        let name = m.ident.to_string();
        let test = test_only || is_test_item(&m.attrs);
        let mut sub = module.to_vec();
        sub.push(name.clone());
        match &m.content {
            Some((_, inner)) => {
                collect_mod_decls(inner, &child_dir.join(&name), file_dir, &sub, test, out)
            }
            None => {
                let (file, dir) = if let Some(p) = path_attr(&m.attrs) {
                    let f = file_dir.join(p);
                    let d = f.parent().expect("dir").to_path_buf();
                    (f, d)
                } else if child_dir.join(format!("{name}.rs")).is_file() {
                    (child_dir.join(format!("{name}.rs")), child_dir.join(&name))
                } else {
                    (child_dir.join(&name).join("mod.rs"), child_dir.join(&name))
                };
                assert!(file.is_file(), "{}: module `{name}` not found", rel(&file));
                out.push((file, dir, sub, test));
            }
        }
    }
}

/// A crate target of the workspace: its root file and whether it is test-only.
fn crate_roots(dir: &Path) -> Vec<(PathBuf, bool)> {
    let mut roots = Vec::new();
    for f in ["src/lib.rs", "src/main.rs"] {
        if dir.join(f).is_file() {
            roots.push((dir.join(f), false));
        }
    }
    for (sub, test) in [
        ("src/bin", false),
        ("tests", true),
        ("benches", true),
        ("examples", true),
        ("fuzz_targets", false),
    ] {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "rs"))
            .collect();
        files.sort();
        roots.extend(files.into_iter().map(|f| (f, test)));
    }
    roots
}

/// Every crate directory: `crates/*`, `xtask`, `fuzz` and the root facade.
fn crate_dirs() -> Vec<PathBuf> {
    let root = root();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    dirs.sort();
    dirs.push(root.join("xtask"));
    dirs.push(root.join("fuzz"));
    dirs.push(root.clone());
    dirs
}

// ---------------------------------------------------------------------------------------
// What a file names.

/// A path named in code: its segments and 1-based line; `module` is the module it is named
/// in (the file's module plus inline modules).
#[derive(Debug, Clone)]
struct Named {
    segments: Vec<String>,
    line: usize,
    module: Vec<String>,
}

/// Collects the paths, `unsafe` uses and undocumented items of one file.
struct Scan {
    /// Skip test items (`#[cfg(test)]`, `#[test]`).
    skip_tests: bool,
    module: Vec<String>,
    paths: Vec<Named>,
    /// (line, what) of every `unsafe` block/fn/impl/trait and `allow(unsafe_code)`.
    unsafe_uses: Vec<(usize, &'static str)>,
    /// (line, item) of every item with a `pub` visibility and no doc comment.
    undocumented: Vec<(usize, String)>,
}

impl Scan {
    fn new(module: Vec<String>, skip_tests: bool) -> Scan {
        Scan {
            skip_tests,
            module,
            paths: Vec::new(),
            unsafe_uses: Vec::new(),
            undocumented: Vec::new(),
        }
    }

    fn push(&mut self, segments: Vec<String>, line: usize) {
        if !segments.is_empty() {
            self.paths.push(Named {
                segments,
                line,
                module: self.module.clone(),
            });
        }
    }

    fn attrs(&mut self, attrs: &[syn::Attribute]) {
        for a in attrs {
            let text = quote_tokens(&a.meta);
            if (text.starts_with("allow(") || text.starts_with("expect("))
                && text.contains("unsafe_code")
            {
                self.unsafe_uses
                    .push((a.pound_token.span.start().line, "allow(unsafe_code)"));
            }
        }
    }

    fn check_doc(
        &mut self,
        attrs: &[syn::Attribute],
        vis: &syn::Visibility,
        what: &str,
        ident: &syn::Ident,
    ) {
        if matches!(vis, syn::Visibility::Inherited) {
            return;
        }
        if !attrs.iter().any(|a| a.path().is_ident("doc")) {
            self.undocumented
                .push((ident.span().start().line, format!("{what} {ident}")));
        }
    }

    /// Paths inside a macro's tokens: every `a :: b :: c` run of identifiers.
    fn tokens(&mut self, tokens: proc_macro2::TokenStream) {
        let mut run: Vec<String> = Vec::new();
        let mut line = 0;
        let mut colons = 0;
        for tt in tokens {
            match tt {
                proc_macro2::TokenTree::Ident(i) => {
                    if run.is_empty() || colons == 2 {
                        if run.is_empty() {
                            line = i.span().start().line;
                        }
                        run.push(i.to_string());
                    } else {
                        let done = std::mem::take(&mut run);
                        self.push(done, line);
                        line = i.span().start().line;
                        run.push(i.to_string());
                    }
                    colons = 0;
                }
                proc_macro2::TokenTree::Punct(p) if p.as_char() == ':' => colons += 1,
                proc_macro2::TokenTree::Group(g) => {
                    let done = std::mem::take(&mut run);
                    self.push(done, line);
                    colons = 0;
                    self.tokens(g.stream());
                }
                _ => {
                    let done = std::mem::take(&mut run);
                    self.push(done, line);
                    colons = 0;
                }
            }
        }
        let done = std::mem::take(&mut run);
        self.push(done, line);
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut s = prefix.clone();
                s.push(n.ident.to_string());
                self.push(s, n.ident.span().start().line);
            }
            syn::UseTree::Rename(r) => {
                let mut s = prefix.clone();
                s.push(r.ident.to_string());
                self.push(s, r.ident.span().start().line);
            }
            syn::UseTree::Glob(g) => {
                let s = prefix.clone();
                self.push(s, g.star_token.span.start().line);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }
}

/// The attributes and visibility of an item, when it has them.
fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::ExternCrate(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::ForeignMod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::TraitAlias(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

impl<'ast> Visit<'ast> for Scan {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = item_attrs(item);
        if self.skip_tests && is_test_item(attrs) {
            return;
        }
        self.attrs(attrs);
        match item {
            syn::Item::Const(i) => self.check_doc(&i.attrs, &i.vis, "const", &i.ident),
            syn::Item::Enum(i) => self.check_doc(&i.attrs, &i.vis, "enum", &i.ident),
            syn::Item::Fn(i) => self.check_doc(&i.attrs, &i.vis, "fn", &i.sig.ident),
            syn::Item::Static(i) => self.check_doc(&i.attrs, &i.vis, "static", &i.ident),
            syn::Item::Struct(i) => self.check_doc(&i.attrs, &i.vis, "struct", &i.ident),
            syn::Item::Trait(i) => self.check_doc(&i.attrs, &i.vis, "trait", &i.ident),
            syn::Item::Type(i) => self.check_doc(&i.attrs, &i.vis, "type", &i.ident),
            syn::Item::Union(i) => self.check_doc(&i.attrs, &i.vis, "union", &i.ident),
            _ => {}
        }
        match item {
            syn::Item::Mod(m) => {
                if m.content.is_some() {
                    self.check_doc(&m.attrs, &m.vis, "mod", &m.ident);
                }
                // A file module's docs are its `//!` lines, read with that file.
                self.module.push(m.ident.to_string());
                visit::visit_item_mod(self, m);
                self.module.pop();
            }
            syn::Item::Use(u) => {
                let mut prefix = Vec::new();
                if u.leading_colon.is_some() {
                    prefix.push(String::new());
                }
                self.use_tree(&mut prefix, &u.tree);
            }
            syn::Item::Fn(f) if f.sig.unsafety.is_some() => {
                self.unsafe_uses
                    .push((f.sig.fn_token.span.start().line, "unsafe fn"));
                visit::visit_item(self, item);
            }
            syn::Item::Impl(i) if i.unsafety.is_some() => {
                self.unsafe_uses
                    .push((i.impl_token.span.start().line, "unsafe impl"));
                visit::visit_item(self, item);
            }
            syn::Item::Trait(t) if t.unsafety.is_some() => {
                self.unsafe_uses
                    .push((t.trait_token.span.start().line, "unsafe trait"));
                visit::visit_item(self, item);
            }
            syn::Item::ForeignMod(f) => {
                self.unsafe_uses
                    .push((f.abi.extern_token.span.start().line, "extern block"));
                visit::visit_item(self, item);
            }
            _ => visit::visit_item(self, item),
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if self.skip_tests && is_test_item(&f.attrs) {
            return;
        }
        self.attrs(&f.attrs);
        if f.sig.unsafety.is_some() {
            self.unsafe_uses
                .push((f.sig.fn_token.span.start().line, "unsafe fn"));
        }
        self.check_doc(&f.attrs, &f.vis, "fn", &f.sig.ident);
        visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if f.sig.unsafety.is_some() {
            self.unsafe_uses
                .push((f.sig.fn_token.span.start().line, "unsafe fn"));
        }
        visit::visit_trait_item_fn(self, f);
    }

    fn visit_expr_unsafe(&mut self, e: &'ast syn::ExprUnsafe) {
        self.unsafe_uses
            .push((e.unsafe_token.span.start().line, "unsafe block"));
        visit::visit_expr_unsafe(self, e);
    }

    fn visit_stmt(&mut self, s: &'ast syn::Stmt) {
        let attrs: &[syn::Attribute] = match s {
            syn::Stmt::Local(l) => &l.attrs,
            syn::Stmt::Macro(m) => &m.attrs,
            _ => &[],
        };
        if self.skip_tests && is_test_item(attrs) {
            return;
        }
        visit::visit_stmt(self, s);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let mut segs: Vec<String> = Vec::new();
        if p.leading_colon.is_some() {
            segs.push(String::new());
        }
        segs.extend(p.segments.iter().map(|s| s.ident.to_string()));
        let line = p
            .segments
            .first()
            .map_or(0, |s| s.ident.span().start().line);
        self.push(segs, line);
        visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
        visit::visit_macro(self, m);
    }

    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {
        // Attributes (`#[derive(..)]`, `#[cfg(..)]`, `#[doc = ..]`) name no code paths.
    }
}

fn scan(file: &SourceFile, skip_tests: bool) -> Scan {
    let mut s = Scan::new(file.module.clone(), skip_tests);
    s.attrs(&file.ast.attrs);
    s.visit_file(&file.ast);
    s
}

// ---------------------------------------------------------------------------------------
// (b) Pure crates do no IO.

/// The forbidden thing a path names, if any.
fn forbidden(segments: &[String]) -> Option<String> {
    let segs: Vec<&str> = segments
        .iter()
        .map(String::as_str)
        .skip_while(|s| s.is_empty())
        .collect();
    for f in FORBIDDEN_PATHS {
        if segs.len() >= f.len() && segs[..f.len()] == **f {
            return Some(f.join("::"));
        }
        // `core::net` is `std::net` too.
        if f[0] == "std" && segs.len() >= f.len() && segs[0] == "core" && segs[1..f.len()] == f[1..]
        {
            return Some(f.join("::"));
        }
    }
    segs.iter()
        .find(|s| CLOCKS.contains(s))
        .map(|c| format!("the clock `{c}`"))
}

fn io_problems(files: &[SourceFile]) -> Vec<String> {
    let mut problems = Vec::new();
    for f in files.iter().filter(|f| !f.test_only) {
        for n in scan(f, true).paths {
            if let Some(what) = forbidden(&n.segments) {
                problems.push(format!("{}:{}: pure crate names {what}", f.rel, n.line));
            }
        }
    }
    problems.sort();
    problems.dedup();
    problems
}

#[test]
fn tidy_pure_crates_do_no_io() {
    let root = root();
    let manifests = manifests();
    let mut problems = Vec::new();
    let rows: Vec<Row> = layering_table(&architecture())
        .into_iter()
        .filter(|r| r.pure)
        .collect();
    assert!(rows.len() >= 9, "pure crates: {rows:?}");
    for row in rows {
        let dir = if row.dir == "root" {
            root.clone()
        } else {
            root.join(&row.dir)
        };
        let lib = dir.join("src/lib.rs");
        problems.extend(io_problems(&crate_files(&lib, false)));
        if let Some((_, _, deps)) = manifests.get(&row.package) {
            for d in IO_PACKAGES {
                if deps.contains(*d) {
                    problems.push(format!("{}/Cargo.toml: pure crate depends on {d}", row.dir));
                }
            }
            for d in PRESENTATION_PACKAGES {
                if row.package != "routeval-report" && deps.contains(*d) {
                    problems.push(format!(
                        "{}/Cargo.toml: only routeval-report may depend on {d}",
                        row.dir
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn tidy_bench_data_io_stays_in_its_io_modules() {
    let lib = root().join("crates/bench-data/src/lib.rs");
    let files = crate_files(&lib, false);
    let mut io_modules_seen = BTreeSet::new();
    let pure: Vec<SourceFile> = files
        .into_iter()
        .filter(|f| {
            let m = f.module.join("::");
            let io = BENCH_DATA_IO_MODULES.contains(&m.as_str());
            if io {
                io_modules_seen.insert(m);
            }
            !io
        })
        .collect();
    assert_eq!(
        io_modules_seen.len(),
        BENCH_DATA_IO_MODULES.len(),
        "an IO module of the list is gone: {io_modules_seen:?}"
    );
    assert!(
        pure.len() >= 10,
        "bench-data's pure modules: {}",
        pure.len()
    );
    let problems = io_problems(&pure);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn tidy_query_dsl_keeps_serde_json_preserve_order() {
    let meta = cargo_metadata(&root().join("Cargo.toml"));
    let dsl = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "routeval-query-dsl")
        .expect("routeval-query-dsl");
    let serde_json = dsl["dependencies"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["name"] == "serde_json" && d["kind"].is_null())
        .expect("routeval-query-dsl depends on serde_json");
    assert!(
        serde_json["features"]
            .as_array()
            .is_some_and(|f| f.iter().any(|x| x == "preserve_order")),
        "crates/query-dsl/Cargo.toml: serde_json must keep `preserve_order` (clause order)"
    );
}

fn file_from(rel: &str, text: &str) -> SourceFile {
    SourceFile {
        rel: rel.to_string(),
        module: Vec::new(),
        test_only: false,
        text: text.to_string(),
        ast: syn::parse_file(text).unwrap(),
    }
}

#[test]
fn tidy_io_detection() {
    let bad = file_from(
        "x.rs",
        "use std::{io, fs::File};\nfn f() { let _ = std::process::id(); }\n\
         fn g() -> std::time::Instant { todo!() }\nfn h() { println!(\"{}\", ureq::get(u)); }\n\
         use core::net::Ipv4Addr;\n",
    );
    assert_eq!(
        io_problems(&[bad]),
        [
            "x.rs:1: pure crate names std::fs",
            "x.rs:2: pure crate names std::process",
            "x.rs:3: pure crate names the clock `Instant`",
            "x.rs:4: pure crate names ureq",
            "x.rs:5: pure crate names std::net",
        ]
    );
    let fine = file_from(
        "y.rs",
        "// std::fs in a comment\nconst S: &str = \"std::fs\";\nuse std::io::Read;\n\
         fn d() -> std::time::Duration { todo!() }\n\
         #[cfg(test)]\nmod tests { use std::fs; #[test] fn t() { std::fs::read(\"x\"); } }\n\
         #[cfg(test)]\nfn fixture() { std::fs::read(\"x\"); }\n",
    );
    assert_eq!(io_problems(&[fine]), Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------
// (c) unsafe only where allowed.

#[test]
fn tidy_unsafe_only_where_allowed() {
    let root = root();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for dir in crate_dirs() {
        for (file, test) in crate_roots(&dir) {
            for f in crate_files(&file, test) {
                if !seen.insert(f.rel.clone()) {
                    continue;
                }
                let uses = scan(&f, false).unsafe_uses;
                if uses.is_empty() {
                    continue;
                }
                if !UNSAFE_ALLOWED.contains(&f.rel.as_str()) {
                    for (line, what) in uses {
                        problems.push(format!(
                            "{}:{line}: {what} outside the unsafe allow-list",
                            f.rel
                        ));
                    }
                    continue;
                }
                let lines: Vec<&str> = f.text.lines().collect();
                for (line, what) in uses {
                    if what != "unsafe block" {
                        continue;
                    }
                    let from = line.saturating_sub(8).max(1);
                    if !(from..=line)
                        .any(|l| lines.get(l - 1).is_some_and(|t| t.contains("SAFETY:")))
                    {
                        problems.push(format!(
                            "{}:{line}: unsafe block without a `// SAFETY:` note above it",
                            f.rel
                        ));
                    }
                }
            }
        }
    }
    for allowed in UNSAFE_ALLOWED {
        assert!(
            seen.contains(*allowed),
            "allow-listed {allowed} was not read"
        );
    }
    // The lint that makes the allow-list necessary.
    let ws = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    if !ws
        .lines()
        .any(|l| l.replace(' ', "") == "unsafe_code=\"deny\"")
    {
        problems.push("Cargo.toml: unsafe_code is not denied".to_string());
    }
    for dir in crate_dirs() {
        let manifest = dir.join("Cargo.toml");
        let r = rel(&manifest);
        if r == "Cargo.toml" || r.starts_with("fuzz") {
            continue;
        }
        let text = std::fs::read_to_string(&manifest).unwrap();
        if !text.contains("[lints]\nworkspace = true") {
            problems.push(format!("{r}: no `[lints] workspace = true`"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------------------
// (d) Module cycles.

/// The module (one of `modules`) a path named in `from` refers to, when it is one of the
/// crate's own file modules: `crate::a::b::X` → `a::b`, `super::x` relative to `from`.
fn target_module(n: &Named, modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let mut segs = n.segments.iter().map(String::as_str).peekable();
    let mut base: Vec<String> = match segs.peek().copied() {
        Some("crate") => {
            segs.next();
            Vec::new()
        }
        Some("super") | Some("self") => n.module.clone(),
        _ => return None,
    };
    while let Some(s) = segs.peek().copied() {
        match s {
            "super" => {
                base.pop()?;
                segs.next();
            }
            "self" => {
                segs.next();
            }
            _ => break,
        }
    }
    let rest: Vec<String> = segs.map(String::from).collect();
    let mut best = None;
    let mut cur = base.clone();
    if modules.contains(&cur) {
        best = Some(cur.clone());
    }
    for s in rest {
        cur.push(s);
        if modules.contains(&cur) {
            best = Some(cur.clone());
        }
    }
    best
}

/// The module import cycles of one crate: sorted files of each strongly connected component
/// with more than one module.
// Floyd–Warshall over a boolean matrix reads best with indices.
#[allow(clippy::needless_range_loop)]
fn cycles(files: &[SourceFile]) -> Vec<Vec<String>> {
    let files: Vec<&SourceFile> = files.iter().filter(|f| !f.test_only).collect();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let index: BTreeMap<&Vec<String>, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (&f.module, i))
        .collect();
    let n = files.len();
    let mut reach = vec![vec![false; n]; n];
    for (i, f) in files.iter().enumerate() {
        for named in scan(f, true).paths {
            let Some(t) = target_module(&named, &modules) else {
                continue;
            };
            // A module and its own ancestors or descendants: not a cycle between modules.
            if t.starts_with(&f.module) || f.module.starts_with(&t) {
                continue;
            }
            reach[i][index[&t]] = true;
        }
    }
    for k in 0..n {
        for i in 0..n {
            if reach[i][k] {
                for j in 0..n {
                    if reach[k][j] {
                        reach[i][j] = true;
                    }
                }
            }
        }
    }
    let mut out: BTreeSet<Vec<String>> = BTreeSet::new();
    for i in 0..n {
        let mut comp: Vec<String> = (0..n)
            .filter(|&j| j == i || (reach[i][j] && reach[j][i]))
            .map(|j| files[j].rel.clone())
            .collect();
        if comp.len() > 1 {
            comp.sort();
            out.insert(comp);
        }
    }
    out.into_iter().collect()
}

#[test]
fn tidy_no_new_module_cycles() {
    let mut found = Vec::new();
    for dir in crate_dirs() {
        for (file, test) in crate_roots(&dir) {
            if test {
                continue;
            }
            found.extend(cycles(&crate_files(&file, false)));
        }
    }
    let known: Vec<Vec<String>> = KNOWN_CYCLES
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect();
    let mut problems = Vec::new();
    for c in &found {
        if !known.contains(c) {
            problems.push(format!("module import cycle: {}", c.join(" <-> ")));
        }
    }
    for c in &known {
        if !found.contains(c) {
            problems.push(format!(
                "no longer a cycle (remove it from KNOWN_CYCLES): {}",
                c.join(" <-> ")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn tidy_cycle_detection() {
    let mut a = file_from("a.rs", "use crate::b::f;\nfn g() { super::c::h(); }");
    a.module = vec!["x".into(), "a".into()];
    let mut b = file_from("b.rs", "fn f() { crate::x::a::g(); }");
    b.module = vec!["b".into()];
    let mut c = file_from("c.rs", "use super::a;\nfn h() {}");
    c.module = vec!["x".into(), "c".into()];
    let mut x = file_from("x.rs", "mod a; mod c; use self::a::g;");
    x.module = vec!["x".into()];
    let root = file_from("lib.rs", "mod b; mod x;");
    let found = cycles(&[root, x, a, b, c]);
    assert_eq!(found, [vec!["a.rs", "b.rs", "c.rs"]]);
}

// ---------------------------------------------------------------------------------------
// (e) Doc comments on the binaries' items.

#[test]
fn tidy_pub_items_have_docs() {
    let root = root();
    let mut problems = Vec::new();
    for dir in [root.join("crates/cli"), root.join("xtask")] {
        for (file, test) in crate_roots(&dir) {
            if test {
                continue;
            }
            for f in crate_files(&file, false) {
                if f.test_only {
                    continue;
                }
                for (line, item) in scan(&f, true).undocumented {
                    problems.push(format!("{}:{line}: `{item}` has no doc comment", f.rel));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------------------
// (f) File sizes.

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        if name == "target" || name == ".git" {
            continue;
        }
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn tidy_files_are_not_too_long() {
    let root = root();
    let mut files = Vec::new();
    for d in ["crates", "xtask", "src", "examples", "fuzz"] {
        rust_files(&root.join(d), &mut files);
    }
    assert!(files.len() > 100, "only {} Rust files found", files.len());
    let mut problems = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let lines = text.lines().count();
        let r = rel(&f);
        let generated = text.lines().take(3).any(|l| l.contains("@generated"));
        let ceiling = LONG_FILES.iter().find(|(p, _)| *p == r).map(|&(_, c)| c);
        match ceiling {
            Some(c) if lines > c => problems.push(format!(
                "{r}: {lines} lines, over its allow-listed ceiling {c}: split it"
            )),
            Some(_) if lines <= MAX_LINES => problems.push(format!(
                "{r}: {lines} lines, no longer over {MAX_LINES}: remove it from LONG_FILES"
            )),
            None if lines > MAX_LINES && !generated => problems.push(format!(
                "{r}: {lines} lines, over {MAX_LINES}: split it (or, with a reason, LONG_FILES)"
            )),
            _ => {}
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------------------
// ARCHITECTURE.md itself.

#[test]
fn tidy_every_invariant_names_its_test() {
    let doc = architecture();
    let root = root();
    let mut sources = Vec::new();
    for d in ["crates", "xtask", "src"] {
        rust_files(&root.join(d), &mut sources);
    }
    // The Python package's pytest functions count too (`def test_...(`).
    if let Ok(entries) = std::fs::read_dir(root.join("crates/python/tests")) {
        sources.extend(
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "py")),
        );
    }
    let text: String = sources
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .collect::<Vec<_>>()
        .join("\n");
    let mut problems = Vec::new();
    let mut count = 0;
    // A paragraph starting with "**Architecture invariant" (or "**Invariant").
    let lines: Vec<&str> = doc.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if !(line.contains("**Architecture invariant") || line.contains("**Invariant")) {
            continue;
        }
        count += 1;
        let mut para = String::new();
        for l in &lines[i..] {
            if l.trim().is_empty() {
                break;
            }
            para.push_str(l);
            para.push(' ');
        }
        let Some(at) = para.find("(test: ").or_else(|| para.find("(tests: ")) else {
            problems.push(format!(
                "ARCHITECTURE.md:{}: invariant names no test (`(test: `name`)`)",
                i + 1
            ));
            continue;
        };
        let names: Vec<&str> = para[at..]
            .split(')')
            .next()
            .unwrap_or_default()
            .split('`')
            .skip(1)
            .step_by(2)
            .collect();
        if names.is_empty() {
            problems.push(format!("ARCHITECTURE.md:{}: empty test list", i + 1));
        }
        for name in names {
            let short = name.rsplit("::").next().unwrap_or(name);
            if !text.contains(&format!("fn {short}(")) && !text.contains(&format!("def {short}(")) {
                problems.push(format!(
                    "ARCHITECTURE.md:{}: test `{name}` does not exist",
                    i + 1
                ));
            }
        }
    }
    assert!(count >= 10, "only {count} invariant lines found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
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
fn tidy_paths_named_in_architecture_md_exist() {
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
