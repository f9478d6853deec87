//! The one cache-directory rule of routeval (CLI, libraries and `cargo xtask`).
//!
//! Where downloaded and built data lives, most specific setting first:
//!
//! | data | 1st | 2nd | 3rd | 4th |
//! |---|---|---|---|---|
//! | routeval's cache root | `$ROUTEVAL_CACHE_DIR` | `$XDG_CACHE_HOME/routeval` | `~/.cache/routeval` | — |
//! | GQR-Bench (hub files, `build/`) | `$GQR_CACHE_DIR` | `$ROUTEVAL_CACHE_DIR/gqr` | `$XDG_CACHE_HOME/gqr` | `~/.cache/gqr` |
//! | tokenizer files | `$ROUTEVAL_TOKENIZERS` | `<root>/tokenizers` | | |
//! | CommonRouterBench public bank | `<root>/crb` | | | |
//!
//! `~/.cache/gqr` is upstream GQR-Bench's own default, so an existing upstream cache is
//! shared; once `ROUTEVAL_CACHE_DIR` is set, everything lives below it unless a more specific
//! variable says otherwise. Empty variables count as unset; a relative `XDG_CACHE_HOME` is
//! ignored, as the XDG Base Directory specification asks.
//!
//! The rule itself ([`CacheEnv::resolve`]) is a pure function of the variables' values;
//! only [`CacheEnv::from_process`] reads the environment, at the edge.

use std::ffi::OsString;
use std::path::PathBuf;

/// The environment values the rule reads (`None` = unset). Build it with
/// [`CacheEnv::from_process`] at the edge, or by hand in tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheEnv {
    /// `ROUTEVAL_CACHE_DIR`.
    pub routeval_cache_dir: Option<OsString>,
    /// `GQR_CACHE_DIR`.
    pub gqr_cache_dir: Option<OsString>,
    /// `ROUTEVAL_TOKENIZERS`.
    pub routeval_tokenizers: Option<OsString>,
    /// `XDG_CACHE_HOME`.
    pub xdg_cache_home: Option<OsString>,
    /// `HOME`.
    pub home: Option<OsString>,
}

/// Which rule chose a directory (shown by `routeval data status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `$ROUTEVAL_CACHE_DIR` (or a directory below it).
    RouteValCacheDir,
    /// `$GQR_CACHE_DIR`.
    GqrCacheDir,
    /// `$ROUTEVAL_TOKENIZERS`.
    RouteValTokenizers,
    /// `$XDG_CACHE_HOME/...`.
    XdgCacheHome,
    /// `~/.cache/...` (`$HOME`).
    Home,
}

impl Origin {
    /// The setting's name as the README's table writes it.
    pub fn describe(self) -> &'static str {
        match self {
            Origin::RouteValCacheDir => "$ROUTEVAL_CACHE_DIR",
            Origin::GqrCacheDir => "$GQR_CACHE_DIR",
            Origin::RouteValTokenizers => "$ROUTEVAL_TOKENIZERS",
            Origin::XdgCacheHome => "$XDG_CACHE_HOME",
            Origin::Home => "~/.cache",
        }
    }
}

/// A directory chosen by the rule, with the setting that chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheDir {
    /// The directory (it may not exist yet).
    pub path: PathBuf,
    /// Which setting chose it.
    pub origin: Origin,
}

/// Every cache directory routeval uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheDirs {
    /// routeval's cache root.
    pub root: CacheDir,
    /// GQR-Bench's cache (hub downloads in `hub/`, the build in `build/`).
    pub gqr: CacheDir,
    /// The tokenizer directory (`<name>/tokenizer.json`).
    pub tokenizers: CacheDir,
    /// The CommonRouterBench public bank directory.
    pub crb: CacheDir,
}

/// No rule applies: neither a variable nor `HOME` is set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no cache directory: HOME is not set; set ROUTEVAL_CACHE_DIR (or XDG_CACHE_HOME) to a directory"
)]
pub struct NoCacheDir;

fn set(v: &Option<OsString>) -> Option<PathBuf> {
    v.as_ref().filter(|v| !v.is_empty()).map(PathBuf::from)
}

impl CacheEnv {
    /// Read the five variables from the process environment (the edge).
    pub fn from_process() -> Self {
        let get = |k: &str| std::env::var_os(k);
        CacheEnv {
            routeval_cache_dir: get("ROUTEVAL_CACHE_DIR"),
            gqr_cache_dir: get("GQR_CACHE_DIR"),
            routeval_tokenizers: get("ROUTEVAL_TOKENIZERS"),
            xdg_cache_home: get("XDG_CACHE_HOME"),
            home: get("HOME"),
        }
    }

    /// The base of the default locations: `$XDG_CACHE_HOME` (absolute only), else `~/.cache`.
    fn base(&self) -> Result<CacheDir, NoCacheDir> {
        if let Some(x) = set(&self.xdg_cache_home).filter(|p| p.is_absolute()) {
            return Ok(CacheDir {
                path: x,
                origin: Origin::XdgCacheHome,
            });
        }
        match set(&self.home) {
            Some(h) => Ok(CacheDir {
                path: h.join(".cache"),
                origin: Origin::Home,
            }),
            None => Err(NoCacheDir),
        }
    }

    /// Apply the rule (see the module docs). Pure: reads only `self`.
    ///
    /// Errors with [`NoCacheDir`] only when a directory is needed that no variable names and
    /// `HOME` is unset.
    pub fn resolve(&self) -> Result<CacheDirs, NoCacheDir> {
        let root = match set(&self.routeval_cache_dir) {
            Some(p) => CacheDir {
                path: p,
                origin: Origin::RouteValCacheDir,
            },
            None => {
                let b = self.base()?;
                CacheDir {
                    path: b.path.join("routeval"),
                    origin: b.origin,
                }
            }
        };
        let gqr = if let Some(p) = set(&self.gqr_cache_dir) {
            CacheDir {
                path: p,
                origin: Origin::GqrCacheDir,
            }
        } else if root.origin == Origin::RouteValCacheDir {
            CacheDir {
                path: root.path.join("gqr"),
                origin: Origin::RouteValCacheDir,
            }
        } else {
            let b = self.base()?;
            CacheDir {
                path: b.path.join("gqr"),
                origin: b.origin,
            }
        };
        let tokenizers = match set(&self.routeval_tokenizers) {
            Some(p) => CacheDir {
                path: p,
                origin: Origin::RouteValTokenizers,
            },
            None => CacheDir {
                path: root.path.join("tokenizers"),
                origin: root.origin,
            },
        };
        let crb = CacheDir {
            path: root.path.join("crb"),
            origin: root.origin,
        };
        Ok(CacheDirs {
            root,
            gqr,
            tokenizers,
            crb,
        })
    }
}

impl CacheDirs {
    /// The rule applied to the process environment.
    pub fn from_process() -> Result<CacheDirs, NoCacheDir> {
        CacheEnv::from_process().resolve()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> CacheEnv {
        let mut e = CacheEnv::default();
        for (k, v) in pairs {
            let v = Some(OsString::from(v));
            match *k {
                "ROUTEVAL_CACHE_DIR" => e.routeval_cache_dir = v,
                "GQR_CACHE_DIR" => e.gqr_cache_dir = v,
                "ROUTEVAL_TOKENIZERS" => e.routeval_tokenizers = v,
                "XDG_CACHE_HOME" => e.xdg_cache_home = v,
                "HOME" => e.home = v,
                _ => panic!("{k}"),
            }
        }
        e
    }

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    #[test]
    fn rule_home_only() {
        let d = env(&[("HOME", "/h")]).resolve().unwrap();
        assert_eq!(d.root.path, p("/h/.cache/routeval"));
        assert_eq!(d.root.origin, Origin::Home);
        assert_eq!(d.gqr.path, p("/h/.cache/gqr"));
        assert_eq!(d.tokenizers.path, p("/h/.cache/routeval/tokenizers"));
        assert_eq!(d.crb.path, p("/h/.cache/routeval/crb"));
    }

    #[test]
    fn rule_xdg_cache_home_beats_home() {
        let d = env(&[("HOME", "/h"), ("XDG_CACHE_HOME", "/x")])
            .resolve()
            .unwrap();
        assert_eq!(d.root.path, p("/x/routeval"));
        assert_eq!(d.gqr.path, p("/x/gqr"));
        assert_eq!(d.gqr.origin, Origin::XdgCacheHome);
        assert_eq!(d.tokenizers.path, p("/x/routeval/tokenizers"));
        assert_eq!(d.crb.path, p("/x/routeval/crb"));
    }

    #[test]
    fn rule_relative_or_empty_xdg_is_ignored() {
        for x in ["rel/cache", ""] {
            let d = env(&[("HOME", "/h"), ("XDG_CACHE_HOME", x)])
                .resolve()
                .unwrap();
            assert_eq!(d.root.path, p("/h/.cache/routeval"), "{x:?}");
        }
    }

    #[test]
    fn rule_routeval_cache_dir_holds_everything() {
        let d = env(&[
            ("HOME", "/h"),
            ("XDG_CACHE_HOME", "/x"),
            ("ROUTEVAL_CACHE_DIR", "/r"),
        ])
        .resolve()
        .unwrap();
        assert_eq!(d.root.path, p("/r"));
        assert_eq!(d.gqr.path, p("/r/gqr"));
        assert_eq!(d.tokenizers.path, p("/r/tokenizers"));
        assert_eq!(d.crb.path, p("/r/crb"));
        for c in [&d.root, &d.gqr, &d.tokenizers, &d.crb] {
            assert_eq!(c.origin, Origin::RouteValCacheDir);
        }
    }

    #[test]
    fn rule_gqr_cache_dir_beats_routeval_cache_dir() {
        let d = env(&[("ROUTEVAL_CACHE_DIR", "/r"), ("GQR_CACHE_DIR", "/g")])
            .resolve()
            .unwrap();
        assert_eq!(d.gqr.path, p("/g"));
        assert_eq!(d.gqr.origin, Origin::GqrCacheDir);
        assert_eq!(d.root.path, p("/r"));
    }

    #[test]
    fn rule_routeval_tokenizers_beats_routeval_cache_dir() {
        let d = env(&[("ROUTEVAL_CACHE_DIR", "/r"), ("ROUTEVAL_TOKENIZERS", "/t")])
            .resolve()
            .unwrap();
        assert_eq!(d.tokenizers.path, p("/t"));
        assert_eq!(d.tokenizers.origin, Origin::RouteValTokenizers);
        assert_eq!(d.crb.path, p("/r/crb"));
    }

    #[test]
    fn rule_empty_variables_count_as_unset() {
        let d = env(&[
            ("HOME", "/h"),
            ("ROUTEVAL_CACHE_DIR", ""),
            ("GQR_CACHE_DIR", ""),
            ("ROUTEVAL_TOKENIZERS", ""),
        ])
        .resolve()
        .unwrap();
        assert_eq!(d.root.path, p("/h/.cache/routeval"));
        assert_eq!(d.gqr.path, p("/h/.cache/gqr"));
        assert_eq!(d.tokenizers.path, p("/h/.cache/routeval/tokenizers"));
    }

    #[test]
    fn rule_no_home_no_variable_is_an_error() {
        assert_eq!(CacheEnv::default().resolve(), Err(NoCacheDir));
        // Variables alone suffice.
        let d = env(&[("ROUTEVAL_CACHE_DIR", "/r")]).resolve().unwrap();
        assert_eq!(d.gqr.path, p("/r/gqr"));
    }
}
