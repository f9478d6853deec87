//! The downloader against a mock hub on 127.0.0.1 (nothing leaves the machine): resolve URLs,
//! Range resume, 404, truncated body, checksum mismatch; no half-written cache file.

use routeval_bench_data::download::*;
use routeval_bench_data::gqr::build::{Fetch, load_dataset};
use routeval_bench_data::gqr::hub::HubFetch;
use routeval_bench_data::gqr::registry::Registry;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// What the mock serves for a path.
#[derive(Clone)]
enum Route {
    File(Vec<u8>),
    /// Announce the full length, send only this many bytes, close.
    Truncate(Vec<u8>, usize),
}

/// Requests seen: (path, Range start).
type Log = Arc<Mutex<Vec<(String, Option<String>)>>>;

struct Mock {
    base: String,
    log: Log,
}

fn mock(routes: Vec<(String, Route)>) -> Mock {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let log = Arc::new(Mutex::new(Vec::new()));
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
                    range = Some(v.trim().trim_end_matches('-').to_string());
                }
            }
            log2.lock().unwrap().push((path.clone(), range.clone()));
            let route = routes
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, r)| r.clone());
            let resp = match route {
                None => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_vec(),
                Some(Route::File(body)) => {
                    let start: usize = range.as_deref().and_then(|r| r.parse().ok()).unwrap_or(0);
                    let (status, part) = if start > 0 {
                        ("206 Partial Content", &body[start..])
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
    Mock { base, log }
}

fn body(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 % 251) as u8).collect()
}

#[test]
fn full_download_then_cache_hit() {
    let data = body(300_000);
    let m = mock(vec![("/f.bin".into(), Route::File(data.clone()))]);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("sub/f.bin");
    let want = blake3::hash(&data).to_hex().to_string();
    let d = Downloader::default()
        .fetch(&format!("{}/f.bin", m.base), &dest, Some(&want))
        .unwrap();
    assert_eq!(
        (d.bytes, d.cached, d.blake3.as_str()),
        (300_000, false, want.as_str())
    );
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    assert!(!part_path(&dest).exists());
    let d = Downloader::default()
        .fetch(&format!("{}/f.bin", m.base), &dest, Some(&want))
        .unwrap();
    assert!(d.cached);
    assert_eq!(
        m.log.lock().unwrap().len(),
        1,
        "a cache hit makes no request"
    );
}

#[test]
fn range_resume_from_part_file() {
    let data = body(100_000);
    let m = mock(vec![("/f.bin".into(), Route::File(data.clone()))]);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("f.bin");
    std::fs::write(part_path(&dest), &data[..40_000]).unwrap();
    let want = blake3::hash(&data).to_hex().to_string();
    let d = Downloader::default()
        .fetch(&format!("{}/f.bin", m.base), &dest, Some(&want))
        .unwrap();
    assert_eq!(d.resumed_from, 40_000);
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    assert_eq!(m.log.lock().unwrap()[0].1.as_deref(), Some("40000"));
}

#[test]
fn not_found_leaves_nothing() {
    let m = mock(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("f.bin");
    let e = Downloader::default()
        .fetch(&format!("{}/nope", m.base), &dest, None)
        .unwrap_err();
    assert!(matches!(e, DownloadError::NotFound { .. }), "{e}");
    assert!(e.to_string().contains("HTTP 404"));
    assert!(!dest.exists() && !part_path(&dest).exists());
}

#[test]
fn truncated_body_keeps_only_a_part_file_and_resumes() {
    let data = body(50_000);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("f.bin");
    let want = blake3::hash(&data).to_hex().to_string();
    let m = mock(vec![(
        "/f.bin".into(),
        Route::Truncate(data.clone(), 20_000),
    )]);
    let e = Downloader::default()
        .fetch(&format!("{}/f.bin", m.base), &dest, Some(&want))
        .unwrap_err();
    assert!(
        matches!(
            e,
            DownloadError::Truncated { .. } | DownloadError::Network { .. }
        ),
        "{e}"
    );
    assert!(!dest.exists(), "no half-written cache file");
    let partial = std::fs::metadata(part_path(&dest))
        .map(|m| m.len())
        .unwrap_or(0);
    assert!(partial <= 20_000);
    let m2 = mock(vec![("/f.bin".into(), Route::File(data.clone()))]);
    let d = Downloader::default()
        .fetch(&format!("{}/f.bin", m2.base), &dest, Some(&want))
        .unwrap();
    assert_eq!(d.resumed_from, partial);
    assert_eq!(std::fs::read(&dest).unwrap(), data);
}

#[test]
fn checksum_mismatch_deletes_the_download() {
    let data = body(10_000);
    let m = mock(vec![("/f.bin".into(), Route::File(data))]);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("f.bin");
    let bad = blake3::hash(b"something else").to_hex().to_string();
    let e = Downloader::default()
        .fetch(&format!("{}/f.bin", m.base), &dest, Some(&bad))
        .unwrap_err();
    assert!(matches!(e, DownloadError::ChecksumMismatch { .. }), "{e}");
    assert!(!dest.exists() && !part_path(&dest).exists());
}

#[test]
fn hub_fetch_uses_resolve_urls_and_the_cache_layout() {
    let reg = Registry::load().unwrap();
    let ds = reg.dataset("banking77").unwrap();
    let src = &ds.sources[0];
    let rev = src.revision.clone().unwrap();
    let jsonl = b"{\"text\": \"how do I top up my card today\", \"label\": 1}\n{\"text\": \"why was my transfer declined twice\", \"label\": 2}\n".to_vec();
    let path = format!("/datasets/mteb/banking77/resolve/{rev}/{}", src.files[0]);
    let m = mock(vec![(path.clone(), Route::File(jsonl.clone()))]);
    let dir = tempfile::tempdir().unwrap();
    let mut hub = HubFetch::new(dir.path().to_path_buf());
    hub.endpoint = Some(m.base.clone());
    hub.token = None;
    let set = load_dataset(&reg, ds, &mut hub).unwrap().unwrap();
    assert_eq!(set.texts.len(), 2);
    assert_eq!(m.log.lock().unwrap()[0].0, path);
    let cached = dir
        .path()
        .join("hub/mteb/banking77")
        .join(&rev)
        .join(&src.files[0]);
    assert_eq!(std::fs::read(&cached).unwrap(), jsonl);
    assert_eq!(set.source, format!("mteb/banking77@{rev}"));
    // A gated set without a token is skipped with a clear reason, before any request.
    let dk = reg.dataset("dkhate").unwrap();
    let before = m.log.lock().unwrap().len();
    assert!(hub.gated_unavailable(&dk.sources[0]).is_some());
    let u = load_dataset(&reg, dk, &mut hub).unwrap().unwrap_err();
    assert!(
        u.reason.contains("HF_TOKEN") && u.reason.contains("6 sets"),
        "{}",
        u.reason
    );
    assert_eq!(m.log.lock().unwrap().len(), before);
    // A 404 from the hub makes that dataset missing (an honest partial build), with a
    // reason naming the URL and the status.
    let fq = reg.dataset("financial_qa_10k").unwrap();
    let u = load_dataset(&reg, fq, &mut hub).unwrap().unwrap_err();
    assert_eq!(u.name, "financial_qa_10k");
    assert!(
        u.reason.starts_with("http://127.0.0.1:") && u.reason.contains("(HTTP 404)"),
        "{}",
        u.reason
    );
}
