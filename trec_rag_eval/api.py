"""The one-call functions of the public API: every input shape in, the library's own types out.

Each function turns its qrels and runs into ``Qrels`` / ``Run`` (paths in any format the command
line reads, dicts, DataFrames, ir_measures tuples: see ``tables.shapes`` and ``service.inputs``) and its measures into
``Measure`` values (any notation, ranx's names too: see ``measures.requests.resolve_measures``), then
calls the layer that does the work. ``import trec_rag_eval`` reaches them lazily.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

from trec_rag_eval.call_scope import per_call
from trec_rag_eval.core.settings import Settings as Settings
from trec_rag_eval.io.loading import QRELS_FORMATS as QRELS_FORMATS
from trec_rag_eval.io.loading import RUN_FORMATS as RUN_FORMATS
from trec_rag_eval.io.sources import is_url as is_url
from trec_rag_eval.measures.requests import MeasuresArg, resolve_measures
from trec_rag_eval.notes import Note
from trec_rag_eval.service import inputs

if TYPE_CHECKING:
    from trec_rag_eval.checks.crosscheck import CrosscheckReport
    from trec_rag_eval.checks.validate import ValidationReport
    from trec_rag_eval.compare.agreement import Agreement
    from trec_rag_eval.compare.allpairs import AllPairs
    from trec_rag_eval.compare.comparison import Comparison
    from trec_rag_eval.compare.planning import TopicSetPlan
    from trec_rag_eval.conversion import ConversionReport
    from trec_rag_eval.evaluation.context_cost import ContextCost
    from trec_rag_eval.evaluation.evaluate import Evaluation, QueryResult
    from trec_rag_eval.fusion import Fusion
    from trec_rag_eval.io.id_paths import IdLocator
    from trec_rag_eval.llm.client import progress_path_for as progress_path_for
    from trec_rag_eval.llm.judging import JudgeReport
    from trec_rag_eval.llm.queries import GenerationReport
    from trec_rag_eval.run_outcome import RunOutcome
    from trec_rag_eval.tables import Qrels, Run


read_judgments = per_call(inputs.read_judgments)
"""The judgments in any shape and the notes about them (``service.inputs.read_judgments``), in a call of their own."""


@per_call
def evaluate(qrels: Any, run: Any, measures: MeasuresArg = None, settings: Settings | None = None, *,
             cluster: Any = None, corpus: Any = None, tokenizer: Any = None, **options: Any) -> Evaluation:
    """Evaluate ``run`` against ``qrels`` with trec_eval's conventions.

    ``qrels`` and ``run``: a path, a ``Qrels`` / ``Run``, a dict ``{query_id: {doc_id: relevance or
    score}}``, a pandas or polars DataFrame (query_id, doc_id, relevance / score), ir_measures tuples,
    or (qrels) a list of dataset rows (the French RAG tutorial's shape); a run dict keyed by query text
    finds its queries through the qrels' texts. ``measures``: None (the RAG set), ``"nDCG@10"``, a list
    of names in any notation (``"ndcg_cut.10"``, ranx's ``"ndcg@10"``), ``Measure`` values or
    ir_measures' (``ir_measures.AP``).
    ``settings``: a ``Settings``, or its fields as keywords (``relevance_level=2``, ``judged_only=True``,
    ``max_retrieved=100``, ``queries="intersection"``, ``trec_eval_9=True``); ``doc_map`` maps chunk
    ids to document ids (a regular expression whose first group is the document id, a map file as a ``Path``,
    a dict, a callable: ``io.chunks.as_doc_map``), or ``doc_id_pattern`` does, such a regular expression by
    the name ``--doc-id-pattern`` gives it (one of the two); ``judgments`` (``"human"``, ``"llm"`` or
    ``"both"``, the default) chooses which judgments of a qrels file written by ``judge`` count, as
    ``--judgments`` does. ``id``: where search results (in memory, or in a JSON results file) keep their
    document id when none of the usual keys does: a key path (``id="metadata.source"``, LangChain's) or a
    callable ``result -> id``.
    A run given as a path is read as the command line reads it: in pieces when it is larger than a
    quarter of the memory available. What the command prints as warnings and notes (queries missing
    from the run or only in it, chunk ids, the RAG checks of JSON results) comes as ``TrecRagEvalWarning``.
    ``cluster``: a ``dask.distributed.Client`` (used as it is), a scheduler address or ``"local:N"``
    to evaluate on Dask workers (the ``dask`` extra); a run given as a path (or a list of shard paths)
    is then read by the workers where it lies and split by query id: the same numbers (see
    ``trec_rag_eval.cluster``).
    ``corpus``: the results' texts (a JSONL path, ``[{"id", "text"}]`` or ``{doc_id: text}``): the
    evaluation then holds the context cost (``evaluation.context``: the tokens of the top k results
    per query, mean and p95, at the measures' cutoffs), shown beside the measures and tabled against
    k by ``context_table()``; ``tokenizer`` counts the tokens (any callable text -> count or tokens;
    default whitespace words: see ``evaluation.context_cost``).
    ``qrels`` may also be judgment groups or preferences (trec_eval's ``-R qrels_jg``, ``prefs``, ``qrels_prefs``:
    ``qrels_format=`` names them, or ``read_qrels(path, format=...)`` reads them), each scored by its own measures
    (``measures="qrels_jg"``, ``"all_prefs"``; by default trec_eval's set of the kind). ``zscores``: a file of
    per-query means and standard deviations (trec_eval's ``-Z``): every value is then a z-score
    (``evaluation.zscores``).

    >>> evaluate("qrels.txt", "run.txt", "nDCG@10").summary["nDCG@10"]
    """
    from trec_rag_eval.service.pipeline import evaluate_one

    return evaluate_one(qrels, run, measures, settings, cluster=cluster, corpus=corpus, tokenizer=tokenizer, **options)


@per_call
def evaluate_many(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], measures: MeasuresArg = None,
                  settings: Settings | None = None, **options: Any) -> Iterator[RunOutcome]:
    """Evaluate several runs against ``qrels`` read once: one ``RunOutcome`` per run (``label``,
    ``evaluation``, ``notes``, ``error``), in the order given, each as soon as it is ready. A run with
    bad input fails alone: its outcome holds the error and the others are evaluated.

    ``runs``: paths (a folder stands for the run files in it), runs in any shape ``evaluate`` takes,
    or a mapping label -> run. ``options``: those of ``evaluate`` and ``qrels_format``, ``run_format``,
    ``topics`` (a TREC topics file), ``order`` (``"trec"``: the measures in trec_eval's order),
    ``stream``, ``chunk_bytes``, ``jobs`` (runs at once), ``progress`` (True: progress bars on stderr for
    runs read in pieces and tasks on a cluster; or, given a run's path, a context reporting the bytes
    read of a run read in pieces), ``task_progress`` (called with the tasks done and in all on a
    cluster), ``cluster``, ``shards`` (the files are pieces of one run), ``corpus``
    and ``tokenizer`` (the context cost of each run, as in ``evaluate``), ``render`` (called with each
    evaluation where it was made, on its thread or its Dask worker: the outcome then holds what it
    returned, ``rendered``, instead of the evaluation; e.g. ``render.output.RunRenderer``, the command
    line's text). The notes about each run are in its outcome, not warned.
    """
    from trec_rag_eval.service.pipeline import evaluate_runs

    return evaluate_runs(qrels, runs, measures, settings, **options)


@per_call
def context_cost(run: Any, corpus: Any, k_values: Sequence[int] = (1, 3, 5, 10), *, tokenizer: Any = None,
                 query_ids: Sequence[str] | None = None, qrels: Any = None, format: str | None = None) -> ContextCost:
    """The tokens the top k results of each query would put into a prompt, for each k of ``k_values``:
    ``ContextCost`` (``mean(k)``, ``p95(k)``, ``per_query()``). ``run`` in any shape ``evaluate`` takes
    (ranked as the measures rank it), ``corpus`` as in ``io.json.corpus.corpus_texts`` (or already such a dict),
    ``tokenizer`` any callable text -> count or tokens, or one named ``"package.module:callable"``
    (default: whitespace words), ``query_ids`` the
    queries to report (default the run's; one with no results sends 0 tokens); ``format`` that of a run
    file when it is not to be detected."""
    from trec_rag_eval.service.pipeline import run_context_cost

    return run_context_cost(run, corpus, k_values, tokenizer=tokenizer, query_ids=query_ids, qrels=qrels,
                            format=format)


@per_call
def iter_evaluate(qrels: Any, run: Any, measures: MeasuresArg = None, settings: Settings | None = None,
                  **options: Any) -> Iterator[QueryResult]:
    """``evaluate``, one query at a time: ``QueryResult(query_id, values)`` in trec_eval's query order,
    ``values`` keyed by measure name (as ir_measures' ``iter_calc``, grouped by query)."""
    yield from evaluate(qrels, run, measures, settings, **options).iter_queries()


@overload
def compare(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], measures: MeasuresArg = None,
            baseline: str | None = None, settings: Settings | None = None, *, pairs: Literal["baseline"] = "baseline",
            **options: Any) -> Comparison: ...


@overload
def compare(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], measures: MeasuresArg = None,
            baseline: str | None = None, settings: Settings | None = None, *, pairs: Literal["all"],
            **options: Any) -> AllPairs: ...


@per_call
def compare(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], measures: MeasuresArg = None,
            baseline: str | None = None, settings: Settings | None = None, *, pairs: str = "baseline",
            **options: Any) -> Comparison | AllPairs:
    """Evaluate every run and compare each with the baseline: deltas, paired tests, intervals.

    ``pairs="all"``: every pair of runs instead of each against a baseline, the randomised Tukey HSD
    by default (``test="tukey-hsd"``; ``"tukey"``, ``"t"`` or ``"randomization"`` with ``correction``),
    each measure's pairs one family; returns an ``AllPairs`` (letters table, pairs; see
    ``trec_rag_eval.compare.allpairs``).

    ``runs``: a list (or generator) of runs in any shape ``evaluate`` takes (named by run tag, or file
    name), or a mapping name -> run. ``baseline``: a run's name, or its file. ``measures`` are compared,
    exactly those, in the order given, and the correction covers them alone; none given, the primary
    set (nDCG@10, R@5, MRR) (``primary=True``: the primary set, then ``measures``;
    ``all_measures=True``: the whole RAG table, then ``measures``). ``judgments``, ``topics``,
    ``qrels_format``, ``run_format``, ``doc_map`` or ``doc_id_pattern`` and ``id``: as in ``evaluate``. Other
    options (``test``,
    ``correction``, ``alpha``, ``seed``, ...) and the settings are those of
    ``trec_rag_eval.compare.compare_runs``. What ``evaluate`` warns of (a qrels query missing from a run,
    scored 0; chunk ids) is warned here too.
    """
    from trec_rag_eval.service.analyses import compare_runs_read

    return compare_runs_read(qrels, runs, measures, baseline, settings, pairs=pairs, **options)


@per_call
def plan(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], measures: MeasuresArg = None, *, delta: float,
         alpha: float = 0.05, power: float = 0.8, ci_width: float | None = None, queries: int | None = None,
         confidence: float = 0.95, settings: Settings | None = None, **options: Any) -> TopicSetPlan:
    """How many queries must be judged to detect a difference of ``delta``? A topic set size plan from a pilot.

    ``runs`` (two or more, in any shape ``compare`` takes) are evaluated on the pilot's judgments as ``compare``
    evaluates them, on ``measures`` (none given: compare's primary set nDCG@10, R@5, MRR). For each measure the
    plan gives the queries a paired t-test (two runs) or a one-way ANOVA and a Tukey HSD over all pairs (more
    runs) needs to detect ``delta`` at ``alpha`` with ``power``, and with ``ci_width`` the queries whose interval
    of a difference is expected no wider; the range of those counts over the ``confidence`` interval of the
    pilot's variance; the pilot's power for ``delta``; and the delta detectable at ``queries`` (default: the
    pilot's). Returns a ``TopicSetPlan`` (``str()`` is the command's text, ``render(format)``, ``to_pandas()``,
    ``plot()``); the methods are ``trec_rag_eval.compare.planning``'s. ``judgments``, ``topics``,
    ``qrels_format``, ``run_format``, ``doc_map`` or ``doc_id_pattern``, ``id`` and the settings as in ``compare``.
    """
    from trec_rag_eval.service.analyses import plan_runs_read

    return plan_runs_read(qrels, runs, measures, delta=delta, alpha=alpha, power=power, ci_width=ci_width,
                          queries=queries, confidence=confidence, settings=settings, **options)


@per_call
def fuse(runs: Sequence[Any] | Mapping[str, Any], method: str = "rrf", norm: str | None = None, k: float | None = None,
         weights: Sequence[float] | None = None, *, depth: int | None = None, run_tag: str | None = None,
         optimize: Any = None, measure: str = "nDCG@10", folds: int = 5, seed: int = 42, step: float = 0.1,
         ks: Sequence[float] | None = None, settings: Settings | None = None, progress: bool | None = None,
         **options: Any) -> Fusion:
    """Fuse runs into one (hybrid search): ``rrf`` (default), ``combsum``, ``combmnz``, ``combmax``,
    ``combmin``, ``combanz``, ``wsum``, ``borda`` or ``isr`` (ranx's names too: ``sum``, ``mnz``, ...).

    ``runs``: two or more, in any shape ``evaluate`` takes (a list, named by run tag or file name, or a
    mapping name -> run). ``norm``: ``minmax`` (the default for score methods), ``zscore``, ``sum``,
    ``max``, ``rank`` or ``none`` (ranx's ``min-max``, ``zmuv``). ``k``: rrf's constant (default 60).
    ``weights``: one per run (wsum, rrf); with ``optimize``, the parameter it chooses (wsum's weights, rrf's
    k) is refused. ``depth``: documents kept per query. ``optimize``: qrels (any shape) on which
    wsum's weights or rrf's k are chosen by ``folds``-fold cross-validation over queries on ``measure``;
    the result reports the held-out score beside the training one (``progress``: a bar over the
    settings tried; None shows it from 20 on). Returns a ``Fusion``: ``.run`` (a
    ``Run``), ``.write(path)``, ``to_dict()``, ``to_pandas()``; definitions in ``trec_rag_eval.fusion.methods``.
    ``measure``, ``folds``, ``seed``, ``step``, ``ks``, ``progress`` and the settings tune ``optimize``: given
    other than their defaults without it, they are refused, as ``k`` is with a method other than rrf (a
    parameter that would change nothing is a mistake to say, not to ignore).
    """
    from trec_rag_eval.service.analyses import fuse_runs

    return fuse_runs(runs, method, norm, k, weights, depth=depth, run_tag=run_tag, optimize=optimize, measure=measure,
                     folds=folds, seed=seed, step=step, ks=ks, settings=settings, progress=progress, **options)


@per_call
def agree(a: Any, b: Any = None, runs: Sequence[Any] | Mapping[str, Any] | None = None,
          measures: MeasuresArg = None, *, judgments: Sequence[str] | None = None, relevance_level: int = 1,
          confidence: float = 0.95, n_resamples: int = 1000, seed: int | None = 42,
          settings: Settings | None = None, **options: Any) -> Agreement:
    """Do two sets of judgments agree? Label agreement on the (query, document) pairs both judge
    (Cohen's kappa binary and linearly weighted, Krippendorff's alpha, confusion matrix, pairs only
    one side judges) and, given ``runs``, per measure (default nDCG@10, R@5, MRR) the ranking of the
    runs under each, Kendall's tau, tau_AP, the pairs that swap and a bootstrap interval of tau over
    queries. A is the reference (tau_AP weighs B's errors near A's top).

    ``a``, ``b``: qrels in any shape. ``judgments=("human", "llm")``: the views of files ``judge`` wrote
    (``"human"``, ``"llm"`` or ``"both"``, as ``evaluate(judgments=...)``); ``b`` None is ``a`` again (with
    ``judgments``, or ``a`` a file ``judge`` wrote: its human judgments are compared with the LLM's);
    otherwise one set of judgments, or one object given twice, is refused, as the command refuses one
    file given twice. ``runs``: a list or mapping in any run shape. See ``trec_rag_eval.compare.agreement``.
    """
    from trec_rag_eval.service.analyses import agree_judgments

    return agree_judgments(a, b, runs, measures, judgments=judgments, relevance_level=relevance_level,
                           confidence=confidence, n_resamples=n_resamples, seed=seed, settings=settings, **options)


@per_call
def crosscheck(qrels: Any, run: Any, measures: MeasuresArg = None, settings: Settings | None = None,
               **options: Any) -> CrosscheckReport:
    """Compute the measures with ir-measures too and say, per measure, whether both agree (and when
    they differ, which known convention explains it). ``options``: ``tolerance``, the settings, and
    ``qrels_format``, ``topics``, ``run_format`` and ``doc_map`` or ``doc_id_pattern`` as in ``evaluate``.
    ``measures``
    None: ``checks.crosscheck.DEFAULT_MEASURES``, as the ``crosscheck`` command."""
    from trec_rag_eval.service.analyses import crosscheck_read

    return crosscheck_read(qrels, run, measures, settings, **options)


@per_call
def validate(qrels: Any, run: Any, reference: str | os.PathLike[str], settings: Settings | None = None,
             measures: MeasuresArg = None, **options: Any) -> ValidationReport:
    """Compare our scores with a published scores file (trec_eval -q, ir_measures -q or JSON): every value
    it holds, or those of ``measures`` (either notation; each must be in the file). ``options``: those of
    ``checks.validate.validate_tables``, and ``qrels_format``, ``topics``, ``run_format`` and ``doc_map`` or
    ``doc_id_pattern`` as in ``evaluate``."""
    from trec_rag_eval.checks.validate import validate_tables

    chosen = None if measures is None else resolve_measures(measures)
    judgments, table = inputs.read_pair(qrels, run, options)
    return validate_tables(judgments, table, os.fspath(reference), settings, measures=chosen, **options)


@per_call
def read_qrels(path: Any, format: str | None = None, *,
               topics: str | os.PathLike[str] | None = None, judgments: str | None = None) -> Qrels:
    """Judgments from any file the command line reads (TREC, JSON/JSONL dataset, BEIR), detected from
    the content unless ``format`` says (``"trec"``, ``"json"``, ``"beir"``, ...; ``"qrels_jg"``, ``"prefs"`` and
    ``"qrels_prefs"`` read trec_eval's judgment groups and preferences: ``tables.judgment_kinds``). ``judgments``
    (``"human"``, ``"llm"``, ``"both"``): that view of a file ``judge`` wrote, as in ``evaluate``. Judgments in
    memory, in any shape ``evaluate`` takes, are checked and made a ``Qrels`` (``format``, ``topics`` and
    ``judgments`` describe a file: refused with them)."""
    if not isinstance(path, (str, os.PathLike)):  # in memory, as read_run takes a run
        return inputs.read_judgments(path, format=format, topics=topics, judgments=judgments)[0]
    from trec_rag_eval.io.loading import load_qrels

    table = load_qrels(path, format, topics=topics)
    if judgments is None:
        return table
    from trec_rag_eval.io.judgments import choose_judgments

    return choose_judgments(path, table, judgments)[0]


@per_call
def read_run(path: Any, format: str | None = None, qrels: Qrels | None = None, *,
             doc_map: Any = None, doc_id_pattern: str | None = None, id: IdLocator | None = None) -> Run:
    """A run from any run file the command line reads: TREC, JSON/JSONL results, Parquet (``qrels``
    with topics matches results keyed by query text; ``id``: where each JSON result keeps its document
    id, as in ``evaluate``), or a run in memory in any shape ``evaluate`` takes, search results included
    (``{query_id: [{"id", "score"}, ...]}``, ``(id, score)`` pairs, LangChain or LlamaIndex objects, best first:
    a list is ranked in its order, a document listed twice warned of and kept at its first place), to evaluate
    many times. ``doc_map`` (or ``doc_id_pattern``) maps its chunk ids to documents (with ``qrels``), as
    ``evaluate`` does; what that did is warned."""
    from trec_rag_eval.io.chunks import doc_map_asked
    from trec_rag_eval.io.id_paths import check_locator

    doc_map = doc_map_asked(doc_map, doc_id_pattern)
    id = check_locator(id)
    if format not in (None, "auto") and not isinstance(path, (str, os.PathLike)):
        from trec_rag_eval.errors import UsageError

        raise UsageError("format= describes a run file: give the run as its path", {"format=": "run_format"})
    if doc_map is None:
        if isinstance(path, (str, os.PathLike)):
            from trec_rag_eval.io.loading import load_run

            return load_run(path, format, qrels, id)
        from trec_rag_eval.service.inputs import run_from_any_shape

        return run_from_any_shape(path, qrels, id=id)
    if qrels is None:
        from trec_rag_eval.errors import UsageError

        given = "doc_map" if doc_id_pattern is None else "doc_id_pattern"
        raise UsageError(f"{given}= needs the qrels (qrels=): which ids are judged decides how chunks are mapped")
    from trec_rag_eval.service.inputs import read_whole_run

    run, notes = read_whole_run(path, qrels, run_format=format or "auto", doc_map=doc_map, id=id)
    for note in notes:
        note.about(os.fspath(path) if isinstance(path, (str, os.PathLike)) else run.source).warn()
    return run


@per_call
def convert(input_path: str | os.PathLike[str], **options: Any) -> ConversionReport:
    """Convert judgments and runs between JSON, TREC and Parquet files, losing nothing: see
    ``conversion.convert_files`` for the options (``qrels=``, ``topics=``, ``run=``, ``json=``, ``dataset=``,
    ...). Returns what was written and its notes (``ConversionReport``); Python callers are warned of
    the notes too when ``warn=True`` (the default)."""
    from trec_rag_eval.conversion import convert_files

    warn = options.pop("warn", True)
    report = convert_files(input_path, **options)
    if warn:
        for note in report.notes:
            note.warn()
    return report


@per_call
def search_engine(spec: str | None = None, corpus: str | os.PathLike[str] | None = None, *, language: str = "fr",
                  remove_stop_words: bool = True) -> Any:
    """A search engine for the ``Evaluator``: ``spec`` ``"module:callable"`` (your own, imported), or the
    built-in BM25 over a JSONL ``corpus`` (offline; ``language`` its stop words and accents)."""
    if (spec is None) == (corpus is None):
        from trec_rag_eval.errors import UsageError

        raise UsageError("give either an engine spec (module:callable) or a corpus (built-in BM25)",
                         {"an engine spec ": "engine", "a corpus": "corpus"})
    if spec is not None:
        from trec_rag_eval.engine.load import load_engine

        return load_engine(spec)
    from trec_rag_eval.engine.bm25 import BM25Engine

    return BM25Engine(corpus, language=language, remove_stop_words=remove_stop_words)  # type: ignore[arg-type]


def __getattr__(name: str) -> Any:
    """Names imported when first asked for: the harness type ``Evaluator`` (``engine.harness``), and
    ``progress_path_for`` (``llm.client``, which loads the http and email modules: only the commands that ask
    an LLM need it, not every evaluation)."""
    if name == "Evaluator":
        from trec_rag_eval.engine.harness import Evaluator

        return Evaluator
    if name == "progress_path_for":
        from trec_rag_eval.llm.client import progress_path_for

        return progress_path_for
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_outputs(outputs: Sequence[str | os.PathLike[str] | None], force: bool = False,
                  inputs: Sequence[str | os.PathLike[str] | None] = (),
                  progress: Sequence[str | os.PathLike[str] | None] = ()) -> None:
    """Before any work: refuse every output (and ``progress`` file) that would replace or join what
    is read: an input, a file inside an input folder, or a file an input brings along (its
    ``.llm.tsv`` judgments, a BEIR TSV's ``queries.jsonl``), whatever the spelling (links
    included); outputs that exist unless ``force``; two outputs naming one file
    (``io.output_checks.check_outputs_against_inputs``)."""
    from trec_rag_eval.io.output_checks import check_outputs_against_inputs

    check_outputs_against_inputs(outputs, force, inputs, progress)


def check_compare(pairs: str = "baseline", *, per_query: bool = False, plot: str | os.PathLike[str] | None = None
                  ) -> None:
    """Before any work: refuse what the compare command is asked to show that the pairs compared do not have (each
    query's deltas, their figure: only deltas to a baseline have them), as ``compare`` refuses an interval of every
    pair (``service.analyses.check_pairs``)."""
    from trec_rag_eval.service.analyses import check_pairs

    check_pairs(pairs, {}, {"per_query": per_query, "plot": plot})


def check_crosscheck(qrels_format: str | None = None, shards: bool = False) -> None:
    """Before any work: refuse a cross-check of runs evaluated with these options of ``evaluate_many`` (judgments
    ir-measures cannot read, runs in pieces): the evaluate command's ``--crosscheck``, ``crosscheck`` of each run
    it evaluated (``service.analyses.check_crosscheck_options``, which ``crosscheck`` also calls)."""
    from trec_rag_eval.service.analyses import check_crosscheck_options

    check_crosscheck_options(qrels_format, shards)


# --- LLM test queries and judgments (the generate-queries and judge commands go through these) --------------


@per_call
def generate_queries(corpus: Any, output: str | os.PathLike[str], *, model: str, n: int = 3,
                     language: str = "fr", base_url: str | None = None, api_key: str | None = None,
                     client: Any = None, concurrency: int = 4, timeout: float = 60.0, max_retries: int = 5,
                     temperature: float | None = None, progress_path: str | os.PathLike[str] | None = None,
                     force: bool = False, progress: bool = True,
                     on_note: Callable[[Note], None] | None = None) -> GenerationReport:
    """Ask an OpenAI-compatible LLM for ``n`` questions per document of ``corpus`` and write the
    dataset (the French RAG tutorial's shape: id, requête/query, pertinents/relevant, lexical_overlap) to
    ``output``, as ``trec-rag-eval generate-queries`` does (it calls this function).

    ``corpus``: a JSONL path (``{"id", "text"}`` a line), a list of such dicts or ``{doc_id: text}``.
    The model: ``model`` at ``base_url`` (a local vLLM / Ollama / llama.cpp server, or OpenAI with
    ``OPENAI_API_KEY`` / ``api_key``), or an ``openai.OpenAI`` ``client`` of your own. Finished documents
    go to a progress file beside ``output`` (``progress_path``), so calling again after a failure or an
    interrupt asks only for the rest; ``output`` is written once every document is done (an existing
    one only with ``force``). Returns the ``GenerationReport``: ``report.dataset`` is the dataset
    itself (give it to ``Evaluator.evaluate``), ``report.written``, ``report.failures``, the requests
    and tokens spent, ``report.mean_overlap`` (a note says how much the questions copy their documents'
    words: ``on_note(note)`` receives it, by default a ``TrecRagEvalWarning``). Needs the ``llm`` extra (openai).

    >>> report = generate_queries("corpus.jsonl", "dataset.json", model="llama3", base_url="http://localhost:8000/v1")
    """
    from trec_rag_eval.llm.jobs import generate_queries_file

    return generate_queries_file(corpus, output, model=model, n=n, language=language, base_url=base_url,
                                 api_key=api_key, client=client, concurrency=concurrency, timeout=timeout,
                                 max_retries=max_retries, temperature=temperature, progress_path=progress_path,
                                 force=force, progress=progress, on_note=on_note)


@per_call
def judge(dataset: Any, runs: Any, corpus: Any, output: str | os.PathLike[str], *, model: str,
          topics: str | os.PathLike[str] | None = None, depth: int = 10, language: str = "fr",
          calibrate: int = 0, seed: int = 42, max_chars: int = 8000, relevance_level: int = 1,
          base_url: str | None = None, api_key: str | None = None, client: Any = None, concurrency: int = 4,
          timeout: float = 60.0, max_retries: int = 5, temperature: float | None = None,
          progress_path: str | os.PathLike[str] | None = None, doc_map: Any = None,
          doc_id_pattern: str | None = None, allow_failures: bool = False, force: bool = False, progress: bool = True,
          on_note: Callable[[Note], None] | None = None) -> JudgeReport:
    """Grade with an LLM, on a 0-3 scale, the unjudged documents in the top ``depth`` of ``runs``, and
    write the judgments with those holes filled to ``output`` (TREC qrels, or a JSON dataset when it
    ends in ``.json``) and the LLM's to its ``.llm.tsv`` sidecar, as ``trec-rag-eval judge`` does (it
    calls this function). Human judgments are kept as they are.

    ``dataset``: the human judgments with their query texts (a JSON dataset path or list of rows, a
    ``Qrels`` with topics, or a TREC qrels path with ``topics``; an earlier ``judge`` output too: its
    LLM judgments are recognised by their sidecar, not asked again and never taken for human ones).
    ``runs``: one run or a list (or mapping name -> run) in any shape ``evaluate`` takes; chunk ids
    pooled as their documents with ``doc_map`` (or ``doc_id_pattern``, as in ``evaluate``). ``corpus``: the
    passages shown to the model, as in ``generate_queries``. ``calibrate=N`` also asks about N human-judged
    documents per query and reports the agreement (``report.agreement``: Cohen's kappa; needs scikit-learn).
    The model, ``progress_path`` and resuming: as in ``generate_queries``. ``on_note(note)`` receives the notes
    (chunk mapping, earlier LLM judgments, then ``report.notes``: unjudged documents missing from the
    corpus or with an empty text, passages cut at ``max_chars``, run queries without a query text), by
    default each a ``TrecRagEvalWarning``.

    Returns the ``JudgeReport``: ``report.qrels`` (the filled judgments, to ``evaluate`` with),
    ``report.coverage`` (per run: Judged@depth before and after), grades, failures, tokens.
    Evaluate with the humans' judgments only, the LLM's or both: ``evaluate(output, run, judgments=...)``.
    """
    from trec_rag_eval.io.chunks import doc_map_asked
    from trec_rag_eval.llm.jobs import judge_runs
    from trec_rag_eval.service.inputs import as_qrels, read_whole_run

    return judge_runs(dataset, runs, corpus, output, model=model, topics=topics, depth=depth, language=language,
                      calibrate=calibrate, seed=seed, max_chars=max_chars, relevance_level=relevance_level,
                      base_url=base_url, api_key=api_key, client=client, concurrency=concurrency, timeout=timeout,
                      max_retries=max_retries, temperature=temperature, progress_path=progress_path,
                      doc_map=doc_map_asked(doc_map, doc_id_pattern),
                      allow_failures=allow_failures, force=force, progress=progress, on_note=on_note,
                      read_run=read_whole_run, read_qrels=as_qrels)
