"""How many queries do I need? Topic set size design from a pilot's per-query values.

``plan_values(values, query_ids, delta=0.02)`` takes the per-query values of two or more runs over a pilot
query set (``values[run][measure]``), estimates each measure's variance, and returns a ``TopicSetPlan``: for
each measure the number of queries each design needs to detect ``delta`` (``compare.sample_size`` computes
them exactly), the normal approximation beside where the literature quotes one, the range of query counts the
variance estimate's own uncertainty allows, the pilot's power for ``delta`` and the delta a number of queries
detects. ``plan_runs(qrels, runs, delta=0.02)`` evaluates the runs first, as ``compare`` does.

The variance (Sakai, "Topic set size design", IRJ 2016; EVIA 2014):

* two runs: the variance of the per-query differences, n - 1 degrees of freedom; the design is the paired
  t-test (and the interval of the difference);
* more runs: the residual variance V_E of a two-way ANOVA without replication (queries x runs), (m - 1)(n - 1)
  degrees of freedom; the designs are the one-way ANOVA (delta the range between the best and worst runs) and
  the Tukey HSD over all pairs (delta a pair's difference); an interval of a pair's difference has the
  variance 2 V_E.

A variance estimated from n queries is itself uncertain: df s^2 / sigma^2 is chi-square with df degrees of
freedom, so its ``confidence`` interval (``sample_size.variance_interval``) gives a range of query counts.
Eight queries put the variance within a factor of about ten; the plan says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from trec_rag_eval.arguments import check_count, check_fractions, check_positive, check_runs
from trec_rag_eval.compare import sample_size
from trec_rag_eval.compare.per_query import per_query_arrays
from trec_rag_eval.compare.stats import TIE_TOLERANCE
from trec_rag_eval.core.frames import frame
from trec_rag_eval.errors import UsageError
from trec_rag_eval.notes import warning
from trec_rag_eval.number_formats import format_magnitude
from trec_rag_eval.renderer_registry import show, shown_by
from trec_rag_eval.value_equality import same_fields

if TYPE_CHECKING:
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.measures.requests import MeasuresArg
    from trec_rag_eval.tables import Qrels, Run

DESIGNS = {
    "paired_t": "paired t-test",
    "anova": "one-way ANOVA",
    "tukey_hsd": "Tukey HSD",
    "ci_width": "interval width",
}
"""Each design's key (JSON, CSV, DataFrames) and its name in the text."""

WIDE_RANGE = 2.0
"""A range of query counts whose ends differ by this factor or more is called wide, with the reason."""


@dataclass(frozen=True)
class DesignSize:
    """What one design needs on one measure. ``queries`` is the smallest number of queries meeting the
    requirement (None: more than ``sample_size.MAX_QUERIES``, or no variance to plan from);
    ``approx_queries`` the normal approximation's (None where the literature quotes none); ``queries_low``
    to ``queries_high`` the counts at the ends of the variance's interval. ``pilot_power`` is the power the
    pilot's queries have for the plan's delta; ``detectable_delta`` and ``power_at_queries`` are the delta
    found with the plan's power and the power for its delta at the plan's ``at_queries``. A width design has
    no power: those are NaN."""

    design: str
    queries: int | None
    approx_queries: int | None
    queries_low: int | None
    queries_high: int | None
    pilot_power: float
    detectable_delta: float
    power_at_queries: float

    @property
    def name(self) -> str:
        return DESIGNS[self.design]


@dataclass(frozen=True)
class MeasurePlan:
    """One measure's variance estimate, its interval, and what each design needs."""

    measure: str
    variance: float
    variance_df: int
    variance_low: float
    variance_high: float
    designs: list[DesignSize]
    # the width of the range one query's value can take (1 for nDCG@10), NaN when unknown: a detectable delta
    # beyond it is more than the measure can differ by
    value_span: float = math.nan

    @property
    def sd(self) -> float:
        return math.sqrt(self.variance)

    @property
    def plannable(self) -> bool:
        """False when the pilot's values do not vary (no variance to plan from)."""
        return self.variance > 0

    def design(self, key: str) -> DesignSize:
        for size in self.designs:
            if size.design == key:
                return size
        raise KeyError(key)

    @property
    def wide(self) -> bool:
        """Whether the variance's interval spans a factor of ``WIDE_RANGE`` or more."""
        return self.plannable and self.variance_high >= WIDE_RANGE * self.variance_low


@shown_by("trec_rag_eval.render.results:register_topic_set_plan")
@dataclass(frozen=True, eq=False)  # its own __eq__ (value_equality.same_fields), and no hash
class TopicSetPlan:
    """A topic set size plan from a pilot: ``plans`` holds one ``MeasurePlan`` per measure, in order.

    ``values[run][measure]`` are the pilot's per-query values (aligned with ``query_ids``). ``delta``,
    ``alpha``, ``power``, ``confidence`` (of the variance's interval), ``ci_width`` (None: no width design)
    and ``at_queries`` (where the detectable delta is given: the ``queries`` asked, or the pilot's) are kept
    so every rendering states them.
    """

    runs: list[str]
    measures: list[str]
    query_ids: list[str]
    values: dict[str, dict[str, np.ndarray]] = field(repr=False)
    plans: list[MeasurePlan]
    delta: float
    alpha: float
    power: float
    confidence: float
    ci_width: float | None
    at_queries: int
    sources: dict[str, str] = field(default_factory=dict)
    evaluation_settings: dict[str, str] = field(default_factory=dict)

    def __eq__(self, other: object) -> bool:
        """The same values, arrays value by value and NaN equal to NaN (``value_equality.same_fields``): the
        equality dataclass made compared arrays by their truth, which raises."""
        return same_fields(self, other) if type(other) is type(self) else NotImplemented

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def paired(self) -> bool:
        """Two runs: the paired t-test on their differences; more: ANOVA and Tukey HSD on the residuals."""
        return len(self.runs) == 2

    def plan(self, measure: str) -> MeasurePlan:
        for plan in self.plans:
            if plan.measure == measure:
                return plan
        raise KeyError(measure)

    def rows(self) -> list[dict[str, Any]]:
        """One row per measure and design: the columns of ``to_pandas()`` and of the CSV."""
        rows = []
        for plan in self.plans:
            for size in plan.designs:
                rows.append({
                    "measure": plan.measure, "design": size.design, "runs": len(self.runs),
                    "pilot_queries": self.n_queries, "variance": plan.variance, "variance_df": plan.variance_df,
                    "variance_low": plan.variance_low, "variance_high": plan.variance_high,
                    "delta": self.delta, "ci_width": self.ci_width, "alpha": self.alpha,
                    "power": math.nan if size.design == "ci_width" else self.power,
                    "queries": size.queries, "approx_queries": size.approx_queries,
                    "queries_low": size.queries_low, "queries_high": size.queries_high,
                    "pilot_power": size.pilot_power, "at_queries": self.at_queries,
                    "detectable_delta": size.detectable_delta, "power_at_queries": size.power_at_queries,
                })
        return rows

    def to_dict(self) -> dict[str, Any]:
        """The plan as Python data (the JSON output): settings, then per measure its variance and designs."""
        return {
            "runs": list(self.runs), "pilot_queries": self.n_queries, "delta": self.delta, "alpha": self.alpha,
            "power": self.power, "confidence": self.confidence, "ci_width": self.ci_width,
            "at_queries": self.at_queries, "max_queries": sample_size.MAX_QUERIES,
            "measures": {plan.measure: {
                "variance": plan.variance, "variance_df": plan.variance_df,
                "variance_interval": [plan.variance_low, plan.variance_high],
                "designs": {size.design: {
                    "queries": size.queries, "approx_queries": size.approx_queries,
                    "queries_range": [size.queries_low, size.queries_high], "pilot_power": size.pilot_power,
                    "detectable_delta": size.detectable_delta, "power_at_queries": size.power_at_queries,
                } for size in plan.designs},
            } for plan in self.plans},
        }

    def to_pandas(self) -> Any:
        """One row per measure and design (``rows``), a pandas DataFrame."""
        return self._frame("pandas")

    def to_polars(self) -> Any:
        return self._frame("polars")

    def _frame(self, library: str) -> Any:
        rows = self.rows()
        columns = list(rows[0]) if rows else []
        return frame({c: [row[c] for row in rows] for c in columns}, library)

    def __repr__(self) -> str:
        needed = ", ".join(f"{plan.measure}={_count(plan.designs[0].queries)}" for plan in self.plans[:4])
        more = f", +{len(self.plans) - 4} more" if len(self.plans) > 4 else ""
        return (f"TopicSetPlan(runs={self.runs!r}, pilot_queries={self.n_queries}, "
                f"delta={format_magnitude(self.delta)}, {needed}{more})")

    def __str__(self) -> str:
        """``trec-rag-eval plan``'s text: the table, one verdict per measure, the footer."""
        return self.render()

    def render(self, format: str = "table") -> str:
        """The command's output in an output format that writes plans (``table``, its default; the others are in
        ``trec_rag_eval.render.output_formats``, and ``trec-rag-eval plan --help`` lists them)."""
        return str(show(self, "text", format))

    def _repr_html_(self) -> str:
        return str(show(self, "html"))

    def plot(self) -> Any:
        """A matplotlib ``Figure``: power against the number of queries for a few deltas, one panel per
        measure (the ``plan --plot`` picture). Needs the ``plot`` extra (matplotlib), imported here."""
        return show(self, "plot")


def _count(queries: int | None) -> str:
    return "-" if queries is None else str(queries)


TUKEY_LEAST_ALPHA = 1e-8
"""The smallest alpha of a plan over more than two runs: the Tukey HSD design's critical value is scipy's
studentized range, whose upper tail is 1 minus its cdf, good to some 1e-11 (at 3 df, sf(isf(1e-10)) is 6.2e-11;
at 1e-20 its quantile is the end of its search, 100)."""


def check_plan_arguments(delta: Any, alpha: Any, power: Any, confidence: Any, ci_width: Any, queries: Any) -> None:
    """The plan's parameters, in the library's one wording of each mistake (``arguments``), each error naming
    its parameter (the command line says its flag)."""
    def optional(check: Any, value: Any, *arguments: Any) -> None:
        if value is not None:
            check(*arguments)

    checks: list[tuple[str, Any]] = [
        ("delta", lambda: check_positive("delta", delta)),
        ("alpha", lambda: check_fractions(alpha=alpha)),
        ("power", lambda: check_fractions(power=power)),
        ("confidence", lambda: check_fractions(confidence=confidence)),
        ("ci_width", lambda: optional(check_positive, ci_width, "ci_width", ci_width)),
        ("queries", lambda: optional(check_count, queries, "queries", queries, 2)),
    ]
    for name, check in checks:
        try:
            check()
        except UsageError as err:
            raise UsageError(err.message, {name: name}) from None


def plan_values(
    values: Mapping[str, Mapping[str, Sequence[float] | np.ndarray]],
    query_ids: Sequence[str],
    measures: Sequence[str] | None = None,
    *,
    delta: float,
    alpha: float = 0.05,
    power: float = 0.8,
    confidence: float = 0.95,
    ci_width: float | None = None,
    queries: int | None = None,
) -> TopicSetPlan:
    """A topic set size plan from per-query values ``values[run][measure]`` aligned with ``query_ids``
    (two or more runs, two or more queries); see the module docstring."""
    check_plan_arguments(delta, alpha, power, confidence, ci_width, queries)
    runs = list(values)
    check_runs(len(runs), "plan needs a pilot of")
    if len(runs) > 2 and alpha < TUKEY_LEAST_ALPHA:
        raise UsageError(f"alpha must be at least {TUKEY_LEAST_ALPHA:g} for the Tukey HSD design of more than two runs "
                         f"(the studentized range's tail keeps too few digits below it), got {alpha!r}",
                         {"alpha": "alpha"})
    chosen = list(values[runs[0]]) if measures is None else ([measures] if isinstance(measures, str)
                                                              else list(measures))
    n = len(query_ids)
    arrays = per_query_arrays(values, runs, chosen, n)
    if n < 2:
        raise UsageError(f"a pilot needs at least two queries to estimate a variance, got {n}")
    at = queries if queries is not None else n
    for measure in chosen:
        _say_beyond_span(measure, delta)
    plans = [_measure_plan(measure, np.column_stack([arrays[run][measure] for run in runs]), delta, alpha, power,
                           confidence, ci_width, at) for measure in chosen]
    return TopicSetPlan(runs=runs, measures=chosen, query_ids=list(query_ids), values=arrays, plans=plans,
                        delta=delta, alpha=alpha, power=power, confidence=confidence, ci_width=ci_width,
                        at_queries=at)


def _say_beyond_span(measure: str, delta: float) -> None:
    """A delta no two runs can differ by on a bounded measure plans for nothing: say so (a warning)."""
    from trec_rag_eval.compare import _range_width

    span = _range_width(measure)
    if span is not None and delta > span:
        warning(f"delta {format_magnitude(delta)} is more than {measure} can differ by (its values span "
                f"{span:g}): no two runs differ by that much, whatever the number of queries",
                parameters={"delta": "delta"}).warn()


def _measure_plan(measure: str, matrix: np.ndarray, delta: float, alpha: float, power: float, confidence: float,
                  ci_width: float | None, at: int) -> MeasurePlan:
    n, m = matrix.shape
    if m == 2:
        differences = matrix[:, 1] - matrix[:, 0]
        variance, df = float(np.var(differences, ddof=1)), n - 1
    else:
        variance, df = sample_size.residual_variance(matrix)
    if variance <= TIE_TOLERANCE ** 2:  # float noise of values that do not vary: no variance to plan from
        variance = 0.0
    low, high = sample_size.variance_interval(variance, df, confidence) if variance > 0 else (0.0, 0.0)
    keys = ["paired_t"] if m == 2 else ["anova", "tukey_hsd"]
    if ci_width is not None:
        keys.append("ci_width")
    designs = [_design_size(key, variance, low, high, m, n, delta, alpha, power, ci_width, at) for key in keys]
    from trec_rag_eval.compare import _range_width

    span = _range_width(measure)
    return MeasurePlan(measure, variance, df, low, high, designs, math.nan if span is None else span)


def _design_size(key: str, variance: float, low: float, high: float, runs: int, pilot: int, delta: float,
                 alpha: float, power: float, ci_width: float | None, at: int) -> DesignSize:
    nan = math.nan
    if variance <= 0:
        return DesignSize(key, None, None, None, None, nan, nan, nan)
    if key == "ci_width":
        width = float(ci_width)  # type: ignore[arg-type]
        pair = 1.0 if runs == 2 else 2.0  # a pair's difference has the variance 2 V_E

        def needed(v: float) -> int | None:
            return sample_size.queries_interval(width, math.sqrt(pair * v), alpha)

        approx = math.ceil(sample_size.approx_interval(width, math.sqrt(pair * variance), alpha))
        return DesignSize(key, needed(variance), approx, needed(low), needed(high), nan, nan, nan)
    if key == "paired_t":
        def needed(v: float) -> int | None:
            return sample_size.queries_paired_t(delta, math.sqrt(v), alpha, power)

        sd = math.sqrt(variance)
        return DesignSize(key, needed(variance), _ceil(sample_size.approx_paired_t(delta, sd, alpha, power)),
                          needed(low), needed(high), sample_size.paired_t_power(pilot, delta, sd, alpha),
                          sample_size.detectable_paired_t(at, sd, alpha, power),
                          sample_size.paired_t_power(at, delta, sd, alpha))
    if key == "anova":
        def needed(v: float) -> int | None:
            return sample_size.queries_anova(delta, v, runs, alpha, power)

        return DesignSize(key, needed(variance), _ceil(sample_size.approx_anova(delta, variance, runs, alpha, power)),
                          needed(low), needed(high), sample_size.anova_power(pilot, delta, variance, runs, alpha),
                          sample_size.detectable_anova(at, variance, runs, alpha, power),
                          sample_size.anova_power(at, delta, variance, runs, alpha))

    def needed_pairs(v: float) -> int | None:
        return sample_size.queries_tukey(delta, v, runs, alpha, power)

    return DesignSize(key, needed_pairs(variance), None, needed_pairs(low), needed_pairs(high),
                      sample_size.tukey_pair_power(pilot, delta, variance, runs, alpha),
                      sample_size.detectable_tukey(at, variance, runs, alpha, power),
                      sample_size.tukey_pair_power(at, delta, variance, runs, alpha))


def _ceil(value: float) -> int | None:
    return math.ceil(value) if value <= sample_size.MAX_QUERIES else None


def plan_runs(
    qrels: Qrels,
    runs: Sequence[Run] | Mapping[str, Run],
    measures: MeasuresArg = None,
    *,
    delta: float,
    alpha: float = 0.05,
    power: float = 0.8,
    confidence: float = 0.95,
    ci_width: float | None = None,
    queries: int | None = None,
    settings: Settings | None = None,
    doc_map: Any = None,
    **overrides: Any,
) -> TopicSetPlan:
    """Evaluate each pilot run on ``qrels`` (as ``compare`` does: the qrels' queries, a query missing from a
    run scored 0; the measures asked, or compare's primary set nDCG@10, R@5, MRR) and plan from their
    per-query values (``plan_values``)."""
    import dataclasses

    from trec_rag_eval.compare import evaluated_values

    check_plan_arguments(delta, alpha, power, confidence, ci_width, queries)
    check_runs(len(runs), "plan needs a pilot of")
    values, query_ids, names, sources, described = evaluated_values(qrels, runs, measures, False, None, settings,
                                                                    doc_map, overrides)
    result = plan_values(values, query_ids, names, delta=delta, alpha=alpha, power=power, confidence=confidence,
                         ci_width=ci_width, queries=queries)
    return dataclasses.replace(result, sources=sources, evaluation_settings=described)
