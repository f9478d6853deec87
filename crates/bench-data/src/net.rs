//! The network settings every HTTP client of routeval shares: timeouts, size caps and TLS
//! roots (issue 24).
//!
//! * [`NetOptions`]: connect timeout, read (idle) timeout and the overall deadline of one
//!   transfer, with defaults ([`DEFAULT_CONNECT`], [`DEFAULT_READ`], deadline =
//!   max([`DEADLINE_FLOOR`], expected bytes / [`MIN_RATE`])); [`DownloadArgs`] (feature `clap`)
//!   is the one definition of their flags, flattened into `routeval data fetch` and
//!   `cargo xtask build-data`.
//! * [`UNPINNED_CAP`]: the size cap of a download whose size no registry pins (a pinned size is
//!   its own cap).
//! * [`agent_config`] (feature `http`): the one constructor of a `ureq` agent configuration.
//!   TLS roots are the platform's ([`tls_roots`]: `rustls-native-certs`, so `SSL_CERT_FILE`
//!   and `SSL_CERT_DIR` replace the system store as they do for OpenSSL, pip and curl), or
//!   Mozilla's bundled roots (`webpki-roots`) when the platform has none.
//! * [`classify`] (feature `http`): a `ureq` error as a [`NetKind`] and one line; certificate
//!   failures name the roots in use and the variables that fix them.

use std::time::Duration;

/// Default connect timeout (TCP and TLS handshake): 10 s.
pub const DEFAULT_CONNECT: Duration = Duration::from_secs(10);
/// Default read timeout: the longest wait for any byte (headers or body), 30 s.
pub const DEFAULT_READ: Duration = Duration::from_secs(30);
/// The smallest default overall deadline of one transfer: 120 s.
pub const DEADLINE_FLOOR: Duration = Duration::from_secs(120);
/// The slowest average rate the default deadline allows: 50,000 bytes/s (a transfer of `n`
/// bytes gets max(120 s, n / 50,000 s)).
pub const MIN_RATE: u64 = 50_000;
/// The size cap of a download whose size is not pinned by a registry: 4 GiB (GQR-Bench's hub
/// files and the CommonRouterBench question bank have no recorded size; the largest pinned
/// file is a 90 MB wheel).
pub const UNPINNED_CAP: u64 = 4 << 30;
/// The largest value a timeout flag accepts: one day.
pub const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// Timeouts of one download (see the module doc for the defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetOptions {
    /// Connect timeout (DNS excluded; TCP connect and TLS handshake).
    pub connect: Duration,
    /// Read timeout: the longest wait for the next bytes of the headers or the body.
    pub read: Duration,
    /// The overall deadline of one transfer; `None`: scaled to the expected size
    /// ([`NetOptions::deadline_for`]).
    pub deadline: Option<Duration>,
}

impl Default for NetOptions {
    fn default() -> Self {
        NetOptions {
            connect: DEFAULT_CONNECT,
            read: DEFAULT_READ,
            deadline: None,
        }
    }
}

impl NetOptions {
    /// The overall deadline of a transfer of `bytes` bytes: the one set, else
    /// max([`DEADLINE_FLOOR`], `bytes` / [`MIN_RATE`] seconds).
    pub fn deadline_for(&self, bytes: u64) -> Duration {
        self.deadline
            .unwrap_or_else(|| DEADLINE_FLOOR.max(Duration::from_secs(bytes / MIN_RATE)))
    }
}

/// Parse a timeout flag's value: seconds, finite, > 0, at most [`MAX_TIMEOUT_SECS`]
/// (fractions allowed: `0.5`).
pub fn parse_secs(s: &str) -> Result<Duration, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !v.is_finite() || v <= 0.0 || v > MAX_TIMEOUT_SECS {
        return Err(format!(
            "{s:?}: seconds must be > 0 and at most {MAX_TIMEOUT_SECS} (one day)"
        ));
    }
    Ok(Duration::from_secs_f64(v))
}

/// The download flags of `routeval data fetch` and `cargo xtask build-data` (one definition,
/// flattened into both; feature `clap`).
#[cfg(feature = "clap")]
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DownloadArgs {
    /// Seconds to wait for a connection (TCP and TLS handshake) before trying the next source
    /// (default 10).
    #[arg(long, value_name = "SECS", value_parser = parse_secs, allow_hyphen_values = true)]
    pub connect_timeout: Option<Duration>,
    /// Seconds to wait for the next bytes of a reply (headers or body) before giving up on
    /// it (default 30): a server that stops sending is abandoned.
    #[arg(long, value_name = "SECS", value_parser = parse_secs, allow_hyphen_values = true)]
    pub read_timeout: Option<Duration>,
    /// Overall deadline of one file's transfer in seconds (default: max(120, expected bytes /
    /// 50,000), the expected size being the pinned one, else the announced length, else the
    /// 4 GiB cap of unpinned files).
    #[arg(long, value_name = "SECS", value_parser = parse_secs, allow_hyphen_values = true)]
    pub deadline: Option<Duration>,
}

#[cfg(feature = "clap")]
impl DownloadArgs {
    /// The options these flags give (defaults for flags not given).
    pub fn options(&self) -> NetOptions {
        let d = NetOptions::default();
        NetOptions {
            connect: self.connect_timeout.unwrap_or(d.connect),
            read: self.read_timeout.unwrap_or(d.read),
            deadline: self.deadline,
        }
    }
}

/// What kind of network failure a transfer met (for the hints of `routeval data fetch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetKind {
    /// The host is unknown or the connection was refused or failed: offline, firewalled, or
    /// the wrong host.
    Unreachable,
    /// A connect or read timeout, or the overall deadline.
    Timeout,
    /// The TLS handshake failed (an untrusted certificate: a TLS-intercepting proxy or a
    /// private CA; a name mismatch; an expired certificate).
    Tls,
    /// The connection broke off, or the server did not speak HTTP.
    Other,
}

/// Where the TLS roots of this process come from, and how many there are.
#[derive(Debug, Clone)]
pub struct TlsRoots {
    /// `SSL_CERT_FILE=...`, `SSL_CERT_DIR=...`, `the system store`, or `bundled Mozilla roots`.
    pub source: String,
    /// Certificates loaded (0 for the bundled roots, which ureq holds).
    pub count: usize,
    /// Problems met while loading them (an unreadable `SSL_CERT_FILE`, a bad PEM section).
    pub errors: Vec<String>,
}

impl TlsRoots {
    /// One phrase for messages: `SSL_CERT_FILE=/x (3 certificates)`.
    pub fn describe(&self) -> String {
        let mut s = if self.count > 0 {
            format!("{} ({} certificates)", self.source, self.count)
        } else {
            self.source.clone()
        };
        if let Some(e) = self.errors.first() {
            s.push_str(&format!("; while loading: {e}"));
        }
        s
    }
}

#[cfg(feature = "http")]
mod http {
    use super::{NetKind, TlsRoots};
    use std::sync::OnceLock;
    use ureq::tls::{Certificate, RootCerts, TlsConfig};

    /// The roots, loaded once per process (loading parses a ~200 KB bundle).
    fn loaded() -> &'static (TlsRoots, RootCerts) {
        static ROOTS: OnceLock<(TlsRoots, RootCerts)> = OnceLock::new();
        ROOTS.get_or_init(|| {
            let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
            let from_env: Vec<String> = ["SSL_CERT_FILE", "SSL_CERT_DIR"]
                .into_iter()
                .filter_map(|k| var(k).map(|v| format!("{k}={}", v.to_string_lossy())))
                .collect();
            let result = rustls_native_certs::load_native_certs();
            let errors: Vec<String> = result.errors.iter().map(|e| e.to_string()).collect();
            let source = if from_env.is_empty() {
                "the system store".to_string()
            } else {
                from_env.join(", ")
            };
            if result.certs.is_empty() && from_env.is_empty() {
                // No system store (a minimal container): Mozilla's roots, bundled with ureq.
                let info = TlsRoots {
                    source: "bundled Mozilla roots (no system CA store found)".into(),
                    count: 0,
                    errors,
                };
                return (info, RootCerts::WebPki);
            }
            let certs: Vec<Certificate<'static>> = result
                .certs
                .iter()
                .map(|c| Certificate::from_der(c.as_ref()).to_owned())
                .collect();
            let info = TlsRoots {
                source,
                count: certs.len(),
                errors,
            };
            (info, RootCerts::new_with_certs(&certs))
        })
    }

    /// The TLS roots in use (see the module doc).
    pub fn tls_roots() -> &'static TlsRoots {
        &loaded().0
    }

    /// The TLS configuration every client uses: rustls with [`tls_roots`].
    pub fn tls_config() -> TlsConfig {
        TlsConfig::builder().root_certs(loaded().1.clone()).build()
    }

    /// A `ureq` agent configuration with routeval's TLS roots and statuses returned as
    /// responses (not errors); callers add their timeouts and limits. The one constructor of
    /// every HTTP agent in the workspace (downloads, the LLM classifier, embeddings).
    pub fn agent_config() -> ureq::config::ConfigBuilder<ureq::typestate::AgentScope> {
        ureq::Agent::config_builder()
            .tls_config(tls_config())
            .http_status_as_error(false)
    }

    /// The advice of a certificate failure: the roots in use and the variables that fix it.
    pub fn tls_advice() -> String {
        format!(
            "the server's certificate is not trusted by the roots in use: {}; behind a TLS-intercepting proxy or with a private CA, set SSL_CERT_FILE to a PEM file holding its CA certificate (or SSL_CERT_DIR to a directory of them)",
            tls_roots().describe()
        )
    }

    /// Whether `text` (an error's display, possibly wrapped in an `io::Error`) is a TLS
    /// certificate failure.
    fn is_certificate_failure(text: &str) -> bool {
        [
            "invalid peer certificate",
            "UnknownIssuer",
            "certificate",
            "BadSignature",
        ]
        .iter()
        .any(|n| text.contains(n))
    }

    /// A `ureq` error as a kind and one line; a certificate failure gets [`tls_advice`].
    pub fn classify(e: &ureq::Error) -> (NetKind, String) {
        let text = e.to_string();
        let kind = match e {
            ureq::Error::Timeout(_) => NetKind::Timeout,
            ureq::Error::HostNotFound | ureq::Error::ConnectionFailed => NetKind::Unreachable,
            ureq::Error::Rustls(_) | ureq::Error::Tls(_) => NetKind::Tls,
            ureq::Error::Io(io) => return classify_io(io),
            _ if is_certificate_failure(&text) => NetKind::Tls,
            _ => NetKind::Other,
        };
        (kind, with_advice(kind, &text))
    }

    /// The `ureq` error inside an IO error from a body reader, if it is one.
    pub fn inner_ureq(io: &std::io::Error) -> Option<&ureq::Error> {
        io.get_ref().and_then(|x| x.downcast_ref::<ureq::Error>())
    }

    /// An IO error (e.g. from a body reader) as a kind and one line ([`classify`] of the
    /// `ureq` error it wraps, if any).
    pub fn classify_io(io: &std::io::Error) -> (NetKind, String) {
        use std::io::ErrorKind as K;
        if let Some(u) = inner_ureq(io) {
            return classify(u);
        }
        let text = io.to_string();
        let kind = match io.kind() {
            K::TimedOut | K::WouldBlock => NetKind::Timeout,
            K::ConnectionRefused
            | K::HostUnreachable
            | K::NetworkUnreachable
            | K::NetworkDown
            | K::AddrNotAvailable => NetKind::Unreachable,
            _ if is_certificate_failure(&text) => NetKind::Tls,
            _ => NetKind::Other,
        };
        (kind, with_advice(kind, &text))
    }

    /// `text`, with the certificate advice when `kind` is TLS.
    pub fn with_advice(kind: NetKind, text: &str) -> String {
        if kind == NetKind::Tls {
            format!("{text} ({})", tls_advice())
        } else {
            text.to_string()
        }
    }
}

#[cfg(feature = "http")]
pub use http::{
    agent_config, classify, classify_io, inner_ureq, tls_advice, tls_config, tls_roots, with_advice,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadline_scales_with_size_and_has_a_floor() {
        let o = NetOptions::default();
        assert_eq!(o.deadline_for(0), DEADLINE_FLOOR);
        assert_eq!(o.deadline_for(1_000_000), DEADLINE_FLOOR);
        assert_eq!(o.deadline_for(89_884_501), Duration::from_secs(1797));
        let set = NetOptions {
            deadline: Some(Duration::from_secs(5)),
            ..o
        };
        assert_eq!(set.deadline_for(u64::MAX), Duration::from_secs(5));
    }

    #[test]
    fn seconds_are_validated() {
        assert_eq!(parse_secs("0.5").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_secs("10").unwrap(), Duration::from_secs(10));
        for bad in ["0", "-1", "nan", "inf", "1e9", "x", ""] {
            assert!(parse_secs(bad).is_err(), "{bad}");
        }
    }
}
