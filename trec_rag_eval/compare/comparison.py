"""The result of a comparison: every number computed once, then rendered many ways.

A ``Comparison`` holds the per-query values, each run's means and one ``PairResult`` per
(measure, run) compared with the baseline, and gives them as Python data (``summary``,
``per_query``, DataFrames, a short repr and a notebook table of the numbers).
``trec_rag_eval.render.comparison`` renders it as text in each output format that writes comparisons (with
the verdict sentences), ``render.html`` as a report page and ``render.plot`` as pictures; they only
format what is stored here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from trec_rag_eval.core.frames import SHAPES, check_shape, frame, long_columns, wide_columns
from trec_rag_eval.lazy_modules import LazyModule
from trec_rag_eval.measures.by_measure import ByMeasure
from trec_rag_eval.number_formats import format_delta, short_repr
from trec_rag_eval.renderer_registry import show, shown_by
from trec_rag_eval.value_equality import same_fields

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl
else:  # the libraries in annotations, imported when read (typing.get_type_hints), not with this module
    pd = LazyModule("pandas")
    pl = LazyModule("polars")

INTERVAL_METHODS = {
    "t": "paired t-interval",
    "randomization": "randomization interval (the deltas the sign-flip test keeps, {n_resamples} resamples)",
    "bootstrap": "bootstrap BCa, {n_resamples} resamples",
}


@dataclass(frozen=True)
class PairResult:
    """One run against the baseline on one measure. ``delta`` is run - baseline."""

    measure: str
    run: str
    baseline: str
    baseline_mean: float
    run_mean: float
    delta: float
    p_value: float
    p_adjusted: float
    ci_low: float
    ci_high: float
    effect_size: float
    wins: int
    ties: int
    losses: int
    min_detectable_delta: float
    significant: bool
    # when the query set is too small to detect any difference the measure can take: the delta a
    # paired t-test would need (above the measure's value_span), min_detectable_delta being NaN
    mdd_beyond_span: float = math.nan
    value_span: float = math.nan

    @property
    def direction(self) -> str:
        """'better', 'worse' (significant) or 'noise'."""
        if not self.significant:
            return "noise"
        return "better" if self.delta > 0 else "worse"


@shown_by("trec_rag_eval.render.results:register_comparison")
@dataclass(frozen=True, eq=False)  # its own __eq__ (value_equality.same_fields), and no hash
class Comparison:
    """Runs compared with a baseline over one query list.

    ``values[run][measure]`` is the per-query array aligned with ``query_ids``; ``means`` the
    mean over those queries; ``pairs`` one entry per (measure, non-baseline run), measures in
    ``measures`` order, runs in ``runs`` order. The test, correction, alpha, confidence level,
    resample count and seed are kept so that every rendering can state them.
    """

    runs: list[str]
    measures: list[str]
    baseline: str
    query_ids: list[str]
    values: dict[str, dict[str, np.ndarray]] = field(repr=False)
    means: dict[str, dict[str, float]]
    pairs: list[PairResult]
    test: str
    correction: str
    alpha: float
    confidence: float
    power: float
    n_resamples: int
    seed: int | None
    # where the numbers come from, for reports: {"qrels": path, run name: path, ...}, and the
    # evaluation settings that change them ({"relevance level": "1", ...}); empty from compare_values
    sources: dict[str, str] = field(default_factory=dict)
    evaluation_settings: dict[str, str] = field(default_factory=dict)
    # the interval's method: "t", "randomization" (each agrees with its test by construction) or "bootstrap"
    interval: str = "bootstrap"

    def __eq__(self, other: object) -> bool:
        """The same values, arrays value by value and NaN equal to NaN (``value_equality.same_fields``): the
        equality dataclass made compared arrays by their truth, which raises."""
        return same_fields(self, other) if type(other) is type(self) else NotImplemented

    @property
    def interval_method(self) -> str:
        """How the intervals were made, in words (for footers, captions and axis labels)."""
        return INTERVAL_METHODS[self.interval].format(n_resamples=self.n_resamples)

    @property
    def draws(self) -> bool:
        """Whether anything was drawn at random (a randomization test, a randomization or bootstrap interval):
        only then do the seed and the resamples say how the numbers were made."""
        return self.test == "randomization" or self.interval in ("randomization", "bootstrap")

    # --- lookups ------------------------------------------------------------------------
    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def others(self) -> list[str]:
        """The runs compared with the baseline, in input order."""
        return [name for name in self.runs if name != self.baseline]

    def pair(self, measure: str, run: str) -> PairResult:
        for pair in self.pairs:
            if pair.measure == measure and pair.run == run:
                return pair
        raise KeyError((measure, run))

    def deltas(self, measure: str, run: str) -> np.ndarray:
        """Per-query run - baseline, aligned with ``query_ids``."""
        return self.values[run][measure] - self.values[self.baseline][measure]

    # --- the numbers as Python data (the shapes of Evaluation) -------------------------------
    @property
    def summary(self) -> dict[str, ByMeasure[float]]:
        """``{run: {measure name: mean}}``; any name of a measure finds it."""
        return {run: ByMeasure(zip(self.measures, [self.means[run][m] for m in self.measures], strict=True))
                for run in self.runs}

    @property
    def per_query(self) -> dict[str, dict[str, ByMeasure[float]]]:
        """``{run: {query_id: {measure name: value}}}``: each run as ``Evaluation.per_query``."""
        return {run: {query_id: ByMeasure(zip(self.measures, [float(self.values[run][m][i]) for m in self.measures],
                                              strict=True))
                      for i, query_id in enumerate(self.query_ids)} for run in self.runs}

    def to_dict(self) -> dict[str, dict[str, dict[str, float]]]:
        """``{run: {query_id: {measure name: value}}}``: each run in pytrec_eval's shape, as
        ``Evaluation.to_dict()`` (the report with tests and verdicts is ``render.comparison``'s)."""
        return {run: {query_id: dict(values) for query_id, values in by_query.items()}
                for run, by_query in self.per_query.items()}

    def to_pandas(self, shape: str = "long") -> pd.DataFrame:
        """A pandas DataFrame: ``long`` (run, query_id, measure, value, every run one after the other),
        ``wide`` (run, query_id, one column per measure) or ``pairs`` (one row per measure and compared
        run: means, delta, p-values, interval, effect size, wins/ties/losses, MDD, significant)."""
        return self._frame(shape, "pandas")

    def to_polars(self, shape: str = "long") -> pl.DataFrame:
        """As ``to_pandas``, a polars DataFrame."""
        return self._frame(shape, "polars")

    def _frame(self, shape: str, library: str) -> Any:
        check_shape(shape, (*SHAPES, "pairs"))
        if shape == "pairs":
            columns = [f.name for f in fields(PairResult)]
            return frame({c: [getattr(p, c) for p in self.pairs] for c in columns}, library)
        parts: dict[str, list[Any]] = {}
        for run, by_query in self.per_query.items():
            block = long_columns(run, by_query) if shape == "long" else {
                "run": [run] * len(by_query), **wide_columns(by_query, self.measures)}
            for column, cells in block.items():
                parts.setdefault(column, []).extend(cells)
        return frame(parts, library)

    def __repr__(self) -> str:
        head = [f"runs={self.runs!r}", f"baseline={self.baseline!r}", f"queries={self.n_queries}"]
        deltas = {f"{p.run}:{p.measure}": format_delta(p.delta) + ('*' if p.significant else '') for p in self.pairs}
        return short_repr("Comparison", head, deltas, limit=4)

    def __str__(self) -> str:
        """``trec-rag-eval compare``'s text: the table (mean, delta, interval, p, d, W/T/L, MDD), the
        verdict sentences and the footer naming the test."""
        return self.render()

    def render(self, format: str = "table", per_query: bool = False) -> str:
        """The command's report in an output format that writes comparisons (``table``, its default; the
        others are in ``trec_rag_eval.render.output_formats``, and ``trec-rag-eval compare --help`` lists them);
        ``per_query`` adds each query's values and deltas."""
        return str(show(self, "text", format, per_query))

    def to_latex(self, caption: str | None = None, label: str | None = "tab:comparison") -> str:
        """The means as a LaTeX table ready for a paper (booktabs, as ``render("latex")``): the highest
        mean of each measure in bold, significance marks aligned in their columns, the caption (``caption``,
        then what the bold and the marks mean, the test and the correction) and the ``label``."""
        return str(show(self, "latex", caption=caption, label=label))

    def _repr_html_(self) -> str:
        """The command's table, verdicts and footer, in HTML."""
        return str(show(self, "html"))

    def plot(self) -> Any:
        """A matplotlib ``Figure``: each measure's mean delta with its interval, and the sorted per-query
        deltas (the ``compare --plot`` picture). Needs the ``plot`` extra (matplotlib), imported here."""
        return show(self, "plot")
