//! The downloader against a mock hub on 127.0.0.1 (nothing leaves the machine): resolve URLs,
//! Range resume, 404, 401/403, 5xx, 416, a server that ignores `Range`, truncated body,
//! checksum mismatch; no half-written cache file. Each failure test pins the error variant.

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
    /// Answer every request with this status and an empty body.
    Status(u16),
    /// Serve the whole file with 200 even when a `Range` is asked for.
    IgnoreRange(Vec<u8>),
    /// 416 Range Not Satisfiable to any ranged request (the part file is already complete),
    /// the whole file with 200 otherwise.
    RangeNotSatisfiable(Vec<u8>),
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
                Some(Route::Status(code)) => format!(
                    "HTTP/1.1 {code} Status\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
                .into_bytes(),
                Some(Route::RangeNotSatisfiable(body)) if range.is_some() => format!(
                    "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .into_bytes(),
                Some(Route::IgnoreRange(body) | Route::RangeNotSatisfiable(body)) => {
                    let mut r = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    )
                    .into_bytes();
                    r.extend_from_slice(&body);
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
    let DownloadError::Truncated { got, expected, .. } = e else {
        panic!("expected Truncated, got {e:?}");
    };
    assert!(!dest.exists(), "no half-written cache file");
    let partial = std::fs::metadata(part_path(&dest))
        .expect("the partial bytes are kept in the .part file")
        .len();
    assert!(partial > 0 && partial <= 20_000, "{partial}");
    assert_eq!((got, expected), (partial, 50_000));
    assert_eq!(
        std::fs::read(part_path(&dest)).unwrap(),
        data[..partial as usize]
    );
    let m2 = mock(vec![("/f.bin".into(), Route::File(data.clone()))]);
    let d = Downloader::default()
        .fetch(&format!("{}/f.bin", m2.base), &dest, Some(&want))
        .unwrap();
    assert_eq!(d.resumed_from, partial);
    assert_eq!(std::fs::read(&dest).unwrap(), data);
}

/// Requests that reached the mock, in order.
fn paths(m: &Mock) -> Vec<(String, Option<String>)> {
    m.log.lock().unwrap().clone()
}

#[test]
fn unauthorized_401_and_403_are_unauthorized_and_leave_nothing() {
    for code in [401u16, 403] {
        let m = mock(vec![("/gated.bin".into(), Route::Status(code))]);
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("gated.bin");
        let e = Downloader::new(Some("hf_secret_token_value".into()))
            .fetch(&format!("{}/gated.bin", m.base), &dest, None)
            .unwrap_err();
        assert!(
            matches!(e, DownloadError::Unauthorized { status, .. } if status == code),
            "{code}: {e:?}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains(&format!("HTTP {code}")) && msg.contains("HF_TOKEN"),
            "{msg}"
        );
        assert!(
            !msg.contains("hf_secret_token_value"),
            "the token is never printed: {msg}"
        );
        assert!(!dest.exists() && !part_path(&dest).exists());
        assert_eq!(paths(&m).len(), 1, "no retry on {code}");
    }
}

#[test]
fn server_errors_are_status_errors_and_keep_a_part_file_for_later() {
    for code in [500u16, 502, 503] {
        let m = mock(vec![("/f.bin".into(), Route::Status(code))]);
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("f.bin");
        // Nothing yet: the failure leaves nothing.
        let e = Downloader::default()
            .fetch(&format!("{}/f.bin", m.base), &dest, None)
            .unwrap_err();
        assert!(
            matches!(e, DownloadError::Status { status, .. } if status == code),
            "{code}: {e:?}"
        );
        assert!(e.to_string().ends_with(&format!("HTTP {code}")), "{e}");
        assert!(!dest.exists() && !part_path(&dest).exists());
        // An earlier partial download survives a server error untouched.
        std::fs::write(part_path(&dest), b"partial bytes").unwrap();
        let e = Downloader::default()
            .fetch(&format!("{}/f.bin", m.base), &dest, None)
            .unwrap_err();
        assert!(matches!(e, DownloadError::Status { .. }), "{e:?}");
        assert_eq!(std::fs::read(part_path(&dest)).unwrap(), b"partial bytes");
        assert!(!dest.exists());
        assert_eq!(
            paths(&m)[1].1.as_deref(),
            Some("13"),
            "the retry asked for the rest"
        );
    }
}

#[test]
fn range_not_satisfiable_416_means_the_part_file_is_complete() {
    let data = body(30_000);
    let want = blake3::hash(&data).to_hex().to_string();
    let m = mock(vec![(
        "/f.bin".into(),
        Route::RangeNotSatisfiable(data.clone()),
    )]);
    // A complete part file: 416, then verified and moved into place.
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("f.bin");
    std::fs::write(part_path(&dest), &data).unwrap();
    let d = Downloader::default()
        .fetch(&format!("{}/f.bin", m.base), &dest, Some(&want))
        .unwrap();
    assert_eq!((d.resumed_from, d.bytes, d.cached), (30_000, 30_000, false));
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    assert!(!part_path(&dest).exists());
    // A wrong "complete" part file: the checksum catches it and the part is deleted.
    let dest2 = dir.path().join("g.bin");
    std::fs::write(part_path(&dest2), vec![0u8; 30_000]).unwrap();
    let e = Downloader::default()
        .fetch(&format!("{}/f.bin", m.base), &dest2, Some(&want))
        .unwrap_err();
    assert!(matches!(e, DownloadError::ChecksumMismatch { .. }), "{e:?}");
    assert!(!dest2.exists() && !part_path(&dest2).exists());
    // 416 without a part file (no Range sent) is not success.
    let m416 = mock(vec![("/h.bin".into(), Route::Status(416))]);
    let dest3 = dir.path().join("h.bin");
    let e = Downloader::default()
        .fetch(&format!("{}/h.bin", m416.base), &dest3, None)
        .unwrap_err();
    assert!(
        matches!(e, DownloadError::Status { status: 416, .. }),
        "{e:?}"
    );
    assert!(!dest3.exists() && !part_path(&dest3).exists());
}

#[test]
fn server_ignoring_range_restarts_from_zero() {
    let data = body(60_000);
    let want = blake3::hash(&data).to_hex().to_string();
    let m = mock(vec![("/f.bin".into(), Route::IgnoreRange(data.clone()))]);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("f.bin");
    // A part file whose bytes would corrupt the result if the 200 body were appended.
    std::fs::write(part_path(&dest), vec![0xAAu8; 25_000]).unwrap();
    let d = Downloader::default()
        .fetch(&format!("{}/f.bin", m.base), &dest, Some(&want))
        .unwrap();
    assert_eq!(
        paths(&m)[0].1.as_deref(),
        Some("25000"),
        "a Range was asked for"
    );
    assert_eq!((d.resumed_from, d.bytes), (0, 60_000));
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    assert!(!part_path(&dest).exists());
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
