"""flexeval's ``where`` language (routeval_query_dsl), from Python.

``compile(where).matches(extra_info, on_missing_key="skip")``, ``filter(rows, where)`` and
``QueryRoutedMetric(routes, on_unmatched="skip", on_missing_key="skip")``. Queries and
records cross into Rust as their ``json.dumps`` text (values JSON cannot hold go in as
``str()``).
"""

import json

from . import _native

__all__ = ["compile", "filter", "Where", "WhereError", "QueryRoutedMetric"]

WhereError = _native.WhereError


def _dumps(value):
    return json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)


class Where:
    """A compiled ``where`` (a dict of ``path: condition`` clauses, or ``None``)."""

    def __init__(self, where):
        self._native = _native.CompiledWhere(_dumps(where))

    def matches(self, extra_info, on_missing_key="skip"):
        """Whether ``extra_info`` matches; ``on_missing_key="error"`` raises
        ``WhereError`` on a missing key instead of not matching."""
        return self._native.matches(_dumps(extra_info), on_missing_key)


def compile(where):  # noqa: A001 - the reference's name
    """Compile ``where``; raises ``WhereError`` (a ``ValueError``) on a bad query."""
    return Where(where)


def filter(rows, where, on_missing_key="skip"):  # noqa: A001 - the reference's name
    """The rows (in order) whose value matches ``where``."""
    rows = list(rows)
    q = where if isinstance(where, Where) else Where(where)
    keep = q._native.filter_positions([_dumps(r) for r in rows], on_missing_key)
    return [rows[i] for i in keep]


class QueryRoutedMetric:
    """flexeval's ``QueryRoutedMetric`` over Python records (``routeval route``'s semantics).

    ``routes``: a list of ``{"name", "where", "metrics", "group_by"}`` (``where`` optional:
    match-all; ``group_by`` optional: per-group means ``{name}/{group}/{key}``). A metric is a
    built-in name (``"exact_match"``, ``"char_f1"``, ``"output_length_stats"``,
    ``"score:PATH"``), a flexeval object (``{"class_path": "ExactMatch"}``, ...) or a Python
    callable ``fn(record) -> dict`` of per-instance values (reported as instance details; the
    summary is the per-key mean of the numeric values). ``on_unmatched``: ``"skip"`` or
    ``"error"``; ``on_missing_key``: ``"skip"`` or ``"error"``. Errors are ``WhereError``
    (``bad_route: ...``, ``unmatched: ...``, ``missing_key: ...``) as ``routeval route``
    prints them.

    ``evaluate(records)`` (records: dicts with ``lm_output``, ``references``, ``extra_info``,
    or whatever the metrics read) returns ``{"summary": {"route/key": value},
    "instance_details": [{"route/key": value}, ...]}`` (flexeval's ``MetricResult`` fields);
    calling the object is the same.
    """

    def __init__(self, routes, on_unmatched="skip", on_missing_key="skip"):
        callables = []
        conf_routes = []
        for r in routes:
            r = dict(r)
            if "metrics" in r and isinstance(r["metrics"], (list, tuple)):
                ms = []
                for m in r["metrics"]:
                    if callable(m):
                        ms.append({"__routeval_callable__": len(callables)})
                        callables.append(m)
                    else:
                        ms.append(m)
                r["metrics"] = ms
            conf_routes.append(r)
        config = {"routes": conf_routes, "on_unmatched": on_unmatched,
                  "on_missing_key": on_missing_key}
        self._native = _native.NativeQueryRoutedMetric(_dumps(config), callables)

    def evaluate(self, records):
        return json.loads(self._native.evaluate([_dumps(r) for r in records]))

    __call__ = evaluate
