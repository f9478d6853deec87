//! The downloader against hostile servers on 127.0.0.1 (issue 24): a server that accepts and
//! never answers, one that sends headers then nothing, one that sends 1 byte every 0.1 s, an
//! endless body, an announced length over the cap, a `.part` already over the cap, a closed
//! port; and CRB's multi-URL error listing every URL. Each server stops by itself (bounded
//! sleeps and byte counts); timeouts are small so the suite stays fast.

use routeval_bench_data::crb::public::{CrbDataError, Registry, Source, fetch};
use routeval_bench_data::download::{DownloadError, Downloader, part_path, write_atomic};
use routeval_bench_data::net::{NetKind, NetOptions};
use routeval_test_support::fifo::{is_fifo, mkfifo};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// How a hostile server behaves once the request is read.
#[derive(Clone, Copy)]
enum Behaviour {
    /// Send nothing; hold the connection for 5 s.
    Silent,
    /// Send a 200 with `Content-Length: 1000`, then nothing for 5 s.
    HeadersThenNothing,
    /// Send a 200 with `Content-Length: 1000`, then 1 byte every 0.1 s (at most 100).
    Trickle,
    /// Send a 200 without a length, then 64 KiB chunks until the client goes (at most 256 MiB).
    Endless,
    /// Announce `Content-Length: 10000000000` and send 1 KiB.
    HugeLength,
    /// Serve 1000 bytes of `b'x'` (honouring no Range), recording whether a Range came.
    Small,
}

/// Read the request head; `true` when it asked for a `Range`.
fn read_request(stream: &TcpStream) -> bool {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut range = false;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            return range;
        }
        range |= h.to_ascii_lowercase().starts_with("range:");
    }
}

/// A server answering `connections` connections with `b`; the base URL and a log of whether
/// each request carried a `Range` header.
fn server(b: Behaviour, connections: usize) -> (String, std::sync::mpsc::Receiver<bool>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(connections) {
            let Ok(mut s) = stream else { continue };
            let tx = tx.clone();
            std::thread::spawn(move || {
                let _ = tx.send(read_request(&s));
                let ok = "HTTP/1.1 200 OK\r\nConnection: close\r\n";
                match b {
                    Behaviour::Silent => std::thread::sleep(Duration::from_secs(5)),
                    Behaviour::HeadersThenNothing => {
                        let _ = write!(s, "{ok}Content-Length: 1000\r\n\r\n");
                        let _ = s.flush();
                        std::thread::sleep(Duration::from_secs(5));
                    }
                    Behaviour::Trickle => {
                        let _ = write!(s, "{ok}Content-Length: 1000\r\n\r\n");
                        for _ in 0..100 {
                            if s.write_all(b"x").and_then(|()| s.flush()).is_err() {
                                break;
                            }
                            std::thread::sleep(Duration::from_millis(100));
                        }
                    }
                    Behaviour::Endless => {
                        let _ = write!(s, "{ok}\r\n");
                        let chunk = vec![b'x'; 64 << 10];
                        for _ in 0..4096 {
                            if s.write_all(&chunk).is_err() {
                                break;
                            }
                        }
                    }
                    Behaviour::HugeLength => {
                        let _ = write!(s, "{ok}Content-Length: 10000000000\r\n\r\n");
                        let _ = s.write_all(&[b'x'; 1024]);
                        std::thread::sleep(Duration::from_millis(500));
                    }
                    Behaviour::Small => {
                        let _ = write!(s, "{ok}Content-Length: 1000\r\n\r\n");
                        let _ = s.write_all(&[b'x'; 1000]);
                    }
                }
            });
        }
    });
    (base, rx)
}

/// Small timeouts for tests.
fn quick(deadline: Option<f64>) -> NetOptions {
    NetOptions {
        connect: Duration::from_millis(500),
        read: Duration::from_millis(300),
        deadline: deadline.map(Duration::from_secs_f64),
    }
}

fn network_kind(e: &DownloadError) -> NetKind {
    match e {
        DownloadError::Network { kind, .. } => *kind,
        other => panic!("expected a network error, got {other:?}"),
    }
}

#[test]
fn a_server_that_never_answers_times_out() {
    let (base, _) = server(Behaviour::Silent, 1);
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let e = Downloader::default()
        .with_net(quick(None))
        .fetch(&format!("{base}/f"), &dir.path().join("f"), None)
        .unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert_eq!(network_kind(&e), NetKind::Timeout, "{e}");
    assert!(e.to_string().contains("--read-timeout"), "{e}");
    assert!(!dir.path().join("f").exists());
}

#[test]
fn headers_then_nothing_times_out() {
    let (base, _) = server(Behaviour::HeadersThenNothing, 1);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("f");
    let t = Instant::now();
    let e = Downloader::default()
        .with_net(quick(None))
        .fetch(&format!("{base}/f"), &dest, None)
        .unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert_eq!(network_kind(&e), NetKind::Timeout, "{e}");
    assert!(
        e.to_string().contains("no bytes from the server for 0.3 s"),
        "{e}"
    );
    assert!(!dest.exists());
}

#[test]
fn a_trickle_meets_the_overall_deadline() {
    // 1 byte every 0.1 s never trips the 0.3 s read timeout; the deadline stops it.
    let (base, _) = server(Behaviour::Trickle, 1);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("f");
    let t = Instant::now();
    let e = Downloader::default()
        .with_net(quick(Some(0.8)))
        .fetch_sized(&format!("{base}/f"), &dest, None, Some(1000))
        .unwrap_err();
    let took = t.elapsed();
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert!(took >= Duration::from_millis(700), "{took:?}");
    assert_eq!(network_kind(&e), NetKind::Timeout, "{e}");
    assert!(e.to_string().contains("deadline of 0.8 s"), "{e}");
    // Under the cap: kept for a resume.
    let kept = std::fs::metadata(part_path(&dest)).unwrap().len();
    assert!(kept > 0 && kept < 1000, "{kept}");
}

#[test]
fn an_endless_body_is_capped_at_the_pinned_size_and_deleted() {
    let (base, _) = server(Behaviour::Endless, 1);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("f");
    let e = Downloader::default()
        .with_net(quick(Some(20.0)))
        .fetch_sized(&format!("{base}/f"), &dest, None, Some(100_000))
        .unwrap_err();
    let DownloadError::TooLarge { cap, .. } = &e else {
        panic!("expected TooLarge, got {e:?}");
    };
    assert_eq!(*cap, 100_000);
    assert!(e.to_string().contains("pinned size of 100000 bytes"), "{e}");
    assert!(!part_path(&dest).exists(), "the partial file is deleted");
    assert!(!dest.exists());
}

#[test]
fn an_announced_length_over_the_cap_is_refused_at_once() {
    let (base, _) = server(Behaviour::HugeLength, 1);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("f");
    // Unpinned: the 4 GiB cap applies.
    let e = Downloader::default()
        .with_net(quick(None))
        .fetch(&format!("{base}/f"), &dest, None)
        .unwrap_err();
    assert!(matches!(e, DownloadError::TooLarge { .. }), "{e:?}");
    assert!(
        e.to_string()
            .contains("the announced length (10000000000 bytes) is larger than the cap for files of unpinned size of 4294967296 bytes"),
        "{e}"
    );
    assert!(!part_path(&dest).exists());
}

#[test]
fn a_part_file_over_the_cap_is_deleted_before_resuming() {
    let (base, ranges) = server(Behaviour::Small, 1);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("f");
    std::fs::write(part_path(&dest), vec![b'y'; 5000]).unwrap();
    let d = Downloader::default()
        .with_net(quick(None))
        .fetch_sized(&format!("{base}/f"), &dest, None, Some(1000))
        .unwrap();
    assert_eq!((d.bytes, d.resumed_from), (1000, 0));
    assert_eq!(std::fs::read(&dest).unwrap(), vec![b'x'; 1000]);
    assert!(
        !ranges.recv().unwrap(),
        "no Range asked for a part over the cap"
    );
}

#[test]
fn a_closed_port_is_unreachable() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let e = Downloader::default()
        .with_net(quick(None))
        .fetch(
            &format!("http://127.0.0.1:{port}/f"),
            &dir.path().join("f"),
            None,
        )
        .unwrap_err();
    assert_eq!(network_kind(&e), NetKind::Unreachable, "{e}");
}

#[test]
fn every_crb_url_tried_is_listed_with_its_failure() {
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (silent, _) = server(Behaviour::Silent, 1);
    // A server answering 404 to everything.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let notfound = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for s in l.incoming().take(1) {
            let Ok(mut s) = s else { continue };
            read_request(&s);
            let _ = s.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    let urls = [
        format!("http://127.0.0.1:{closed}/manifest.json"),
        format!("{notfound}/manifest.json"),
        format!("{silent}/manifest.json"),
    ];
    let mut reg: serde_json::Value =
        serde_json::from_str(routeval_bench_data::crb::public::SOURCES_JSON).unwrap();
    for f in reg["files"].as_array_mut().unwrap() {
        f["urls"] = serde_json::json!(urls);
    }
    let reg = Registry::from_json(&reg.to_string()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dl = Downloader::default().with_net(quick(None));
    // Only the manifest: the bank would try the same three URLs again.
    let mut one = reg.clone();
    one.files.retain(|f| f.name == "manifest.json");
    let out = fetch(&one, dir.path(), &Source::Urls(None), &dl).unwrap();
    let f = &out.files[0];
    let e = f.result.as_ref().unwrap_err();
    assert!(matches!(e, CrbDataError::AllUrlsFailed { .. }), "{e:?}");
    let text = e.to_string();
    assert!(
        text.starts_with("manifest.json: all 3 URLs failed: 1) "),
        "{text}"
    );
    let at = |u: &str| text.find(u).unwrap_or_else(|| panic!("{u} not in {text}"));
    assert!(
        at(&urls[0]) < at(&urls[1]) && at(&urls[1]) < at(&urls[2]),
        "{text}"
    );
    assert!(
        text.contains(&format!("2) {}: not found (HTTP 404)", urls[1])),
        "{text}"
    );
    assert!(
        text.contains(&format!("3) {}: no bytes from the server", urls[2])),
        "{text}"
    );
    // Two of the three were network failures, both recorded for the hints.
    let kinds: Vec<NetKind> = f.net_failures.iter().map(|n| n.kind).collect();
    assert_eq!(kinds, [NetKind::Unreachable, NetKind::Timeout]);
}

/// Fetch `dest` from a one-connection server and expect a refusal: returned within 3 s (no
/// hang on a FIFO) and before any request reached the server.
fn fetch_refused(dest: &std::path::Path) -> DownloadError {
    let (base, ranges) = server(Behaviour::Small, 1);
    let t = Instant::now();
    let e = Downloader::default()
        .with_net(quick(None))
        .fetch(&format!("{base}/f"), dest, None)
        .unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(3), "no hang: {e}");
    assert!(
        ranges.recv_timeout(Duration::from_millis(200)).is_err(),
        "refused before any request"
    );
    e
}

#[test]
fn a_fifo_where_a_download_or_its_part_goes_is_refused_before_any_transfer() {
    let dir = tempfile::tempdir().unwrap();
    for at_part in [false, true] {
        let dest = dir.path().join(format!("f{at_part}"));
        let fifo = if at_part {
            part_path(&dest)
        } else {
            dest.clone()
        };
        mkfifo(&fifo);
        let e = fetch_refused(&dest);
        assert!(matches!(e, DownloadError::Io { .. }), "{e:?}");
        assert!(e.to_string().contains("FIFO"), "{e}");
        assert!(is_fifo(&fifo), "the FIFO is left as it was");
    }
}

#[test]
fn a_part_that_is_a_symbolic_link_is_refused_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let precious = dir.path().join("precious");
    std::fs::write(&precious, b"keep").unwrap();
    // The FIFO last: followed, it would block (a mutant fails on the others first).
    for target in [&precious, &dir.path().join("absent"), &fifo] {
        let dest = dir.path().join("out.bin");
        let part = part_path(&dest);
        let _ = std::fs::remove_file(&part);
        std::os::unix::fs::symlink(target, &part).unwrap();
        let e = fetch_refused(&dest);
        assert!(
            e.to_string().contains("a symbolic link is in the way"),
            "{e}"
        );
        assert!(!dest.exists());
    }
    assert!(is_fifo(&fifo));
    assert_eq!(std::fs::read(&precious).unwrap(), b"keep");
    assert!(!dir.path().join("absent").exists());
}

#[test]
fn write_atomic_never_replaces_a_fifo_or_writes_through_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("manifest.json");
    mkfifo(&fifo);
    let e = write_atomic(&fifo, b"{}").unwrap_err();
    assert!(e.to_string().contains("FIFO"), "{e}");
    assert!(is_fifo(&fifo));
    // Nothing left behind but the FIFO.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1);

    // A symbolic link at the destination is replaced, its target untouched.
    let target = dir.path().join("target.txt");
    std::fs::write(&target, b"keep").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    write_atomic(&link, b"new").unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
    assert_eq!(std::fs::read(&link).unwrap(), b"new");

    // A directory in the way is named.
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let e = write_atomic(&sub, b"x").unwrap_err();
    assert!(e.to_string().contains("a directory is in the way"), "{e}");
}
