//! Bank rows selected as `routeval crb eval` and `crb sweep` select them, shared with the
//! Python package (`routeval.crb.sweep`), in the reference's order of checks (spec §5): the
//! bank exists (checked by the caller, who knows whether it is a path), then `n`, then the
//! manifest's quotas, then the sample; then the benchmark filter, then a `where` predicate.
//!
//! Opening the bank and reading the manifest are the caller's (closures), so this module does
//! no IO of its own and the CLI keeps its compressed inputs and `-` for stdin.

use super::{
    BankReader, BankRow, Manifest, Quotas, SampleError, check_sample_size, filter_rows,
    published_manifest, read_bank, select_sample,
};
use serde_json::Value;
use std::io::BufRead;

/// A `where` predicate on a row's JSON value (`Err`: the query's error text).
pub type RowPredicate<'a> = &'a mut dyn FnMut(&Value) -> Result<bool, String>;

/// The selected rows.
#[derive(Debug, Clone)]
pub struct Selection {
    /// The rows, in the bank's order (full bank) or the reference's sample order.
    pub rows: Vec<BankRow>,
    /// `full_bank` or `proportional_sample`.
    pub sample_mode: &'static str,
    /// The per-benchmark quotas of a sample.
    pub quotas: Option<Quotas>,
}

/// What to select (the options of `crb eval` / `crb sweep`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SelectOptions<'a> {
    /// Sample this many rows proportionally to the manifest's line counts (`None`: all).
    pub n: Option<i64>,
    /// The sample's seed (Python `random.Random(seed)`).
    pub seed: i128,
    /// Keep only rows of these benchmarks (empty: all).
    pub benchmarks: &'a [String],
}

/// Select bank rows. `bank_name` names the bank in messages; `open_bank` opens it (called
/// once); `manifest` reads the manifest for `n` as `(bytes, name)` (`None`: the published
/// line counts); `keep` is the `where` predicate (its error text becomes
/// `BANK:LINE: --where: ...`); `note` receives the `crb eval: --where selected K of N rows`
/// line before an empty selection fails.
///
/// Errors are the CLI's messages: a bad `n`, a bad manifest, too few rows for a quota, an
/// unreadable or empty bank, no rows of the benchmarks, a `where` error, nothing selected.
pub fn select_bank_rows<R: BufRead>(
    bank_name: &str,
    open_bank: &mut dyn FnMut() -> Result<R, String>,
    manifest: &mut dyn FnMut() -> Result<Option<(Vec<u8>, String)>, String>,
    opts: SelectOptions<'_>,
    keep: Option<RowPredicate<'_>>,
    note: &mut dyn FnMut(String),
) -> Result<Selection, String> {
    let (rows, sample_mode, quotas) = match opts.n {
        None => (
            read_bank(open_bank()?, bank_name).map_err(|e| e.to_string())?,
            "full_bank",
            None,
        ),
        Some(n) => {
            check_sample_size(n).map_err(|e| format!("--n {n}: {e}"))?;
            let (m, manifest_name) = match manifest()? {
                Some((bytes, name)) => (
                    Manifest::from_slice(&bytes, &name).map_err(|e| e.to_string())?,
                    name,
                ),
                None => (published_manifest(), "published manifest".to_string()),
            };
            let (q, rows) =
                select_sample(BankReader::new(open_bank()?, bank_name), &m, n, opts.seed)
                    .map_err(|e| e.to_string())?
                    .map_err(|e| match e {
                        SampleError::NotEnoughRows { .. } => format!("{bank_name}: {e}"),
                        e => format!("{manifest_name}: {e}"),
                    })?;
            (rows, "proportional_sample", Some(q))
        }
    };
    let rows = if opts.benchmarks.is_empty() {
        rows
    } else {
        let kept = filter_rows(rows, |v| {
            v.get("benchmark")
                .and_then(Value::as_str)
                .is_some_and(|b| opts.benchmarks.iter().any(|x| x == b))
        });
        if kept.is_empty() {
            return Err(format!(
                "{bank_name}: no rows of benchmark(s) {}",
                opts.benchmarks.join(", ")
            ));
        }
        kept
    };
    let rows = match keep {
        None => rows,
        Some(keep) => {
            let total = rows.len();
            let mut kept = Vec::new();
            for r in rows {
                match keep(&r.value) {
                    Ok(true) => kept.push(r),
                    Ok(false) => {}
                    Err(e) => return Err(format!("{bank_name}:{}: --where: {e}", r.line)),
                }
            }
            note(format!(
                "crb eval: --where selected {} of {total} rows",
                kept.len()
            ));
            if kept.is_empty() {
                return Err(format!(
                    "{bank_name}: --where selected no rows (nothing to evaluate)"
                ));
            }
            kept
        }
    };
    Ok(Selection {
        rows,
        sample_mode,
        quotas,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BANK: &str = "{\"id\": \"a\", \"benchmark\": \"x\", \"gold_tier\": 0}\n{\"id\": \"b\", \"benchmark\": \"y\", \"gold_tier\": 1}\n{\"id\": \"c\", \"benchmark\": \"x\", \"gold_tier\": 2}\n";

    fn select(
        opts: SelectOptions<'_>,
        keep: Option<RowPredicate<'_>>,
        notes: &mut Vec<String>,
    ) -> Result<Selection, String> {
        select_bank_rows(
            "bank.jsonl",
            &mut || Ok(BANK.as_bytes()),
            &mut || Ok(None),
            opts,
            keep,
            &mut |l| notes.push(l),
        )
    }

    fn ids(s: &Selection) -> Vec<&str> {
        s.rows
            .iter()
            .map(|r| r.value["id"].as_str().unwrap_or_default())
            .collect()
    }

    #[test]
    fn benchmark_then_where() {
        let mut notes = Vec::new();
        let all = select(SelectOptions::default(), None, &mut notes).unwrap();
        assert_eq!(
            (ids(&all), all.sample_mode),
            (vec!["a", "b", "c"], "full_bank")
        );
        let xs = ["x".to_string()];
        let opts = SelectOptions {
            benchmarks: &xs,
            ..Default::default()
        };
        let mut not_a = |v: &Value| Ok(v["id"] != "a");
        let s = select(opts, Some(&mut not_a), &mut notes).unwrap();
        assert_eq!(ids(&s), vec!["c"]);
        assert_eq!(notes, vec!["crb eval: --where selected 1 of 2 rows"]);
        let none = ["z".to_string()];
        let e = select(
            SelectOptions {
                benchmarks: &none,
                ..Default::default()
            },
            None,
            &mut notes,
        )
        .unwrap_err();
        assert_eq!(e, "bank.jsonl: no rows of benchmark(s) z");
        let mut nothing = |_: &Value| Ok(false);
        let e = select(SelectOptions::default(), Some(&mut nothing), &mut notes).unwrap_err();
        assert_eq!(
            e,
            "bank.jsonl: --where selected no rows (nothing to evaluate)"
        );
        assert_eq!(
            notes.last().unwrap(),
            "crb eval: --where selected 0 of 3 rows"
        );
        let mut failing = |_: &Value| Err("type_error: boom".to_string());
        let e = select(SelectOptions::default(), Some(&mut failing), &mut notes).unwrap_err();
        assert_eq!(e, "bank.jsonl:1: --where: type_error: boom");
    }

    #[test]
    fn samples_check_n_first() {
        let mut notes = Vec::new();
        let e = select(
            SelectOptions {
                n: Some(0),
                ..Default::default()
            },
            None,
            &mut notes,
        )
        .unwrap_err();
        assert_eq!(e, "--n 0: n must be positive when set");
    }
}
