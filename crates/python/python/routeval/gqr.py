"""GQR-Bench (guarded query routing) with the names and return shapes of PyPI ``gqr``.

Datasets come from a routeval GQR build (``routeval data fetch gqr``; offline:
``routeval data fetch gqr --from MIRROR``), by default ``<gqr cache>/build``
(``$GQR_CACHE_DIR``, else ``$ROUTEVAL_CACHE_DIR/gqr``, else ``~/.cache/gqr``), or the
``build_dir=`` argument. Every split file is checked against the build's ``manifest.json``
(row count, blake3) when read, as ``routeval gqr export`` does. Or ``mirror=DIR`` (the CLI's
``--from DIR``): the splits are built in memory from a local mirror of the sources, as
``routeval gqr export --from DIR`` builds them (same code, same rows; nothing is written,
and each call builds again).

* ``label2domain``, ``domain2label``: the reference's label maps (3 = out of distribution).
* ``load_dev_dataset``, ``load_train_dataset(version="v1"|"v2")``, ``load_background_dataset``,
  ``load_id_test_dataset``, ``load_ood_test_dataset``, ``load_unseen_id_test_dataset``: pandas
  DataFrames when pandas is installed (the reference's columns and index labels), else lists
  of dicts.
* ``score(fn)``, ``score_batch(fn, batch_size=32)``, ``score_unseen(fn)``,
  ``score_unseen_batch(fn, batch_size=32)``, ``unseen_scores(unseen_id_df, ood_df)``: the
  reference's dicts (``id_accuracy``, ``ood_accuracy``, ``gqr_score``; GQR-unseen's five keys).
* ``Accumulator``: picklable, mergeable counts for sharded scoring (Dask, Spark, Ray).
* ``sweep(scores, ...)``: ``routeval gqr sweep`` (rejection thresholds; ``routeval.sweep``).

Numbers come from ``routeval_routing_scores::gqr`` (count tables; floats computed once, in
the reference's order), so they equal ``routeval gqr score --json`` and the reference bit for
bit. Differences from the reference: ``score`` returns 0.0 (not NaN) when both accuracies are
0, as ``score_batch`` does; nothing is printed (missing sets are a ``UserWarning``); values
are Python floats (the reference's ``score`` returns ``numpy.float64`` for two of them).
"""

import os
import warnings

from . import _native

__all__ = [
    "label2domain",
    "domain2label",
    "load_dev_dataset",
    "load_train_dataset",
    "load_background_dataset",
    "load_id_test_dataset",
    "load_ood_test_dataset",
    "load_unseen_id_test_dataset",
    "score",
    "score_batch",
    "score_unseen",
    "score_unseen_batch",
    "unseen_scores",
    "Accumulator",
    "sweep",
    "GqrError",
    "default_build_dir",
]

GqrError = _native.GqrError

#: The reference's labels: 0 law, 1 finance, 2 healthcare, 3 out of distribution (reject).
label2domain = {0: "law", 1: "finance", 2: "healthcare", 3: "ood"}
#: The inverse of ``label2domain``.
domain2label = {v: k for k, v in label2domain.items()}

#: The seven OOD sets in the reference's order (note the trailing space of the Slovak set).
OOD_SETS = ["jigsaw", "olid", "hate_xplain", "hate_speech_slovak ", "dkhate", "web_questions",
            "ml_questions"]


def default_build_dir():
    """The build directory used when ``build_dir`` is not given (``<gqr cache>/build``)."""
    return _native.gqr_default_build_dir()


def _dir(build_dir):
    return os.fspath(build_dir) if build_dir is not None else default_build_dir()


def _columns(cols):
    ids, texts, labels, domains, datasets = cols
    return {"id": ids, "text": texts, "label": labels, "domain": domains, "dataset": datasets}


def _splits(build_dir, mirror, names):
    """The splits ``names`` as column dicts: from the mirror (built once for all of them) or
    from the build (each checked against its manifest)."""
    if mirror is not None:
        if build_dir is not None:
            raise GqrError("give the data once: build_dir= (a build) or mirror= (a mirror of "
                           "the sources)")
        cols, _missing = _native.gqr_read_mirror(os.fspath(mirror), list(names))
        return [_columns(c) for c in cols]
    return [_columns(_native.gqr_read_split(_dir(build_dir), n)) for n in names]


def _split(build_dir, name, mirror=None):
    return _splits(build_dir, mirror, [name])[0]


def _index_labels(ids):
    # Ids are `<split>/<dataset>/<pandas index label>` (the reference's kept index labels).
    return [int(i.rsplit("/", 1)[1]) for i in ids]


def _frame(columns, names, index=None):
    """A DataFrame with ``names`` (pandas installed) or a list of dicts."""
    try:
        import pandas as pd
    except ImportError:
        n = len(columns[names[0]])
        return [{k: columns[k][i] for k in names} for i in range(n)]
    df = pd.DataFrame({k: columns[k] for k in names}, index=index)
    df["label"] = df["label"].astype("int64")
    return df


def _v1(c):
    return _frame(c, ["text", "domain", "label"], index=_index_labels(c["id"]))


def load_id_test_dataset(build_dir=None, *, mirror=None):
    """The ID test set (9,000 rows in the reference): columns ``text, domain, label``."""
    c = _split(build_dir, "id_test", mirror)
    return _frame(c, ["text", "domain", "label"])


def load_train_dataset(version="v1", build_dir=None, *, mirror=None):
    """``(train, eval)``. v1: columns ``text, domain, label`` with the reference's (shuffled,
    non-contiguous) index labels; v2: v1 plus the background class (label 3), columns
    ``text, domain, label, source`` (``source`` = ``"gqr"`` for v1 rows), re-indexed."""
    if version == "v1":
        return tuple(_v1(c) for c in _splits(build_dir, mirror, ["train", "eval"]))
    if version == "v2":
        out = []
        for c in _splits(build_dir, mirror, ["train_v2", "eval_v2"]):
            c["source"] = [i.split("/")[1] for i in c["id"]]
            out.append(_frame(c, ["text", "domain", "label", "source"]))
        return tuple(out)
    raise GqrError(f"Unknown GQR-Bench version {version!r}: expected 'v1' or 'v2'")


def load_dev_dataset(build_dir=None, *, mirror=None):
    """``(dev_train, dev_eval)``: 1,000 rows of each v1 split, the reference's index labels."""
    return tuple(_v1(c) for c in _splits(build_dir, mirror, ["dev_train", "dev_eval"]))


def load_background_dataset(n_train=None, n_eval=None, build_dir=None, *, mirror=None):
    """``(train_bg, eval_bg)``: the v2 background class (columns ``text, domain, label,
    source``), re-indexed. A build holds the default sizes only (9,600 and 2,400 in the
    reference); asking for others raises ``GqrError``."""
    out = []
    names = ("background_train", "background_eval")
    for name, want, c in zip(names, (n_train, n_eval), _splits(build_dir, mirror, names)):
        c["source"] = c["dataset"]
        if want is not None and int(want) != len(c["text"]):
            raise GqrError(
                f"{name}: the build holds {len(c['text'])} rows; other sizes ({int(want)}) "
                "are not built (a build has the reference's default sizes)"
            )
        out.append(_frame(c, ["text", "domain", "label", "source"]))
    return tuple(out)


def load_ood_test_dataset(build_dir=None, *, mirror=None):
    """The OOD test sets concatenated in the reference's order: columns ``text, domain,
    label, dataset`` (label 3); a set that could not be built is absent (as upstream's
    gated dkhate when not logged in)."""
    c = _split(build_dir, "ood_test", mirror)
    return _frame(c, ["text", "domain", "label", "dataset"])


def load_unseen_id_test_dataset(build_dir=None, *, mirror=None):
    """The nine GQR-unseen ID sets: columns ``text, label, domain, dataset``."""
    c = _split(build_dir, "unseen_id", mirror)
    return _frame(c, ["text", "label", "domain", "dataset"])


UNSEEN_SETS = ["banking77", "financial_qa_10k", "reddit_finance", "icliniq", "medquad",
               "med_flashcards", "legal_reddit", "legal_qa_v1", "mmlu_professional_law"]


def _warn_missing(expected, present, what):
    gone = [s.strip() for s in expected if s not in present]
    if gone:
        warnings.warn(
            f"GQR build: {len(gone)} of {len(expected)} {what} missing ({', '.join(gone)}): "
            "this is a partial score (means over the sets present)",
            UserWarning,
            stacklevel=3,
        )


def _column(rows, name):
    """Column ``name`` of a DataFrame or a list of dicts."""
    if hasattr(rows, "columns"):
        return rows[name].tolist()
    return [r[name] for r in rows]


def _length(rows):
    return len(rows.index) if hasattr(rows, "columns") else len(rows)


class Accumulator:
    """Mergeable, picklable GQR (or, with ``unseen=True``, GQR-unseen) counts for sharded
    scoring: ``acc = Accumulator(); acc.add(rows, predictions); acc.merge(other);
    acc.result()``.

    ``rows`` is a DataFrame or list of dicts with ``label`` (3 = an OOD row) and, for OOD
    and unseen rows, ``dataset`` (the loaders' frames); ``predictions`` the router's labels
    for them (default: the ``predictions`` column). GQR pools its ID rows; GQR-unseen groups
    them by ``dataset``. Counts are exact, so the merged ``result()`` equals one pass bit for
    bit, in any chunking and merge order.
    """

    def __init__(self, unseen=False):
        self._native = _native.NativeGqrAccumulator(bool(unseen))

    @property
    def unseen(self):
        return self._native.unseen

    def add(self, rows, predictions=None, *, pred_col="predictions"):
        """Count ``rows`` with their ``predictions``. GQR takes ints and integral floats
        (the reference's scikit-learn rules: other floats and strings raise ``GqrError``);
        GQR-unseen casts as ``astype(int)`` (3.7 counts as 3, ``"3"`` as 3). Nothing is
        counted when a call raises. Returns ``self``."""
        n = _length(rows)
        labels = [int(x) for x in _column(rows, "label")] if n else []
        cols = set(rows.columns) if hasattr(rows, "columns") else (set(rows[0]) if n else set())
        if "dataset" in cols:
            datasets = [str(x) for x in _column(rows, "dataset")]
        elif self.unseen or 3 in labels:
            raise GqrError("rows need a 'dataset' column (OOD and unseen rows are scored per set)")
        else:
            datasets = [""] * n
        ids = [str(x) for x in _column(rows, "id")] if "id" in cols else [f"row {i}" for i in range(n)]
        if predictions is None:
            predictions = _column(rows, pred_col)
        elif hasattr(predictions, "tolist"):
            predictions = predictions.tolist()
        self._native.add(labels, datasets, predictions, ids)
        return self

    def merge(self, other):
        """Add ``other``'s counts (same kind). Returns ``self``."""
        if not isinstance(other, Accumulator):
            raise TypeError(f"can only merge an Accumulator, got {type(other).__name__}")
        self._native.merge(other._native)
        return self

    def __len__(self):
        return len(self._native)

    def result(self):
        """GQR: ``{"id_accuracy", "ood_accuracy", "gqr_score"}`` (fractions; ID accuracy
        pooled, OOD accuracy the mean over the sets present). GQR-unseen:
        ``{"unseen_id_accuracy", "ood_accuracy", "gqr_unseen_score",
        "unseen_id_per_dataset", "ood_per_dataset"}``."""
        return self._native.result()

    def evaluations(self):
        """GQR only: ``(evaluate(ID rows), evaluate_by_dataset(OOD rows))`` as the
        reference computes them: ``{"accuracy", "precision", "recall", "f1"}`` (scikit-learn
        weighted, ``zero_division=0``) and a list of such dicts with ``dataset``."""
        return self._native.evaluations()

    def __getstate__(self):
        return {"unseen": self._native.unseen, "cells": self._native.cells()}

    def __setstate__(self, state):
        self._native = _native.NativeGqrAccumulator.from_cells(state["unseen"], state["cells"])


def _texts(columns):
    return [str(t) for t in columns["text"]]


def _predict_each(model_fn, texts):
    return [model_fn(t) for t in texts]


def _predict_batches(model_fn, texts, batch_size):
    batch_size = int(batch_size)
    if batch_size <= 0:
        raise GqrError(f"batch_size must be positive, got {batch_size}")
    out = []
    for start in range(0, len(texts), batch_size):
        batch = texts[start : start + batch_size]
        got = model_fn(batch)
        got = got.tolist() if hasattr(got, "tolist") else list(got)
        if len(got) != len(batch):
            raise GqrError(
                f"model_fn returned {len(got)} labels for a batch of {len(batch)} texts "
                f"(texts {start}..{start + len(batch) - 1})"
            )
        out.extend(got)
    return out


def _score(predict, unseen, build_dir, mirror=None):
    id_split = "unseen_id" if unseen else "id_test"
    id_rows, ood_rows = _splits(build_dir, mirror, [id_split, "ood_test"])
    if unseen:
        _warn_missing(UNSEEN_SETS, set(id_rows["dataset"]), "GQR-unseen sets")
    _warn_missing(OOD_SETS, set(ood_rows["dataset"]), "OOD sets")
    acc = Accumulator(unseen=unseen)
    for c in (id_rows, ood_rows):
        preds = predict(_texts(c))
        acc._native.add([int(x) for x in c["label"]], c["dataset"], preds, c["id"])
    return acc.result()


def score(model_fn, build_dir=None, *, mirror=None):
    """GQR score of ``model_fn(text) -> label`` (called once per text: the ID test set, then
    the OOD sets): ``{"id_accuracy", "ood_accuracy", "gqr_score"}``."""
    return _score(lambda texts: _predict_each(model_fn, texts), False, build_dir, mirror)


def score_batch(model_fn, batch_size=32, build_dir=None, *, mirror=None):
    """``score`` with ``model_fn(list[str]) -> list[label]`` called on consecutive batches of
    ``batch_size`` (ID texts, then OOD texts; a batch never spans both)."""
    return _score(lambda texts: _predict_batches(model_fn, texts, batch_size), False, build_dir,
                  mirror)


def score_unseen_batch(model_fn, batch_size=32, build_dir=None, *, mirror=None):
    """GQR-unseen score of a batched ``model_fn``: the nine unseen ID sets, then the OOD
    sets. Returns ``{"unseen_id_accuracy", "ood_accuracy", "gqr_unseen_score",
    "unseen_id_per_dataset", "ood_per_dataset"}``."""
    return _score(lambda texts: _predict_batches(model_fn, texts, batch_size), True, build_dir,
                  mirror)


def score_unseen(model_fn, build_dir=None, *, mirror=None):
    """``score_unseen_batch`` for a per-text ``model_fn(text) -> label``."""
    return _score(lambda texts: _predict_each(model_fn, texts), True, build_dir, mirror)


def sweep(scores, *, build_dir=None, mirror=None, unseen=False, thresholds=None,
          calibrate_on=None):
    """``routeval gqr sweep``: the rejection threshold of a router emitting ``probs =
    [p_law, p_finance, p_healthcare]`` per text. ``scores``: a JSON Lines path or records
    ``{"id", "probs"}`` (ids as ``routeval gqr export`` writes them); ``thresholds``:
    ``"A:B:STEP"``, a comma list or numbers (default: every distinct top probability);
    ``calibrate_on``: ``"dev"`` or ``"background"`` (``"eval"`` is refused as by the CLI).
    Returns a ``routeval.sweep.GqrSweepReport`` (``to_dict()`` == ``--json``)."""
    from .sweep import gqr_sweep

    return gqr_sweep(scores, build_dir=build_dir, mirror=mirror, unseen=unseen,
                     thresholds=thresholds, calibrate_on=calibrate_on)


def unseen_scores(unseen_id_df, ood_df, pred_col="predictions"):
    """The reference's ``unseen_scores``: frames (or lists of dicts) with ``dataset``,
    ``label`` and ``pred_col``; predictions cast as ``astype(int)``."""
    acc = Accumulator(unseen=True)
    acc.add(unseen_id_df, pred_col=pred_col)
    if _length(ood_df):
        ood = {
            "label": [3] * _length(ood_df),
            "dataset": [str(x) for x in _column(ood_df, "dataset")],
            pred_col: _column(ood_df, pred_col),
        }
        acc._native.add(ood["label"], ood["dataset"], ood[pred_col],
                        [f"ood row {i}" for i in range(_length(ood_df))])
    return acc.result()
