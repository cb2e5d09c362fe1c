"""Run a dataset's queries through any search engine, record the run, and score it.

The engine is any callable ``(query, k) -> results`` or an object with a ``search`` (or, as in the
French RAG tutorial this tool follows, ``rechercher``) method taking ``(query, k)``. Results are doc ids, or items
with an ``id`` (``{"id": "d3", "score": 12.1}``), or ``(doc_id, score)`` pairs, best first.

Conventions, decided here once:
- The engine's list order is its ranking (an ordered list, ``io.ranked_lists``: the rule of every
  list of results, in memory or in a file). Scores are kept when they decrease along the list (tied
  ones when their doc ids stand in trec_eval's tie order); otherwise (no scores, other ties, or out
  of order) every score of that query is replaced by ``n, n-1, ..., 1``, so trec_eval's doc_id
  tie-break can never reorder what the engine returned; scores that rise along the list
  (distances) are warned about, in the words of every other path.
- A doc id returned twice keeps its first (best) position, and is warned about in the words of a results file.
- A query whose engine call raises is recorded as failed, gets no results, and therefore scores 0
  (the core evaluator scores every dataset query, ones missing from the run included).

An engine's results are read by ``engine.search_results``; the dataset and the run file by ``engine.harness_files``.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from numbers import Integral
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from trec_rag_eval.arguments import check_count
from trec_rag_eval.call_scope import per_call
from trec_rag_eval.core.frames import results_frame
from trec_rag_eval.core.settings import Settings
from trec_rag_eval.engine.harness_files import dataset_qrels, dataset_topics, write_run_file
from trec_rag_eval.engine.search_results import read_search_results, result_texts
from trec_rag_eval.errors import EmptyRunWarning, EngineError, TrecRagEvalWarning, UsageError, warn
from trec_rag_eval.evaluation.context_cost import ContextCost
from trec_rag_eval.evaluation.evaluate import Evaluation
from trec_rag_eval.io.chunks import doc_map_asked
from trec_rag_eval.io.id_paths import IdLocator, check_locator
from trec_rag_eval.io.ranked_lists import list_scores, order_warning, repeat_warning
from trec_rag_eval.lazy_modules import LazyModule
from trec_rag_eval.measures.by_measure import ByMeasure
from trec_rag_eval.measures.requests import MeasuresArg
from trec_rag_eval.notes import Note, warning
from trec_rag_eval.number_formats import short_repr
from trec_rag_eval.progress import progress_bar
from trec_rag_eval.renderer_registry import show, shown_by
from trec_rag_eval.tables import Qrels, Run, run_columns

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl
else:  # the libraries in annotations, imported when read (typing.get_type_hints), not with this module
    pd = LazyModule("pandas")
    pl = LazyModule("polars")

SearchFunction = Callable[[str, int], Any]

# Show the progress bar by default from this many queries on.
PROGRESS_THRESHOLD = 50


@dataclass(frozen=True)
class QueryFailure:
    """One query whose engine call raised: the dataset goes on without it."""

    query_id: str
    query: str
    error: str


@dataclass(frozen=True)
class SearchOutcome:
    """What running the queries produced, before any scoring."""

    run: Run
    latencies: dict[str, float]          # query_id -> seconds, failed queries included
    failures: list[QueryFailure]
    rescored_queries: list[str]          # queries whose engine scores were replaced by n, n-1, ..., 1
    disordered_queries: list[str] = field(default_factory=list)  # ... of which scores rose along the list
    texts: dict[str, str] = field(default_factory=dict)  # doc_id -> text, for results that carried one

    def latency_percentile(self, percent: float) -> float:
        """Latency percentile in seconds (numpy's linear interpolation); NaN when nothing ran."""
        if not self.latencies:
            return float("nan")
        return float(np.percentile(np.fromiter(self.latencies.values(), dtype=float), percent))

    @property
    def latency_p50(self) -> float:
        return self.latency_percentile(50)

    @property
    def latency_p95(self) -> float:
        return self.latency_percentile(95)


@shown_by("trec_rag_eval.render.results:register_engine_evaluation")
@dataclass(frozen=True)
class EngineEvaluation:
    """Scores of one engine on one dataset, with the run and the latencies that produced them."""

    outcome: SearchOutcome
    result: Evaluation
    qrels: Qrels
    measures: list[str] = field(default_factory=list)

    @property
    def run(self) -> Run:
        return self.outcome.run

    @property
    def failures(self) -> list[QueryFailure]:
        return self.outcome.failures

    @property
    def notes(self) -> list[Note]:
        """What to tell about this evaluation: ``mapping_notes``, then ``failures_note``. ``Evaluator.evaluate``
        warns them (``warn=True``)."""
        return self.mapping_notes + ([self.failures_note] if self.failures_note is not None else [])

    @property
    def mapping_notes(self) -> list[Note]:
        """With ``Evaluator(doc_map=...)``: what mapping the engine's chunk ids to documents did, then its
        warnings (ids it does not cover, ...), as ``evaluate`` says them of a run file."""
        collapse = self.result.collapse
        return [] if collapse is None else collapse.notes()

    @property
    def failures_note(self) -> Note | None:
        """How many queries failed and were scored 0 (each named in ``failures``), or None."""
        count = len(self.failures)
        return warning(f"{count} {'query' if count == 1 else 'queries'} failed (scored 0)") if count else None

    @property
    def context(self) -> ContextCost | None:
        """The tokens of the top k results per query (mean, p95 at each k), when the results' texts are
        known: results carrying their text, or ``Evaluator(corpus=...)`` (see ``evaluation.context_cost``)."""
        return self.result.context

    def context_table(self, library: str = "pandas") -> Any:
        """Quality and context tokens against k (``Evaluation.context_table``)."""
        return self.result.context_table(library)

    def plot_context(self) -> Any:
        """``context_table`` as a matplotlib ``Figure`` (``Evaluation.plot_context``)."""
        return self.result.plot_context()

    @property
    def summary(self) -> ByMeasure[float]:
        """Measure name -> mean over the dataset's queries (failed ones count 0); any name of a measure
        finds it (``summary["MRR"]``, ``summary["RR"]``)."""
        return self.result.summary

    @property
    def per_query(self) -> dict[str, ByMeasure[Any]]:
        """``{query_id: {measure name: value}}`` as ``Evaluation.per_query``, queries in dataset order."""
        by_query = self.result.per_query
        order = [q for q in (self.qrels.topics or {}) if q in by_query]
        seen = set(order)
        return {query_id: by_query[query_id] for query_id in order + [q for q in by_query if q not in seen]}

    def to_pandas(self, shape: str = "long") -> pd.DataFrame:
        """Per-query values as a pandas DataFrame, ``long`` or ``wide`` (see ``Evaluation.to_pandas``)."""
        return results_frame(self.run.run_tag, self.per_query, self.result.numeric_names, shape, "pandas")

    def to_polars(self, shape: str = "long") -> pl.DataFrame:
        """As ``to_pandas``, a polars DataFrame."""
        return results_frame(self.run.run_tag, self.per_query, self.result.numeric_names, shape, "polars")

    def __repr__(self) -> str:
        head = [f"run={self.run.run_tag!r}", f"queries={len(self.result.query_ids)}",
                f"failed={len(self.failures)}", f"latency_p95={self.latency_p95 * 1000:.1f}ms"]
        return short_repr("EngineEvaluation", head, self.result.shown_summary())

    def __str__(self) -> str:
        """``trec-rag-eval search``'s text: the measures table titled ``tag on dataset``, then the latencies."""
        return str(show(self, "text"))

    def _repr_html_(self) -> str:
        return str(show(self, "html"))

    @property
    def latency_p50(self) -> float:
        return self.outcome.latency_p50

    @property
    def latency_p95(self) -> float:
        return self.outcome.latency_p95

    def write_run(self, path: str | os.PathLike[str], format: str = "trec", force: bool = False) -> None:
        """Write the run as a TREC run file (``format="trec"``) or JSON ``{query_id: [{"id", "score"}]}``."""
        write_run_file(self.run, path, format=format, force=force)

    def to_dict(self) -> dict[str, Any]:
        """Plain data: summary, per-query values, latencies (seconds), failures and, when the results' texts
        are known, the context tokens at each k."""
        return {
            "run_tag": self.run.run_tag,
            "queries": len(self.result.query_ids),
            "summary": dict(self.summary),
            "per_query": {query_id: dict(values) for query_id, values in self.per_query.items()},
            "latency_seconds": {
                "p50": self.latency_p50,
                "p95": self.latency_p95,
                "per_query": dict(self.outcome.latencies),
            },
            "failed_queries": [{"query_id": f.query_id, "error": f.error} for f in self.failures],
            # with the results' texts: {"tokenizer", "k": {"mean", "p95", "per_query": {query_id: tokens}}}
            **({} if self.context is None else {"context_tokens": {
                "tokenizer": self.context.tokenizer,
                **{str(k): {**self.context.summary[k],
                            "per_query": {q: by_k[k] for q, by_k in self.context.per_query().items()}}
                   for k in self.context.ks}}}),
        }


class Evaluator:
    """Evaluate a search engine on a dataset, as the French RAG tutorial's ``EvaluateurRecherche`` does.

    >>> report = Evaluator(engine).evaluate(dataset, k_values=(1, 3, 5, 10))
    >>> report.summary["nDCG@10"], report.latency_p95
    """

    def __init__(
        self,
        engine: Any,
        run_tag: str = "engine",
        progress: bool | None = None,
        progress_file: IO[str] | None = None,
        doc_map: Any = None,
        id: IdLocator | None = None,
        corpus: Any = None,
        tokenizer: Any = None,
        doc_id_pattern: str | None = None,
    ) -> None:
        """``doc_map`` maps the chunk ids the engine returns to the dataset's document ids when
        scoring: a callable ``chunk_id -> doc_id`` (or None when it does not apply), a regular
        expression whose first group is the document id, or a dict (see ``io.chunks``). The run
        keeps the engine's ids; the scores count each document once, at its best chunk. Or
        ``doc_id_pattern``, that regular expression by the command line's name (one of the two).
        ``id``: where each result keeps its document id when none of the usual keys holds it, a key
        path (``"metadata.source"``, LangChain's) or a callable ``result -> id`` (``io.id_paths``).

        Context cost: when the results carry their text (``{"id", "text"}`` dicts, LangChain
        ``page_content``, LlamaIndex nodes) or ``corpus`` gives it (a JSONL path, ``[{"id", "text"}]``,
        ``{id: text}``: the texts of the ids the engine returns, chunks included), the evaluation
        reports the tokens of the top k results per query beside the measures at each k
        (``EngineEvaluation.context``), counted by ``tokenizer`` (any callable text -> count or
        tokens, or one named ``"package.module:callable"``; default whitespace words: see
        ``evaluation.context_cost``)."""
        self.search = resolve_engine(engine)
        self.id = check_locator(id)
        self.doc_map = doc_map_asked(doc_map, doc_id_pattern)
        self.corpus = corpus
        from trec_rag_eval.engine.load import load_tokenizer

        self.tokenizer = load_tokenizer(tokenizer)
        self.run_tag = run_tag
        self.progress = progress
        self.progress_file = progress_file

    @per_call
    def run(self, dataset: Any, depth: int = 10) -> SearchOutcome:
        """Send every dataset query to the engine for ``depth`` results; record run, latency, failures."""
        check_count("the search depth", depth)
        topics = dataset_topics(dataset)
        return run_queries(
            self.search,
            topics,
            depth=depth,
            run_tag=self.run_tag,
            progress=self.progress if self.progress is not None else len(topics) >= PROGRESS_THRESHOLD,
            progress_file=self.progress_file if self.progress_file is not None else sys.stderr,
            id=self.id,
        )

    @per_call
    def evaluate(
        self,
        dataset: Any,
        k_values: Sequence[int] = (1, 3, 5, 10),
        measures: MeasuresArg = None,
        depth: int | None = None,
        settings: Settings | None = None,
        warn: bool = True,
        **overrides: Any,
    ) -> EngineEvaluation:
        """Run the dataset and score the run with the core evaluator (``settings`` as for ``evaluate``).

        ``measures`` defaults to P@k, R@k, F1@k, HitRate@k and nDCG@k for each k, then MRR and MAP.
        The engine is asked for ``depth`` results, by default ``max(k_values)``. The evaluation's notes
        (``EngineEvaluation.notes``: the chunk ids mapped, the queries that failed, unless every call
        failed, which ``run`` said) are warned to the caller (``TrecRagEvalWarning``) unless ``warn=False``.
        """
        ks = _k_values(k_values)
        if measures is None:
            from trec_rag_eval.measures.requests import rag_measures

            measures = list(rag_measures(ks))
        qrels = dataset_qrels(dataset)
        outcome = self.run(qrels, depth=max(ks) if depth is None else depth)
        from trec_rag_eval.evaluation.context_cost import measure_context_cost, measure_ks
        from trec_rag_eval.evaluation.evaluate import evaluate_tables

        # "every engine call failed" was then said, with the first error: "the run is empty" and "N queries
        # failed" say less
        every_call_failed = bool(outcome.failures) and len(outcome.failures) == len(outcome.latencies)
        with warnings.catch_warnings():
            if every_call_failed:
                warnings.simplefilter("ignore", EmptyRunWarning)
            result = evaluate_tables(qrels, outcome.run, measures, settings, doc_map=self.doc_map, **overrides)
        texts = dict(outcome.texts)
        if self.corpus is not None:
            from trec_rag_eval.io.json.corpus import corpus_texts

            texts = {**corpus_texts(self.corpus), **texts}  # what the engine returned is what it sends
        if texts:  # the engine's own ids (chunks), in its order: what would go into the prompt
            result.context = measure_context_cost(outcome.run, texts, measure_ks(result.measures, ks),
                                                  result.query_ids, self.tokenizer)
        elif self.tokenizer is not None:
            raise UsageError("tokenizer= counts the tokens of the results' texts: the results carry none; give "
                             "them with corpus=", {"tokenizer= ": "tokenizer", "corpus=": "corpus"})
        evaluation = EngineEvaluation(outcome=outcome, result=result, qrels=qrels, measures=result.names)
        if warn:
            for note in evaluation.notes if not every_call_failed else evaluation.mapping_notes:
                note.warn()
        return evaluation


def _k_values(k_values: Any) -> list[int]:
    """The cutoffs asked, sorted and once each: one integer or an iterable of positive integers."""
    if isinstance(k_values, Integral):
        k_values = [k_values]
    if isinstance(k_values, (str, bytes)) or not isinstance(k_values, Iterable):
        raise UsageError(f"k_values must be an integer or a list of positive integers, got {k_values!r}")
    ks = list(k_values)
    if not ks:
        raise UsageError("k_values must hold at least one k")
    for k in ks:
        if not isinstance(k, Integral) or isinstance(k, bool) or k < 1:
            raise UsageError(f"k_values must be positive integers, got {k!r}")
    return sorted({int(k) for k in ks})


def resolve_engine(engine: Any) -> SearchFunction:
    """Turn an engine object into a ``(query, k) -> results`` function.

    A function that cannot take ``(query, k)`` (``lambda q: ...``, a method with a third required
    argument) is refused here, before any query: called anyway, it would fail on every query and
    leave a table of zeros.
    """
    search: Any = None
    name = ""
    for method in ("search", "rechercher"):
        bound = getattr(engine, method, None)
        if callable(bound):
            search, name = bound, f"{type(engine).__name__}.{method}"
            break
    if search is None and callable(engine):
        search, name = engine, getattr(engine, "__qualname__", type(engine).__name__)
    if search is None:
        hint = ""
        for method in ("invoke", "retrieve"):  # LangChain's and LlamaIndex's retrievers take no k
            if callable(getattr(engine, method, None)):
                hint = f"; for a retriever, pass lambda q, k: retriever.{method}(q)[:k]"
                break
        raise UsageError(
            "the engine must be a callable (query, k) or have a search/rechercher method, "
            f"got {type(engine).__name__}{hint}"
        )
    if inspect.iscoroutinefunction(search):
        raise EngineError(f"the engine {name} is async (async def): the harness calls it once per query and "
                          "waits; pass a plain function, e.g. lambda q, k: asyncio.run(engine(q, k))")
    try:
        signature = inspect.signature(search)
    except (TypeError, ValueError):  # some builtins and C extensions have none: try them as they are
        return search  # type: ignore[no-any-return]
    try:
        signature.bind("query", 10)
    except TypeError as err:
        for keyword in ("k", "top_k"):  # search(query, *, k=10): the number of results by keyword
            try:
                signature.bind("query", **{keyword: 10})
            except TypeError:
                continue
            return functools.partial(_by_keyword, search, keyword)
        raise EngineError(
            f"the engine {name}{signature} cannot be called as engine(query, k): {err}. It must take the "
            "query text and the number of results wanted, e.g. def search(query, k): ..."
        ) from None
    return search  # type: ignore[no-any-return]


def _by_keyword(search: Any, keyword: str, query: str, k: int) -> Any:
    return search(query, **{keyword: k})


def run_queries(
    search: SearchFunction,
    topics: dict[str, str],
    depth: int,
    run_tag: str = "engine",
    progress: bool = False,
    progress_file: IO[str] | None = None,
    id: IdLocator | None = None,
) -> SearchOutcome:
    """Call ``search(query, depth)`` for each topic, in the given order, timing each call.

    A call that raises is that query's failure and the others go on; when every call fails, a
    ``TrecRagEvalWarning`` says so. Results whose ids cannot be read raise ``EngineError`` at once.
    """
    rows: list[tuple[str, str, float]] = []
    latencies: dict[str, float] = {}
    failures: list[QueryFailure] = []
    rescored: list[str] = []
    disordered: list[str] = []
    repeats: list[tuple[object, str, int]] = []
    texts: dict[str, str] = {}
    for query_id, query in progress_bar(topics.items(), total=len(topics), label="Searching", unit="query",
                                        enabled=progress, file=progress_file):
        start = time.perf_counter()
        try:
            results = search(query, depth)
        except Exception as err:  # noqa: BLE001 - any engine error fails this query only
            latencies[query_id] = time.perf_counter() - start
            failures.append(QueryFailure(query_id, query, f"{type(err).__name__}: {err}"))
            continue
        latencies[query_id] = time.perf_counter() - start
        if isinstance(results, Iterable) and not isinstance(results, (str, bytes, dict, list, tuple)):
            results = list(results)  # a generator is read twice: its ids, then its texts
        try:
            passed_over: list[str] = []
            doc_ids, given = read_search_results(results, depth, id, passed_over)
            repeats += [(query_id, doc_id, n + 1) for doc_id, n in Counter(passed_over).items()]
            if isinstance(results, (list, tuple)):
                texts.update(result_texts(results, set(doc_ids), id))
        except EngineError as err:
            raise EngineError(f"query {query_id!r} ({query!r}): {err}") from None
        scores, rising = list_scores(given, doc_ids)
        if doc_ids and scores != given:
            rescored.append(query_id)
        if rising:
            disordered.append(query_id)
        rows.extend((query_id, doc_id, score) for doc_id, score in zip(doc_ids, scores, strict=True))
    if topics and len(failures) == len(topics):
        first = failures[0]
        warn(
            f"every engine call failed ({len(failures)} of {len(topics)} queries), so every score is 0; "
            f"first error, on {first.query_id!r}: {first.error}",
            TrecRagEvalWarning,
        )
    failed = {failure.query_id for failure in failures}
    answered = {row[0] for row in rows}
    run = Run(run_columns(rows), run_tag=run_tag, source=f"<engine {run_tag}>",
              empty_queries=frozenset(q for q in topics if q not in answered and q not in failed), checked=True)
    if repeats:  # as from a results file: the first place kept
        warn(f"{run.source}: {repeat_warning(repeats)}")
    if disordered:
        warn(f"{run.source}: {order_warning(disordered)}")
    return SearchOutcome(run, latencies, failures, rescored, disordered, texts)
