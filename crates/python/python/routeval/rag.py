"""RAG retrieval and answer quality with rag-quality-check 0.1.0's names and shapes.

``evaluate(cases, k=5, threshold=0.5, embed=None)`` returns a ``RagReport`` with the
reference's members (``metrics``, ``support``, ``per_case``, ``weakest(n)``, ``failures``,
``notes``, ``estimated``, ``fully_estimated``, ``similarity``, ``ok``, ``summary()``,
``to_dict()``, ``to_frame()``). Numbers come from ``routeval_retrieval_metrics::rag``.

The cases are handed to Rust as their JSON text (``json.dumps``), so they are read as a
case file would be: dict keys become strings (a ``relevant`` mapping ``{1: 2.0}`` is
``{"1": 2.0}``), tuples become lists, and values JSON cannot hold are passed as ``str()``.
"""

import json
import warnings

from . import _native

__all__ = ["evaluate", "evaluate_case", "RagReport", "CaseResult", "RagError", "Accumulator",
           "RETRIEVAL_METRICS", "ANSWER_METRICS"]

RagError = _native.RagError
RETRIEVAL_METRICS = ["precision_at_k", "recall_at_k", "mrr", "ndcg_at_k", "hit_rate"]
ANSWER_METRICS = ["groundedness", "citation_coverage", "answer_relevance", "answer_correctness"]


def _default(o):
    if hasattr(o, "tolist"):
        return o.tolist()
    if isinstance(o, (set, frozenset)):
        return list(o)
    return str(o)


def _dumps(value):
    return json.dumps(value, ensure_ascii=False, allow_nan=True, default=_default)


class CaseResult:
    """One case's result (rag-quality-check's ``CaseResult``)."""

    __slots__ = ("_report", "_pos", "query", "index", "k", "threshold", "n_retrieved",
                 "n_unique", "n_relevant", "estimated", "metrics", "excluded", "notes",
                 "failures", "score")

    def __init__(self, report, pos, fields):
        self._report, self._pos = report, pos
        (self.query, self.index, self.k, self.threshold, self.n_retrieved, self.n_unique,
         self.n_relevant, self.estimated, metrics, self.excluded, self.notes, self.failures,
         self.score) = fields
        self.metrics = dict(metrics)

    @property
    def ok(self):
        return not self.failures

    def summary(self):
        return self._report.case_summary(self._pos)

    def to_dict(self):
        return {
            "index": self.index,
            "query": self.query,
            "k": self.k,
            "threshold": self.threshold,
            "n_retrieved": self.n_retrieved,
            "n_unique": self.n_unique,
            "n_relevant": self.n_relevant,
            "estimated": self.estimated,
            "score": round(self.score, 6),
            "metrics": {n: round(v, 6) for n, v in self.metrics.items()},
            "excluded": list(self.excluded),
            "notes": list(self.notes),
            "failures": list(self.failures),
        }

    def __repr__(self):
        return f"CaseResult(index={self.index}, query={self.query!r}, score={self.score!r})"


class RagReport:
    """The run report (rag-quality-check's ``RagReport``)."""

    def __init__(self, native):
        self._native = native
        self.k, self.threshold, self.similarity, self.n_cases, self.n_estimated = native.header()
        self.metrics = dict(native.metrics())
        self.support = dict(native.support())
        self.notes = native.notes()
        self.failures = native.failures()
        self._per_case = None

    @property
    def per_case(self):
        if self._per_case is None:
            self._per_case = [CaseResult(self._native, i, f)
                              for i, f in enumerate(self._native.cases())]
        return self._per_case

    @property
    def estimated(self):
        return self.n_estimated > 0

    @property
    def fully_estimated(self):
        return self.n_cases > 0 and self.n_estimated == self.n_cases

    @property
    def ok(self):
        return not self.failures

    def weakest(self, n=5):
        if n <= 0:
            return []
        scored = [c for c in self.per_case if c.metrics]
        return sorted(scored, key=lambda c: (c.score, c.index))[:n]

    def summary(self):
        return self._native.summary()

    def to_dict(self):
        return {
            "k": self.k,
            "threshold": self.threshold,
            "similarity": self.similarity,
            "n_cases": self.n_cases,
            "n_estimated": self.n_estimated,
            "estimated": self.estimated,
            "metrics": {n: round(v, 6) for n, v in self.metrics.items()},
            "support": dict(self.support),
            "notes": list(self.notes),
            "failures": list(self.failures),
            "per_case": [c.to_dict() for c in self.per_case],
        }

    def to_frame(self):
        """One row per case as a ``pandas.DataFrame`` (the reference's columns)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_frame() needs pandas: pip install pandas") from None
        names = RETRIEVAL_METRICS + ANSWER_METRICS
        columns = [m for m in names if any(m in c.metrics for c in self.per_case)]
        base = ["index", "query", "n_retrieved", "n_unique", "n_relevant", "estimated", "score"]
        rows = []
        for c in self.per_case:
            row = {"index": c.index, "query": c.query, "n_retrieved": c.n_retrieved,
                   "n_unique": c.n_unique, "n_relevant": c.n_relevant,
                   "estimated": c.estimated, "score": c.score}
            for m in columns:
                row[m] = c.metrics.get(m, float("nan"))
            row["failures"] = len(c.failures)
            rows.append(row)
        if not rows:
            return pd.DataFrame(columns=base + columns + ["failures"])
        return pd.DataFrame(rows, columns=base + columns + ["failures"])

    def __str__(self):
        return self.summary()


def evaluate(cases, *, k=5, threshold=0.5, embed=None):
    """Score ``cases`` as rag-quality-check 0.1.0's ``evaluate`` does; raises ``RagError``
    (a ``ValueError``) with its messages."""
    if embed is not None and not callable(embed):
        raise RagError("embed must be a callable(list[str]) -> vectors, or None")
    try:
        options = _dumps([k, threshold])
    except (TypeError, ValueError):
        options = _dumps([k, repr(threshold)])
    return RagReport(_native.rag_evaluate(_dumps(cases), options, embed))


def evaluate_case(query, retrieved, *, relevant=None, answer=None, ground_truth=None,
                  k=5, threshold=0.5, embed=None):
    """One case on its own (``evaluate([case]).per_case[0]``)."""
    case = {"query": query, "retrieved": list(retrieved or [])}
    if relevant is not None:
        case["relevant"] = relevant
    if answer is not None:
        case["answer"] = answer
    if ground_truth is not None:
        case["ground_truth"] = ground_truth
    return evaluate([case], k=k, threshold=threshold, embed=embed).per_case[0]


class Accumulator:
    """Mergeable, picklable rag evaluation for sharded runs (Dask, Spark ``mapPartitions`` +
    ``reduce``, Ray ``map_batches``): ``acc = Accumulator(k=5, threshold=0.5);
    acc.add(cases_chunk, start=offset); acc.merge(other); acc.result()``.

    ``start`` is the chunk's position in the whole case list (default: right after the cases
    this accumulator already holds), so case indices, notes and failures read as in one
    pass. ``result()`` is the ``RagReport`` that ``evaluate(all cases)`` gives, bit for bit
    (means summed in case order whatever the sharding). Lexical similarity only (no
    ``embed=``). A case position added twice raises ``RagError``.
    """

    def __init__(self, *, k=5, threshold=0.5):
        try:
            options = _dumps([k, threshold])
        except (TypeError, ValueError):
            options = _dumps([k, repr(threshold)])
        self._options = options
        self._native = _native.NativeRagPartial(options)
        self._next = 0
        self._spans = []

    def add(self, cases, *, start=None):
        """Score ``cases`` (a list of case dicts) at positions ``start, start+1, ...``.
        Returns ``self``; a failing chunk (the reference's ``ValueError`` messages) adds
        nothing."""
        cases = list(cases)
        start = self._next if start is None else int(start)
        if start < 0:
            raise RagError(f"start must be >= 0, got {start}")
        self._native.add(_dumps(cases), list(range(start, start + len(cases))))
        self._next = max(self._next, start + len(cases))
        if cases:
            self._spans.append((start, start + len(cases)))
        return self

    def merge(self, other):
        """Add ``other``'s cases (same ``k`` and threshold). Returns ``self``."""
        if not isinstance(other, Accumulator):
            raise TypeError(f"can only merge an Accumulator, got {type(other).__name__}")
        self._native.merge(other._native)
        self._next = max(self._next, other._next)
        self._spans.extend(other._spans)
        return self

    def missing_positions(self):
        """``[(start, end)]`` half-open ranges of case positions below the highest one added
        that no chunk covered (a chunk lost or not merged): empty for a whole case list."""
        gaps, at = [], 0
        for s, e in sorted(self._spans):
            if s > at:
                gaps.append((at, s))
            at = max(at, e)
        return gaps

    def __len__(self):
        return len(self._native)

    def result(self):
        """The ``RagReport`` of every case added. Positions no chunk covered (chunks at 0
        and 5 of two cases each leave 2..5 out) are named in ``report.notes`` and warned
        about (``UserWarning``): the report covers fewer cases than the positions say."""
        report = RagReport(self._native.report())
        gaps = self.missing_positions()
        if gaps:
            n = sum(e - s for s, e in gaps)
            where = ", ".join(f"{s}..{e - 1}" if e - s > 1 else f"{s}" for s, e in gaps)
            note = (f"{n} case position(s) were never added ({where}): the report covers "
                    f"{len(self)} of {self._next} positions")
            report.notes = list(report.notes) + [note]
            warnings.warn(note, UserWarning, stacklevel=2)
        return report

    def __getstate__(self):
        return {"options": self._options, "next": self._next, "state": self._native.state(),
                "spans": self._spans}

    def __setstate__(self, state):
        self._options = state["options"]
        self._next = state["next"]
        self._spans = list(state.get("spans", []))
        self._native = _native.NativeRagPartial(self._options)
        self._native.set_state(state["state"])
