"""Cost-quality frontiers of routers: ``routeval frontier`` from Python.

* ``frontier(points, method="hull")``: per system RouterBench's non-decreasing convex hull
  (NDCH), AIQ (area under it over the largest cost, withmartian/routerbench
  ``evaluation/AIQ.py``) and the Pareto set. ``method="routerbench"`` runs the reference's own
  pairwise algorithm with its quirks (systems where it crashes get the hull and a note).
* ``strong_share(points, weak_quality, strong_quality)``: RouteLLM's AUC, APGR and CPT(20/50/80)
  over the share of strong-model calls (lm-sys/RouteLLM ``routellm/evals/evaluate.py``).
* ``ndch``, ``aiq``, ``pareto``, ``pareto_indices``: the building blocks on plain ``(cost,
  quality)`` lists; ``ndch`` and ``pareto`` return points, as the reports' ``ndch`` and
  ``pareto`` fields hold them.

``points`` is a path to a JSON Lines file (the CLI's input), an iterable of dicts
(``{"system", "cost", "quality", "param"?}``, or ``{"system", "strong_pct", "quality"}``) or a
pandas DataFrame with those columns. Reports have ``to_dict()`` equal to ``routeval frontier
--json`` and ``notes`` (what the CLI prints on stderr). Bad points raise ``FrontierError`` (a
``ValueError``) naming the point's line (1-based position for in-memory points).
"""

import json
import math
import os
from dataclasses import dataclass, field
from typing import Optional

from . import _native

__all__ = [
    "frontier",
    "strong_share",
    "ndch",
    "aiq",
    "pareto",
    "pareto_indices",
    "FrontierReport",
    "SystemFrontier",
    "StrongShareReport",
    "SystemStrongShare",
    "FrontierError",
]

FrontierError = _native.FrontierError


def _num(x):
    return float("nan") if x is None else x


def _jsonl(points):
    """``(bytes, source)`` of the points as JSON Lines."""
    if isinstance(points, (str, os.PathLike)):
        path = os.fspath(points)
        try:
            with open(path, "rb") as f:
                return f.read(), path
        except OSError as e:
            # The documented exception, with the CLI's wording (a missing or unreadable file).
            raise FrontierError(f"{path}: cannot read: {e.strerror or e}") from e
    if hasattr(points, "to_dict") and hasattr(points, "columns"):  # a pandas DataFrame
        points = points.to_dict(orient="records")
    lines = []
    for i, p in enumerate(points):
        if not isinstance(p, dict):
            raise FrontierError(f"<points>:{i + 1}: expected a dict, got {type(p).__name__}")
        try:
            lines.append(json.dumps(p, allow_nan=False))
        except ValueError:
            bad = [k for k, v in p.items() if isinstance(v, float) and not math.isfinite(v)]
            raise FrontierError(f"<points>:{i + 1}: \"{bad[0]}\" must be a finite number") from None
    return ("\n".join(lines) + "\n").encode("utf-8"), "<points>"


@dataclass(frozen=True)
class SystemFrontier:
    """One system's frontier."""

    system: str
    #: RouterBench's AIQ (NaN when undefined).
    aiq: float
    #: The NDCH, ``[(cost, quality)]`` in increasing cost.
    ndch: list
    #: The Pareto set, ``[(cost, quality)]`` in increasing cost.
    pareto: list
    #: The ``param`` of each Pareto point, when any point had one.
    pareto_params: Optional[list] = None


@dataclass(frozen=True)
class FrontierReport:
    """``routeval frontier --json``: ``max_cost`` (the AIQ's cost range) and ``systems`` in
    order of first appearance."""

    max_cost: float
    systems: list
    notes: list = field(default_factory=list)
    _dict: dict = field(default=None, repr=False, compare=False)

    def to_dict(self):
        """The report as ``routeval frontier --json`` prints it (a fresh copy)."""
        return json.loads(json.dumps(self._dict))

    def to_frame(self):
        """One row per system (``system``, ``aiq``, ``ndch_points``, ``pareto_points``) as a
        pandas DataFrame (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(
            [
                {"system": s.system, "aiq": s.aiq, "ndch_points": len(s.ndch), "pareto_points": len(s.pareto)}
                for s in self.systems
            ]
        )


@dataclass(frozen=True)
class SystemStrongShare:
    """One system's RouteLLM metrics."""

    system: str
    #: Area under quality over the strong share as a fraction.
    auc: float
    #: Average performance gap recovered (NaN when weak == strong quality).
    apgr: float
    #: ``{20: pct, 50: pct, 80: pct}``: strong share (percent) reaching x % of the gap.
    cpt: dict


@dataclass(frozen=True)
class StrongShareReport:
    """``routeval frontier --strong-share --json``: ``weak``, ``strong`` and ``systems``."""

    weak: float
    strong: float
    systems: list
    notes: list = field(default_factory=list)
    _dict: dict = field(default=None, repr=False, compare=False)

    def to_dict(self):
        """The report as ``routeval frontier --strong-share --json`` prints it."""
        return json.loads(json.dumps(self._dict))

    def to_frame(self):
        """One row per system (``system``, ``auc``, ``apgr``, ``cpt_20``, ``cpt_50``,
        ``cpt_80``; CPT in percent of strong-model calls, NaN where not reached) as a pandas
        DataFrame (needs pandas), the table ``routeval frontier --strong-share`` prints."""
        import pandas as pd

        return pd.DataFrame(
            [
                {
                    "system": s.system,
                    "auc": s.auc,
                    "apgr": s.apgr,
                    **{f"cpt_{x}": _num(s.cpt.get(x)) for x in (20, 50, 80)},
                }
                for s in self.systems
            ]
        )


def frontier(points, method="hull"):
    """Per system NDCH, AIQ and Pareto set of cost-quality points (see the module docs)."""
    data, source = _jsonl(points)
    text, notes = _native.frontier_report_jsonl(data, source, str(method))
    d = json.loads(text)
    systems = [
        SystemFrontier(
            system=s["system"],
            aiq=_num(s["aiq"]),
            ndch=[tuple(p) for p in s["ndch"]],
            pareto=[tuple(p) for p in s["pareto"]],
            pareto_params=s.get("pareto_params"),
        )
        for s in d["systems"]
    ]
    return FrontierReport(max_cost=_num(d["max_cost"]), systems=systems, notes=notes, _dict=d)


def strong_share(points, weak_quality, strong_quality):
    """RouteLLM's AUC, APGR and CPT per system from ``{"system", "strong_pct",
    "quality"}`` points (``strong_pct`` in percent, 0..100)."""
    data, source = _jsonl(points)
    text, notes = _native.strong_share_report_jsonl(data, source, float(weak_quality), float(strong_quality))
    d = json.loads(text)
    systems = [
        SystemStrongShare(
            system=s["system"],
            auc=_num(s["auc"]),
            apgr=_num(s["apgr"]),
            cpt={int(k): _num(v) for k, v in s["cpt"].items()},
        )
        for s in d["systems"]
    ]
    return StrongShareReport(weak=_num(d["weak"]), strong=_num(d["strong"]), systems=systems, notes=notes, _dict=d)


def ndch(points, method="hull"):
    """One system's NDCH of ``[(cost, quality)]``, in increasing cost. With
    ``method="routerbench"``, ``None`` where RouterBench's algorithm crashes (no point
    strictly between the cheapest and the most expensive cost)."""
    return _native.frontier_ndch([(float(c), float(q)) for c, q in points], str(method))


def aiq(ndchs):
    """RouterBench's AIQ of several NDCHs: ``(max_cost, [aiq per NDCH])``. An empty list
    (or an NDCH without points) raises ``FrontierError``: there is no cost range to
    integrate over (it gave ``-inf``)."""
    ndchs = [list(h) for h in ndchs]
    if not ndchs or any(not h for h in ndchs):
        raise FrontierError("aiq needs at least one NDCH, each with at least one point")
    return _native.frontier_aiq([[(float(c), float(q)) for c, q in h] for h in ndchs])


def pareto(points):
    """The Pareto-optimal ``(cost, quality)`` points, in increasing cost: the same shape as
    ``ndch`` returns and as ``SystemFrontier.pareto`` holds. ``pareto_indices`` gives their
    positions in ``points`` instead. Negative or non-finite values raise ``FrontierError``."""
    pts = [(float(c), float(q)) for c, q in points]
    return [pts[i] for i in _native.frontier_pareto(pts)]


def pareto_indices(points):
    """Positions in ``points`` of the Pareto-optimal points, in increasing cost (what
    ``pareto`` returns, as indices)."""
    return _native.frontier_pareto([(float(c), float(q)) for c, q in points])
