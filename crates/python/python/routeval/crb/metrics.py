"""CommonRouterBench's ``main.metrics``: ``CaseMetrics`` and
``aggregate_routerbench_metrics`` (numbers from ``routeval_routing_scores::crb::metrics``,
the same as ``routeval crb metrics --cases FILE``)."""

import json
import math

from .. import _native

__all__ = ["CaseMetrics", "StepCost", "case_metrics_from_dict", "aggregate_routerbench_metrics"]


class StepCost:
    """One step of a path: ``completion_tokens``, ``model`` (a model id) or ``tier``."""

    __slots__ = ("completion_tokens", "model", "tier")

    def __init__(self, completion_tokens, model=None, tier=None):
        self.completion_tokens = completion_tokens
        self.model = model
        self.tier = tier

    def to_dict(self):
        d = {"completion_tokens": self.completion_tokens}
        if self.model is not None:
            d["model"] = self.model
        if self.tier is not None:
            d["tier"] = self.tier
        return d


class CaseMetrics:
    """One case: ``case_id``, ``task_passed`` and the baseline/optimal/test costs (USD,
    nominal) or ``*_steps`` lists (which replace them: fixed tier rates × completion
    tokens)."""

    _FIELDS = ("baseline_cost_nominal", "optimal_cost_nominal", "test_cost_nominal",
               "baseline_steps", "optimal_steps", "test_steps")

    def __init__(self, case_id, task_passed, baseline_cost_nominal=None,
                 optimal_cost_nominal=None, test_cost_nominal=None, baseline_steps=None,
                 optimal_steps=None, test_steps=None):
        self.case_id = case_id
        self.task_passed = task_passed
        self.baseline_cost_nominal = baseline_cost_nominal
        self.optimal_cost_nominal = optimal_cost_nominal
        self.test_cost_nominal = test_cost_nominal
        self.baseline_steps = baseline_steps
        self.optimal_steps = optimal_steps
        self.test_steps = test_steps

    def to_dict(self):
        d = {"case_id": self.case_id, "task_passed": self.task_passed}
        for k in self._FIELDS:
            v = getattr(self, k)
            if v is None:
                continue
            if k.endswith("_steps"):
                v = [s.to_dict() if isinstance(s, StepCost) else s for s in v]
            d[k] = v
        return d


def case_metrics_from_dict(d):
    """A ``CaseMetrics`` from a case dict (checked when aggregated)."""
    return CaseMetrics(d["case_id"], d["task_passed"], **{k: d.get(k) for k in CaseMetrics._FIELDS})


def aggregate_routerbench_metrics(cases, *, cap_cost_score_at_100=False):
    """The reference's aggregate of ``cases`` (``CaseMetrics`` or dicts): ``valid_cases``,
    ``passed_cases``, ``pass_rate`` (fraction), ``cost_savings_score`` (percent, NaN when no
    passed case has a positive ``save_gt``), ``money_saved_test`` (USD), ... Raises
    ``CrbError`` (a ``ValueError``) with the reference's messages."""
    dicts = [c.to_dict() if isinstance(c, CaseMetrics) else c for c in cases]
    out = json.loads(_native.crb_aggregate_metrics(json.dumps(dicts, allow_nan=True),
                                                   bool(cap_cost_score_at_100)))
    if out.get("cost_savings_score", 0) is None:
        out["cost_savings_score"] = math.nan
    money = out.get("money_saved_test", {})
    if money.get("mean_per_case_over_passed", 0) is None:
        money["mean_per_case_over_passed"] = math.nan
    return out
