"""Evaluate a run against qrels: align once, run every kernel over all queries, aggregate."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from trec_rag_eval.core.kernel_context import Context
from trec_rag_eval.core.ranking import RankedQueries, only_judged, rank
from trec_rag_eval.core.settings import Settings, settings_of
from trec_rag_eval.errors import DuplicateDocumentError, EmptyRunWarning, TrecRagEvalWarning, UsageError, warn
from trec_rag_eval.evaluation.aggregation import GM_FLOOR, aggregate, recounted_under_c
from trec_rag_eval.evaluation.context_cost import ContextCost, context_columns
from trec_rag_eval.evaluation.disjoint import no_query_error, warn_no_common_query
from trec_rag_eval.io.chunks import CollapseReport
from trec_rag_eval.lazy_modules import LazyModule
from trec_rag_eval.measures.by_measure import ByMeasure
from trec_rag_eval.measures.model import Measure
from trec_rag_eval.measures.requests import MeasuresArg, resolve_measures
from trec_rag_eval.notes import Note, warning
from trec_rag_eval.number_formats import short_repr
from trec_rag_eval.renderer_registry import show, shown_by
from trec_rag_eval.syntax import quote
from trec_rag_eval.tables import Qrels, Run, duplicate_error, num_rows, query_id_set

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl
else:  # the libraries in annotations, imported when read (typing.get_type_hints), not with this module
    pd = LazyModule("pandas")
    pl = LazyModule("polars")

class QueryResult(NamedTuple):
    """One query's values, keyed by measure name (``iter_evaluate`` yields these)."""

    query_id: str
    values: ByMeasure[Any]


@shown_by("trec_rag_eval.render.results:register_evaluation")
@dataclass(repr=False)  # its own __repr__: the run, its queries and its summary
class Evaluation:
    """Per-query values and aggregates of one run.

    Every mapping is keyed by the measure's name as asked (``"nDCG@10"``, ``"MAP"``) and also found by
    the ``Measure`` or any other name of it (``"AP"``, ``"map"``): see ``measures.by_measure.ByMeasure``.

    * ``summary[name]``: the mean over queries (sums for the num_* counts, geometric means for gm_*);
    * ``per_query[query_id][name]``: one value (pytrec_eval's shape, as ``to_dict()`` and every other
      result type: ``EngineEvaluation``, ``Comparison.per_query[run]``), queries in ``query_ids`` order;
    * ``values[name]``: the per-query column, a numpy array aligned with ``query_ids`` (a list of
      strings for relstring), for vectorised work.

    ``to_dict()``, ``to_pandas()`` and ``to_polars()`` (long or wide) give the same numbers as plain data.
    """

    query_ids: list[str]
    measures: list[Measure]
    values: ByMeasure[np.ndarray]
    """``{measure name: per-query array}``: a ``Mapping[str, np.ndarray]`` in which any name of a
    measure (or the ``Measure``) finds it."""
    summary: ByMeasure[float]
    """``{measure name: value over the queries}``: a ``Mapping[str, float]`` found by any name too
    (runid's value is the run tag)."""
    run_tag: str
    missing_queries: list[str] = field(default_factory=list)
    extra_queries: list[str] = field(default_factory=list)
    empty_queries: list[str] = field(default_factory=list)
    """Of ``missing_queries``, those the run answered with an empty result list (``Run.empty_queries``)."""
    settings: Settings = field(default_factory=Settings)
    collapse: CollapseReport | None = None
    """What mapping chunk ids to documents did (``doc_map``), or None when nothing was mapped."""
    context: ContextCost | None = None
    """The tokens of the top k results per query, when the results' texts were given (``corpus=``;
    see ``evaluation.context_cost``): shown beside the measures at the same k."""
    zscored: bool = False
    """The numbers are z-scores against per-query means (``evaluation.zscores``: trec_eval's -Z)."""

    def __post_init__(self) -> None:
        # kernels fill dicts keyed by Measure; the public side reads them by name
        self.values = ByMeasure.of(self.measures, self.values)
        self.summary = ByMeasure.of(self.measures, self.summary)

    @property
    def names(self) -> list[str]:
        return [str(m) for m in self.measures]

    @property
    def per_query(self) -> dict[str, ByMeasure[Any]]:
        """``{query_id: {measure name: value}}`` for the measures computed per query."""
        measures = self._per_query_measures()
        columns = [_plain_column(m, self.values[m]) for m in measures]
        return {query_id: ByMeasure(zip(measures, [column[i] for column in columns], strict=True))
                for i, query_id in enumerate(self.query_ids)}

    @property
    def summary_by_name(self) -> dict[str, Any]:
        return dict(self.summary)

    def value(self, name: str, query_id: str | None = None) -> Any:
        """One value by measure name (any notation, or trec_eval's printed ``ndcg_cut_10``) and query id;
        the aggregate when query_id is None."""
        key: Any = next((m for m in self.measures if name == m.trec_name), name)
        if query_id is None:
            return self.summary[key]
        return self.values[key][self.query_ids.index(query_id)]

    def iter_queries(self) -> Iterator[QueryResult]:
        """One ``QueryResult`` per query, in ``query_ids`` order."""
        for query_id, values in self.per_query.items():
            yield QueryResult(query_id, values)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """``{query_id: {measure name: value}}``, plain Python numbers: pytrec_eval's ``evaluate()`` shape."""
        return {query_id: dict(values) for query_id, values in self.per_query.items()}

    def to_pandas(self, shape: str = "long") -> pd.DataFrame:
        """A pandas DataFrame: ``long`` (run, query_id, measure, value) or ``wide`` (query_id, one column per
        measure). Numeric per-query measures only; the aggregates are ``summary``."""
        return self._frame(shape, "pandas")

    def to_polars(self, shape: str = "long") -> pl.DataFrame:
        """As ``to_pandas``, a polars DataFrame."""
        return self._frame(shape, "polars")

    def _frame(self, shape: str, library: str) -> Any:
        from trec_rag_eval.core.frames import results_frame

        return results_frame(self.run_tag, self.per_query, self.numeric_names, shape, library)

    @property
    def numeric_names(self) -> list[str]:
        """Names of the measures with a number per query (what the DataFrames hold)."""
        return [str(m) for m in self._per_query_measures() if m.spec.value_type != "str"]

    def _per_query_measures(self) -> list[Measure]:
        return [m for m in self.measures if m in self.values and m.spec.per_query]

    def query_set_warnings(self) -> list[Note]:
        """What the user is told of the query set, worded once for every path (the command line, ``evaluate``
        and ``compare`` from Python, a run in memory or in a file): queries missing from the run (scored 0,
        named) and queries only in the run (counted). A query the run answered with an empty result list (a
        search that found nothing) is not missing: it is counted in the footer (``empty_queries``)."""
        empty = set(self.empty_queries)
        missing = [q for q in self.missing_queries if q not in empty]
        out = []
        if missing:
            shown = ", ".join(missing[:10]) + (f", ... ({len(missing) - 10} more)" if len(missing) > 10 else "")
            out.append(warning(f"{len(missing)} qrels quer{'y' if len(missing) == 1 else 'ies'} missing from the "
                               f"run, scored 0: {shown}"))
        if self.extra_queries:
            count = len(self.extra_queries)
            out.append(warning(f"{count} quer{'y' if count == 1 else 'ies'} in the run but not in the qrels, ignored"))
        return out

    def warn_query_set(self, source: str) -> None:
        """``query_set_warnings`` as ``TrecRagEvalWarning``s, each led by the run's ``source``, pointing at the
        caller's line."""
        for said in self.query_set_warnings():
            said.about(source).warn()

    def shown_summary(self) -> dict[str, Any]:
        """The aggregates worth showing (not the run tag, not the per-query-only measures)."""
        return {str(m): value for m in self.measures
                if (value := self.summary.get(m)) is not None and not m.spec.run_tag}

    def __repr__(self) -> str:
        return short_repr("Evaluation", [f"run={self.run_tag!r}", f"queries={len(self.query_ids)}"],
                          self.shown_summary())

    def __str__(self) -> str:
        """The command line's table (``trec-rag-eval QRELS RUN``): measures x cutoffs, then the footer."""
        return self.render()

    def render(self, format: str = "table", per_query: bool = False, summary: bool = True) -> str:
        """The text the command line prints, in an output format that writes evaluations (``table``, its
        default; the others are in ``trec_rag_eval.render.output_formats``, and ``trec-rag-eval --help`` lists
        them); ``per_query`` as ``-q``; ``summary=False`` as ``-n``: without the summary (query ``all``), which
        leaves nothing to show without ``per_query`` (an error, except trec: no line, as trec_eval)."""
        return str(show(self, "text", format, per_query, summary))

    def _repr_html_(self) -> str:
        """The command line's table in HTML, its footer as the caption."""
        return str(show(self, "html"))

    def context_table(self, library: str = "pandas") -> Any:
        """Quality and context cost against k: one row per k of ``context`` (the tokens of the top k
        results), with each measure computed at that k (``P``, ``nDCG``, ...: one column each) and the
        tokens' mean and 95th percentile over queries. Needs the results' texts (``corpus=``)."""
        from trec_rag_eval.core.frames import frame

        return frame(context_columns(self), library)

    def plot_context(self) -> Any:
        """A matplotlib ``Figure`` of ``context_table``: each measure against k, and the tokens (mean,
        p95) on a second axis; the ``plot`` extra."""
        return show(self, "context_plot")


def _plain_column(measure: Measure, column: Any) -> list[Any]:
    """A per-query column as Python numbers (ints for counts) or strings."""
    kind = measure.spec.value_type
    if kind == "str":
        return list(column)
    if kind == "int":
        return [int(v) for v in column]
    return [float(v) for v in column]


def evaluate_tables(
    qrels: Qrels,
    run: Run,
    measures: MeasuresArg = None,
    settings: Settings | None = None,
    *,
    doc_map: Any = None,
    **overrides: Any,
) -> Evaluation:
    """Evaluate ``run`` against ``qrels``.

    measures: None (the RAG set: P, R, F1, HitRate, nDCG at 1, 3, 5, 10, then MRR, MAP), one
    name or a list of names in either notation (``"P.5,10"``, ``"all_trec"``, ``"nDCG@10"``; ranx's
    ``"ndcg@10"`` too), or Measure values.
    ``settings`` (a ``Settings``, or its fields as keywords: ``relevance_level=2``) say how;
    ranking, ties, relevance and the query set follow trec_eval v10 (see ``core.ranking``).
    ``trec_eval_9`` reproduces trec_eval 9.0.x (pytrec_eval): float32 scores before ranking and
    iprec_at_recall / 11pt_avg cut at floor(p*R + 0.9).
    ``doc_map`` maps retrieved chunk ids to document ids before anything else (a regular expression
    whose first group is the document id, a dict, a callable or a map file path; see ``io.chunks``):
    each document then counts once, at its best chunk's score. The report is ``Evaluation.collapse``.
    """
    chosen = settings_of(settings, **overrides)
    if qrels.kind != "relevance":  # judgment groups or preferences: their own measures, their own ranking
        from trec_rag_eval.measures.requests import check_judgments, default_measure_set

        resolved = resolve_measures(default_measure_set(qrels) if measures is None else measures)
        check_judgments(qrels, resolved)
        if doc_map is not None:
            raise UsageError(f"doc_map maps chunk ids for relevance judgments; {qrels.source} holds {qrels.kind}",
                             {"doc_map": "doc_map"})
        return evaluate_measures(qrels, run, resolved, chosen)
    resolved = resolve_measures(measures)
    if any(m.spec.judgments not in ("relevance", "any") for m in resolved):
        from trec_rag_eval.measures.requests import check_judgments

        check_judgments(qrels, resolved)
    if doc_map is None:
        return evaluate_measures(qrels, run, resolved, chosen)
    from trec_rag_eval.io.chunk_collapse import collapse_run  # mapping chunk ids to documents: asked for

    run, collapse = collapse_run(run, doc_map, qrels)
    result = evaluate_measures(qrels, run, resolved, chosen)
    result.collapse = collapse
    return result


def evaluate_measures(qrels: Qrels, run: Run, measures: list[Measure], settings: Settings) -> Evaluation:
    """``evaluate_tables`` of measures already resolved and checked against the kind of the judgments
    (``measures.requests.check_judgments``), with settings already made: what the service calls,
    having chosen both before reading any run."""
    if qrels.kind != "relevance":
        from trec_rag_eval.evaluation.judgment_measures import align_kind

        ranked, numbered, views = align_kind(qrels, run, settings)
        if ranked.num_queries == 0:
            raise no_query_error(numbered, run)
        warn_if_nothing_matches(ranked, run.source)
        return evaluate_ranked(ranked, measures, settings, views=views)
    # measures that read no further than their cutoff (nDCG@10, P@5...) need no judgment below the deepest one,
    # unless -J closes the ranks up; a ranking with no judged row in that depth is made again whole, so that the
    # warning below says how many retrieved ids of all met no judgment
    depth = None if settings.judged_only else ranks_read(measures)
    ranked = _ranked(qrels, run, settings, depth)
    if depth is not None and not _any_judged(ranked.rel):
        ranked = _ranked(qrels, run, settings, None)
    if ranked.num_queries == 0 and not (settings.queries == "intersection" and num_rows(run) == 0
                                        and query_id_set(qrels)):
        raise no_query_error(qrels, run)  # an empty run under queries="intersection" has no query: pytrec_eval's {}
    warn_if_nothing_matches(ranked, run.source)
    # measures asking for judged_only=True (ir-measures notation) see the -J ranking
    judged = [] if settings.judged_only else [m for m in measures if m.named.get("judged_only", False)]
    plain = [m for m in measures if m not in judged]
    subtopics = None
    if any(m.spec.subtopics for m in plain):
        from trec_rag_eval.evaluation.subtopics import subtopic_view

        subtopics = subtopic_view(qrels, run, ranked, settings)
    result = evaluate_ranked(ranked, plain, settings, subtopics=subtopics)
    if judged:
        extra = evaluate_ranked(only_judged(ranked), judged, settings)
        result = replace(result, measures=measures,
                         values=ByMeasure.of(measures, {**_keyed(result.values), **_keyed(extra.values)}),
                         summary=ByMeasure.of(measures, {**_keyed(result.summary), **_keyed(extra.summary)}))
    result.empty_queries = [q for q in result.missing_queries if q in run.empty_queries]
    return result


def ranks_read(measures: list[Measure]) -> int | None:
    """How deep into each query's ranking these measures read: their deepest cutoff when every one is of a family
    that reads no document below its cutoff (``Family.reads_top``) with no parameter that reads further
    (``Param.widens``); None when one of them reads whole rankings (MAP, MRR, num_ret, a measure without @k)."""
    deepest = 0
    for m in measures:
        spec = m.spec
        if not spec.reads_top or m.cutoff is None or not float(m.cutoff).is_integer() or m.cutoff < 1:
            return None
        if m.params and any(value in spec.params[key].widens for key, value in m.params if key in spec.params):
            return None
        deepest = max(deepest, int(m.cutoff))
    return deepest or None


def _ranked(qrels: Qrels, run: Run, settings: Settings, depth: int | None) -> RankedQueries:
    """``core.ranking.rank`` as the settings ask, a document listed twice named where the run was read."""
    try:
        return rank(qrels, run, max_retrieved=settings.max_retrieved, judged_only=settings.judged_only,
                    queries=settings.queries, float32_scores=settings.trec_eval_9, depth=depth)
    except DuplicateDocumentError as err:  # the ranking knows rows; the run knows where they were read
        raise duplicate_error(run, err.query_id, err.doc_id) from None


def warn_if_nothing_matches(ranked: RankedQueries, source: str) -> None:
    """Warn (``TrecRagEvalWarning``) when every score is 0 because the inputs do not meet: the run
    and the qrels share no query id, the run is empty, or no retrieved document is judged for its
    query.

    Both can be right (a run that finds nothing), so they are warnings, not errors; but they are
    far more often a mistake (other query ids, document ids against chunk ids), and a table of
    zeros says nothing about which. (A run of chunk ids of judged documents also gets the ``doc_map=``
    pattern that maps them, from the service: ``run_outcome.map_chunks``.)
    """
    present = ~ranked.missing
    if ranked.extra_queries and not present.any():
        warn_no_common_query(ranked.query_ids, ranked.extra_queries, source)
        return
    # a query of the run whose every document judged_only (or max_retrieved) removed has no row left
    counts = ranked.offsets[1:] - ranked.offsets[:-1]
    present &= counts > 0
    if not present.any():
        scored = ("no query is evaluated (queries='intersection' keeps the queries of both)" if not ranked.num_queries
                  else "every query scores 0")
        warn(
            EmptyRunWarning(
                f"{source}: the run holds no result for any query (none left after judged_only or max_retrieved, "
                f"if given), so {scored}: did the search run at all?",
                {"judged_only": "judged_only", "max_retrieved": "max_retrieved",
                 "queries='intersection'": "intersection"}))
        return
    retrieved = int(counts[present].sum())
    # the rows of the other queries are the dummy rankings of missing queries (NOT_IN_POOL): any judged
    # row is a retrieved one
    if retrieved and not _any_judged(ranked.rel):
        text = (f"{source}: none of the {retrieved} retrieved ids appears in the qrels for its query, so "
                "every measure is 0: do the run and the qrels use the same document ids "
                "(same chunking; document ids or chunk ids)?")
        warn(TrecRagEvalWarning(text))


def _any_judged(rel: np.ndarray, step: int = 1 << 16) -> bool:
    """Whether some row has a judgment >= 0, a piece at a time: nearly always found in the first,
    without a pass over every row of a large run."""
    return any(bool((rel[start: start + step] >= 0).any()) for start in range(0, len(rel), step))


def _keyed(values: Mapping[Any, Any]) -> dict[Measure, Any]:
    """A result's mapping keyed by its Measure values again."""
    return {m: values[m] for m in values.measures()} if isinstance(values, ByMeasure) else dict(values)


def evaluate_ranked(
    ranked: RankedQueries,
    measures: list[Measure],
    settings: Settings | None = None,
    *,
    subtopics: Any = None,
    views: Mapping[str, Any] | None = None,
) -> Evaluation:
    """Run the kernels on already aligned queries (the streaming path calls this per chunk); of the
    settings, the ranking ones were applied by ``rank``. ``subtopics``: the intent-aware judgments
    aligned with ``ranked`` (``evaluation.subtopics``), for the diversity measures; ``views``: other
    judgments aligned with it, by the name their kernels read them by (``evaluation.judgment_measures``)."""
    settings = settings or Settings()
    relevance_level, trec_eval_9 = settings.relevance_level, settings.trec_eval_9
    options = {"num_docs": settings.num_docs, "trec_eval_9": trec_eval_9, "leftovers": settings.leftovers,
               "subtopics": subtopics, **(views or {})}
    whole = subtopics is not None or bool(views)  # the views hold every query: the kernels see them all at once
    parts = [(0, ranked.num_queries)] if whole else ranked.thread_ranges()
    if len(parts) == 1:
        values = _kernel_values(ranked, measures, relevance_level, trec_eval_9, options)
    else:  # each thread a range of whole queries; numpy releases the GIL in the kernels' array work
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=len(parts)) as pool:
            shares = list(pool.map(lambda part: _kernel_values(ranked.between(*part), measures,
                                                               relevance_level, trec_eval_9, options), parts))
        values = {measure: _joined_values([share[measure] for share in shares]) for measure in shares[0]}
    summary = summarize(measures, values, ranked.num_queries, ranked.judged, settings.complete, ranked.run_tag)
    return Evaluation(
        query_ids=ranked.query_ids,
        measures=measures,
        values=ByMeasure.of(measures, values),
        summary=ByMeasure.of(measures, summary),
        run_tag=ranked.run_tag,
        missing_queries=ranked.missing_queries,
        extra_queries=ranked.extra_queries,
        settings=settings,
    )


def summarize(measures: list[Measure], values: Mapping[Measure, Any], num_queries: int, judgments: Any = None,
              complete_flag: bool = False, run_tag: str = "") -> dict[Measure, Any]:
    """``aggregate`` of every measure (its arguments but each measure's ``values``), the same values, the measures
    of numbers summed at once: each a row of a matrix of measures x queries (gm_*'s the logarithms of its floored
    values), whose one cumulative sum along the rows adds each row's values one at a time in query order, as
    ``sequential_sum`` does, so each sum is the same double. The other measures (runid, relstring, num_rel under
    -c, no query), and a summary that is not finite (refused or kept as ``aggregate`` says), are ``aggregate``'s."""
    recounted = {m for m in measures if recounted_under_c(m, complete_flag)} if complete_flag else set()
    rows: dict[Measure, np.ndarray] = {}
    with np.errstate(over="ignore", invalid="ignore"):  # a sum that overflows is aggregate's to refuse
        for measure in measures:
            how, column = measure.spec.aggregate, values.get(measure)
            if (how in ("mean", "sum", "gmean") and num_queries and not measure.spec.run_tag
                    and isinstance(column, np.ndarray) and column.shape == (num_queries,)
                    and column.dtype.kind in "biuf" and measure not in recounted):
                rows[measure] = np.log(np.maximum(column.astype(np.float64), GM_FLOOR)) if how == "gmean" else column
        matrix = np.array(list(rows.values()), dtype=np.float64)
        sums = dict(zip(rows, np.cumsum(matrix, axis=1)[:, -1].tolist(), strict=True)) if rows else {}
    summary: dict[Measure, Any] = {}
    for measure in measures:  # in their order, as aggregate would take them: the first refused is the one named
        if measure in sums:
            how, total = measure.spec.aggregate, 0.0 + sums[measure]  # from 0.0: all -0.0 sum to 0.0
            value = total if how == "sum" else math.exp(total / num_queries) if how == "gmean" else total / num_queries
            if math.isfinite(value):
                summary[measure] = value
                continue
        summary[measure] = aggregate(measure, values.get(measure), num_queries, judgments, complete_flag, run_tag)
    return summary


def _kernel_values(ranked: RankedQueries, measures: list[Measure], relevance_level: int, trec_eval_9: bool,
                   options: dict[str, Any]) -> dict[Measure, Any]:
    """Each measure's per-query values (runid has none), the derived arrays of a relevance level shared
    by every measure at that level."""
    contexts: dict[int, Context] = {}
    values: dict[Measure, Any] = {}
    with np.errstate(over="raise", divide="raise", invalid="raise"):  # for every kernel (``_computed``) at once
        for measure in measures:
            level = relevance_level if measure.rel is None else measure.rel
            if level not in contexts:
                contexts[level] = Context(ranked, level, options)
            family = measure.spec
            if not family.run_tag:
                kernel_measure = _as_trec_eval_9(measure) if trec_eval_9 and family.trec_eval_9 else measure
                values[measure] = _computed(family.kernel, contexts[level], kernel_measure, measure)
    return values


@functools.lru_cache(maxsize=1024)
def _as_trec_eval_9(measure: Measure) -> Measure:
    """The measure its kernel is given under trec_eval 9's rules (``Family.trec_eval_9``): made once per process (the
    pytrec_eval drop-in asks for the official set's eleven interpolated precisions so at every evaluation)."""
    return Measure(measure.family, measure.cutoff, measure.params + (("trec_eval_9", True),), measure.text, measure.rel)


def _computed(kernel: Any, ctx: Context, kernel_measure: Measure, measure: Measure) -> Any:
    """A kernel's values, refused when its arithmetic leaves the finite numbers (an overflow, a division by zero or
    an undefined operation, raised in ``_kernel_values``' error state) rather than written as inf or nan: a parameter
    trec_eval computes with at any value (``rbp.p=1e300``, a coefficient of 1e308, ``set_F.-1``) can take it there."""
    try:
        return kernel(ctx, kernel_measure)
    except FloatingPointError as err:
        raise UsageError(f"measure {quote(str(measure))} has no finite value on this run with its parameters "
                         f"({err}; trec_eval prints inf or nan there)") from None


def _joined_values(shares: list[Any]) -> Any:
    """One measure's per-query values of consecutive query ranges, end to end."""
    if all(isinstance(share, np.ndarray) for share in shares):
        return np.concatenate(shares)
    if all(isinstance(share, list) for share in shares):
        return [value for share in shares for value in share]
    raise TypeError(f"per-query values of an unexpected kind: {[type(share) for share in shares]}")
