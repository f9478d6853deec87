//! The config forms of `routeval route` (flexeval's QueryRoutedMetric): where the routed
//! metrics and the `extra_info_templates` are in a config document, and the route-name rule
//! that keeps summary keys unambiguous. Pure: the document arrives parsed.

use serde_json::{Map, Value};

/// The routed-metric configs and the `extra_info_templates` found in a `routeval route`
/// config document: the plain form `{"routes": [...], ...}` (itself), flexeval's
/// `{class_path: '...QueryRoutedMetric', init_args: {...}}` (its `init_args`), or a whole
/// EvalSetup whose `init_args.metrics` holds QueryRoutedMetric entries (each one's
/// `init_args`; the templates from `init_args.eval_dataset.init_args`).
///
/// # Errors
/// A one-line message: templates that are not an object, or no routes found.
pub fn find_routed(config: &Value) -> Result<(Vec<Value>, Map<String, Value>), String> {
    let class_is = |v: &Value, name: &str| {
        v.get("class_path")
            .and_then(Value::as_str)
            .is_some_and(|c| c.rsplit('.').next() == Some(name))
    };
    let templates = |v: Option<&Value>| -> Result<Map<String, Value>, String> {
        match v {
            None | Some(Value::Null) => Ok(Map::new()),
            Some(Value::Object(m)) => Ok(m.clone()),
            Some(other) => Err(format!(
                "extra_info_templates must be an object, got {other}"
            )),
        }
    };
    if config.get("routes").is_some() {
        return Ok((
            vec![config.clone()],
            templates(config.get("extra_info_templates"))?,
        ));
    }
    if class_is(config, "QueryRoutedMetric") {
        let init = config.get("init_args").cloned().unwrap_or(Value::Null);
        let t = templates(init.get("extra_info_templates"))?;
        return Ok((vec![init], t));
    }
    let init = config.get("init_args");
    if let Some(Value::Array(ms)) = init.and_then(|i| i.get("metrics")) {
        let routed: Vec<Value> = ms
            .iter()
            .filter(|m| class_is(m, "QueryRoutedMetric"))
            .map(|m| m.get("init_args").cloned().unwrap_or(Value::Null))
            .collect();
        if !routed.is_empty() {
            let t = templates(
                init.and_then(|i| i.get("eval_dataset"))
                    .and_then(|d| d.get("init_args"))
                    .and_then(|a| a.get("extra_info_templates")),
            )?;
            return Ok((routed, t));
        }
    }
    Err(
        "no routes: expected {\"routes\": [...]}, a QueryRoutedMetric object, or an EvalSetup \
         whose init_args.metrics holds one"
            .into(),
    )
}

/// Summary keys are `ROUTE/METRIC` (and `ROUTE/GROUP/METRIC` with `group_by`), so a route
/// named `a/b` beside a route `a` makes keys ambiguous (`a/b/x` is route `a/b`'s metric `x`,
/// or route `a`'s group `b`): refused. A `/` in a name alone is kept (the reference accepts
/// it; its keys stay unambiguous).
///
/// # Errors
/// The message naming the two routes (`bad_route: ...`).
pub fn ambiguous_route_names<'a>(
    names: impl Iterator<Item = &'a str> + Clone,
) -> Result<(), String> {
    for a in names.clone() {
        for b in names.clone() {
            if b.len() > a.len() && b.starts_with(a) && b[a.len()..].starts_with('/') {
                return Err(format!(
                    "bad_route: route names {a:?} and {b:?} make metric keys ambiguous ({b}/METRIC \
                     could be route {a:?}); rename one (a route name may contain '/' only when no \
                     other route name is its prefix)"
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_names_that_make_keys_ambiguous_are_refused() {
        assert!(ambiguous_route_names(["a/b", "c"].into_iter()).is_ok());
        assert!(ambiguous_route_names(["ab", "a"].into_iter()).is_ok());
        let e = ambiguous_route_names(["a/b", "a"].into_iter()).unwrap_err();
        assert!(e.contains("\"a\" and \"a/b\""), "{e}");
    }
}
