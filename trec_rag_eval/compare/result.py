"""The result of a comparison: every number computed once, then rendered many ways.

A ``Comparison`` holds the per-query values, each run's means and one ``PairResult`` per
(measure, run) compared with the baseline. Its ``to_*`` methods hand it to
``trec_rag_eval.render.comparison`` (text) or ``trec_rag_eval.render.html`` (the report page);
the renderers only format what is stored here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from trec_rag_eval.core.frames import SHAPES, check_shape, frame, html_table, long_columns, short_repr, wide_columns
from trec_rag_eval.measures.keyed import ByMeasure

TEST_NAMES = {"t": "paired t-test", "randomization": "paired randomization test"}
CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "none": "none"}


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
    mdd_note: str = ""   # why no detectable delta is given, when the query set is too small for any

    @property
    def direction(self) -> str:
        """'better', 'worse' (significant) or 'noise'."""
        if not self.significant:
            return "noise"
        return "better" if self.delta > 0 else "worse"


@dataclass(frozen=True)
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
        return {run: ByMeasure((m, self.means[run][m]) for m in self.measures) for run in self.runs}

    @property
    def per_query(self) -> dict[str, dict[str, ByMeasure[float]]]:
        """``{run: {query_id: {measure name: value}}}``: each run as ``Evaluation.per_query``."""
        return {run: {query_id: ByMeasure((m, float(self.values[run][m][i])) for m in self.measures)
                      for i, query_id in enumerate(self.query_ids)} for run in self.runs}

    def to_pandas(self, shape: str = "long") -> Any:
        """A pandas DataFrame: ``long`` (run, query_id, measure, value, every run one after the other),
        ``wide`` (run, query_id, one column per measure) or ``pairs`` (one row per measure and compared
        run: means, delta, p-values, interval, effect size, wins/ties/losses, MDD, significant)."""
        return self._frame(shape, "pandas")

    def to_polars(self, shape: str = "long") -> Any:
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
        deltas = {f"{p.run}:{p.measure}": f"{format_delta(p.delta)}{'*' if p.significant else ''}" for p in self.pairs}
        return short_repr("Comparison", head, deltas, limit=4)

    def _repr_html_(self) -> str:
        rows = [[p.measure, p.run, p.baseline_mean, p.run_mean, format_delta(p.delta), format_p(p.p_adjusted),
                 f"[{format_delta(p.ci_low)}, {format_delta(p.ci_high)}]", p.direction] for p in self.pairs]
        header = ["measure", "run", f"{self.baseline} (baseline)", "run mean", "delta", "p (adjusted)",
                  f"{format_percent(self.confidence)} CI", "verdict"]
        return html_table(header, rows, self.footer())

    # --- sentences ----------------------------------------------------------------------
    def verdict(self, pair: PairResult) -> str:
        """One line that says what was tested, e.g. ``B better: +0.043, p = 0.003 after Holm over 3
        comparisons (p = 0.001 uncorrected), 95% CI [+0.021, +0.064]`` or ``B vs A: not significant
        after Holm over 22 comparisons (p = 0.012 uncorrected), +0.300, 95% CI [+0.150, +0.450] ...``.
        """
        if pair.wins == 0 and pair.losses == 0:
            return f"{pair.run} vs {pair.baseline}: identical on every query"
        interval = f"[{format_delta(pair.ci_low)}, {format_delta(pair.ci_high)}]"
        ci_text = f"{format_percent(self.confidence)} CI {interval}"
        family = len([p for p in self.pairs if not math.isnan(p.p_value)])
        corrected = self.correction != "none" and family > 1
        if corrected:
            method = f"{CORRECTION_NAMES[self.correction]} over {family} comparisons"
            raw = f"{p_phrase(pair.p_value)} uncorrected"
        else:
            method, raw = f"alpha {format_plain(self.alpha)}", ""
        if pair.significant:
            p_text = f"{p_phrase(pair.p_adjusted)} after {method}" if corrected else p_phrase(pair.p_value)
            if raw:
                p_text += f" ({raw})"
            return f"{pair.run} {pair.direction}: {format_delta(pair.delta)}, {p_text}, {ci_text}"
        if corrected:
            tested = f"not significant after {method} ({raw})"
        else:
            tested = f"not significant ({p_phrase(pair.p_value)})"
        text = f"{pair.run} vs {pair.baseline}: {tested}, {format_delta(pair.delta)}, {ci_text}"
        if corrected and (pair.ci_low > 0 or pair.ci_high < 0):
            text += f" (the interval is not adjusted for the {family} comparisons)"
        if pair.mdd_note:
            return f"{text}; {pair.mdd_note}"
        if not math.isnan(pair.min_detectable_delta):
            text += f"; this query set detects about {format_magnitude(pair.min_detectable_delta)}"
        return text

    def verdicts(self) -> list[tuple[str, str]]:
        """(measure, verdict line) for every pair, in table order."""
        return [(pair.measure, self.verdict(pair)) for pair in self.pairs]

    def footer(self) -> str:
        """What was computed and how: test, correction, seed, number of queries."""
        family = len(self.pairs)
        correction = (
            "no correction for multiple comparisons"
            if self.correction == "none"
            else f"{CORRECTION_NAMES[self.correction]} correction over {family} "
            f"comparison{'s' if family != 1 else ''}"
        )
        test = TEST_NAMES[self.test]
        if self.test == "randomization":
            test += f" ({self.n_resamples} resamples)"
        seed = "none (not reproducible)" if self.seed is None else str(self.seed)
        return (
            f"{test}, {correction}, alpha {format_plain(self.alpha)}; "
            f"{format_percent(self.confidence)} CI: bootstrap BCa, {self.n_resamples} resamples, "
            "not adjusted; "
            f"seed {seed}; {self.n_queries} queries; baseline {self.baseline}. "
            f"d = mean delta / sd of deltas. MDD = smallest delta a paired t-test detects here "
            f"(alpha {format_plain(self.alpha)}, power {format_plain(self.power)}, observed sd)."
        )

    # --- renderings (formatting lives in trec_rag_eval.render) ----------------------------
    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        from trec_rag_eval.render.comparison import comparison_dict

        return comparison_dict(self, per_query=per_query)

    def to_json(self, per_query: bool = False) -> str:
        from trec_rag_eval.render.comparison import render_json

        return render_json(self, per_query=per_query)

    def to_table(self, per_query: bool = False) -> str:
        from trec_rag_eval.render.comparison import render_table

        return render_table(self, per_query=per_query)

    def to_markdown(self, per_query: bool = False) -> str:
        from trec_rag_eval.render.comparison import render_markdown

        return render_markdown(self, per_query=per_query)

    def to_latex(self, per_query: bool = False) -> str:
        from trec_rag_eval.render.comparison import render_latex

        return render_latex(self, per_query=per_query)

    def to_csv(self, per_query: bool = False) -> str:
        from trec_rag_eval.render.comparison import render_csv

        return render_csv(self, per_query=per_query)

    def to_html(self, per_query: bool = False, title: str | None = None) -> str:
        from trec_rag_eval.render.html import render_html

        return render_html(self, per_query=per_query, title=title)

    def render(self, fmt: str = "table", per_query: bool = False) -> str:
        """Render as ``table``, ``markdown``, ``latex``, ``csv``, ``json`` or ``html``."""
        renderers = {
            "table": self.to_table,
            "markdown": self.to_markdown,
            "latex": self.to_latex,
            "csv": self.to_csv,
            "json": self.to_json,
            "html": self.to_html,
        }
        if fmt not in renderers:
            raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(renderers)}")
        return renderers[fmt](per_query=per_query)

    def __str__(self) -> str:
        return self.to_table()


# --- number formats shared by every renderer ------------------------------------------------
def format_value(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.4f}"


def format_delta(value: float) -> str:
    """Signed, three decimals: ``+0.043``, ``-0.100``."""
    if math.isnan(value):
        return "-"
    text = f"{value:+.3f}"
    return "+0.000" if text == "-0.000" else text


def format_magnitude(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:.3f}"


def format_p(value: float) -> str:
    """``0.003``, ``0.410``, ``< 0.001``: three decimals, so 0.049 and 0.051 never print alike."""
    if math.isnan(value):
        return "-"
    if value < 0.001:
        return "< 0.001"
    return f"{value:.3f}"


def p_phrase(value: float) -> str:
    """``p = 0.003`` or ``p < 0.001``."""
    text = format_p(value)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def format_effect(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:+.2f}"


def format_percent(value: float) -> str:
    return f"{value * 100:g}%"


def format_plain(value: float) -> str:
    return f"{value:g}"
