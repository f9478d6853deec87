//! The frontier and sweep inputs: cost–quality points (`routeval frontier`), strong-share
//! points (`frontier --strong-share`), threshold grids (`--thresholds`), CRB tier-probability
//! files (`crb sweep`) and GQR probability files (`gqr sweep`), each read from the bytes after
//! the flag byte, then the frontier report (hull, and RouterBench's method on small inputs) and
//! the strong-share report. Checks besides "no panic": a read error names the source, and the
//! hull's points are a subset of the input's (cost, quality) pairs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use routeval_frontier::ndch::ndch_hull;
use routeval_frontier::points::{NdchMethod, frontier_report, read_points, read_strong_share_points};
use routeval_frontier::threshold::parse_thresholds;

fuzz_target!(|data: &[u8]| {
    let Some((&flag, body)) = data.split_first() else { return };
    match flag % 5 {
        0 => match read_points(body, "points.jsonl") {
            Ok(points) => {
                let method = if points.len() <= 40 && flag & 8 != 0 {
                    NdchMethod::RouterBench
                } else {
                    NdchMethod::Hull
                };
                let _ = frontier_report(&points, method);
                let cq: Vec<(f64, f64)> = points.iter().map(|p| (p.cost, p.quality)).collect();
                for h in ndch_hull(&cq) {
                    assert!(cq.iter().any(|p| p.0.to_bits() == h.0.to_bits() && p.1.to_bits() == h.1.to_bits()));
                }
            }
            Err(e) => assert!(e.to_string().contains("points.jsonl")),
        },
        1 => {
            if let Err(e) = read_strong_share_points(body, "share.jsonl") {
                assert!(e.to_string().contains("share.jsonl"));
            }
        }
        2 => {
            if let Ok(s) = std::str::from_utf8(body) {
                let _ = parse_thresholds(s);
            }
        }
        3 => {
            let _ = routeval_sweep::crb::read_tier_scores(body, "tier_probs.jsonl");
        }
        _ => {
            let _ = routeval_sweep::gqr::read_probs(body, "probs.jsonl");
        }
    }
});
