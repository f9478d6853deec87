//! `cargo xtask docs`: the generated CLI reference. `crate::reference::reference` renders one
//! Markdown page per (sub)command (`docs/cli/<name>.md`), its man page (clap_mangen,
//! `docs/cli/man/<name>.1`) and the book chapter that includes the pages
//! (`docs/src/cli-reference.md`), all from the argument parser the binary runs; this module
//! writes them (atomically) and removes pages of commands that no longer exist. `--check`
//! compares instead; the unit test `cli_reference_is_current` does the same in `cargo test`.

use std::collections::BTreeSet;
use std::path::Path;

/// The directories whose generated files are owned by `cargo xtask docs`, with the extension
/// of the files in each (relative to the workspace root).
const OWNED: [(&str, &str); 2] = [("docs/cli", "md"), ("docs/cli/man", "1")];

/// Regenerate the CLI reference under `root`; returns the files that changed (or, with
/// `check`, that are stale, missing or no longer generated), relative to `root`.
///
/// # Errors
/// A file that cannot be read, written or removed (message names it).
pub(crate) fn run(root: &Path, check: bool) -> Result<Vec<String>, String> {
    let pages = crate::reference::reference();
    let mut changed = Vec::new();
    let generated: BTreeSet<&str> = pages.iter().map(|p| p.path.as_str()).collect();
    for page in &pages {
        let path = root.join(&page.path);
        if std::fs::read(&path).ok().as_deref() == Some(page.contents.as_slice()) {
            continue;
        }
        changed.push(page.path.clone());
        if !check {
            routeval_bench_data::download::write_atomic(&path, &page.contents)
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    for (dir, ext) in OWNED {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .flatten()
            .filter(|e| e.path().is_file())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| Path::new(n).extension().is_some_and(|x| x == ext))
            .collect();
        names.sort();
        for name in names {
            let rel = format!("{dir}/{name}");
            if generated.contains(rel.as_str()) {
                continue;
            }
            changed.push(format!("{rel} (no longer generated)"));
            if !check {
                std::fs::remove_file(root.join(&rel)).map_err(|e| format!("{rel}: {e}"))?;
            }
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
    }

    #[test]
    fn cli_reference_is_current() {
        let stale = run(root(), true).unwrap();
        assert!(
            stale.is_empty(),
            "the committed CLI reference differs from what the code generates: {stale:?}; \
             run `cargo xtask docs`"
        );
    }

    #[test]
    fn every_subcommand_has_a_page_and_a_man_page() {
        let pages = crate::reference::reference();
        let paths: Vec<&str> = pages.iter().map(|p| p.path.as_str()).collect();
        for sub in routeval_cli::command().get_subcommands() {
            let stem = format!("routeval-{}", sub.get_name());
            if sub.get_name() == "help" {
                continue;
            }
            assert!(
                paths.contains(&format!("docs/cli/{stem}.md").as_str()),
                "{stem}"
            );
            assert!(
                paths.contains(&format!("docs/cli/man/{stem}.1").as_str()),
                "{stem}"
            );
        }
        assert!(
            paths.contains(&"docs/cli/routeval-crb-eval.md"),
            "nested subcommands"
        );
        let trec = pages
            .iter()
            .find(|p| p.path == "docs/cli/routeval-trec.md")
            .unwrap();
        let text = String::from_utf8(trec.contents.clone()).unwrap();
        assert!(text.contains("Usage: routeval trec"), "{text}");
    }

    #[test]
    fn a_stale_page_is_reported_and_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let stale = run(dir.path(), true).unwrap();
        assert!(
            stale.iter().any(|s| s == "docs/cli/routeval.md"),
            "{stale:?}"
        );
        assert!(
            !dir.path().join("docs/cli/routeval.md").exists(),
            "--check writes nothing"
        );
        std::fs::create_dir_all(dir.path().join("docs/cli")).unwrap();
        std::fs::write(dir.path().join("docs/cli/routeval-gone.md"), "old").unwrap();
        assert!(!run(dir.path(), false).unwrap().is_empty());
        assert!(
            run(dir.path(), true).unwrap().is_empty(),
            "written: current"
        );
        assert!(!dir.path().join("docs/cli/routeval-gone.md").exists());
        let page = dir.path().join("docs/cli/routeval-trec.md");
        std::fs::write(&page, "edited by hand").unwrap();
        assert_eq!(
            run(dir.path(), true).unwrap(),
            ["docs/cli/routeval-trec.md"]
        );
    }
}
