"""flexeval's ``where`` language (routeval_query_dsl), from Python.

``compile(where).matches(extra_info, on_missing_key="skip")`` and ``filter(rows, where)``.
Queries and records cross into Rust as their ``json.dumps`` text (values JSON cannot hold
go in as ``str()``). ``QueryRoutedMetric`` is not available from Python yet.
"""

import json

from . import _native

__all__ = ["compile", "filter", "Where", "WhereError"]

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
