//! Numeric command-line values, validated when parsed (issue 10, item 1): every parser here
//! is a clap `value_parser`, so a bad value is a usage error (exit 2) naming the flag, never a
//! panic later (`Duration::from_secs_f64(NaN)`) or a silent substitute (`0` → 1 ms).
//!
//! Each function accepts what the flag can sensibly mean and nothing else: NaN, ±infinity,
//! negative numbers, zero where it means nothing, and values beyond a sane maximum are
//! refused with a message saying what is accepted.

/// Longest timeout or backoff accepted, in seconds (one day).
pub(crate) use routeval_io::MAX_SECONDS;

/// Most attempts, retries or parallel requests accepted.
pub(crate) const MAX_COUNT: u64 = 10_000;

/// Most texts per embedding request, or rows per batch.
pub(crate) const MAX_BATCH: u64 = 1_000_000;

/// A decimal number, finite: `nan`, `inf` and garbage are refused.
fn finite(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number"))?;
    if !v.is_finite() {
        return Err(format!("{s:?} is not a finite number"));
    }
    Ok(v)
}

/// A risk-measure loss weight α (`compare --risk`): finite and ≥ 0.
pub(crate) fn risk_alpha(s: &str) -> Result<f64, String> {
    let v = finite(s)?;
    if v < 0.0 {
        return Err(format!(
            "{s:?}: a risk weight alpha must be >= 0 (losses count 1 + alpha times)"
        ));
    }
    Ok(v)
}

/// A timeout in seconds: finite, `> 0` and at most [`MAX_SECONDS`] (fractions allowed).
pub(crate) fn timeout_secs(s: &str) -> Result<f64, String> {
    let v = finite(s)?;
    if v <= 0.0 {
        return Err(format!("{s:?}: a timeout must be more than 0 seconds"));
    }
    if v > MAX_SECONDS {
        return Err(format!(
            "{s:?}: a timeout must be at most {MAX_SECONDS} seconds (one day)"
        ));
    }
    Ok(v)
}

/// A wait (backoff) in seconds: finite, `>= 0`, at most [`MAX_SECONDS`].
pub(crate) fn wait_secs(s: &str) -> Result<f64, String> {
    let v = finite(s)?;
    if v < 0.0 {
        return Err(format!("{s:?}: a wait cannot be negative"));
    }
    if v > MAX_SECONDS {
        return Err(format!(
            "{s:?}: a wait must be at most {MAX_SECONDS} seconds (one day)"
        ));
    }
    Ok(v)
}

/// An integer in `lo..=hi` (decimal digits, optional sign).
pub(crate) fn int_in(s: &str, lo: i64, hi: i64, what: &str) -> Result<i64, String> {
    let v: i64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not an integer"))?;
    if v < lo || v > hi {
        return Err(format!("{s:?}: {what} must be in {lo}..={hi}"));
    }
    Ok(v)
}

/// A count of at least 1 and at most [`MAX_COUNT`] (attempts, parallel requests).
pub(crate) fn count(s: &str) -> Result<u32, String> {
    int_in(s, 1, MAX_COUNT as i64, "the count").map(|v| v as u32)
}

/// A count of at least 1 and at most [`MAX_COUNT`], as `usize`.
pub(crate) fn count_usize(s: &str) -> Result<usize, String> {
    int_in(s, 1, MAX_COUNT as i64, "the count").map(|v| v as usize)
}

/// `crb --n`: a sample size `1..=10^12`; zero and negative values give the library's own
/// [`SampleError::NonPositiveN`](routeval_bench_data::crb::SampleError::NonPositiveN) message
/// (the reference's `n must be positive when set`).
pub(crate) fn sample_size(s: &str) -> Result<i64, String> {
    let v: i64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not an integer"))?;
    routeval_bench_data::crb::check_sample_size(v).map_err(|e| e.to_string())?;
    int_in(s, 1, 1_000_000_000_000, "the size")
}

/// A size that may be 0: `0..=10^15` (e.g. the number of documents in a collection).
pub(crate) fn size_or_zero(s: &str) -> Result<i64, String> {
    int_in(s, 0, 1_000_000_000_000_000, "the size")
}

/// A relevance level (trec_eval's `-l`): a C `int`, `-2147483648..=2147483647`.
pub(crate) fn rel_level(s: &str) -> Result<i64, String> {
    int_in(s, i32::MIN as i64, i32::MAX as i64, "the relevance level")
}

/// `max_tokens` of a request: `1..=10^7`.
pub(crate) fn max_tokens(s: &str) -> Result<i64, String> {
    int_in(s, 1, 10_000_000, "max_tokens")
}

/// A duration from seconds already validated by [`timeout_secs`] or [`wait_secs`]; any other
/// value (NaN, negative, huge) is clamped into `0..=MAX_SECONDS` instead of panicking.
pub(crate) use routeval_io::duration;

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timeouts() {
        assert_eq!(timeout_secs("1.5"), Ok(1.5));
        for bad in [
            "nan", "NaN", "inf", "-inf", "0", "-1", "1e300", "", "x", "86401",
        ] {
            assert!(timeout_secs(bad).is_err(), "{bad}");
        }
        assert_eq!(wait_secs("0"), Ok(0.0));
        for bad in ["nan", "inf", "-1", "1e300"] {
            assert!(wait_secs(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn counts() {
        assert_eq!(count("1"), Ok(1));
        for bad in ["0", "-1", "1e3", "99999999999999999999", "nan", "10001"] {
            assert!(count(bad).is_err(), "{bad}");
        }
        assert_eq!(rel_level("-1"), Ok(-1));
        assert!(rel_level("99999999999999").is_err());
    }

    #[test]
    fn durations_never_panic() {
        assert_eq!(duration(f64::NAN), Duration::ZERO);
        assert_eq!(duration(f64::INFINITY), Duration::from_secs(86_400));
    }
}
