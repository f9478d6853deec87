"""Is run B really better than the baseline A? ``routeval compare`` from Python.

* ``compare_runs(qrels_path, baseline_path, run_paths, measures=None, ...)``: the CLI's
  ``routeval compare QRELS BASELINE RUN...`` on plain TREC files. Every run is scored with
  trec_eval 10.0's measures (as the CLI; not pytrec_eval's 9.0.8) on every judged query
  (``-c``: a query without results scores 0), then compared with the baseline (or every pair)
  by a paired test, the p-values corrected over the whole table.
* ``compare_scores({system: {measure: [per-unit values]}}, ...)``: the same statistics on
  per-unit scores computed elsewhere (per-case rag metrics, per-query values of
  ``routeval.trec``, per-step CRB costs); the first system is the baseline.

Both return a ``ComparisonReport``; ``report.to_dict()`` is exactly what ``routeval compare
--json`` prints (NaN as ``None``), ``report.table(format)`` the table of ``--format
text|md|latex|csv``, ``report.to_html(path=None)`` / ``report.to_markdown()`` the report of
``--html`` (rendered from the same typed value by the CLI's presentation crates), and
``report.significantly_worse()`` is the ``--fail-if-worse`` gate. Arguments keep the CLI's names and defaults: ``test`` ``"t"``
(scipy.stats.ttest_rel), ``"wilcoxon"`` (scipy.stats.wilcoxon's defaults), ``"fisher"``
(sign-flip randomization, exact for <= 20 units) or ``"bootstrap"``; ``correction`` ``None`` (= ``"holm"``),
``"holm"``, ``"bonferroni"`` or ``"none"`` (statsmodels multipletests); ``ci=0.95`` (``None`` = no
intervals, the CLI's ``--no-ci``), ``bootstrap=1000`` replicates, ``iterations=10000``,
``seed=42`` (the one default seed of every routeval subcommand), ``alpha=0.05``,
``all_pairs=False``. ``iterations`` and ``bootstrap`` are at most 10**7 (as the CLI); a long
comparison can be interrupted with Ctrl-C (``KeyboardInterrupt``).

Edge cases: a comparison on one unit, on a constant difference (zero variance) or on a NaN/inf
value has ``p_value`` ``None``, ``significant`` ``False`` and a ``note``; an interval that is
no confidence statement has ``ci_degenerate`` (its reason).

Many systems at once (at least three): ``test="tukey"`` (Tukey's HSD with the two-way
ANOVA's MSE, scipy.stats.studentized_range) or ``test="randomized-tukey"`` (Carterette 2012,
``iterations`` permutations) compare every pair and control the family-wise error
themselves (``correction`` must then be left at ``None``); ``anova=True`` adds the two-way
ANOVA per measure (``report.anova``, as statsmodels' ``anova_lm``); ``risk=[1, 5]`` adds
URisk / TRisk / GeoRisk against the baseline per loss weight (``SystemSummary.risk``).
With a Tukey test, ``SystemSummary.letters`` holds the compact letter display.
"""

import json
import math
import numbers
import os
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Optional

from . import _native

__all__ = [
    "compare_runs",
    "compare_scores",
    "ComparisonReport",
    "Comparison",
    "SystemSummary",
    "PairReport",
    "CompareError",
    "DEFAULT_MEASURES",
]

CompareError = _native.CompareError

#: The measures ``routeval compare`` compares when none is given.
DEFAULT_MEASURES = ("map", "ndcg_cut.10", "P.10", "recall.100", "recip_rank")


def _num(x):
    return float("nan") if x is None else x


@dataclass(frozen=True)
class Comparison:
    """One paired comparison (a run against its reference, on one measure)."""

    #: Run mean minus reference mean.
    delta: float
    #: Raw two-sided p-value of the test.
    p_value: float
    #: p-value after the correction over the whole table.
    p_adjusted: float
    #: Rejected at ``alpha`` after the correction.
    significant: bool
    #: Cohen's d_z of the per-unit differences (``None`` when their sd is 0).
    effect_size: Optional[float]
    #: Paired bootstrap percentile CI ``(low, high)`` of the mean difference, or ``None``.
    ci: Optional[tuple]
    #: Units where the run scores higher / equal / lower.
    wins: int
    ties: int
    losses: int
    #: Why the test had no evidence behind it (one unit, zero variance, a NaN/inf value;
    #: then ``p_value`` is NaN and ``significant`` False), else ``None``.
    note: Optional[str] = None
    #: Why ``ci`` must not be read as a confidence statement (too few units, zero width),
    #: else ``None``.
    ci_degenerate: Optional[str] = None

    @classmethod
    def _from(cls, d):
        ci = d.get("ci")
        return cls(
            delta=_num(d["delta"]),
            p_value=_num(d["p_value"]),
            p_adjusted=_num(d["p_adjusted"]),
            significant=bool(d["significant"]),
            effect_size=d.get("effect_size"),
            ci=None if ci is None else (_num(ci[0]), _num(ci[1])),
            wins=d["wins"],
            ties=d["ties"],
            losses=d["losses"],
            note=d.get("note"),
            ci_degenerate=d.get("ci_degenerate"),
        )


@dataclass(frozen=True)
class SystemSummary:
    """One system of the report: its headline value per measure and, except for the
    baseline, its comparison with the baseline per measure."""

    name: str
    path: str
    #: ``{measure: value}`` (trec_eval's summary value for TREC runs).
    means: dict
    #: ``{measure: Comparison}``, ``None`` for the baseline.
    vs_baseline: Optional[dict] = None
    #: ``{measure: letters}`` with a Tukey test (runs sharing a letter do not differ
    #: significantly), else ``None``.
    letters: Optional[dict] = None
    #: ``{measure: [{"alpha", "urisk", "trisk", "georisk"}, ...]}`` with ``risk=``, else
    #: ``None`` (``urisk``/``trisk`` are ``None`` for the baseline and where undefined).
    risk: Optional[dict] = None


@dataclass(frozen=True)
class PairReport:
    """System ``b`` compared with system ``a`` (``all_pairs=True``)."""

    a: str
    b: str
    #: ``{measure: Comparison}``.
    vs: dict


@dataclass(frozen=True)
class ComparisonReport:
    """The report of ``routeval compare``: ``measures``, ``queries`` (paired units),
    ``test``, ``correction``, ``alpha``, ``runs`` (baseline first), ``pairs`` (with
    ``all_pairs``), plus ``notes`` (what the CLI prints on stderr)."""

    measures: list
    queries: int
    test: str
    correction: str
    alpha: float
    runs: list
    pairs: Optional[list] = None
    notes: list = field(default_factory=list)
    #: ``{measure: {"f", "p_value", "df_systems", "df_queries", "df_residual", "mse",
    #: "ss_systems", "ss_queries", "ss_residual"}}`` with ``anova=True`` or a Tukey test.
    anova: Optional[dict] = None
    _dict: dict = field(default=None, repr=False, compare=False)
    _worse: tuple = field(default=(), repr=False, compare=False)
    _render: object = field(default=None, repr=False, compare=False)
    _call: str = field(default="routeval.compare", repr=False, compare=False)

    @classmethod
    def _from_native(cls, text, worse, notes=(), render=None, call="routeval.compare"):
        d = json.loads(text)
        runs = [
            SystemSummary(
                name=r["name"],
                path=r["path"],
                means={k: _num(v) for k, v in r["means"].items()},
                vs_baseline=None
                if "vs_baseline" not in r
                else {k: Comparison._from(v) for k, v in r["vs_baseline"].items()},
                letters=r.get("letters"),
                risk=r.get("risk"),
            )
            for r in d["runs"]
        ]
        pairs = None
        if "pairs" in d:
            pairs = [
                PairReport(a=p["a"], b=p["b"], vs={k: Comparison._from(v) for k, v in p["vs"].items()})
                for p in d["pairs"]
            ]
        return cls(
            measures=d["measures"],
            queries=d["queries"],
            test=d["test"],
            correction=d["correction"],
            alpha=d["alpha"],
            runs=runs,
            pairs=pairs,
            notes=list(notes) + [f"note: {n}" for n in d.get("notes", [])],
            anova=d.get("anova"),
            _dict=d,
            _worse=tuple(worse),
            _render=render,
            _call=call,
        )

    def table(self, format="text"):
        """The table ``routeval compare --format FORMAT`` prints, from the same typed report
        (``"text"``, ``"md"``, ``"latex"`` or ``"csv"``): run means with their differences and
        significance letters, the legend, the notes on tests and intervals without evidence,
        the many-systems blocks."""
        return self._render.table(str(format))

    def to_markdown(self):
        """The Markdown report (what ``routeval compare --html`` shows, as Markdown): headline,
        tables, per-query difference plots' data, notes and a provenance block (the call,
        each input file's size and blake3, the version, the date: ``$SOURCE_DATE_EPOCH`` when
        set)."""
        return self._render.markdown(self._call)

    def to_html(self, path=None):
        """The self-contained HTML report ``routeval compare --html`` writes (inline SVG
        plots, no script). Returns the text; with ``path`` also writes it there atomically
        (a temporary file in the same directory, then a rename)."""
        text = self._render.html(self._call)
        if path is not None:
            _write_atomically(os.fspath(path), text)
        return text

    def _repr_html_(self):
        return self._render.html(self._call)

    def to_dict(self):
        """The report as ``routeval compare --json`` prints it (a fresh copy)."""
        return json.loads(json.dumps(self._dict))

    def to_frame(self):
        """One row per comparison, as ``routeval compare --format csv`` (``baseline``, ``run``,
        ``measure``, ``baseline_mean``, ``run_mean``, ``delta``, ``p_value``, ``p_adjusted``,
        ``significant``, ``effect_size``, ``ci_low``, ``ci_high``, ``wins``, ``ties``,
        ``losses``, ``note``, ``ci_degenerate``): every pair with ``all_pairs`` or a Tukey test, else each run against the
        baseline. A pandas DataFrame (needs pandas)."""
        import pandas as pd

        means = {r.name: r.means for r in self.runs}
        if self.pairs is not None:
            items = [(p.a, p.b, p.vs) for p in self.pairs]
        else:
            base = self.runs[0].name
            items = [(base, r.name, r.vs_baseline) for r in self.runs[1:]]
        rows = []
        for a, b, vs in items:
            for m, c in vs.items():
                rows.append({
                    "baseline": a, "run": b, "measure": m,
                    "baseline_mean": means[a][m], "run_mean": means[b][m],
                    "delta": c.delta, "p_value": c.p_value, "p_adjusted": c.p_adjusted,
                    "significant": c.significant, "effect_size": c.effect_size,
                    "ci_low": None if c.ci is None else c.ci[0],
                    "ci_high": None if c.ci is None else c.ci[1],
                    "wins": c.wins, "ties": c.ties, "losses": c.losses,
                    "note": c.note, "ci_degenerate": c.ci_degenerate,
                })
        return pd.DataFrame(rows)

    def significantly_worse(self):
        """``[(run name, measure)]`` of the runs significantly worse than the baseline (a
        negative delta, significant after the correction): ``--fail-if-worse``'s failures."""
        return [(self.runs[r].name, self.measures[m]) for r, m in self._worse]

    @property
    def ok(self):
        """No run is significantly worse than the baseline (the CLI's gate passes)."""
        return not self._worse


def _write_atomically(path, text):
    import tempfile

    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".routeval-", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _call(name, *args, **kwargs):
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items() if v is not None]
    return f"routeval.{name}({', '.join(parts)})"


MAX_REPLICATES = 10_000_000
"""The most ``iterations`` / ``bootstrap`` replicates accepted (the CLI's cap)."""


def _test_args(test, iterations, seed, correction, alpha, ci, bootstrap, all_pairs, anova, risk):
    if isinstance(risk, (int, float)):
        risk = [risk]
    for name, v in (("iterations", iterations), ("bootstrap", bootstrap)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 1 <= v <= MAX_REPLICATES:
            raise CompareError(f"{name} must be an integer in 1..={MAX_REPLICATES}, got {v!r}")
    return dict(
        test=str(test),
        iterations=int(iterations),
        seed=int(seed),
        correction=None if correction is None else str(correction),
        alpha=float(alpha),
        ci=None if ci is None else float(ci),
        bootstrap=int(bootstrap),
        all_pairs=bool(all_pairs),
        anova=bool(anova),
        risk=[float(a) for a in (risk or ())],
    )


def _unit_values(system, measure, values):
    """The per-unit values of one system and measure as floats: real numbers only (a numeric
    string, a bool or None is refused, not converted), finite, at least one."""
    if isinstance(values, (str, bytes, Mapping)):
        raise CompareError(f"system '{system}', measure {measure}: expected a list of numbers")
    out = []
    for u, v in enumerate(values):
        if isinstance(v, (bool, str, bytes)) or not isinstance(v, numbers.Real):
            raise CompareError(
                f"system '{system}', measure {measure}: unit {u} is {v!r}, not a number"
            )
        x = float(v)
        if not math.isfinite(x):
            raise CompareError(
                f"system '{system}', measure {measure}: unit {u} is "
                f"{'NaN' if math.isnan(x) else x}, not a finite number"
            )
        out.append(x)
    if not out:
        raise CompareError(f"system '{system}', measure {measure}: no units")
    return out


def compare_runs(
    qrels_path,
    baseline_path,
    run_paths,
    measures=None,
    *,
    relevance_level=1,
    judged_docs_only=False,
    num_docs_in_coll=0,
    max_docs_per_topic=None,
    test="t",
    iterations=10_000,
    seed=42,
    correction=None,
    alpha=0.05,
    ci=0.95,
    bootstrap=1000,
    all_pairs=False,
    anova=False,
    risk=(),
    names=None,
    ties=False,
):
    """``routeval compare QRELS BASELINE RUN... [-m M]... --json`` as a ``ComparisonReport``.

    ``measures``: trec_eval ``-m`` arguments (``"map"``, ``"P.5,10"``); default
    ``DEFAULT_MEASURES``; measures without per-query values (``gm_map``, ``num_q``) raise.
    Files are plain text (the CLI also reads compressed files). Runs are named by their run
    tag, by the file stem where tags repeat; ``names={run path or name: display name}`` is the
    CLI's ``--name RUN=NAME``; ``ties=True`` (``--ties``) adds each run's ``"ties"`` object
    (min / max / expected of every measure over the orders of tied documents) to
    ``to_dict()``. A run with no results for some judged queries gets a note
    naming them; one with results for none of them raises. Raises ``CompareError`` (a
    ``ValueError``) with the CLI's message for bad input."""
    if isinstance(run_paths, (str, os.PathLike)):
        run_paths = [run_paths]
    if isinstance(measures, str):
        measures = [measures]
    text, worse, notes, render = _native.compare_trec_files(
        os.fspath(qrels_path),
        [os.fspath(baseline_path)] + [os.fspath(p) for p in run_paths],
        None if measures is None else [str(m) for m in measures],
        int(relevance_level),
        bool(judged_docs_only),
        int(num_docs_in_coll),
        None if max_docs_per_topic is None else int(max_docs_per_topic),
        **_test_args(
            test, iterations, seed, correction, alpha, ci, bootstrap, all_pairs, anova, risk
        ),
        names=[(os.fspath(k), str(v)) for k, v in (names or {}).items()],
        ties=bool(ties),
    )
    call = _call(
        "compare_runs",
        os.fspath(qrels_path),
        os.fspath(baseline_path),
        [os.fspath(p) for p in run_paths],
        measures=measures,
        test=test,
        ties=ties or None,
    )
    return ComparisonReport._from_native(text, worse, notes, render, call)


def compare_scores(
    scores,
    *,
    means=None,
    paths=None,
    test="t",
    iterations=10_000,
    seed=42,
    correction=None,
    alpha=0.05,
    ci=0.95,
    bootstrap=1000,
    all_pairs=False,
    anova=False,
    risk=(),
):
    """Compare systems on per-unit scores: ``scores`` is ``{system: {measure: [value per
    unit]}}`` (the first system is the baseline; every system has the same measures and the
    same units in the same order; no NaN). ``means`` optionally gives ``{system: {measure:
    headline value}}`` (default: the arithmetic mean); ``paths`` ``{system: str}`` fills the
    report's ``path``. Returns a ``ComparisonReport``."""
    if not scores:
        raise CompareError("compare needs a baseline and at least one other system")
    systems = list(scores.items())
    measure_names = list(systems[0][1].keys())
    rows = []
    for name, by_measure in systems:
        if list(by_measure.keys()) != measure_names:
            raise CompareError(
                f"system '{name}' has measures {list(by_measure)}, the baseline {measure_names}"
            )
        cols = [_unit_values(name, m, by_measure[m]) for m in measure_names]
        m = None
        if means is not None and name in means:
            m = [float(means[name][k]) for k in measure_names]
        path = "" if paths is None else str(paths.get(name, ""))
        rows.append((str(name), path, cols, m))
    text, worse, render = _native.compare_scores(
        [str(m) for m in measure_names],
        rows,
        **_test_args(
            test, iterations, seed, correction, alpha, ci, bootstrap, all_pairs, anova, risk
        ),
    )
    call = _call("compare_scores", {name: "..." for name, _ in systems}, test=test)
    return ComparisonReport._from_native(text, worse, (), render, call)
