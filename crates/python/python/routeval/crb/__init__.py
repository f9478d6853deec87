"""CommonRouterBench tier routing with the names and return shapes of its ``main`` package.

* ``TierPrediction``, ``FunctionPredictor(fn)``: predictors (``predict(row)``).
* ``select_question_bank_rows(n=None, seed=42, shard=None, manifest=None)`` →
  ``(rows, sample_mode, quotas)``: the reference's proportional reservoir sample (Python's
  ``random`` reproduced bit for bit) or the full bank.
* ``evaluate_question_bank_rows(predictor, rows)`` → ``(per_row, errors, correct)``.
* ``build_eval_summary(...)`` and ``run_question_bank_eval(predictor, n=None, seed=42,
  bank=..., tokenizers=...)`` → the reference's summary dict (``scores_v2``,
  ``section_11``, ``router_accounting``, ``by_benchmark``, ``errors``, ``rows``), the numbers
  ``routeval crb eval --json`` prints.
* ``Tokenizers(dir=None, setup="native")``: the per-tier token counters, loaded once.
* ``routeval.crb.metrics``: ``CaseMetrics``, ``aggregate_routerbench_metrics``.
* ``sweep(scores, ...)``: ``routeval crb sweep`` (tier thresholds, frontier, calibrated
  choice of τ; ``routeval.sweep``).

Banks default to the public bank installed by ``routeval data fetch crb``; tokenizer files to
routeval's tokenizer cache (``routeval data fetch tokenizers``). Differences from the
reference: a predicted tier outside 0..3 raises ``CrbError`` when its record is made (the
reference raises ``KeyError`` later, while building the summary); a gold tier outside 0..3 is
rejected when rows are checked; ``build_eval_summary`` recounts ``errors`` and ``correct`` from
``per_row`` (they are consistent whenever ``per_row`` came from ``evaluate_question_bank_rows``).
"""

import json
import math
import os

from .. import _native
from . import metrics

__all__ = [
    "TierPrediction",
    "FunctionPredictor",
    "Tokenizers",
    "select_question_bank_rows",
    "evaluate_question_bank_rows",
    "build_eval_summary",
    "run_question_bank_eval",
    "rows_per_benchmark",
    "sweep",
    "metrics",
    "CrbError",
]

CrbError = _native.CrbError
Tokenizers = _native.CrbTokenizers

_FLOAT_KEYS = ("tier_match_accuracy", "accuracy_excluding_errors", "valid_response_rate")
_BLOCKS = ("scores_v2", "section_11", "router_accounting", "by_benchmark")


class TierPrediction:
    """A predictor's answer: ``tier_id`` (0 low, 1 mid, 2 mid_high, 3 high) and optional
    provider ``usage`` (copied to the record)."""

    __slots__ = ("tier_id", "usage")

    def __init__(self, tier_id, usage=None):
        self.tier_id = tier_id
        self.usage = usage

    def __repr__(self):
        return f"TierPrediction(tier_id={self.tier_id!r}, usage={self.usage!r})"


class FunctionPredictor:
    """``fn(row) -> int tier id`` as a predictor (the reference's ``FunctionPredictor``)."""

    def __init__(self, fn):
        self.fn = fn

    def predict(self, row):
        out = self.fn(row)
        if not isinstance(out, int):
            raise TypeError(f"predictor function must return int tier_id, got {type(out)}")
        return TierPrediction(out)


def _dumps(value):
    return json.dumps(value, ensure_ascii=False, allow_nan=True)


def _jsonl(rows):
    return "".join(_dumps(r) + "\n" for r in rows)


def _nan(v):
    """Non-finite floats come back from Rust as ``null``: the blocks hold numbers only."""
    if v is None:
        return math.nan
    if isinstance(v, dict):
        return {k: _nan(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_nan(x) for x in v]
    return v


def _default_bank():
    found = _native.crb_default_bank()
    if found is None:
        raise CrbError(
            "no bank given and no public CommonRouterBench bank in routeval's cache: run "
            "`routeval data fetch crb` (offline: `routeval data fetch crb --from DIR`), or pass "
            "shard=/bank= a question_bank.jsonl"
        )
    return found


def rows_per_benchmark(rows):
    """``{benchmark: count}``, sorted by name."""
    out = {}
    for r in rows:
        b = r.get("benchmark") if isinstance(r, dict) else None
        if not isinstance(b, str):
            raise CrbError(f"row id={r.get('id') if isinstance(r, dict) else r!r} missing string benchmark")
        out[b] = out.get(b, 0) + 1
    return dict(sorted(out.items()))


def select_question_bank_rows(*, n=None, seed=42, shard=None, manifest=None):
    """``(rows, sample_mode, quotas)``: every row in file order (``n=None``,
    ``"full_bank"``, quotas ``None``) or the reference's proportional sample of ``n`` rows
    (``"proportional_sample"``, per-benchmark quotas from ``manifest``: a dict, a path, or
    ``None`` for the published line counts, as the reference's shipped manifest)."""
    if shard is None:
        shard, _ = _default_bank()
    if isinstance(manifest, (str, bytes, os.PathLike)):
        with open(manifest, "rb") as f:
            manifest = json.loads(f.read())
    texts, mode, quotas = _native.crb_select_rows(
        os.fspath(shard), None if n is None else int(n), int(seed),
        None if manifest is None else _dumps(manifest))
    rows = [json.loads(t) for t in texts]
    return rows, mode, (dict(quotas) if quotas is not None else None)


def evaluate_question_bank_rows(predictor, rows, *, predictor_label=None, progress=None):
    """``(per_row, errors, correct)``: every row is checked first (``CrbError`` naming the
    row), then ``predictor.predict(row)`` is called per row in order; an exception it raises
    makes an error row (``{"id", "error": str(exc)}``), as in the reference."""
    rows = list(rows)
    text = _jsonl(rows)
    _native.crb_check_rows(text)
    preds = []
    n = len(rows)
    for i, row in enumerate(rows, 1):
        try:
            p = predictor.predict(row)
            tier = p.tier_id if isinstance(p, TierPrediction) else p
            if not isinstance(tier, int):
                raise TypeError(f"predictor must return int tier_id, got {type(tier)}")
            usage = getattr(p, "usage", None)
            preds.append((int(tier), None if usage is None else _dumps(usage)))
            if progress is not None:
                gold = row.get("target_tier_id")
                progress(f"[{i}/{n}] id={row.get('id')} benchmark={row.get('benchmark')} "
                         f"pred_tier_id={tier} gold_tier_id={gold} exact_match={tier == gold} "
                         f"pass_pred_ge_gold={tier >= gold}")
        except Exception as exc:  # noqa: BLE001 - the reference records every predictor error
            preds.append(str(exc))
            if progress is not None:
                progress(f"[{i}/{n}] id={row.get('id')} benchmark={row.get('benchmark')} "
                         f"pred_tier_id=<error> gold_tier_id={row.get('target_tier_id')} "
                         f"err={exc!r}")
    per_row = [json.loads(t) for t in _native.crb_make_records(text, preds)]
    errors = [{"id": r["id"], "error": r["error"]} for r in per_row if "error" in r]
    correct = sum(1 for r in per_row if r.get("match") is True)
    return per_row, errors, correct


_TOKENIZERS = {}


def _tokenizers(tokenizers, tokenizer_setup):
    if isinstance(tokenizers, Tokenizers):
        return tokenizers
    key = (None if tokenizers is None else os.path.expanduser(os.fspath(tokenizers)), tokenizer_setup)
    if key not in _TOKENIZERS:
        _TOKENIZERS[key] = Tokenizers(key[0], tokenizer_setup)
    return _TOKENIZERS[key]


def build_eval_summary(*, per_row, errors=None, correct=None, predictor_label, shard,
                       sample_mode, seed, proportional_quotas, benchmark_counts=None,
                       extra=None, tokenizers=None, tokenizer_setup="native"):
    """The reference's summary dict (keys in its order; ``extra`` keys first): counts,
    ``scores_v2``, ``section_11``, ``router_accounting``, ``by_benchmark``, ``errors``,
    ``rows``. Token counts use ``tokenizers`` (a ``Tokenizers``, a directory, or ``None`` for
    routeval's tokenizer cache). Fractions and percents as the reference names them."""
    del errors, correct  # recounted from per_row (see the module notes)
    selection = {"shard": str(shard), "sample_mode": sample_mode, "seed": seed,
                 "proportional_quotas": proportional_quotas,
                 "benchmark_counts": benchmark_counts}
    text = _native.crb_build_summary(
        [_dumps(r) for r in per_row], str(predictor_label), _dumps(selection),
        _tokenizers(tokenizers, tokenizer_setup), None if extra is None else _dumps(extra))
    s = json.loads(text)
    for k in _FLOAT_KEYS:
        if k in s:
            s[k] = _nan(s[k])
    for k in _BLOCKS:
        if k in s:
            s[k] = _nan(s[k])
    return s


def run_question_bank_eval(predictor, *, predictor_label="routeval", n=None, seed=42,
                           shard=None, bank=None, manifest=None, tokenizers=None,
                           tokenizer_setup="native", progress=None, extra_summary=None):
    """Select, evaluate and summarise (the reference's ``run_question_bank_eval``).
    ``bank`` is an alias of ``shard``; without either, the cached public bank (and, for
    ``n``, its manifest). ``predictor_label`` defaults to ``"routeval"`` (the reference
    requires it)."""
    if shard is not None and bank is not None and shard != bank:
        raise CrbError("give the bank once: shard= or bank=")
    shard = shard if shard is not None else bank
    if shard is None:
        shard, cached_manifest = _default_bank()
        if manifest is None and n is not None:
            manifest = cached_manifest
    rows, mode, quotas = select_question_bank_rows(n=n, seed=seed, shard=shard, manifest=manifest)
    per_row, errors, correct = evaluate_question_bank_rows(
        predictor, rows, predictor_label=predictor_label, progress=progress)
    return build_eval_summary(
        per_row=per_row, errors=errors, correct=correct, predictor_label=predictor_label,
        shard=shard, sample_mode=mode, seed=seed, proportional_quotas=quotas,
        benchmark_counts=rows_per_benchmark(rows), extra=extra_summary,
        tokenizers=tokenizers, tokenizer_setup=tokenizer_setup)


def sweep(scores, *, bank=None, thresholds=None, target_pass_rate=None, max_cost_usd=None,
          pass_rate="trajectory", calibrate_on=None, calibrate_fraction=None, manifest=None,
          n=None, benchmark=None, where=None, on_missing_key=None, seed=42, tokenizers=None,
          tokenizer_setup="native"):
    """``routeval crb sweep``: the threshold of a tier router emitting ``tier_probs =
    [p_low, p_mid, p_mid_high, p_high]`` per bank row. At τ a row goes to the cheapest tier
    whose cumulative probability reaches τ (``high`` if none).

    ``scores``: a JSON Lines path or records ``{"id", "tier_probs"}``. The other arguments
    are the CLI's options: the bank selection of ``crb eval`` (``bank``, default the cached
    public bank; ``manifest``, ``n``, ``seed``, ``benchmark``, ``where``, ``on_missing_key``),
    its tokenizers (``tokenizers`` = a directory, ``tokenizer_setup``), ``thresholds``
    (``"A:B:STEP"``, a comma list or numbers), ``target_pass_rate`` (percent) or
    ``max_cost_usd``, ``pass_rate`` (``"trajectory"`` or ``"case"``), ``calibrate_on`` (a
    ``where`` query: a dict or JSON text) or ``calibrate_fraction`` (with ``seed``).
    Returns a ``routeval.sweep.CrbSweepReport`` (``to_dict()`` == ``--json``)."""
    from ..sweep import crb_sweep

    return crb_sweep(scores, bank=bank, thresholds=thresholds, target_pass_rate=target_pass_rate,
                     max_cost_usd=max_cost_usd, pass_rate=pass_rate, calibrate_on=calibrate_on,
                     calibrate_fraction=calibrate_fraction, manifest=manifest, n=n,
                     benchmark=benchmark, where=where, on_missing_key=on_missing_key, seed=seed,
                     tokenizers=tokenizers, tokenizer_setup=tokenizer_setup)
