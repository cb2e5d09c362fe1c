"""Every pair of runs tested at once, the family-wise error controlled: randomised Tukey HSD.

``compare_all_pairs(values, query_ids)`` tests, for each measure, every pair of runs; the pairs of
one measure are one family. Tests:

* ``tukey-hsd`` (the default): the randomised Tukey HSD test (Carterette, "Multiple testing in
  statistical analysis of systems-based information retrieval experiments", TOIS 30(1), 2012;
  Sakai, "Statistical Significance Testing in Information Retrieval", 2014). Under the null
  hypothesis that the runs are interchangeable, each query's values may be permuted across the runs.
  For each permutation of every query's row the largest difference between the runs' means is
  recorded; the p-value of a pair is the share of permutations whose largest difference reaches the
  pair's observed difference. Comparing each pair with the maximum over all pairs controls the
  family-wise error over every pair at once. When the permutations are few enough ((runs!)^queries <=
  ``n_resamples``) every one is enumerated (an exact test, p = hits / all, the identity included);
  otherwise ``n_resamples`` are drawn, seeded, and p = (hits + 1) / (n_resamples + 1), counting the
  observed arrangement as one of them (as ``scipy.stats.permutation_test`` does).
* ``tukey``: the parametric Tukey HSD of one-way ANOVA (``scipy.stats.tukey_hsd``: the runs as
  independent groups, not paired by query), which is what ranx's ``compare(stat_test="tukey")`` runs.
* ``t`` / ``randomization``: a paired test per pair (``compare.stats``), corrected over the measure's
  pairs with ``correction`` (``holm``, ``bonferroni`` or ``none``).

A pair is significant when its (family-wise) p-value is below ``alpha``. The report letters each run
(a, b, c, ... in input order) and marks every run with the letters of the runs it beats on that measure.
"""

from __future__ import annotations

import itertools
import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trec_rag_eval.arguments import check_choice, check_fractions, check_resampling, check_runs
from trec_rag_eval.compare import stats
from trec_rag_eval.compare.per_query import per_query_arrays
from trec_rag_eval.core.frames import check_shape, frame
from trec_rag_eval.errors import UsageError
from trec_rag_eval.renderer_registry import show, shown_by
from trec_rag_eval.value_equality import same_fields

TIE_TOLERANCE = stats.TIE_TOLERANCE


def letter(index: int) -> str:
    """a, b, ..., z, then a1, b1, ...: the label of the index-th run."""
    return "abcdefghijklmnopqrstuvwxyz"[index % 26] + (str(index // 26) if index >= 26 else "")


@dataclass(frozen=True)
class PairTest:
    """``run_a`` against ``run_b`` (``run_a`` first in input order) on one measure; delta = a - b."""

    measure: str
    run_a: str
    run_b: str
    mean_a: float
    mean_b: float
    delta: float
    p_value: float
    p_adjusted: float
    significant: bool

    @property
    def winner(self) -> str | None:
        """The run significantly better, or None."""
        if not self.significant or abs(self.delta) <= TIE_TOLERANCE:
            return None
        return self.run_a if self.delta > 0 else self.run_b


def randomised_tukey_hsd(matrix: np.ndarray, n_resamples: int, rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """p-values (runs x runs) of the randomised Tukey HSD test on ``matrix`` (queries x runs), and
    whether every permutation was enumerated (see the module docstring)."""
    n, m = matrix.shape
    means = matrix.mean(axis=0)
    observed = np.abs(means[:, None] - means[None, :])
    ranges: list[np.ndarray] = []
    exact = n * math.lgamma(m + 1) <= math.log(n_resamples) + 1e-9 and math.factorial(m) ** n <= n_resamples
    if exact:
        orders = np.array(list(itertools.permutations(range(m))))  # m! x m
        for combo in itertools.product(range(len(orders)), repeat=n):
            permuted = matrix[np.arange(n)[:, None], orders[list(combo)]]
            shuffled = permuted.mean(axis=0)
            ranges.append(np.array([shuffled.max() - shuffled.min()]))
    else:
        batch = max(1, stats.BATCH_ELEMENTS // max(1, n * m))
        done = 0
        while done < n_resamples:
            size = min(batch, n_resamples - done)
            permuted = rng.permuted(np.broadcast_to(matrix, (size, n, m)), axis=2)
            shuffled = permuted.mean(axis=1)
            ranges.append(shuffled.max(axis=1) - shuffled.min(axis=1))
            done += size
    spread = np.concatenate(ranges)
    hits = (spread[:, None, None] >= observed[None, :, :] - TIE_TOLERANCE).sum(axis=0)
    p_values = hits / spread.size if exact else (hits + 1) / (spread.size + 1)
    return np.minimum(p_values, 1.0), exact


@shown_by("trec_rag_eval.render.results:register_all_pairs")
@dataclass(frozen=True, eq=False)  # its own __eq__ (value_equality.same_fields), and no hash
class AllPairs:
    """Every pair of runs on every measure: means, p-values, decisions and letters.

    ``values[run][measure]`` is aligned with ``query_ids``; ``pairs`` holds one ``PairTest`` per
    measure and pair (measures in order, then pairs in input order); ``exact[measure]`` says whether
    the randomised test enumerated every permutation.
    """

    runs: list[str]
    measures: list[str]
    query_ids: list[str]
    values: dict[str, dict[str, np.ndarray]] = field(repr=False)
    means: dict[str, dict[str, float]]
    pairs: list[PairTest]
    test: str
    correction: str
    alpha: float
    n_resamples: int
    seed: int | None
    exact: dict[str, bool] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    evaluation_settings: dict[str, str] = field(default_factory=dict)

    def __eq__(self, other: object) -> bool:
        """The same values, arrays value by value and NaN equal to NaN (``value_equality.same_fields``): the
        equality dataclass made compared arrays by their truth, which raises."""
        return same_fields(self, other) if type(other) is type(self) else NotImplemented

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def letter(self, run: str) -> str:
        return letter(self.runs.index(run))

    def pair(self, measure: str, run_a: str, run_b: str) -> PairTest:
        for pair in self.pairs:
            if pair.measure == measure and {pair.run_a, pair.run_b} == {run_a, run_b}:
                return pair
        raise KeyError((measure, run_a, run_b))

    def beaten(self, measure: str, run: str) -> list[str]:
        """The runs ``run`` is significantly better than on ``measure``, in input order."""
        beaten = {p.run_b if p.winner == p.run_a else p.run_a for p in self.pairs
                  if p.measure == measure and p.winner == run}
        return [other for other in self.runs if other in beaten]

    def letters(self, measure: str) -> dict[str, str]:
        """``{run: letters of the runs it beats}`` on ``measure``."""
        return {run: "".join(self.letter(other) for other in self.beaten(measure, run)) for run in self.runs}

    # --- data ---------------------------------------------------------------------------------
    @property
    def draws(self) -> bool:
        """Whether the test draws at random (the randomised Tukey HSD, the randomization test): only then do
        the seed and the resamples say how the p-values were made."""
        return self.test in ("tukey-hsd", "randomization")

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": self.test, "correction": self.correction if self.test in ("t", "randomization") else None,
            "alpha": self.alpha, **({"n_resamples": self.n_resamples, "seed": self.seed} if self.draws else {}),
            "queries": self.n_queries,
            "runs": {run: self.letter(run) for run in self.runs},
            "measures": {m: {
                "means": {run: self.means[run][m] for run in self.runs},
                "beats": {run: self.beaten(m, run) for run in self.runs},
                "exact": self.exact.get(m),
                "pairs": [{"run_a": p.run_a, "run_b": p.run_b, "delta": p.delta, "p_value": p.p_value,
                           "p_adjusted": p.p_adjusted, "significant": p.significant, "winner": p.winner}
                          for p in self.pairs if p.measure == m],
            } for m in self.measures},
        }

    def to_pandas(self, shape: str = "pairs") -> Any:
        """``pairs``: one row per measure and pair; ``means``: one row per run, a column per measure
        (and one per measure of the letters it beats)."""
        return self._frame(shape, "pandas")

    def to_polars(self, shape: str = "pairs") -> Any:
        return self._frame(shape, "polars")

    def _frame(self, shape: str, library: str) -> Any:
        check_shape(shape, ("pairs", "means"))
        if shape == "pairs":
            columns = ["measure", "run_a", "run_b", "mean_a", "mean_b", "delta", "p_value", "p_adjusted",
                       "significant"]
            data: dict[str, list[Any]] = {c: [getattr(p, c) for p in self.pairs] for c in columns}
            data["winner"] = [p.winner for p in self.pairs]
            return frame(data, library)
        data = {"letter": [self.letter(r) for r in self.runs], "run": list(self.runs)}
        for m in self.measures:
            data[m] = [self.means[run][m] for run in self.runs]
            data[f"{m} beats"] = [self.letters(m)[run] for run in self.runs]
        return frame(data, library)

    def __repr__(self) -> str:
        return (f"AllPairs(runs={self.runs!r}, measures={self.measures!r}, queries={self.n_queries}, "
                f"test={self.test!r}, significant={sum(p.significant for p in self.pairs)}/{len(self.pairs)})")

    def __str__(self) -> str:
        return self.render("table")

    def _repr_html_(self) -> str:
        return self.render("html")

    def to_latex(self, caption: str | None = None, label: str | None = "tab:all-pairs") -> str:
        """The letters table as LaTeX ready for a paper (booktabs, as ``render("latex")``): the highest mean
        of each measure in bold, the superscript letters aligned in their columns, the caption (``caption``,
        then what the bold and the letters mean and the test) and the ``label``."""
        return str(show(self, "latex", caption=caption, label=label))

    # --- renderings (render.allpairs, through the renderer registry) ----------------------------
    def render(self, fmt: str = "table") -> str:
        """The letters table and the pairs in the output format ``fmt``: ``table`` (the command's text) or
        another that writes all pairs (``trec_rag_eval.render.output_formats``; the command's ``--help``
        lists them)."""
        return str(show(self, "text", fmt))


def _stream(seed: int | None, measure: str, purpose: str) -> np.random.Generator:
    """A measure's own random stream (keyed by name, so it does not move when other measures are asked)."""
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng([seed, zlib.crc32(measure.encode("utf-8")), zlib.crc32(purpose.encode("utf-8"))])


def compare_all_pairs(
    values: Mapping[str, Mapping[str, Sequence[float] | np.ndarray]],
    query_ids: Sequence[str],
    measures: Sequence[str] | None = None,
    test: str = "tukey-hsd",
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int | None = stats.DEFAULT_SEED,
) -> AllPairs:
    """Test every pair of runs on every measure from per-query values ``values[run][measure]``
    aligned with ``query_ids`` (see the module docstring)."""
    runs = list(values)
    check_runs(len(runs), "compare needs")
    if test not in stats.ALL_PAIRS_TESTS:
        raise UsageError(f"unknown test {test!r} for all pairs; expected one of {', '.join(stats.ALL_PAIRS_TESTS)}")
    check_choice("correction", correction, stats.CORRECTIONS)
    check_fractions(alpha=alpha)
    check_resampling(n_resamples, seed)
    if test in ("t", "tukey"):
        stats.say_unused({"seed": seed != stats.DEFAULT_SEED, "n_resamples": n_resamples != stats.DEFAULT_RESAMPLES},
                         f"{'the paired t-test' if test == 't' else 'the parametric Tukey HSD'} draws nothing at "
                         "random (the seed and the resamples are those of the randomised Tukey HSD and the "
                         "randomization test)")
    if test in ("tukey-hsd", "tukey"):
        stats.say_unused({"correction": correction != "holm"},
                         "the Tukey HSD tests each measure's pairs as one family already (the correction adjusts "
                         "the paired t and randomization tests' p-values over them)")
    chosen = list(values[runs[0]]) if measures is None else ([measures] if isinstance(measures, str)
                                                              else list(measures))
    n = len(query_ids)
    if n == 0:
        raise UsageError("no queries to compare")
    arrays = per_query_arrays(values, runs, chosen, n)
    means = {run: {m: float(arrays[run][m].mean()) for m in chosen} for run in runs}
    pairs: list[PairTest] = []
    exact: dict[str, bool] = {}
    index_pairs = list(itertools.combinations(range(len(runs)), 2))
    for measure in chosen:
        matrix = np.column_stack([arrays[run][measure] for run in runs])
        if test == "tukey-hsd":
            table, exact[measure] = randomised_tukey_hsd(matrix, n_resamples, _stream(seed, measure, "tukey-hsd"))
            raw = [float(table[i, j]) for i, j in index_pairs]
            adjusted = raw
        elif test == "tukey":
            from scipy.stats import tukey_hsd

            table = tukey_hsd(*matrix.T).pvalue
            raw = [float(table[i, j]) for i, j in index_pairs]
            adjusted = raw
        else:
            raw = []
            for i, j in index_pairs:
                first, second = matrix[:, i], matrix[:, j]
                if test == "t":
                    raw.append(stats.paired_t_test(second, first))
                else:
                    rng = _stream(seed, measure, f"randomization {runs[i]} {runs[j]}")
                    raw.append(stats.randomization_test(second, first, n_resamples=n_resamples, rng=rng))
            adjusted = stats.adjust_p_values(raw, correction)
        for (i, j), p_value, p_adjusted in zip(index_pairs, raw, adjusted, strict=True):
            a, b = runs[i], runs[j]
            delta = means[a][measure] - means[b][measure]
            pairs.append(PairTest(measure, a, b, means[a][measure], means[b][measure], delta, p_value, p_adjusted,
                                  bool(not math.isnan(p_adjusted) and p_adjusted < alpha)))
    return AllPairs(runs=runs, measures=chosen, query_ids=list(query_ids), values=arrays, means=means, pairs=pairs,
                    test=test, correction=correction, alpha=alpha, n_resamples=n_resamples, seed=seed, exact=exact)
