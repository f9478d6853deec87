//! The public CommonRouterBench bank fetch (`crb::public`) against a mock server on 127.0.0.1
//! (nothing leaves the machine): success and cache hit, 404, truncated body then resume, bad
//! hash (the download is deleted, nothing installed), unpinned files (installed, hashes
//! reported), `--from DIR`; and the shared manifest is the pinned upstream file.

use routeval_bench_data::crb::public::*;
use routeval_bench_data::download::{Downloader, part_path};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

#[derive(Clone)]
enum Route {
    File(Vec<u8>),
    /// Announce the full length, send only this many bytes, close.
    Truncate(Vec<u8>, usize),
}

type Log = Arc<Mutex<Vec<(String, Option<u64>)>>>;

/// A one-thread HTTP/1.1 server: `routes` (path → route), 404 otherwise; honours `Range`.
fn mock(routes: Vec<(String, Route)>) -> (String, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let log2 = log.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
            let mut range = None;
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).is_err() || h == "\r\n" || h.is_empty() {
                    break;
                }
                if let Some(v) = h.to_ascii_lowercase().strip_prefix("range: bytes=") {
                    range = v.trim().trim_end_matches('-').parse().ok();
                }
            }
            log2.lock().unwrap().push((path.clone(), range));
            let route = routes
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, r)| r.clone());
            let resp = match route {
                None => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_vec(),
                Some(Route::File(body)) => {
                    let start = range.unwrap_or(0) as usize;
                    let (status, part) = if start > 0 {
                        ("206 Partial Content", &body[start.min(body.len())..])
                    } else {
                        ("200 OK", &body[..])
                    };
                    let mut r = format!(
                        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        part.len()
                    )
                    .into_bytes();
                    r.extend_from_slice(part);
                    r
                }
                Some(Route::Truncate(body, send)) => {
                    let mut r = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    )
                    .into_bytes();
                    r.extend_from_slice(&body[..send]);
                    r
                }
            };
            let _ = stream.write_all(&resp);
            let _ = stream.flush();
        }
    });
    (base, log)
}

fn bank_bytes() -> Vec<u8> {
    let mut s = String::new();
    for i in 0..400 {
        s.push_str(&format!(
            "{{\"id\": \"bfcl_{i}\", \"benchmark\": \"bfcl\", \"step_index\": 1, \"messages\": [{{\"role\": \"user\", \"content\": \"question {i}\"}}], \"target_tier\": \"low\", \"target_tier_id\": 0}}\n"
        ));
    }
    s.into_bytes()
}

const MANIFEST: &[u8] = b"{\"sources\": {\"bfcl\": {\"line_count\": 400}}}\n";

/// A registry pinning `bank` and [`MANIFEST`] by their hashes.
fn pinned_registry(bank: &[u8]) -> Registry {
    registry(Some(&FileHashes::of(bank)), Some(&FileHashes::of(MANIFEST)))
}

/// A registry pinning `bank` and `manifest` by the given hashes (`None` = unverified).
fn registry(bank: Option<&FileHashes>, manifest: Option<&FileHashes>) -> Registry {
    let entry = |role: &str, name: &str, h: Option<&FileHashes>| {
        serde_json::json!({
            "role": role, "name": name, "path": format!("data/{name}"),
            "urls": ["https://example.invalid/never-used"],
            "git_blob_sha1": h.map(|h| h.git_blob_sha1.clone()),
            "sha256": h.map_or("unverified".to_string(), |h| h.sha256.clone()),
            "blake3": h.map_or("unverified".to_string(), |h| h.blake3.clone()),
            "bytes": h.map(|h| h.bytes),
        })
    };
    let v = serde_json::json!({
        "schema": 1, "name": "commonrouterbench", "repo": "test/bank",
        "commit": "0123456789abcdef0123456789abcdef01234567", "license": "Apache-2.0",
        "dir": "test-bank",
        "files": [entry("bank", "question_bank.jsonl", bank), entry("manifest", "manifest.json", manifest)],
    });
    Registry::from_json(&v.to_string()).unwrap()
}

fn routes(bank: Route) -> Vec<(String, Route)> {
    vec![
        ("/data/question_bank.jsonl".into(), bank),
        ("/data/manifest.json".into(), Route::File(MANIFEST.to_vec())),
    ]
}

fn fetch_from(reg: &Registry, dir: &Path, base: &str) -> FetchOutcome {
    fetch(
        reg,
        dir,
        &Source::Urls(Some(base.to_string())),
        &Downloader::default(),
    )
    .unwrap()
}

#[test]
fn success_installs_verified_files_then_a_second_fetch_is_a_cache_hit() {
    let bank = bank_bytes();
    let reg = pinned_registry(&bank);
    let (base, log) = mock(routes(Route::File(bank.clone())));
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("crb/test-bank");
    let out = fetch_from(&reg, &dir, &base);
    let installed = out.installed.expect("installed");
    assert!(installed.verified());
    assert_eq!(std::fs::read(&installed.bank).unwrap(), bank);
    assert_eq!(std::fs::read(&installed.manifest).unwrap(), MANIFEST);
    assert!(check(&installed).is_empty());
    assert_eq!(locate(&reg, &dir).unwrap().unwrap(), installed);
    assert_eq!(log.lock().unwrap().len(), 2);
    // Again: nothing is requested.
    let again = fetch_from(&reg, &dir, &base);
    assert!(again.files.iter().all(|f| f.cached));
    assert_eq!(log.lock().unwrap().len(), 2);
    // One changed byte: check names the file.
    let mut b = bank.clone();
    b[5] ^= 1;
    std::fs::write(&installed.bank, b).unwrap();
    let problems = check(&installed);
    assert_eq!(problems.len(), 1);
    assert!(problems[0].problem.contains("blake3"));
}

#[test]
fn not_found_installs_nothing() {
    let reg = registry(None, None);
    let (base, _) = mock(vec![]);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("b");
    let out = fetch_from(&reg, &dir, &base);
    assert!(out.installed.is_none());
    for f in &out.files {
        let e = f.result.as_ref().unwrap_err().to_string();
        assert!(e.contains("404"), "{e}");
        assert!(!f.network_failed);
    }
    assert!(!dir.join("question_bank.jsonl").exists());
    assert!(!dir.join(RECORD).exists());
    assert!(locate(&reg, &dir).unwrap().is_none());
}

#[test]
fn truncated_body_keeps_a_part_file_and_the_next_fetch_resumes() {
    let bank = bank_bytes();
    let reg = pinned_registry(&bank);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("b");
    let (base, _) = mock(routes(Route::Truncate(bank.clone(), 9_000)));
    let out = fetch_from(&reg, &dir, &base);
    assert!(out.installed.is_none());
    let e = out.files[0].result.as_ref().unwrap_err().to_string();
    assert!(e.contains("truncated") || e.contains(&base), "{e}");
    assert!(
        !dir.join("question_bank.jsonl").exists(),
        "no half-written file"
    );
    let part = part_path(&dir.join(".download/question_bank.jsonl"));
    let have = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
    assert!(have > 0 && have <= 9_000, "{have}");
    // The manifest did arrive; the bank resumes from the part file.
    let (base2, log2) = mock(routes(Route::File(bank.clone())));
    let out = fetch_from(&reg, &dir, &base2);
    let installed = out.installed.expect("installed after resume");
    assert_eq!(std::fs::read(&installed.bank).unwrap(), bank);
    let log = log2.lock().unwrap();
    assert!(
        log.iter()
            .any(|(p, r)| p == "/data/question_bank.jsonl" && *r == Some(have)),
        "{log:?}"
    );
    assert!(!part.exists());
}

#[test]
fn bad_hash_deletes_the_download_and_installs_nothing() {
    let bank = bank_bytes();
    // Pinned by git blob id only (as the real registry pins the public bank).
    let mut pinned = FileHashes::of(&bank);
    pinned.sha256 = "unverified".into();
    pinned.blake3 = "unverified".into();
    let reg = registry(Some(&pinned), Some(&FileHashes::of(MANIFEST)));
    let mut wrong = bank.clone();
    wrong[100] ^= 1;
    let (base, _) = mock(routes(Route::File(wrong)));
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("b");
    let out = fetch_from(&reg, &dir, &base);
    assert!(out.installed.is_none());
    let e = out.files[0].result.as_ref().unwrap_err().to_string();
    assert!(e.contains("git blob sha1 mismatch"), "{e}");
    assert!(!dir.join("question_bank.jsonl").exists());
    assert!(!dir.join(".download/question_bank.jsonl").exists());
    assert!(!part_path(&dir.join(".download/question_bank.jsonl")).exists());
    // A blake3-pinned file is refused by the downloader itself.
    let reg = pinned_registry(&bank);
    let mut wrong = bank.clone();
    wrong[7] ^= 1;
    let (base, _) = mock(routes(Route::File(wrong)));
    let out = fetch_from(&reg, &dir, &base);
    let e = out.files[0].result.as_ref().unwrap_err().to_string();
    assert!(e.contains("blake3 mismatch"), "{e}");
    assert!(!dir.join("question_bank.jsonl").exists());
}

#[test]
fn unpinned_files_install_unverified_with_the_hashes_seen() {
    let bank = bank_bytes();
    let reg = registry(None, None);
    let (base, _) = mock(routes(Route::File(bank.clone())));
    let tmp = tempfile::tempdir().unwrap();
    let out = fetch_from(&reg, &tmp.path().join("b"), &base);
    let installed = out.installed.unwrap();
    assert!(!installed.verified());
    let f = out.files[0].result.as_ref().unwrap();
    assert_eq!(f.hashes, FileHashes::of(&bank));
    assert!(f.remark.contains("no hash"), "{}", f.remark);
    assert!(installed.describe().contains("not verified"));
}

#[test]
fn from_dir_accepts_a_checkout_layout_and_marks_a_different_bank_unverified() {
    let bank = bank_bytes();
    let reg = registry(
        Some(&FileHashes::of(b"the real bank\n")),
        Some(&FileHashes::of(MANIFEST)),
    );
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("checkout");
    std::fs::create_dir_all(src.join("data")).unwrap();
    std::fs::write(src.join("data/question_bank.jsonl"), &bank).unwrap();
    std::fs::write(src.join("data/manifest.json"), MANIFEST).unwrap();
    let dir = tmp.path().join("b");
    let out = fetch(
        &reg,
        &dir,
        &Source::Dir(src.clone()),
        &Downloader::default(),
    )
    .unwrap();
    let installed = out.installed.unwrap();
    let files = &installed.record.files;
    assert!(!files[0].verified && files[0].remark.contains("not the pinned upstream file"));
    assert!(files[1].verified);
    assert_eq!(std::fs::read(&installed.bank).unwrap(), bank);
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn shared_manifest_is_the_pinned_upstream_file() {
    let Some(sh) =
        routeval_core::fixtures::shared_dir("shared_manifest_is_the_pinned_upstream_file")
    else {
        return;
    };
    let bytes = std::fs::read(sh.join("thirdparty/crb/commonrouterbench/manifest.json"))
        .expect("shared CRB manifest");
    let reg = Registry::load().unwrap();
    assert_eq!(
        reg.file(FileRole::Manifest).verify(&FileHashes::of(&bytes)),
        Verdict::Verified
    );
}

#[test]
fn a_fifo_where_the_bank_goes_is_refused_before_it_is_downloaded() {
    let bank = bank_bytes();
    let reg = pinned_registry(&bank);
    let (base, log) = mock(routes(Route::File(bank)));
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("b");
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("question_bank.jsonl");
    routeval_test_support::fifo::mkfifo(&fifo);
    let out = fetch_from(&reg, &dir, &base);
    assert!(out.installed.is_none());
    let bank_file = out
        .files
        .iter()
        .find(|f| f.name == "question_bank.jsonl")
        .unwrap();
    let e = bank_file.result.as_ref().unwrap_err().to_string();
    assert!(e.contains("FIFO"), "{e}");
    assert!(routeval_test_support::fifo::is_fifo(&fifo));
    // The bank was never requested (the manifest may have been).
    let asked: Vec<String> = log.lock().unwrap().iter().map(|l| l.0.clone()).collect();
    assert!(
        !asked.iter().any(|p| p.ends_with("question_bank.jsonl")),
        "{asked:?}"
    );
}
