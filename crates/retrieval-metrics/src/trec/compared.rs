//! TREC runs as the inputs of a paired comparison (`routeval compare`, Python's
//! `routeval.compare.trec_files`): which per-query values are compared, each run's
//! per-query columns and headline values, and the systems' display names. One definition
//! for the CLI and the Python binding.

use super::eval::Evaluation;
use super::spec::{Aggregate, MeasureSet};
use routeval_stats::SystemScores;
use std::path::Path;

/// One compared value: its slot in [`Evaluation`]'s value vectors, its printed name
/// (`map`, `P_10`), and whether its headline value is trec_eval's summary (a mean) rather
/// than the arithmetic mean of the per-query values (sums and geometric means are not).
#[derive(Debug, Clone, PartialEq)]
pub struct ComparedValue {
    /// Index into `QueryResult::values` / `Evaluation::summary`.
    pub slot: usize,
    /// trec_eval's printed name.
    pub name: String,
    /// Whether trec_eval's summary of this value is the mean of the per-query values.
    pub mean_summary: bool,
}

/// Every per-query numeric value of `measures`, in print order.
///
/// Errors (the CLI's messages): a measure without per-query values (`num_q`-like summary-only
/// measures), or no value at all.
pub fn compared_values(measures: &MeasureSet) -> Result<Vec<ComparedValue>, String> {
    let mut out = Vec::new();
    for m in measures.measures() {
        if m.names.is_empty() {
            continue;
        }
        if !m.id.printed_per_query() {
            return Err(format!(
                "measure {} has no per-query values; compare needs them (drop it from -m)",
                m.id.name()
            ));
        }
        let mean_summary = m.id.aggregate() == Aggregate::Mean;
        for (k, name) in m.names.iter().enumerate() {
            out.push(ComparedValue {
                slot: m.offset + k,
                name: name.clone(),
                mean_summary,
            });
        }
    }
    if out.is_empty() {
        return Err("no measure with per-query values to compare".to_string());
    }
    Ok(out)
}

/// A run's scores for [`routeval_stats::compare_systems`]: `scores[v][q]` is value `v` on
/// judged query `q` (qrels order), the headline value trec_eval's summary where it is a mean
/// and the arithmetic mean otherwise. `name` is left empty (see [`name_systems`]); `path` is
/// kept as given.
///
/// Errors: the evaluation does not cover every judged query (`num_judged`; evaluate with
/// `-c`), named after `name`.
pub fn system_scores(
    ev: &Evaluation,
    values: &[ComparedValue],
    num_judged: usize,
    name: &str,
    path: &str,
) -> Result<SystemScores, String> {
    if ev.queries.len() != num_judged {
        return Err(format!(
            "{name}: evaluated {} queries, expected every judged query ({num_judged})",
            ev.queries.len()
        ));
    }
    let scores: Vec<Vec<f64>> = values
        .iter()
        .map(|v| ev.queries.iter().map(|q| q.values[v.slot]).collect())
        .collect();
    let means = values
        .iter()
        .zip(&scores)
        .map(|(v, col)| {
            if v.mean_summary {
                ev.summary[v.slot]
            } else {
                routeval_stats::mean(col)
            }
        })
        .collect();
    Ok(SystemScores {
        name: String::new(),
        path: path.to_string(),
        scores,
        means: Some(means),
    })
}

/// The note for run queries without judgments (`None` when there are none).
pub fn run_only_note(name: &str, ev: &Evaluation) -> Option<String> {
    (ev.run_only_queries > 0).then(|| {
        format!(
            "note: {name}: {} quer{} without judgments ignored",
            ev.run_only_queries,
            if ev.run_only_queries == 1 { "y" } else { "ies" }
        )
    })
}

/// The note for judged queries a run has no results for (`None` when it covers them all):
/// they score 0 in every measure (trec_eval's `-c`), which pulls the run's means down. Names
/// the first few ids.
pub fn missing_results_note(name: &str, ev: &Evaluation, judged: usize) -> Option<String> {
    let n = ev.judged_without_results;
    (n > 0).then(|| {
        let more = if n as usize > ev.judged_without_results_ids.len() {
            ", ..."
        } else {
            ""
        };
        format!(
            "note: {name}: no results for {n} of {judged} judged quer{} ({}{more}): scored 0 in every measure (trec_eval -c)",
            if judged == 1 { "y" } else { "ies" },
            ev.judged_without_results_ids.join(", ")
        )
    })
}

/// Refuses a run that has results for none of the judged queries (wrong qrels, or a run of
/// another collection): every score would be 0 and every comparison meaningless.
pub fn check_overlap(
    name: &str,
    ev: &Evaluation,
    judged: usize,
    qrels_name: &str,
) -> Result<(), String> {
    if judged > 0 && ev.judged_without_results as usize >= judged {
        return Err(format!(
            "{name}: the run has results for none of the {judged} judged queries of {qrels_name} (a run of another collection, or the wrong qrels?)"
        ));
    }
    Ok(())
}

/// Apply display names `--name RUN=NAME`: `RUN` is a run's path as given or its automatic
/// name (tag or file stem). Errors: a `RUN` that matches no run, or two systems ending up with
/// the same name.
pub fn rename_systems(
    systems: &mut [SystemScores],
    names: &[(String, String)],
) -> Result<(), String> {
    if names.is_empty() {
        return Ok(());
    }
    for (key, new) in names {
        if new.is_empty() {
            return Err(format!("--name {key}=: the display name is empty"));
        }
        let hits: Vec<usize> = systems
            .iter()
            .enumerate()
            .filter(|(_, s)| s.path == *key || s.name == *key)
            .map(|(i, _)| i)
            .collect();
        match hits.as_slice() {
            [] => {
                return Err(format!(
                    "--name {key}={new}: no run has the path or name {key:?} (runs: {})",
                    systems
                        .iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            [i] => systems[*i].name.clone_from(new),
            _ => {
                return Err(format!(
                    "--name {key}={new}: {key:?} names {} runs; use the run's path",
                    hits.len()
                ));
            }
        }
    }
    for (i, s) in systems.iter().enumerate() {
        if systems[..i].iter().any(|t| t.name == s.name) {
            return Err(format!(
                "two runs are named {:?}; give them distinct names with --name",
                s.name
            ));
        }
    }
    Ok(())
}

/// Name each system by its run tag (`tags[i]`, the last result line's), or by its file stem
/// where the tag is empty or shared with another system.
pub fn name_systems(systems: &mut [SystemScores], tags: &[String]) {
    for (i, s) in systems.iter_mut().enumerate() {
        let repeated = tags.iter().filter(|t| **t == tags[i]).count() > 1 || tags[i].is_empty();
        s.name = if repeated {
            Path::new(&s.path)
                .file_stem()
                .map(|x| x.to_string_lossy().into_owned())
                .unwrap_or_else(|| s.path.clone())
        } else {
            tags[i].clone()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fall_back_to_stems_on_shared_or_empty_tags() {
        let mut systems: Vec<SystemScores> = ["runs/a.txt", "runs/b.txt", "c.run", "d"]
            .iter()
            .map(|p| SystemScores {
                name: String::new(),
                path: p.to_string(),
                scores: vec![],
                means: None,
            })
            .collect();
        let tags = ["bm25", "bm25", "dense", ""].map(String::from);
        name_systems(&mut systems, &tags);
        let names: Vec<&str> = systems.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "dense", "d"]);
    }

    #[test]
    fn summary_only_measures_are_refused() {
        let m = MeasureSet::parse(&["map", "P.5"]).unwrap();
        let v = compared_values(&m).unwrap();
        assert_eq!(
            v.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
            ["map", "P_5"]
        );
        assert!(v.iter().all(|v| v.mean_summary));
        let e = compared_values(&MeasureSet::parse(&["num_q"]).unwrap()).unwrap_err();
        assert!(e.contains("no per-query values"), "{e}");
    }
}
