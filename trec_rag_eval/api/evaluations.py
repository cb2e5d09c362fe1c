"""The facade's evaluations and readers: ``evaluate``, ``evaluate_many``, ``iter_evaluate``, ``context_cost``, and
``read_judgments``, ``read_qrels``, ``read_run``, ``convert``. Each takes its qrels and runs in every shape (paths in
any format the command line reads, dicts, DataFrames, ir_measures tuples: see ``tables.shapes`` and
``service.inputs``) and its measures in any notation (``measures.requests.resolve_measures``), and forwards to the
service or the readers."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from trec_rag_eval.api import result_types
from trec_rag_eval.call_scope import per_call
from trec_rag_eval.core.settings import Settings
from trec_rag_eval.io.id_paths import IdLocator
from trec_rag_eval.measures.requests import MeasuresArg
from trec_rag_eval.run_outcome import RunOutcome
from trec_rag_eval.service import inputs
from trec_rag_eval.tables import Qrels, Run

__all__ = ["evaluate", "evaluate_many", "iter_evaluate", "context_cost", "read_judgments", "read_qrels", "read_run",
           "convert"]
"""The facade's names this module holds: ``trec_rag_eval.api`` takes them all (``api.<name>``)."""


read_judgments = per_call(inputs.read_judgments)
"""The judgments in any shape and the notes about them (``service.inputs.read_judgments``), in a call of their own."""


@per_call
def evaluate(qrels: Any, run: Any, measures: MeasuresArg = None, settings: Settings | None = None, *,
             cluster: Any = None, corpus: Any = None, tokenizer: Any = None, **options: Any) -> result_types.Evaluation:
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
                 query_ids: Sequence[str] | None = None, qrels: Any = None, format: str | None = None
                 ) -> result_types.ContextCost:
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
                  **options: Any) -> Iterator[result_types.QueryResult]:
    """``evaluate``, one query at a time: ``QueryResult(query_id, values)`` in trec_eval's query order,
    ``values`` keyed by measure name (as ir_measures' ``iter_calc``, grouped by query)."""
    yield from evaluate(qrels, run, measures, settings, **options).iter_queries()


@per_call
def read_qrels(path: Any, format: str | None = None, *,
               topics: str | os.PathLike[str] | None = None, judgments: str | None = None
               ) -> Qrels | result_types.Preferences:
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
def convert(input_path: str | os.PathLike[str], **options: Any) -> result_types.ConversionReport:
    """Convert judgments and runs between JSON, TREC and Parquet files, losing nothing: see
    ``conversion.convert_files`` for the options (``qrels=``, ``topics=``, ``run=``, ``json=``, ``dataset=``,
    ...). Returns what was written and its notes (``ConversionReport``); Python callers are warned of
    the notes too when ``warn=True`` (the default)."""
    from trec_rag_eval.conversion import convert_files

    if not isinstance(input_path, (str, os.PathLike)):
        from trec_rag_eval.errors import UsageError

        raise UsageError(f"convert reads a file: give input_path as its path, got {type(input_path).__name__}")
    warn = options.pop("warn", True)
    report = convert_files(input_path, **options)
    if warn:
        for note in report.notes:
            note.warn()
    return report
