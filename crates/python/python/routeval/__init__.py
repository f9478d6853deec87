"""routeval: evaluate LLM routers and retrievers (Rust inside).

Submodules (imported on first use, so ``import routeval`` stays fast):

* ``routeval.trec``: a drop-in for ``pytrec_eval`` (trec_eval-exact measures), plus
  ``evaluate_files`` and a picklable, mergeable ``Accumulator`` for sharded runs.
* ``routeval.rag``: a drop-in for ``rag_quality_check`` 0.1.0 (``evaluate``,
  ``evaluate_case``, the report object).
* ``routeval.where``: flexeval's ``where`` language (``compile``, ``filter``).
* ``routeval.gqr``: a drop-in for GQR-Bench's ``gqr`` (loaders over a routeval build,
  ``score``, ``score_batch``, ``score_unseen``, ``score_unseen_batch``, ``Accumulator``).
* ``routeval.crb``: CommonRouterBench's eval API (``FunctionPredictor``,
  ``run_question_bank_eval``, ``select_question_bank_rows``, ``evaluate_question_bank_rows``,
  ``build_eval_summary``, ``metrics.aggregate_routerbench_metrics``).
* ``routeval.compare``: ``routeval compare`` (paired tests, corrected p-values, CIs, gates).
* ``routeval.frontier``: ``routeval frontier`` (NDCH, AIQ, Pareto sets; RouteLLM AUC/APGR/CPT).
* ``routeval.sweep``: the threshold sweeps behind ``routeval.crb.sweep`` and
  ``routeval.gqr.sweep`` (``routeval crb sweep`` / ``routeval gqr sweep``).

Every error routeval raises is a ``routeval.RoutevalError``, a subclass of ``ValueError``.
"""

import importlib

__version__ = "0.1.0"
__all__ = ["RoutevalError", "TrecError", "RagError", "WhereError", "GqrError", "CrbError", "trec", "rag",
           "where", "gqr", "crb", "compare", "frontier", "sweep"]

_SUBMODULES = {"trec", "rag", "where", "gqr", "crb", "compare", "frontier", "sweep"}
_ERRORS = {"RoutevalError", "TrecError", "RagError", "WhereError", "GqrError", "CrbError"}


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _ERRORS:
        from . import _native

        return getattr(_native, name)
    raise AttributeError(f"module 'routeval' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES | _ERRORS)
