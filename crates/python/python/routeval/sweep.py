"""Router threshold sweeps: ``routeval crb sweep`` and ``routeval gqr sweep`` from Python.

Use them as ``routeval.crb.sweep(...)`` and ``routeval.gqr.sweep(...)`` (this module holds
the shared code and the report classes).

* ``crb_sweep(scores, *, bank=None, thresholds=None, target_pass_rate=None,
  max_cost_usd=None, pass_rate="trajectory", calibrate_on=None, calibrate_fraction=None,
  manifest=None, n=None, benchmark=None, where=None, on_missing_key=None, seed=42,
  tokenizers=None, tokenizer_setup="native")``: CommonRouterBench tier thresholds. At τ a row
  goes to the cheapest tier whose cumulative probability reaches τ; each point carries the
  blocks ``crb eval --json`` prints for those predictions.
* ``gqr_sweep(scores, *, build_dir=None, mirror=None, unseen=False, thresholds=None,
  calibrate_on=None)``: GQR-Bench rejection thresholds. At τ a text gets the argmax domain
  if its probability is ≥ τ, else 3 (out of domain); each point carries the keys of
  ``gqr score --json``.

The keyword arguments are the CLI's options (``--bank`` → ``bank=``, ``--benchmark`` →
``benchmark=`` (a name or a list), ``--where`` → ``where=`` (a dict or JSON text), ``--from``
→ ``mirror=`` ...), with the same defaults. ``scores`` is a path to the JSON Lines file the
CLI reads, or records (an iterable of dicts, a pandas DataFrame): ``{"id", "tier_probs":
[p_low, p_mid, p_mid_high, p_high]}`` (CRB) or ``{"id", "probs": [p_law, p_finance,
p_healthcare]}`` (GQR); in-memory records are named ``<scores>:N`` in messages.
``thresholds`` is ``"A:B:STEP"``, a comma list or a list of numbers.

The sweeps run the CLI's own code (``routeval_sweep``): ``report.to_dict()`` equals the
CLI's ``--json``, ``report.notes`` holds what it prints on stderr and ``report.table()`` its
table. Errors are ``routeval.CrbError`` / ``routeval.GqrError`` (``ValueError`` subclasses)
with the CLI's messages.
"""

import json
import math
import os

from . import _native

__all__ = ["crb_sweep", "gqr_sweep", "CrbSweepReport", "GqrSweepReport"]


def _scores_jsonl(scores, key, error):
    """``(bytes, name)`` of the scores: a file's bytes and path, or records as JSON Lines."""
    if isinstance(scores, (str, os.PathLike)):
        path = os.fspath(scores)
        try:
            with open(path, "rb") as f:
                return f.read(), path
        except OSError as e:
            raise error(f"{path}: cannot read: {e.strerror or e}") from None
    if hasattr(scores, "to_dict") and hasattr(scores, "columns"):  # a pandas DataFrame
        scores = scores.to_dict(orient="records")
    lines = []
    for i, r in enumerate(scores):
        if not isinstance(r, dict):
            raise error(f"<scores>:{i + 1}: expected a dict with \"id\" and \"{key}\", got "
                        f"{type(r).__name__}")
        r = dict(r)
        probs = r.get(key)
        if probs is not None and hasattr(probs, "tolist"):  # a numpy array
            r[key] = probs.tolist()
        elif isinstance(probs, tuple):
            r[key] = list(probs)
        try:
            lines.append(json.dumps(r, allow_nan=False, ensure_ascii=False))
        except ValueError:
            raise error(f"<scores>:{i + 1}: {key} must hold finite numbers in [0, 1]") from None
        except TypeError as e:
            raise error(f"<scores>:{i + 1}: {e}") from None
    return ("\n".join(lines) + "\n").encode("utf-8") if lines else b"", "<scores>"


def _thresholds(thresholds):
    if thresholds is None or isinstance(thresholds, str):
        return thresholds
    return ",".join(repr(float(t)) for t in thresholds)


def _query(where):
    if where is None or isinstance(where, str):
        return where
    return json.dumps(where, ensure_ascii=False)


def _path(p):
    return None if p is None else os.fspath(p)


class _SweepReport:
    """Shared parts of the sweep reports."""

    def __init__(self, data, notes, table):
        self._data = data
        #: What the CLI prints on stderr (notes and warnings), in order.
        self.notes = list(notes)
        self._table = table

    def to_dict(self):
        """The CLI's ``--json`` (a fresh copy; non-finite numbers are ``None`` as there)."""
        return json.loads(json.dumps(self._data))

    def table(self):
        """The table the CLI prints without ``--json``."""
        return self._table

    @property
    def points(self):
        """One dict per threshold: ``threshold`` and the point's blocks."""
        return self._data["points"]

    @property
    def thresholds(self):
        """The thresholds swept, in order."""
        return [p["threshold"] for p in self._data["points"]]

    @property
    def chosen(self):
        """The ``chosen`` block (``None`` without a rule or calibration)."""
        return self._data["chosen"]

    @property
    def headline(self):
        """The figures to quote, as every face prints them: ``[{"label", "value", "text"}]``
        (with calibration the held-out rows at the chosen τ, labelled ``held-out (N rows)``;
        without it labelled as chosen on the same rows: optimistic)."""
        return self._data.get("headline", [])

    @property
    def caveats(self):
        """What qualifies the headline (the table's ``caveat:`` lines, the reports' caveats)."""
        return list(self._data.get("caveats", []))

    @property
    def threshold(self):
        """The chosen threshold τ, or ``None``."""
        c = self._data["chosen"]
        return None if c is None else c.get("threshold")

    def to_frame(self):
        """The points as a pandas DataFrame (nested blocks flattened with ``.``)."""
        import pandas as pd

        return pd.json_normalize(self.points)

    def __repr__(self):
        return f"{type(self).__name__}({len(self.points)} thresholds, chosen τ = {self.threshold})"


class CrbSweepReport(_SweepReport):
    """``routeval crb sweep``'s report: ``points`` (``threshold``, ``scores_v2``,
    ``section_11``, ``router_accounting``, ``cost_usd``, ``output_cost_usd``,
    ``tier_shares``), ``frontier`` (NDCH, AIQ, Pareto set of cost vs pass rate), ``chosen``
    (``point``, or ``calibration_point`` and ``report`` when calibrated), ``to_dict()``."""

    @property
    def frontier(self):
        """``{"x", "y", "aiq", "max_cost", "ndch", "pareto"}``: the cost–pass-rate frontier."""
        return self._data["frontier"]

    @property
    def aiq(self):
        """RouterBench's AIQ of the frontier (pass-rate percent units; NaN when undefined)."""
        a = self._data["frontier"]["aiq"]
        return math.nan if a is None else a

    @property
    def rows(self):
        """Rows swept (the calibration rows when calibrating)."""
        return self._data["rows"]


class GqrSweepReport(_SweepReport):
    """``routeval gqr sweep``'s report: ``points`` (``threshold`` and the keys of ``gqr score
    --json``), ``curve`` (OOD accuracy vs ID accuracy), ``chosen`` (``calibration`` and
    ``test`` at the calibrated τ), ``complete`` / ``missing_sets``, ``to_dict()``."""

    @property
    def curve(self):
        """``[(ood_accuracy, id_accuracy)]`` per threshold (unseen ID accuracy for
        GQR-unseen; ``None`` where undefined)."""
        return [tuple(p) for p in self._data["curve"]["points"]]

    @property
    def complete(self):
        """``False`` when sets are missing (the scores are then partial scores)."""
        return self._data["complete"]

    @property
    def missing_sets(self):
        """The sets missing from the data."""
        return self._data.get("missing_sets", [])


def crb_sweep(scores, *, bank=None, thresholds=None, target_pass_rate=None, max_cost_usd=None,
              pass_rate="trajectory", calibrate_on=None, calibrate_fraction=None, manifest=None,
              n=None, benchmark=None, where=None, on_missing_key=None, seed=42, tokenizers=None,
              tokenizer_setup="native"):
    """``routeval crb sweep``: see the module's documentation. Returns a
    ``CrbSweepReport``."""
    data, name = _scores_jsonl(scores, "tier_probs", _native.CrbError)
    if benchmark is None:
        benchmarks = []
    elif isinstance(benchmark, str):
        benchmarks = [benchmark]
    else:
        benchmarks = [str(b) for b in benchmark]
    text, notes, table = _native.crb_sweep(
        data, name, bank=_path(bank), manifest=_path(manifest), n=n, seed=seed,
        benchmarks=benchmarks, where_=_query(where), on_missing_key=on_missing_key,
        tokenizers=_path(tokenizers), tokenizer_setup=tokenizer_setup,
        thresholds_spec=_thresholds(thresholds), target_pass_rate=target_pass_rate,
        max_cost_usd=max_cost_usd, pass_rate=pass_rate, calibrate_on=_query(calibrate_on),
        calibrate_fraction=calibrate_fraction)
    return CrbSweepReport(json.loads(text), notes, table)


def gqr_sweep(scores, *, build_dir=None, mirror=None, unseen=False, thresholds=None,
              calibrate_on=None):
    """``routeval gqr sweep``: see the module's documentation. Returns a
    ``GqrSweepReport``."""
    data, name = _scores_jsonl(scores, "probs", _native.GqrError)
    text, notes, table = _native.gqr_sweep(
        data, name, build_dir=_path(build_dir), mirror=_path(mirror), unseen=bool(unseen),
        thresholds_spec=_thresholds(thresholds), calibrate_on=calibrate_on)
    return GqrSweepReport(json.loads(text), notes, table)
