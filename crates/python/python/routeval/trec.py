"""trec_eval-exact IR evaluation with pytrec_eval's names and shapes.

``RelevanceEvaluator(qrels, measures).evaluate(run)`` returns ``{qid: {measure: value}}`` as
pytrec_eval (pytrec-eval-terrier) does. The numbers come from routeval's Rust port of
trec_eval (``routeval_retrieval_metrics::trec``, trec_eval 10.0-rc3 exact); where
pytrec-eval-terrier's trec_eval 9.0.8 differs, the README (section "Python package") says
which is followed.

Beyond pytrec_eval:

* ``evaluate_files(qrels_path, run_path, measures)``: evaluates straight from files, without
  Python dicts (parallel, GIL released), optionally with trec_eval's summary (``"all"``).
* ``Accumulator``: picklable and mergeable per-query results; ``result()`` is trec_eval's
  summary, summed in qrels order, so any sharding gives the one-pass numbers bit for bit.
* ``trec_eval_version="9.0.8"`` (default, pytrec-eval-terrier's) or ``"10.0"`` (the
  ``routeval trec`` CLI's) where the releases differ (``iprec_at_recall``'s rounding).
* An evaluator keeps its measures and cut-offs across calls (pytrec_eval #22 loses them).
"""

import hashlib
import re
from collections.abc import Iterable, Mapping

from . import _native

__all__ = [
    "RelevanceEvaluator",
    "Accumulator",
    "evaluate_files",
    "parse_qrel",
    "parse_run",
    "supported_measures",
    "supported_nicknames",
    "TrecError",
]

TrecError = _native.TrecError

#: Measure names of trec_eval's ``all_trec`` set (pytrec_eval's ``supported_measures``).
supported_measures = set(_native.trec_supported_measures())
#: ``{nickname: {measure, ...}}`` (pytrec_eval's ``supported_nicknames``; routeval has no
#: ``prefs``/``qrels_jg`` measures, so those nicknames are absent).
supported_nicknames = {k: set(v) for k, v in _native.trec_supported_nicknames()}

_PARAM = r"{}[\._]([0-9]+(\.[0-9]+)?(,[0-9]+(\.[0-9]+)?)*)$"


def _combine_measures(measures):
    """pytrec_eval's measure resolution: nicknames expanded, ``meas``, ``meas.p1,p2`` and
    ``meas_p1`` forms merged per measure (the union of the parameters), then handed to
    trec_eval as ``meas.p1,p2``. A name matching nothing is passed on unchanged, so the
    error (with a "did you mean") comes from routeval's measure table."""
    if isinstance(measures, str):
        measures = [measures]
    expanded = []
    for m in measures:
        if not isinstance(m, str):
            raise TypeError(f"measures must be strings, got {type(m).__name__}")
        if m in supported_nicknames:
            expanded.extend(sorted(supported_nicknames[m]))
        else:
            expanded.append(m)
    params = {}
    passthrough = []
    for m in expanded:
        if m in supported_measures:
            params.setdefault(m, set())
            continue
        for base in sorted(supported_measures, key=len, reverse=True):
            hit = re.match(_PARAM.format(re.escape(base)), m)
            if hit:
                params.setdefault(base, set()).update(hit.group(1).split(","))
                break
        else:
            passthrough.append(m)
    out = [f"{m}.{','.join(sorted(p))}" if p else m for m, p in params.items()]
    return out + passthrough


class RelevanceEvaluator:
    """``RelevanceEvaluator(query_relevance, measures, relevance_level=1,
    judged_docs_only_flag=False, *, trec_eval_version="9.0.8", ties=False)``, as in
    pytrec_eval.

    ``query_relevance``: ``{qid: {docno: int}}``; queries without judgments are ignored.
    ``measures``: names, nicknames or parameterised names (``"map"``, ``"official"``,
    ``"P.5,10"``, ``"ndcg_cut_10"``). Raises ``TrecError`` (a ``ValueError``) for an unknown
    measure or a relevance level below 1, ``TypeError`` for wrongly typed ids or values.

    Tie sensitivity (``routeval trec --ties``): trec_eval breaks a score tie by docno, which
    is arbitrary. ``evaluate_ties(run)`` returns ``{qid: {measure: (min, max, expected)}}``:
    each value's smallest and largest value and its exact mean over every order of the
    documents that share a score (each tie group's orders equally likely, groups
    independent; closed forms, README section "Tie sensitivity"). Measures without an exact
    range (``ties_unsupported``, e.g. ``gm_map``, ``iprec_at_recall``) are left out, never
    given a point. With ``ties=True``, ``evaluate(run)`` also stores
    ``evaluate_ties(run)`` in ``self.ties`` (``None`` before the first call and with
    ``ties=False``).
    """

    def __init__(
        self,
        query_relevance,
        measures,
        relevance_level=1,
        judged_docs_only_flag=False,
        *,
        trec_eval_version="9.0.8",
        ties=False,
    ):
        if not isinstance(query_relevance, Mapping):
            raise TypeError("Argument query_relevance should be of type dictionary.")
        self._ties = bool(ties)
        #: With ``ties=True``: the ranges of the last ``evaluate`` (see ``evaluate_ties``).
        self.ties = None
        qrels = query_relevance if isinstance(query_relevance, dict) else dict(query_relevance)
        qrels = {q: (d if isinstance(d, dict) else dict(d)) for q, d in qrels.items()}
        self._measures = _combine_measures(measures)
        self._native = _native.TrecEvaluator(
            qrels,
            self._measures,
            int(relevance_level),
            bool(judged_docs_only_flag),
            trec_eval_version,
        )

    def evaluate(self, scores):
        """``{qid: {measure: value}}`` for every query of ``scores`` (``{qid: {docno:
        score}}``) that has judgments, in ``scores`` order. Ties are broken as trec_eval does
        (docno descending). Can be called any number of times. An empty mapping gives ``{}``;
        ``None`` or a non-mapping raises ``TypeError`` (it gave ``{}``)."""
        if scores is None or not isinstance(scores, Mapping):
            raise TypeError(
                f"scores must be a mapping {{qid: {{docno: score}}}}, got {type(scores).__name__}"
            )
        if not scores:
            if self._ties:
                self.ties = {}
            return {}
        if not isinstance(scores, dict):
            scores = {q: dict(d) for q, d in scores.items()}
        out = self._native.evaluate(scores)
        if self._ties:
            self.ties = self._native.evaluate_ties(scores)
        return out

    def evaluate_ties(self, scores):
        """``{qid: {measure: (min, max, expected)}}`` for every query of ``scores`` that has
        judgments, in ``scores`` order: each value's range over every order of the documents
        that share a score, and its mean over those orders (exact, not sampled). Values of
        ``ties_unsupported`` measures are left out."""
        if not scores:
            return {}
        if not isinstance(scores, dict):
            scores = {q: dict(d) for q, d in scores.items()}
        return self._native.evaluate_ties(scores)

    @property
    def ties_unsupported(self):
        """Measures ``evaluate_ties`` gives no exact range (trec_eval names)."""
        return self._native.tie_unsupported()

    @property
    def measure_names(self):
        """Names of the per-query values, in trec_eval's print order."""
        return self._native.value_names()


def _qrels_fingerprint(qrels):
    """A BLAKE2b digest of the judgments (qid, docno, relevance), order-independent: two
    accumulators merge only when built on the same qrels."""
    h = hashlib.blake2b(digest_size=12)
    for q in sorted(qrels, key=str):
        h.update(repr(str(q)).encode())
        for d, r in sorted(qrels[q].items(), key=lambda kv: str(kv[0])):
            h.update(repr((str(d), r)).encode())
        h.update(b";")
    return h.hexdigest()


class Accumulator:
    """Mergeable, picklable per-query results of a TREC evaluation, for sharded runs
    (Dask, Spark ``mapPartitions`` + ``reduce``, Ray ``map_batches``).

    ``acc = Accumulator(qrels, measures); acc.add(run_chunk); acc.merge(other);
    acc.result()``. Each query's results must be in one chunk (a query split over two
    chunks, or added twice, raises ``TrecError``). ``result()`` is trec_eval's summary
    (``{measure: value}``, ``num_q`` included), summed in qrels (qid byte) order whatever the
    chunking, so it equals one pass bit for bit.
    """

    def __init__(
        self,
        qrels,
        measures,
        relevance_level=1,
        judged_docs_only_flag=False,
        *,
        trec_eval_version="9.0.8",
    ):
        self._config = (
            {q: dict(d) for q, d in qrels.items()},
            _combine_measures(measures),
            int(relevance_level),
            bool(judged_docs_only_flag),
            str(trec_eval_version),
        )
        self._values = {}
        self._ev = None
        self._qrels_fp = _qrels_fingerprint(self._config[0])

    def _evaluator(self):
        if self._ev is None:
            self._ev = _native.TrecEvaluator(*self._config)
        return self._ev

    def add(self, run_chunk):
        """Evaluate the queries of ``run_chunk`` (``{qid: {docno: score}}``) and keep their
        values. Returns ``self``."""
        if not run_chunk:
            return self
        if not isinstance(run_chunk, dict):
            run_chunk = {q: dict(d) for q, d in run_chunk.items()}
        for pos, qid, values in self._evaluator().evaluate_values(run_chunk):
            if pos in self._values:
                raise TrecError(f"query '{qid}' was added twice (a query must be in one chunk)")
            self._values[pos] = (qid, values)
        return self

    def merge(self, other):
        """Add ``other``'s queries (same qrels and measures). Returns ``self``."""
        if not isinstance(other, Accumulator):
            raise TypeError(f"can only merge an Accumulator, got {type(other).__name__}")
        if other._config[1:] != self._config[1:]:
            raise TrecError("cannot merge accumulators with different measures or options")
        if other._qrels_fp != self._qrels_fp:
            raise TrecError(
                "cannot merge accumulators built on different qrels "
                f"(fingerprints {self._qrels_fp} and {other._qrels_fp})"
            )
        for pos, item in other._values.items():
            if pos in self._values:
                raise TrecError(f"query '{item[0]}' is in both accumulators")
            self._values[pos] = item
        return self

    def __len__(self):
        return len(self._values)

    def per_query(self):
        """``{qid: {measure: value}}`` of the queries added (qrels order), as ``evaluate``."""
        names = self._evaluator().value_names()
        text = [m for m in ("runid", "relstring") if any(x.split(".")[0] == m for x in self._config[1])]
        out = {}
        for pos in sorted(self._values):
            qid, values = self._values[pos]
            d = dict(zip(names, values))
            d.update((m, 0.0) for m in text)
            out[qid] = d
        return out

    def result(self):
        """trec_eval's summary of the queries added: ``{measure: value}`` (means, ``num_*``
        sums, ``gm_*`` geometric means, ``num_q``). Raises ``TrecError`` when empty."""
        if not self._values:
            raise TrecError("no query has both results and relevance judgments")
        ordered = [self._values[p][1] for p in sorted(self._values)]
        return self._evaluator().summarize(ordered)

    def __getstate__(self):
        return {"config": self._config, "values": self._values, "qrels_fp": self._qrels_fp}

    def __setstate__(self, state):
        self._config = state["config"]
        self._values = state["values"]
        self._ev = None
        self._qrels_fp = state.get("qrels_fp") or _qrels_fingerprint(self._config[0])


def evaluate_files(
    qrels_path,
    run_path,
    measures,
    relevance_level=1,
    judged_docs_only_flag=False,
    *,
    complete=False,
    per_query=True,
    summary=False,
    trec_eval_version="9.0.8",
):
    """Evaluate a TREC run file against a qrels file without building Python dicts.

    Returns ``{qid: {measure: value}}`` (qrels order; the same values ``evaluate`` gives on
    the parsed files) when ``per_query``, plus ``"all": {measure: value}`` (trec_eval's
    summary) when ``summary``. ``complete`` is trec_eval's ``-c``. Errors name the file and
    line (``TrecError``)."""
    import os

    return _native.trec_evaluate_files(
        os.fspath(qrels_path),
        os.fspath(run_path),
        _combine_measures(measures),
        int(relevance_level),
        bool(judged_docs_only_flag),
        bool(complete),
        bool(per_query),
        bool(summary),
        trec_eval_version,
    )


def _lines_bytes(lines):
    if isinstance(lines, (bytes, bytearray)):
        return bytes(lines)
    if isinstance(lines, str):
        return lines.encode("utf-8")
    parts = []
    for line in lines:
        if isinstance(line, (bytes, bytearray)):
            line = bytes(line).decode("utf-8")
        parts.append(line if line.endswith("\n") else line + "\n")
    return "".join(parts).encode("utf-8")


def parse_qrel(f_qrel, source="<qrels>"):
    """``{qid: {docno: int}}`` from qrels lines (a file object, any iterable of lines, or
    the whole text). A duplicate judgment raises ``TrecError`` (pytrec_eval asserts)."""
    return _native.trec_parse_qrel_bytes(_lines_bytes(f_qrel), source)


def parse_run(f_run, source="<run>"):
    """``{qid: {docno: float}}`` from run lines (a file object, any iterable of lines, or
    the whole text). A duplicate document raises ``TrecError`` (pytrec_eval asserts)."""
    return _native.trec_parse_run_bytes(_lines_bytes(f_run), source)
