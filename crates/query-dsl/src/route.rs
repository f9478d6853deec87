//! Query-routed metrics: flexeval's `QueryRoutedMetric` (the user's description in
//! `seeds/flexeval_query_routed_metric.md`; evaluation order, group means and collisions as in
//! `specs/query-dsl.md` §B11).
//!
//! A [`QueryRoutedMetric`] holds [`MetricRoute`]s: each selects instances with a `where`
//! [`Query`] on their `extra_info` and applies its metrics to the selected instances only.
//! Results are prefixed `{name}/`; with `group_by`, per-group means of the instance-level
//! values are added as `{name}/{group}/{key}` (group labels are Python `str()` of the value).
//!
//! Evaluation is split so that it can be sharded: [`QueryRoutedMetric::observe`] feeds one
//! instance into a [`RoutedAccumulator`] (a [`routeval_core::Accumulator`]: shards merge by
//! concatenation), and [`QueryRoutedMetric::finish`] replays the reference's order (selection
//! errors route by route then instance by instance, then `unmatched`, then per route: metric
//! summaries and details in metric order, then group means), so results and errors do not
//! depend on how instances were sharded. Means add left to right in instance order (not
//! compensated), as the reference does, so they match it bit for bit.

use crate::error::QueryError;
use crate::pyvalue::{Num, as_num, py_str};
use crate::query::{OnMissingKey, Path, Query, Resolved};
use routeval_core::Accumulator;
use serde_json::{Map, Value};
use std::collections::HashMap;

pub mod config;
pub mod metrics;

/// An error while building or evaluating a [`QueryRoutedMetric`].
///
/// [`RouteError::kind`] gives the kind string of `specs/query-dsl.md` §B4/§B11.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RouteError {
    /// A query error (malformed `where`/`group_by`, `missing_key`, `type_error`, bad option).
    #[error(transparent)]
    Query(#[from] QueryError),
    /// `routes` is not a non-empty list, or a route lacks a name or metrics.
    #[error("bad_route: {0}")]
    BadRoute(String),
    /// Two routes have the same name.
    #[error("duplicate_route_name: duplicate route name {0:?}")]
    DuplicateRouteName(String),
    /// `group_by` contains a `*` segment.
    #[error("bad_group_by: group_by {0:?} must not contain '*'")]
    BadGroupBy(String),
    /// A `group_by` value is an array or an object.
    #[error("bad_group_value: group value at {path:?} is a {type_name} (instance {index})")]
    BadGroupValue {
        /// The `group_by` path.
        path: String,
        /// `list` or `dict`.
        type_name: &'static str,
        /// 0-based index of the instance.
        index: usize,
    },
    /// Instances matched no route and `on_unmatched` is `error`.
    #[error(
        "unmatched: {count} instance(s) matched no route (0-based indexes, first 10: {first:?})"
    )]
    Unmatched {
        /// How many instances matched no route.
        count: usize,
        /// The first (up to 10) unmatched instance indexes, 0-based.
        first: Vec<usize>,
    },
    /// A result key would be emitted twice.
    #[error("key_collision: metric key {0:?} produced twice")]
    KeyCollision(String),
    /// A metric in the configuration is unknown or malformed.
    #[error("bad_metric: {0}")]
    BadMetric(String),
    /// An error raised while evaluating instance `index` (0-based): a selection or
    /// `group_by` query error. [`RouteError::kind`] is the inner error's kind.
    #[error("instance {index}: {error}")]
    AtInstance {
        /// 0-based index of the instance.
        index: usize,
        /// The error.
        error: Box<RouteError>,
    },
    /// A configuration object has a key it does not know (a misspelling such as `"wher"`
    /// would otherwise be ignored and change what is selected).
    #[error("unknown_key: {context}: unknown key {key:?} (expected one of: {expected})")]
    UnknownKey {
        /// The key as written.
        key: String,
        /// Where: e.g. `route "easy"`.
        context: String,
        /// The keys that are accepted, comma-separated.
        expected: String,
    },
    /// A metric cannot score an instance (e.g. `score:PATH` is missing or not a number).
    #[error("bad_instance: instance {index}: {message}")]
    BadInstance {
        /// 0-based index of the instance.
        index: usize,
        /// What is wrong.
        message: String,
    },
}

/// The keys of a route object (spec B11).
pub const ROUTE_KEYS: [&str; 4] = ["name", "where", "metrics", "group_by"];

impl RouteError {
    /// The error kind (`"key_collision"`, `"unmatched"`, or the [`QueryError::kind`]).
    pub fn kind(&self) -> &'static str {
        match self {
            RouteError::Query(e) => e.kind(),
            RouteError::AtInstance { error, .. } => error.kind(),
            RouteError::BadRoute(_) => "bad_route",
            RouteError::DuplicateRouteName(_) => "duplicate_route_name",
            RouteError::BadGroupBy(_) => "bad_group_by",
            RouteError::BadGroupValue { .. } => "bad_group_value",
            RouteError::Unmatched { .. } => "unmatched",
            RouteError::KeyCollision(_) => "key_collision",
            RouteError::BadMetric(_) => "bad_metric",
            RouteError::BadInstance { .. } => "bad_instance",
            RouteError::UnknownKey { .. } => "unknown_key",
        }
    }

    /// The 0-based index of the instance the error is about, when there is one.
    pub fn instance_index(&self) -> Option<usize> {
        match self {
            RouteError::BadGroupValue { index, .. }
            | RouteError::BadInstance { index, .. }
            | RouteError::AtInstance { index, .. } => Some(*index),
            _ => None,
        }
    }
}

/// What to do with instances that match no route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnUnmatched {
    /// Ignore them (the default).
    #[default]
    Skip,
    /// Like `Skip`; the caller reports [`RoutedResult::unmatched`] (an extension of the
    /// user's two values, kept from the reference model).
    Warn,
    /// Fail with [`RouteError::Unmatched`] when there is at least one.
    Error,
}

impl OnUnmatched {
    /// Parse the JSON option (`"skip"`, `"warn"`, `"error"`, or absent/null for the default).
    ///
    /// # Errors
    /// `bad_option` for any other value.
    pub fn from_json(v: Option<&Value>) -> Result<Self, QueryError> {
        match v {
            None | Some(Value::Null) => Ok(OnUnmatched::Skip),
            Some(Value::String(s)) if s == "skip" => Ok(OnUnmatched::Skip),
            Some(Value::String(s)) if s == "warn" => Ok(OnUnmatched::Warn),
            Some(Value::String(s)) if s == "error" => Ok(OnUnmatched::Error),
            Some(other) => Err(QueryError::BadOption(format!(
                "on_unmatched must be one of ('skip', 'warn', 'error'), got {other}"
            ))),
        }
    }
}

/// One metric's values for one instance, in the metric's key order: what
/// [`RouteMetric::instance`] returned, kept as a compact list of pairs rather than a map (an
/// accumulator holds one per selected instance and metric, so its size is what a large
/// `route` run costs in memory).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InstanceValues(Vec<(String, Value)>);

impl InstanceValues {
    /// The value of `key`, if the metric gave one.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The keys, in the metric's order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(k, _)| k)
    }

    /// The `(key, value)` pairs, in the metric's order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    /// How many values.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the metric gave no value.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<Map<String, Value>> for InstanceValues {
    fn from(m: Map<String, Value>) -> Self {
        let mut v: Vec<(String, Value)> = m.into_iter().collect();
        v.shrink_to_fit();
        InstanceValues(v)
    }
}

/// An instance-level metric that a route applies to its selected instances.
///
/// The metric sees one instance at a time ([`RouteMetric::instance`], giving its values for
/// that instance) and then the values of all selected instances in instance order
/// ([`RouteMetric::summarize`]). That is enough for flexeval's instance-level metrics and
/// keeps evaluation shardable.
pub trait RouteMetric: Send + Sync {
    /// The values of this metric for one instance (a data line / instance record), unprefixed.
    ///
    /// # Errors
    /// A message when the instance cannot be scored (reported as
    /// [`RouteError::BadInstance`]).
    fn instance(&self, instance: &Value) -> Result<Map<String, Value>, String>;

    /// Whether the per-instance values are reported as instance details (`outputs.jsonl`,
    /// group means). Summary-only metrics return `false`.
    fn has_details(&self) -> bool;

    /// The summary over the selected instances' values, in instance order (never empty).
    fn summarize(&self, rows: &[&InstanceValues]) -> Map<String, Value>;
}

/// One route: which instances (`where`), which metrics, and an optional `group_by` path.
#[derive(Debug, Clone)]
pub struct MetricRoute<M> {
    /// Unique, non-empty; the prefix of the route's keys.
    pub name: String,
    /// The selection query on `extra_info` (match-all when the config has no `where`).
    pub where_: Query,
    /// The metrics applied to the selected instances, in order.
    pub metrics: Vec<M>,
    /// Per-group means by the value at this path (no `*`; indexes allowed).
    pub group_by: Option<Path>,
}

/// flexeval's `QueryRoutedMetric`: routes, `on_unmatched` and `on_missing_key`.
#[derive(Debug, Clone)]
pub struct QueryRoutedMetric<M> {
    routes: Vec<MetricRoute<M>>,
    on_unmatched: OnUnmatched,
    on_missing_key: OnMissingKey,
}

/// The merged result: `summary` (flat, prefixed keys) and one details map per instance
/// (`{}` for instances no route touched).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RoutedResult {
    /// Flat summary, keys `{route}/{key}` and `{route}/{group}/{key}`, in the reference's
    /// insertion order.
    pub summary: Map<String, Value>,
    /// Instance details, indexed like the instances (prefixed keys); empty when
    /// [`QueryRoutedMetric::finish_with`] was asked for none.
    pub instance_details: Vec<Map<String, Value>>,
    /// How many instances each route selected, in route order.
    pub selected: Vec<usize>,
    /// 0-based indexes of the instances that matched no route.
    pub unmatched: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
enum GroupSlot {
    None,
    Label(String),
    Skip,
    Err(Box<RouteError>),
}

#[derive(Debug, Clone, PartialEq)]
struct Row {
    index: usize,
    // Boxed: an error is rare and large, a row per selected instance is what a big run holds.
    values: Box<[Result<InstanceValues, Box<RouteError>>]>,
    group: GroupSlot,
}

#[derive(Debug, Clone, PartialEq, Default)]
struct RouteAcc {
    selection_error: Option<(usize, RouteError)>,
    rows: Vec<Row>,
}

/// The partial state of a [`QueryRoutedMetric`] evaluation over some instances.
///
/// Merging concatenates (rows are re-sorted by instance index in `finish`), so any sharding
/// of the instances gives exactly the one-pass result.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RoutedAccumulator {
    n: usize,
    max_index: Option<usize>,
    unmatched: Vec<usize>,
    routes: Vec<RouteAcc>,
}

impl RoutedAccumulator {
    /// How many instances were observed.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether no instance was observed.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}

impl Accumulator for RoutedAccumulator {
    fn merge(&mut self, other: Self) {
        self.n += other.n;
        self.max_index = match (self.max_index, other.max_index) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.unmatched.extend(other.unmatched);
        if self.routes.len() < other.routes.len() {
            self.routes
                .resize_with(other.routes.len(), RouteAcc::default);
        }
        for (mine, theirs) in self.routes.iter_mut().zip(other.routes) {
            mine.rows.extend(theirs.rows);
            mine.selection_error = match (mine.selection_error.take(), theirs.selection_error) {
                (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
                (a, b) => a.or(b),
            };
        }
    }
}

/// Python's `sum(values) / len(values)` with a plain left-to-right `+` starting from int 0:
/// ints (and bools) add exactly until the first float, then floats.
pub fn py_mean<'a>(values: impl IntoIterator<Item = &'a Value>) -> Option<f64> {
    enum Total {
        Int(i128),
        Float(f64),
    }
    let mut total = Total::Int(0);
    let mut n = 0usize;
    for v in values {
        let x = as_num(v)?;
        n += 1;
        total = match (total, x) {
            (Total::Int(a), Num::Int(b)) => match a.checked_add(b) {
                Some(s) => Total::Int(s),
                None => Total::Float(a as f64 + b as f64),
            },
            (Total::Int(a), Num::Float(b)) => Total::Float(a as f64 + b),
            (Total::Float(a), Num::Int(b)) => Total::Float(a + b as f64),
            (Total::Float(a), Num::Float(b)) => Total::Float(a + b),
        };
    }
    if n == 0 {
        return None;
    }
    Some(match total {
        // Exact operands below 2^53 make this Python's correctly rounded int/int division.
        Total::Int(a) => a as f64 / n as f64,
        Total::Float(a) => a / n as f64,
    })
}

/// A float as a JSON value (`null` for NaN and infinities, which JSON cannot hold).
pub fn float_value(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

fn is_numeric(v: &Value) -> bool {
    matches!(v, Value::Number(_) | Value::Bool(_))
}

fn put(map: &mut Map<String, Value>, key: String, value: Value) -> Result<(), RouteError> {
    if map.contains_key(&key) {
        return Err(RouteError::KeyCollision(key));
    }
    map.insert(key, value);
    Ok(())
}

impl<M: RouteMetric> QueryRoutedMetric<M> {
    /// Build from routes and options, validating names (non-empty, unique), metrics
    /// (non-empty) and `group_by` (no `*`).
    ///
    /// # Errors
    /// `bad_route`, `duplicate_route_name`, `bad_group_by`.
    pub fn new(
        routes: Vec<MetricRoute<M>>,
        on_unmatched: OnUnmatched,
        on_missing_key: OnMissingKey,
    ) -> Result<Self, RouteError> {
        if routes.is_empty() {
            return Err(RouteError::BadRoute(
                "routes must be a non-empty list".into(),
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for r in &routes {
            if r.name.is_empty() {
                return Err(RouteError::BadRoute(
                    "route name must be a non-empty string".into(),
                ));
            }
            if !seen.insert(r.name.clone()) {
                return Err(RouteError::DuplicateRouteName(r.name.clone()));
            }
            if r.metrics.is_empty() {
                return Err(RouteError::BadRoute(format!(
                    "route {:?} needs at least one metric",
                    r.name
                )));
            }
            if let Some(g) = &r.group_by
                && g.has_wildcard()
            {
                return Err(RouteError::BadGroupBy(g.as_str().to_string()));
            }
        }
        Ok(QueryRoutedMetric {
            routes,
            on_unmatched,
            on_missing_key,
        })
    }

    /// Build from the JSON configuration `{"routes": [{"name", "where", "metrics",
    /// "group_by"}], "on_unmatched", "on_missing_key"}`; `make_metric` turns each entry of a
    /// route's `metrics` into a metric. Checks run in the reference's order (options, then
    /// each route in order).
    ///
    /// # Errors
    /// `bad_option`, `bad_route`, `duplicate_route_name`, `bad_path`, `bad_group_by`, any
    /// query compile error, and whatever `make_metric` returns.
    pub fn from_config(
        config: &Value,
        mut make_metric: impl FnMut(&Value) -> Result<M, RouteError>,
    ) -> Result<Self, RouteError> {
        let on_unmatched = OnUnmatched::from_json(config.get("on_unmatched"))?;
        let on_missing_key = OnMissingKey::from_json(config.get("on_missing_key"))?;
        let Some(Value::Array(list)) = config.get("routes") else {
            return Err(RouteError::BadRoute(
                "routes must be a non-empty list".into(),
            ));
        };
        if list.is_empty() {
            return Err(RouteError::BadRoute(
                "routes must be a non-empty list".into(),
            ));
        }
        let mut routes = Vec::with_capacity(list.len());
        let mut seen = std::collections::HashSet::new();
        for r in list {
            let Value::Object(obj) = r else {
                return Err(RouteError::BadRoute("each route must be an object".into()));
            };
            let name = match obj.get("name") {
                Some(Value::String(s)) if !s.is_empty() => s.clone(),
                _ => {
                    return Err(RouteError::BadRoute(
                        "route name must be a non-empty string".into(),
                    ));
                }
            };
            if !seen.insert(name.clone()) {
                return Err(RouteError::DuplicateRouteName(name));
            }
            // A misspelt key (`"wher"`) would silently select everything: refuse it.
            if let Some(k) = obj.keys().find(|k| !ROUTE_KEYS.contains(&k.as_str())) {
                return Err(RouteError::UnknownKey {
                    key: k.clone(),
                    context: format!("route {name:?}"),
                    expected: ROUTE_KEYS.join(", "),
                });
            }
            let metric_specs = match obj.get("metrics") {
                Some(Value::Array(m)) if !m.is_empty() => m,
                Some(other @ (Value::String(_) | Value::Object(_))) => {
                    return Err(RouteError::BadRoute(format!(
                        "route {name:?}: metrics must be a list, got {} (e.g. [{}])",
                        crate::py_type_name(other),
                        other
                    )));
                }
                _ => {
                    return Err(RouteError::BadRoute(format!(
                        "route {name:?} needs at least one metric"
                    )));
                }
            };
            let group_by = match obj.get("group_by") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => {
                    let p = Path::parse(s)?;
                    if p.has_wildcard() {
                        return Err(RouteError::BadGroupBy(s.clone()));
                    }
                    Some(p)
                }
                Some(other) => {
                    return Err(QueryError::BadPath(format!(
                        "path must be a string, got {}",
                        crate::py_type_name(other)
                    ))
                    .into());
                }
            };
            let where_ = Query::parse(obj.get("where").unwrap_or(&Value::Null))?;
            let metrics = metric_specs
                .iter()
                .map(&mut make_metric)
                .collect::<Result<Vec<_>, _>>()?;
            routes.push(MetricRoute {
                name,
                where_,
                metrics,
                group_by,
            });
        }
        QueryRoutedMetric::new(routes, on_unmatched, on_missing_key)
    }

    /// The routes, in config order.
    pub fn routes(&self) -> &[MetricRoute<M>] {
        &self.routes
    }

    /// The `on_unmatched` option.
    pub fn on_unmatched(&self) -> OnUnmatched {
        self.on_unmatched
    }

    /// The `on_missing_key` option.
    pub fn on_missing_key(&self) -> OnMissingKey {
        self.on_missing_key
    }

    /// An empty accumulator for this metric.
    pub fn accumulator(&self) -> RoutedAccumulator {
        RoutedAccumulator {
            routes: vec![RouteAcc::default(); self.routes.len()],
            ..RoutedAccumulator::default()
        }
    }

    /// Feed many instances `(index, instance, extra_info)` (as [`observe`](Self::observe))
    /// in parallel on rayon's pool: one shard per thread, merged in order, so the result
    /// equals observing them one by one.
    pub fn observe_all(&self, acc: &mut RoutedAccumulator, instances: &[(usize, Value, Value)]) {
        use rayon::prelude::*;
        let chunk = instances
            .len()
            .div_ceil(rayon::current_num_threads().max(1))
            .max(1);
        let parts: Vec<_> = instances
            .par_chunks(chunk)
            .map(|part| {
                let mut a = self.accumulator();
                for (index, rec, info) in part {
                    self.observe(&mut a, *index, rec, info);
                }
                a
            })
            .collect();
        for p in parts {
            acc.merge(p);
        }
    }

    /// Feed instance number `index` (0-based, unique): `instance` is what metrics see (the
    /// data line), `extra_info` what `where` and `group_by` see. Errors are recorded, not
    /// returned: [`QueryRoutedMetric::finish`] raises the one the reference would raise first.
    pub fn observe(
        &self,
        acc: &mut RoutedAccumulator,
        index: usize,
        instance: &Value,
        extra_info: &Value,
    ) {
        if acc.routes.len() < self.routes.len() {
            acc.routes.resize_with(self.routes.len(), RouteAcc::default);
        }
        acc.n += 1;
        acc.max_index = Some(acc.max_index.map_or(index, |m| m.max(index)));
        let mut hit = false;
        for (route, racc) in self.routes.iter().zip(acc.routes.iter_mut()) {
            if let Some((at, _)) = &racc.selection_error
                && *at < index
            {
                continue;
            }
            match route.where_.matches(extra_info, self.on_missing_key) {
                Err(e) => racc.selection_error = Some((index, e.into())),
                Ok(false) => {}
                Ok(true) => {
                    hit = true;
                    let values = route
                        .metrics
                        .iter()
                        .map(|m| {
                            m.instance(instance)
                                .map(InstanceValues::from)
                                .map_err(|message| {
                                    Box::new(RouteError::BadInstance { index, message })
                                })
                        })
                        .collect();
                    let group = match &route.group_by {
                        None => GroupSlot::None,
                        Some(p) => match p.resolve(extra_info) {
                            Resolved::One(Value::Array(_)) => {
                                GroupSlot::Err(Box::new(RouteError::BadGroupValue {
                                    path: p.as_str().into(),
                                    type_name: "list",
                                    index,
                                }))
                            }
                            Resolved::One(Value::Object(_)) => {
                                GroupSlot::Err(Box::new(RouteError::BadGroupValue {
                                    path: p.as_str().into(),
                                    type_name: "dict",
                                    index,
                                }))
                            }
                            Resolved::One(v) => GroupSlot::Label(py_str(v)),
                            Resolved::Missing if self.on_missing_key == OnMissingKey::Error => {
                                GroupSlot::Err(Box::new(RouteError::AtInstance {
                                    index,
                                    error: Box::new(
                                        QueryError::MissingKey(p.as_str().into()).into(),
                                    ),
                                }))
                            }
                            // Missing (skip) and out-of-range indexes leave the groups.
                            _ => GroupSlot::Skip,
                        },
                    };
                    racc.rows.push(Row {
                        index,
                        values,
                        group,
                    });
                }
            }
        }
        if !hit {
            acc.unmatched.push(index);
        }
    }

    /// The instance details of one instance, computed again from the instance alone: for each
    /// route whose `where` selects it, the prefixed values of the route's detail metrics (what
    /// [`RoutedResult::instance_details`] holds for it). A caller that streams its output
    /// (`routeval route --out`) calls this per instance after
    /// [`QueryRoutedMetric::finish_with`] succeeded without details, instead of holding one map
    /// per instance. Selection or metric errors give `{}` (a successful `finish` rules them
    /// out for the instances it saw).
    pub fn instance_details(&self, instance: &Value, extra_info: &Value) -> Map<String, Value> {
        let mut out = Map::new();
        for route in &self.routes {
            if !matches!(
                route.where_.matches(extra_info, self.on_missing_key),
                Ok(true)
            ) {
                continue;
            }
            for m in route.metrics.iter().filter(|m| m.has_details()) {
                if let Ok(values) = m.instance(instance) {
                    for (k, v) in values {
                        out.insert(format!("{}/{k}", route.name), v);
                    }
                }
            }
        }
        out
    }

    /// Evaluate all instances in one pass (`extra_info` of each is its `"extra_info"` field,
    /// `{}` when absent).
    ///
    /// # Errors
    /// As [`QueryRoutedMetric::finish`].
    pub fn evaluate(&self, instances: &[Value]) -> Result<RoutedResult, RouteError> {
        let empty = Value::Object(Map::new());
        let mut acc = self.accumulator();
        for (i, inst) in instances.iter().enumerate() {
            self.observe(&mut acc, i, inst, inst.get("extra_info").unwrap_or(&empty));
        }
        self.finish(acc)
    }

    /// Whether two routes can give an instance the same prefixed detail key.
    fn routes_share_detail_keys(&self, acc: &RoutedAccumulator) -> bool {
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (ri, (route, racc)) in self.routes.iter().zip(&acc.routes).enumerate() {
            let mut keys: Vec<&String> = Vec::new();
            for row in &racc.rows {
                for (mi, metric) in route.metrics.iter().enumerate() {
                    if let (true, Some(Ok(m))) = (metric.has_details(), row.values.get(mi)) {
                        for k in m.keys() {
                            if !keys.contains(&k) {
                                keys.push(k);
                            }
                        }
                    }
                }
            }
            for k in keys {
                if *seen.entry(format!("{}/{k}", route.name)).or_insert(ri) != ri {
                    return true;
                }
            }
        }
        false
    }

    /// Turn the accumulated state into the result, raising the first error in the reference's
    /// order. Same as [`QueryRoutedMetric::finish_with`] with instance details.
    ///
    /// # Errors
    /// As [`QueryRoutedMetric::finish_with`].
    pub fn finish(&self, acc: RoutedAccumulator) -> Result<RoutedResult, RouteError> {
        self.finish_with(acc, true)
    }

    /// Turn the accumulated state into the result, raising the first error in the reference's
    /// order. With `instance_details` false, [`RoutedResult::instance_details`] is left empty
    /// (a caller that writes no per-instance output saves one map per instance); the summary
    /// and every error, `key_collision` in instance keys included, are the same either way.
    ///
    /// # Errors
    /// Selection errors (`missing_key`, `type_error`, ...) of the first route that has one,
    /// then `unmatched`, then per route: metric errors, `key_collision`, group errors.
    pub fn finish_with(
        &self,
        mut acc: RoutedAccumulator,
        instance_details: bool,
    ) -> Result<RoutedResult, RouteError> {
        for racc in &mut acc.routes {
            if let Some((index, e)) = racc.selection_error.take() {
                return Err(RouteError::AtInstance {
                    index,
                    error: Box::new(e),
                });
            }
        }
        acc.unmatched.sort_unstable();
        if self.on_unmatched == OnUnmatched::Error && !acc.unmatched.is_empty() {
            return Err(RouteError::Unmatched {
                count: acc.unmatched.len(),
                first: acc.unmatched.iter().take(10).copied().collect(),
            });
        }
        let n = acc.max_index.map_or(0, |m| m + 1).max(acc.n);
        // Without details, a collision between two routes' prefixed instance keys (route `a`
        // with key `b/x` and route `a/b` with key `x`) would go unseen: when two routes'
        // key sets meet, the details are built anyway (and dropped at the end).
        let keep_details = instance_details || self.routes_share_detail_keys(&acc);
        let mut details = if keep_details {
            vec![Map::new(); n]
        } else {
            Vec::new()
        };
        let mut summary = Map::new();
        let mut selected = Vec::with_capacity(self.routes.len());
        for (route, racc) in self.routes.iter().zip(acc.routes.iter_mut()) {
            racc.rows.sort_by_key(|r| r.index);
            let rows = &racc.rows;
            selected.push(rows.len());
            if rows.is_empty() {
                continue;
            }
            // The metrics whose values are instance details, in order (what group means and
            // outputs.jsonl see).
            let mut detail_metrics: Vec<usize> = Vec::new();
            for (mi, metric) in route.metrics.iter().enumerate() {
                let mut vals = Vec::with_capacity(rows.len());
                for row in rows {
                    match &row.values[mi] {
                        Ok(m) => vals.push(m),
                        Err(e) => return Err((**e).clone()),
                    }
                }
                for (k, v) in metric.summarize(&vals) {
                    put(&mut summary, format!("{}/{k}", route.name), v)?;
                }
                if metric.has_details() {
                    for (row, m) in rows.iter().zip(&vals) {
                        // An instance key given by an earlier detail metric of this route
                        // collides (checked whether or not the details are kept).
                        for (k, _) in m.iter() {
                            let earlier = detail_metrics
                                .iter()
                                .any(|&pj| matches!(&row.values[pj], Ok(p) if p.get(k).is_some()));
                            if earlier {
                                return Err(RouteError::KeyCollision(format!(
                                    "{}/{k}",
                                    route.name
                                )));
                            }
                        }
                        if let Some(d) = details.get_mut(row.index) {
                            for (k, v) in m.iter() {
                                put(d, format!("{}/{k}", route.name), v.clone())?;
                            }
                        }
                    }
                    detail_metrics.push(mi);
                }
            }
            if route.group_by.is_some() {
                // A row's detail values: the detail metrics' values in metric order (keys are
                // unique across them, checked above).
                fn value_of<'r>(
                    row: &'r Row,
                    detail_metrics: &[usize],
                    k: &str,
                ) -> Option<&'r Value> {
                    detail_metrics.iter().find_map(|&mi| match &row.values[mi] {
                        Ok(m) => m.get(k),
                        Err(_) => None,
                    })
                }
                let mut order: Vec<(String, Vec<usize>)> = Vec::new();
                let mut lookup: HashMap<String, usize> = HashMap::new();
                for (j, row) in rows.iter().enumerate() {
                    match &row.group {
                        GroupSlot::Err(e) => return Err((**e).clone()),
                        GroupSlot::Label(l) => {
                            let slot = *lookup.entry(l.clone()).or_insert_with(|| {
                                order.push((l.clone(), Vec::new()));
                                order.len() - 1
                            });
                            order[slot].1.push(j);
                        }
                        GroupSlot::Skip | GroupSlot::None => {}
                    }
                }
                for (label, members) in &order {
                    let mut keys: Vec<&String> = Vec::new();
                    for &j in members {
                        for &mi in &detail_metrics {
                            if let Ok(m) = &rows[j].values[mi] {
                                for k in m.keys() {
                                    if !keys.contains(&k) {
                                        keys.push(k);
                                    }
                                }
                            }
                        }
                    }
                    for k in keys {
                        let vals = members
                            .iter()
                            .filter_map(|&j| value_of(&rows[j], &detail_metrics, k))
                            .filter(|v| is_numeric(v));
                        if let Some(m) = py_mean(vals) {
                            put(
                                &mut summary,
                                format!("{}/{label}/{k}", route.name),
                                float_value(m),
                            )?;
                        }
                    }
                }
            }
        }
        if !instance_details {
            details = Vec::new();
        }
        Ok(RoutedResult {
            summary,
            instance_details: details,
            selected,
            unmatched: acc.unmatched,
        })
    }
}
