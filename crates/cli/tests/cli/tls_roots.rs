//! TLS as users have it (issue 24): routeval's HTTP clients trust the platform's CA store and
//! `SSL_CERT_FILE` / `SSL_CERT_DIR` (as pip, npm and curl do behind a TLS-intercepting proxy),
//! not only Mozilla's bundled roots.
//!
//! Each test makes a CA and a server certificate for 127.0.0.1 (rcgen), runs an HTTPS server
//! on 127.0.0.1 (rustls) in a thread, and runs `routeval` as a child process with the
//! variables set or removed (the test process's own environment is never changed). Without
//! the variables the download fails with the certificate problem, the roots in use and the
//! variables that fix it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::Duration;

/// A CA (PEM) and a rustls server configuration whose certificate that CA signed for
/// `127.0.0.1` and `localhost`.
fn pki() -> (String, Arc<rustls::ServerConfig>) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "routeval test proxy CA");
    ca.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let mut leaf = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    leaf.subject_alt_names
        .push(SanType::IpAddress(std::net::IpAddr::from([127, 0, 0, 1])));
    let leaf_key = KeyPair::generate().unwrap();
    let leaf_cert = leaf.signed_by(&leaf_key, &issuer).unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(rustls::pki_types::PrivatePkcs8KeyDer::from(
        leaf_key.serialize_der(),
    ));
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![leaf_cert.der().clone()], key)
    .unwrap();
    (ca_cert.pem(), Arc::new(config))
}

/// An HTTPS server on 127.0.0.1 answering up to `connections` connections: GET of a path in
/// `files` gets its bytes, any other GET a 404, any POST `post_reply` (JSON). Stops by itself.
fn https_server(
    config: Arc<rustls::ServerConfig>,
    files: Vec<(String, Vec<u8>)>,
    post_reply: &'static str,
    connections: usize,
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!(
        "https://127.0.0.1:{}",
        listener.local_addr().unwrap().port()
    );
    std::thread::spawn(move || {
        for tcp in listener.incoming().take(connections) {
            let Ok(tcp) = tcp else { continue };
            let _ = tcp.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = tcp.set_write_timeout(Some(Duration::from_secs(5)));
            let Ok(conn) = rustls::ServerConnection::new(config.clone()) else {
                continue;
            };
            let mut tls = rustls::StreamOwned::new(conn, tcp);
            // The request head (a rejected certificate ends the handshake here).
            let mut head = Vec::new();
            let mut length = 0usize;
            {
                let mut r = BufReader::new(&mut tls);
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    if line == "\r\n" {
                        break;
                    }
                    head.push(line);
                }
                let mut body = vec![0u8; length.min(1 << 20)];
                let _ = r.read_exact(&mut body);
            }
            let Some(first) = head.first() else { continue };
            let mut parts = first.split_whitespace();
            let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            let (status, body): (&str, Vec<u8>) = if method == "POST" {
                ("200 OK", post_reply.as_bytes().to_vec())
            } else {
                match files.iter().find(|(p, _)| p == path) {
                    Some((_, b)) => ("200 OK", b.clone()),
                    None => ("404 Not Found", Vec::new()),
                }
            };
            let _ = write!(
                tls,
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = tls.write_all(&body);
            let _ = tls.flush();
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
    });
    base
}

/// `routeval ARGS` with an empty cache, the TLS variables removed, then `env` set.
fn routeval(args: &[&str], cache: &Path, env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_routeval"));
    c.args(args)
        .env("ROUTEVAL_CACHE_DIR", cache)
        .env_remove("SSL_CERT_FILE")
        .env_remove("SSL_CERT_DIR")
        .env_remove("ROUTEVAL_TOKENIZERS")
        .env_remove("GQR_CACHE_DIR")
        .env_remove("XDG_CACHE_HOME")
        .stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const BANK: &str = "{\"id\": \"r1\", \"benchmark\": \"bfcl\", \"target_tier_id\": 1, \"messages\": [{\"role\": \"user\", \"content\": \"hello\"}]}\n";

/// `data fetch crb` from the HTTPS server (`--allow-missing`: the files there are not the
/// pinned ones), with `env`.
fn fetch_crb(env: &[(&str, &Path)], tmp: &Path) -> (Output, std::path::PathBuf) {
    let (_, config) = PKI.with(|p| p.clone());
    let base = https_server(
        config,
        vec![
            ("/data/question_bank.jsonl".into(), BANK.as_bytes().to_vec()),
            ("/data/manifest.json".into(), b"{}".to_vec()),
        ],
        "{}",
        2,
    );
    let cache = tmp.join("cache");
    let o = routeval(
        &[
            "data",
            "fetch",
            "crb",
            "--crb-base-url",
            &base,
            "--allow-missing",
            "--connect-timeout",
            "5",
            "--read-timeout",
            "5",
        ],
        &cache,
        env,
    );
    (o, cache)
}

thread_local! {
    static PKI: (String, Arc<rustls::ServerConfig>) = pki();
}

/// Whether both files came through the TLS connection: their bytes reached the registry's
/// hash checks (our bank and manifest are not the pinned upstream files, so the checks then
/// fail: that they ran proves the transfer succeeded).
fn transferred(stderr: &str) -> bool {
    stderr.lines().any(|l| {
        l.starts_with("crb: MISSING question_bank.jsonl: https://127.0.0.1:")
            && l.ends_with(&format!(
                "git blob sha1 mismatch: expected 59405cf2e70369a0a0db8952e97d3d8ec9300a2c, got {}",
                git_blob(BANK.as_bytes())
            ))
    }) && stderr
        .lines()
        .any(|l| l.starts_with("crb: MISSING manifest.json: ") && l.contains("blake3 mismatch"))
}

/// The git blob id of `bytes`, by `git hash-object --stdin`.
fn git_blob(bytes: &[u8]) -> String {
    let mut c = Command::new("git")
        .args(["hash-object", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(bytes).unwrap();
    let o = c.wait_with_output().unwrap();
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

#[test]
fn ssl_cert_file_is_honoured() {
    let (ca_pem, _) = PKI.with(|p| p.clone());
    let tmp = tempfile::tempdir().unwrap();
    let ca = tmp.path().join("proxy-ca.pem");
    std::fs::write(&ca, &ca_pem).unwrap();
    let (o, _) = fetch_crb(&[("SSL_CERT_FILE", &ca)], tmp.path());
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(transferred(&e), "{e}");
    assert!(!e.contains("UnknownIssuer") && !e.contains("hint:"), "{e}");
}

#[test]
fn ssl_cert_dir_is_honoured() {
    let (ca_pem, _) = PKI.with(|p| p.clone());
    let tmp = tempfile::tempdir().unwrap();
    let certs = tmp.path().join("certs");
    std::fs::create_dir(&certs).unwrap();
    std::fs::write(certs.join("proxy-ca.pem"), &ca_pem).unwrap();
    let (o, _) = fetch_crb(&[("SSL_CERT_DIR", &certs)], tmp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(transferred(&stderr(&o)), "{}", stderr(&o));
}

#[test]
fn without_the_variables_the_certificate_problem_and_the_fix_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let (o, _) = fetch_crb(&[], tmp.path());
    let e = stderr(&o);
    assert!(!transferred(&e), "{e}");
    let line = e
        .lines()
        .find(|l| l.starts_with("crb: MISSING question_bank.jsonl: https://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no MISSING line: {e}"));
    for needle in [
        "invalid peer certificate: UnknownIssuer",
        "not trusted by the roots in use",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
    ] {
        assert!(line.contains(needle), "{needle:?} not in {line}");
    }
    // The hint is about the certificate, not an unreachable network, and names the
    // variables and the mirror flag of this source.
    let hint = e
        .lines()
        .find(|l| l.starts_with("hint: https://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no hint: {e}"));
    assert!(
        hint.contains("the TLS certificate is not trusted"),
        "{hint}"
    );
    assert!(hint.contains("set SSL_CERT_FILE"), "{hint}");
    assert!(hint.contains("--crb-base-url"), "{hint}");
    assert!(!e.contains("unreachable"), "{e}");
}

#[test]
fn an_unreadable_ssl_cert_file_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-ca.pem");
    let (o, _) = fetch_crb(&[("SSL_CERT_FILE", &missing)], tmp.path());
    let e = stderr(&o);
    assert!(
        e.contains(&format!("SSL_CERT_FILE={}", missing.display())),
        "the roots in use are named: {e}"
    );
    assert!(e.contains("while loading"), "{e}");
}

/// The LLM classifier's client (crates/io/src/http.rs) gets the same roots: with
/// `SSL_CERT_FILE` the handshake succeeds (whatever the reply), without it the error names the
/// certificate problem and the variables.
#[test]
fn the_llm_client_uses_the_same_roots() {
    let (ca_pem, config) = PKI.with(|p| p.clone());
    let tmp = tempfile::tempdir().unwrap();
    let bank = tmp.path().join("bank.jsonl");
    std::fs::write(&bank, BANK).unwrap();
    let ca = tmp.path().join("ca.pem");
    std::fs::write(&ca, &ca_pem).unwrap();
    let run = |env: &[(&str, &Path)]| {
        let base = https_server(config.clone(), Vec::new(), "{\"choices\": []}", 4);
        let o = routeval(
            &[
                "crb",
                "eval",
                "--predictor",
                "llm",
                "--json",
                "--tokenizer-setup",
                "all_cl100k",
                "--allow-errors",
                "--llm-max-attempts",
                "1",
                "--llm-model",
                "m",
                "--llm-url",
                &format!("{base}/v1/"),
                "--bank",
                bank.to_str().unwrap(),
            ],
            tmp.path(),
            env,
        );
        format!("{}\n{}", String::from_utf8_lossy(&o.stdout), stderr(&o))
    };
    let without = run(&[]);
    assert!(without.contains("UnknownIssuer"), "{without}");
    assert!(without.contains("SSL_CERT_FILE"), "{without}");
    let with = run(&[("SSL_CERT_FILE", &ca)]);
    assert!(!with.contains("UnknownIssuer"), "{with}");
    assert!(!with.contains("certificate"), "{with}");
}
