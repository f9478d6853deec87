//! `build-data gqr`: build GQR-Bench into `$GQR_CACHE_DIR/build` (default `~/.cache/gqr`).

use crate::BuildData;
use routeval_bench_data::download::gqr_cache_dir;
use routeval_bench_data::gqr::build::{BuildOptions, Fetch, MirrorDir, build_all};
use routeval_bench_data::gqr::hub::HubFetch;
use routeval_bench_data::gqr::registry::Registry;
use routeval_bench_data::gqr::store::{build_dir, check_build, write_build};

pub(crate) fn run(args: &BuildData) -> anyhow::Result<bool> {
    let cache = gqr_cache_dir();
    let out = build_dir(&cache);
    if args.check {
        let problems = check_build(&out)?;
        for p in &problems {
            eprintln!("gqr: {}/{}: {}", out.display(), p.path, p.problem);
        }
        if problems.is_empty() {
            eprintln!("gqr: {} matches its manifest", out.display());
        }
        return Ok(problems.is_empty());
    }
    let registry = Registry::load()?;
    let mut fetch: Box<dyn Fetch> = match &args.from {
        Some(dir) => Box::new(MirrorDir { root: dir.clone() }),
        None => {
            let mut h = HubFetch::new(cache.clone());
            if let Some(e) = &args.hub_endpoint {
                h.endpoint = Some(e.clone());
            }
            Box::new(h)
        }
    };
    let opts = BuildOptions {
        dataset_size: args.dataset_size,
        ..BuildOptions::default()
    };
    let build = build_all(&registry, fetch.as_mut(), &opts)?;
    let manifest = write_build(&build, &out)?;
    for f in &manifest.files {
        eprintln!(
            "gqr: wrote {:<70} {:>7} rows  blake3 {}",
            f.path,
            f.rows,
            &f.blake3[..16]
        );
    }
    for m in &manifest.missing {
        eprintln!("gqr: MISSING {}: {}", m.name.trim_end(), m.reason);
    }
    for w in &manifest.warnings {
        eprintln!("gqr: warning: {w}");
    }
    eprintln!("gqr: manifest {}", out.join("manifest.json").display());
    Ok(true)
}
