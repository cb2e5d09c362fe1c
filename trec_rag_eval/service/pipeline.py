"""The evaluation of runs, whatever their shape and source: ``evaluate_runs`` (the keywords of ``evaluate`` and
``evaluate_many`` sorted into what reads the judgments, what reads and evaluates the runs, and the settings; the
context cost and the z-scores), each run as a ``RunOutcome``, on this machine (threads sharing the judgments; a
large run read ahead, ``service.inputs``, or in pieces, ``service.large_runs``) or spread out (``service.spread``)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trec_rag_eval.call_scope import carried
from trec_rag_eval.errors import InputTypeError, TrecRagEvalError, UsageError
from trec_rag_eval.measures.requests import MeasuresArg, resolve_measures
from trec_rag_eval.notes import warning
from trec_rag_eval.run_outcome import RunOutcome, evaluate_run
from trec_rag_eval.service import inputs, large_runs
from trec_rag_eval.service.inputs import as_qrels, doc_id_map, read_judgments, run_from_any_shape
from trec_rag_eval.service.spread import evaluate_spread

if TYPE_CHECKING:
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.evaluation.context_cost import ContextCost
    from trec_rag_eval.evaluation.evaluate import Evaluation
    from trec_rag_eval.io.chunks import DocIdMap
    from trec_rag_eval.io.id_paths import IdLocator
    from trec_rag_eval.measures.model import Measure
    from trec_rag_eval.service.inputs import RunReader
    from trec_rag_eval.service.large_runs import Progress
    from trec_rag_eval.service.spread import TaskProgress
    from trec_rag_eval.tables import Qrels, Run

AHEAD_PER_THREAD = 2
"""Runs evaluated on this machine at most this many per thread ahead of the one the caller waits for."""


def evaluate_one(qrels: Any, run: Any, measures: MeasuresArg = None, settings: Settings | None = None, *,
                 cluster: Any = None, corpus: Any = None, tokenizer: Any = None, **options: Any) -> Evaluation:
    """``api.evaluate``: the one run's evaluation, its notes warned, its error raised; a list of paths on a
    cluster is the shards of one run."""
    if "render" in options:  # its one evaluation is the result; evaluate_many renders each run where it is made
        raise TypeError("evaluate() got an unexpected keyword argument 'render'")
    if cluster is None and corpus is None and tokenizer is None and _plain(run, options):
        outcome = _in_memory_outcome(qrels, run, measures, _settings_of(settings, options), None)
    else:
        shards = cluster is not None and isinstance(run, (list, tuple)) and bool(run) and all(
            isinstance(p, (str, os.PathLike)) for p in run)
        runs = list(run) if shards else [run]
        request = Request.of(runs, settings, {**options, "corpus": corpus, "tokenizer": tokenizer}, cluster=cluster,
                             shards=shards)
        [outcome] = _outcomes(qrels, runs, measures, request)
    for note in outcome.notes:
        note.about(outcome.label).warn()
    if outcome.error is not None:
        raise outcome.error
    assert outcome.evaluation is not None
    return outcome.evaluation


def evaluate_runs(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], measures: MeasuresArg = None,
                  settings: Settings | None = None, *, cluster: Any = None, shards: bool = False,
                  **options: Any) -> Iterator[RunOutcome]:
    """``api.evaluate_many``: one ``RunOutcome`` per run, in the order given (a mapping's keys label its runs; a
    folder stands for its run files), the keywords sorted into what reads the judgments, what reads and
    evaluates the runs, and the settings. The options that cannot go together are refused at this call
    (``check_options``); nothing is read before the first outcome is asked for."""
    if isinstance(runs, Mapping):
        labels: list[str] | None = [str(label) for label in runs]
        values = list(runs.values())
    elif isinstance(runs, (str, os.PathLike)) or not isinstance(runs, Iterable):
        raise InputTypeError(f"runs must be a list of runs or a mapping label -> run; got {type(runs).__name__}")
    else:
        labels, values = None, list(runs)
    if cluster is None and not shards and len(values) == 1 and _plain(values[0], options):
        chosen = _settings_of(settings, options)  # refused at this call, as Request.of refuses it; the rest read lazily
        return (_in_memory_outcome(qrels, values[0], measures, chosen, None if labels is None else labels[0])
                for _ in range(1))
    options.setdefault("labels", labels)
    return _outcomes(qrels, values, measures, Request.of(values, settings, options, cluster=cluster, shards=shards),
                     folders=labels is None)


def _plain(run: Any, options: dict[str, Any]) -> bool:
    """Whether ``run`` is in memory and ``options`` hold no keyword but the settings' fields: then its evaluation
    takes the steps of ``_outcomes`` and ``_evaluate_here`` for it (``_in_memory_outcome``), without what many
    runs, run files and the other keywords need (half the pipeline's calls of a small evaluation)."""
    return not isinstance(run, (str, os.PathLike)) and _REQUEST_KEYS.isdisjoint(options)


def _settings_of(settings: Settings | None, options: dict[str, Any]) -> Settings:
    from trec_rag_eval.core.settings import settings_of

    return settings_of(settings, **options)


def _in_memory_outcome(qrels: Any, run: Any, measures: MeasuresArg, chosen: Settings, label: str | None
                       ) -> RunOutcome:
    """One run in memory evaluated (``_plain``) as ``_outcomes`` and ``_evaluate_here`` evaluate it: the judgments
    read and their notes warned (their error raised), then the run made (named by its ``label``, a mapping's key,
    when it has one) and evaluated, its notes and its error in the outcome."""
    table, asked = _judged(qrels, {}, measures, "asked", chosen)
    try:
        made = _in_memory(run, table, label, None)()  # type: ignore[misc]  # in memory (_plain): never None
        evaluation, notes = evaluate_run(table, made, asked, chosen)
    except TrecRagEvalError as err:
        return RunOutcome("run" if label is None else label, error=err)
    return RunOutcome(made.source if label is None else label, evaluation, notes)


READING_KEYS = ("qrels_format", "topics", "judgments")
"""The keywords of ``evaluate`` and ``evaluate_many`` that say how the judgments are read (``Request.reading``)."""
RUNNING_KEYS = ("labels", "run_format", "doc_map", "id", "stream", "chunk_bytes", "jobs", "progress", "task_progress")
"""The keywords that say how the runs are read and evaluated (``Request.running``), ``doc_id_pattern`` aside."""
LATER_KEYS = ("order", "corpus", "tokenizer", "zscores", "render")
"""The keywords that say what is made of each evaluation; every other keyword is a field of the settings."""
_REQUEST_KEYS = frozenset((*READING_KEYS, *RUNNING_KEYS, "doc_id_pattern", *LATER_KEYS))


@dataclass
class Request:
    """The keywords of ``evaluate`` and ``evaluate_many`` sorted into what reads the judgments (``reading``), what
    reads and evaluates the runs (``running``), what is made of each evaluation (the context cost of ``corpus``
    counted by ``tokenizer``, the z-scores of ``zscores``, ``render``), the measures' ``order`` and the
    ``settings``; checked when made (``Request.of``), before anything is read."""

    reading: dict[str, Any]
    running: dict[str, Any]
    settings: Settings
    cluster: Any = None
    shards: bool = False
    order: str = "asked"
    corpus: Any = None
    tokenizer: Any = None
    zscores: Any = None
    render: Callable[[Evaluation], Any] | None = None

    @classmethod
    def of(cls, runs: Sequence[Any], settings: Settings | None, options: dict[str, Any], *, cluster: Any,
           shards: bool) -> Request:
        """``options`` sorted (taken out of it), the settings made of ``settings`` and the rest, the options
        that cannot go together refused (``check_options``)."""
        reading: dict[str, Any] = {key: options.pop(key) for key in READING_KEYS if key in options}
        running: dict[str, Any] = {key: options.pop(key) for key in RUNNING_KEYS if key in options}
        pattern = options.pop("doc_id_pattern", None)
        if pattern is not None:  # doc_map asked as a regular expression by its own name: one of the two
            from trec_rag_eval.io.chunks import doc_map_asked

            running["doc_map"] = doc_map_asked(running.get("doc_map"), pattern)
        later = {key: options.pop(key) for key in LATER_KEYS if key in options}
        check_options(runs, cluster=cluster, shards=shards, corpus=later.get("corpus"),
                      tokenizer=later.get("tokenizer"), zscores=later.get("zscores"),
                      doc_map_name="doc_map" if pattern is None else "doc_id_pattern",
                      **{key: running.get(key) for key in ("run_format", "doc_map", "id", "stream")})
        return cls(reading, running, _settings_of(settings, options), cluster, shards, **later)


def _outcomes(qrels: Any, runs: list[Any], measures: MeasuresArg, request: Request,
              folders: bool = False) -> Iterator[RunOutcome]:
    """The outcomes of ``runs`` as ``request`` asks; ``folders``: a folder among run paths stands for the run files
    in it."""
    from trec_rag_eval.service.inputs import run_files
    from trec_rag_eval.service.large_runs import byte_progress
    from trec_rag_eval.service.spread import qrels_loader, task_progress

    reading, running, chosen, order = request.reading, dict(request.running), request.settings, request.order
    cluster, shards, corpus, tokenizer = request.cluster, request.shards, request.corpus, request.tokenizer
    render, zscores = request.render, request.zscores
    runs, sizes = run_files(runs, folders, workers_read=cluster is not None)
    if zscores is not None:
        from trec_rag_eval.evaluation.zscores import ZScoredRender, zscores_of

        zscores = zscores_of(zscores)  # read before anything else
        if render is not None:
            render = ZScoredRender(render, zscores)  # where the evaluation is made, as the render itself
    if tokenizer is not None:  # one named "module:callable" is imported once, before any work
        from trec_rag_eval.engine.load import load_tokenizer

        tokenizer = load_tokenizer(tokenizer)
    # a large TREC run is parsed while the qrels are read
    first = runs[0] if runs else None
    ahead = None
    if (cluster is None and not shards and isinstance(first, (str, os.PathLike)) and running.get("doc_map") is None
            and running.get("id") is None):
        ahead = inputs.read_ahead(os.fspath(first), sizes.get(os.fspath(first)),
                                      running.get("run_format", "auto"), running.get("stream"))
    bars = contextlib.ExitStack()
    if running.get("progress") is True:  # the library's bars; a callable is the caller's own display
        running["progress"] = byte_progress()
        running.setdefault("task_progress", True)
    if running.get("task_progress") is True:
        running["task_progress"] = bars.enter_context(task_progress())
    if running.get("progress") is False:
        running["progress"] = None
    try:
        table, asked = _judged(qrels, reading, measures, order, chosen)
        if cluster is not None:  # the workers read the qrels file themselves, as they read the runs
            running["qrels_from"] = qrels_loader(qrels, format=reading.get("qrels_format"),
                                                 topics=reading.get("topics"), judgments=reading.get("judgments"))
        # the context cost is added here, to the evaluation: then rendered here too
        outcomes = run_outcomes(table, runs, asked, chosen, cluster=cluster, shards=shards, ahead=ahead, sizes=sizes,
                                 render=render if corpus is None else None, **running)
        if corpus is None:
            if zscores is None or render is not None:
                yield from outcomes
                return
            from trec_rag_eval.evaluation.zscores import zscored

            for outcome in outcomes:
                if outcome.evaluation is not None:
                    outcome.evaluation = zscored(outcome.evaluation, zscores)
                yield outcome
            return
        from trec_rag_eval.io.json.corpus import corpus_texts

        texts = corpus_texts(corpus)
        for run, outcome in zip(runs, outcomes, strict=True):
            if outcome.evaluation is not None:
                _add_context(outcome.evaluation, run, texts, tokenizer, table, running)
            yield outcome.render_with(render)
    finally:
        bars.close()
        if ahead is not None:
            ahead.wait()  # an error above must not leave pyarrow parsing while the interpreter exits


def _judged(qrels: Any, reading: dict[str, Any], measures: MeasuresArg, order: str, chosen: Settings
            ) -> tuple[Qrels, list[Measure]]:
    """The judgments read as ``reading`` says, their notes warned, and the measures to compute (the kind of
    judgments' own set when none is asked), checked against the judgments once, before any run is read."""
    from trec_rag_eval.core.settings import judgment_notes
    from trec_rag_eval.measures.requests import check_judgments, default_measure_set
    from trec_rag_eval.service.inputs import has_llm_judgments

    table, notes = read_judgments(qrels, format=reading.get("qrels_format"), topics=reading.get("topics"),
                                  judgments=reading.get("judgments"))
    for note in notes + judgment_notes(table, chosen):
        note.warn()
    kind_default = default_measure_set(table) if measures is None else None  # judgment groups, preferences
    asked = measures_for([kind_default] if kind_default else measures, order=order,
                         llm_judgments=has_llm_judgments(notes))
    check_judgments(table, asked)
    return table, asked


def _add_context(evaluation: Evaluation, run: Any, texts: dict[str, str], tokenizer: Any, qrels: Qrels,
                 running: dict[str, Any]) -> None:
    """The context cost of ``run`` at the evaluation's cutoffs, on ``evaluation.context``: its own ids
    (chunks), before any mapping, read again (its warnings were already given)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluation.context = run_context_cost(run, texts, context_ks(evaluation), tokenizer=tokenizer,
                                              query_ids=evaluation.query_ids, qrels=qrels,
                                              format=running.get("run_format") if isinstance(run, (str, os.PathLike))
                                              else None)


def context_ks(evaluation: Evaluation) -> list[int]:
    """The cutoffs at which to count context tokens: the measures' whole cutoffs, else 1, 3, 5, 10."""
    from trec_rag_eval.evaluation.context_cost import measure_ks

    return measure_ks(evaluation.measures)


def run_context_cost(run: Any, corpus: Any, k_values: Sequence[int] = (1, 3, 5, 10), *, tokenizer: Any = None,
                     query_ids: Sequence[str] | None = None, qrels: Any = None, format: str | None = None
                     ) -> ContextCost:
    """``api.context_cost``: the tokens the top k results of each query would put into a prompt."""
    from trec_rag_eval.engine.load import load_tokenizer
    from trec_rag_eval.evaluation.context_cost import measure_context_cost
    from trec_rag_eval.io.json.corpus import corpus_texts
    from trec_rag_eval.io.loading import load_run

    tokenizer = load_tokenizer(tokenizer)
    judgments = None if qrels is None else as_qrels(qrels)
    table = (load_run(run, format, qrels=judgments) if isinstance(run, (str, os.PathLike))
             else run_from_any_shape(run, judgments))
    return measure_context_cost(table, corpus_texts(corpus), k_values, query_ids, tokenizer)


def measures_for(measures: MeasuresArg, *, order: str = "asked", llm_judgments: bool = False) -> list[Measure]:
    """The measures ``evaluate`` computes for ``measures``, in the order an output shows them: trec_eval's
    fixed order for its format (``order="trec"``), else the order asked. None: the RAG set (trec_eval's
    official set in its order), with Judged@10 when ``llm_judgments`` count; an empty list is a mistake."""
    from trec_rag_eval.measures.requests import default_measures, parse_as_asked, parse_measures

    if measures is None:
        chosen = default_measures(trec_output=order == "trec")
        if llm_judgments and order != "trec":  # how much of the top 10 the LLM judged, beside the numbers
            chosen += [m for m in parse_measures(["Judged@10"]) if m not in chosen]
        return chosen
    if isinstance(measures, (list, tuple)) and measures and all(isinstance(m, str) for m in measures):
        return parse_as_asked(measures, order=order)
    return _measures_asked(measures)


def check_options(runs: Sequence[Any], *, cluster: Any = None, shards: bool = False, run_format: str | None = None,
                  doc_map: Any = None, id: Any = None, stream: bool | None = None, corpus: Any = None,
                  tokenizer: Any = None, zscores: Any = None, doc_map_name: str = "doc_map") -> None:
    """Refuse, before anything is read, the options of ``evaluate_runs`` that cannot go together, and a
    ``cluster`` that cannot be (``local:N`` out of bounds): each mistake checked here alone and said once, in
    the library's words (its parameters), which the command line says with its flags (``cli.FLAGS``).
    ``doc_map_name``: the name the caller gave ``doc_map`` by (``doc_id_pattern``, a regular expression's)."""
    check_cluster(cluster)
    inputs.check_run_format(runs, run_format)
    if id is not None:  # an empty key path (id=''), or one with an empty step, is no place of an id
        from trec_rag_eval.io.id_paths import check_locator

        check_locator(id)
    if stream:
        if doc_map is not None:
            raise UsageError(f"{doc_map_name} reads each run whole: not with stream=True",
                             {doc_map_name: "doc_map", "stream=True": "stream"})
        if id is not None:
            raise UsageError("id= finds the document ids of JSON results, read whole: not with stream=True",
                             {"id= ": "id", "stream=True": "stream"})
        if cluster is not None or shards:
            raise UsageError("stream=True reads one run in pieces on this machine: not with cluster= or shards=True",
                             {"stream=True": "stream", "cluster= ": "cluster", "shards=True": "shards"})
        if run_format not in (None, "auto", large_runs.IN_PIECES):
            raise UsageError(f"stream=True reads TREC runs in pieces; {run_format} runs are read whole",
                             {"stream=True": "stream"})
    if shards:
        if doc_map is not None:
            raise UsageError(f"{doc_map_name} reads each run whole: not with shards=True",
                             {doc_map_name: "doc_map", "shards=True": "shards"})
        if id is not None:
            raise UsageError("id= finds the document ids of JSON results, read whole: not with shards=True",
                             {"id= ": "id", "shards=True": "shards"})
        if corpus is not None:
            raise UsageError("corpus= counts the tokens of each run's results: not with shards=True",
                             {"corpus=": "corpus", "shards=True": "shards"})
        if not all(isinstance(run, (str, os.PathLike)) for run in runs):
            raise UsageError("shards=True takes run files: give the pieces as paths", {"shards=True": "shards"})
    if zscores is not None and corpus is not None:
        raise UsageError("zscores= gives z-scores of the measures; the context cost of corpus= has none: not both",
                         {"zscores=": "zscores", "corpus=": "corpus"})
    if tokenizer is not None and corpus is None:
        raise UsageError("tokenizer= counts the tokens of the results' texts: give them with corpus=",
                         {"tokenizer= ": "tokenizer", "corpus=": "corpus"})


def check_cluster(cluster: Any) -> None:
    """Refuse now a ``cluster`` that cannot be: ``local:N`` with N out of bounds (``cluster.local_workers``),
    before any work or any process is started. A client or a scheduler address is tried when used."""
    if isinstance(cluster, str) and cluster.startswith("local:"):
        from trec_rag_eval.cluster import local_workers

        local_workers(cluster)


def _measures_asked(measures: MeasuresArg) -> list[Measure]:
    """The measures asked of ``evaluate``; an empty list is a mistake (None asks for the default set)."""
    resolved = resolve_measures(measures)
    if not resolved:
        raise UsageError("measures is empty: name at least one measure, or leave it out (None) for the default "
                         "RAG set")
    return resolved


def run_outcomes(qrels: Qrels, runs: Sequence[Any], measures: list[Measure], settings: Settings, *,
                 labels: Sequence[str] | None = None, run_format: str = "auto", doc_map: Any = None,
                 id: IdLocator | None = None,
                 stream: bool | None = None, chunk_bytes: int = 64 << 20, jobs: int | None = None,
                 progress: Progress | None = None, ahead: RunReader | None = None, sizes: Mapping[str, int],
                 cluster: Any = None,
                 shards: bool = False, task_progress: TaskProgress | None = None,
                 qrels_from: Callable[[], Qrels] | None = None,
                 render: Callable[[Evaluation], Any] | None = None) -> Iterator[RunOutcome]:
    """Each run of ``runs`` (paths or in-memory runs), in that order, as a ``RunOutcome``, against judgments
    already read, the measures and settings already chosen (``evaluate_runs``).

    ``stream``: True reads every run file in pieces of about ``chunk_bytes`` (the run must be grouped
    by query); None reads in pieces only the runs too large for the memory available
    (``should_stream``), and one of those that is not grouped by query is read whole after all, with
    a note; False never. Runs read whole are evaluated ``jobs`` at a time (default: the number of
    cores) on threads sharing the judgments: polars and numpy release the GIL. ``ahead``: the first
    run, already being read (``read_ahead``). ``sizes``: the size of each run file, by path (``run_files``;
    a run without one is no file, and is read whole). ``cluster``: evaluate on Dask workers (see
    ``trec_rag_eval.cluster``); ``shards``: the files are pieces of one run (one outcome). ``id``:
    where each search result keeps its document id (``run_from_any_shape``). ``qrels_from``: how a cluster's
    workers read ``qrels`` themselves (``qrels_loader``); without it they are sent the table.
    Outcomes come as they are ready, in run order, so a caller can write each before the next is done.
    ``render``: called with each evaluation where it was made (its thread, or a cluster's worker, which
    sends back only what it returns: ``RunOutcome.rendered``, the evaluation being released there).
    """
    mapping = doc_id_map(doc_map)
    # a run in memory is named by its label when the caller gave one (a mapping's key), else "run"
    tags = [None if labels is None or isinstance(run, (str, os.PathLike)) else str(label)
            for run, label in zip(runs, labels if labels is not None else runs, strict=True)]
    labels = [os.fspath(run) if isinstance(run, (str, os.PathLike)) else (
        str(labels[index]) if labels is not None else "run" if len(runs) == 1 else f"run {index + 1}")
        for index, run in enumerate(runs)]
    # with id=, a cluster is sent the runs read here (its workers read run files without it)
    in_memory = [_in_memory(run, qrels, tag, id, read_files=id is not None and cluster is not None)
                 for run, tag in zip(runs, tags, strict=True)]
    if cluster is not None or shards:
        for outcome in evaluate_spread(qrels, runs, labels, in_memory, measures, settings, run_format, mapping,
                                        cluster, shards, task_progress, qrels_from, render):
            yield outcome.render_with(render)  # one run split over the workers: its parts are combined here
        return
    yield from _evaluate_here(qrels, runs, labels, [tag is not None for tag in tags], in_memory, measures, settings,
                              run_format, mapping, stream, chunk_bytes, jobs, progress, ahead, sizes, id, render)


def _in_memory(run: Any, qrels: Qrels, tag: str | None, id: IdLocator | None, read_files: bool = False
               ) -> Callable[[], Run] | None:
    """How to make the ``Run`` of a run given in memory (``run_from_any_shape``, named by its caller's label ``tag``
    when there is one), for the thread or task that evaluates it; None for a run file, unless
    ``read_files`` (then it is read here, whole)."""
    if isinstance(run, (str, os.PathLike)) and not read_files:
        return None
    if tag is None:
        return lambda: run_from_any_shape(run, qrels, id=id)
    return lambda: run_from_any_shape(run, qrels, name=f"run {tag!r}", run_tag=tag, id=id)


def _evaluate_here(qrels: Qrels, runs: Sequence[Any], labels: list[str], named: list[bool],
                   in_memory: list[Callable[[], Run] | None],
                   measures: list[Measure],
                   settings: Settings, run_format: str, mapping: DocIdMap | None, stream: bool | None,
                   chunk_bytes: int, jobs: int | None, progress: Progress | None,
                   ahead: RunReader | None, sizes: Mapping[str, int], id: IdLocator | None,
                   render: Callable[[Evaluation], Any] | None = None) -> Iterator[RunOutcome]:
    """``evaluate_runs`` on this machine: threads for runs read whole, one at a time in pieces. A run
    is evaluated (and rendered, with ``render``) at most ``AHEAD_PER_THREAD`` runs per thread ahead of
    the one its caller waits for, so what is held for the caller is bounded whatever the number of runs."""
    paths = [os.fspath(run) if isinstance(run, (str, os.PathLike)) else None for run in runs]
    if ahead is not None and (not paths or paths[0] != ahead.path):
        ahead = None
    # a run already being read ahead is read whole: read_ahead asked should_stream before starting it
    streamed = [path is not None and not (index == 0 and ahead is not None) and mapping is None and id is None
                and stream is not False
                and (bool(stream) or inputs.should_stream(path, sizes.get(path), run_format))
                for index, path in enumerate(paths)]

    def one(index: int) -> RunOutcome:
        return evaluated(index).render_with(render)

    def evaluated(index: int) -> RunOutcome:
        label, path = labels[index], paths[index]
        try:
            make = in_memory[index]
            if make is not None:
                run = make()
                evaluation, notes = evaluate_run(qrels, run, measures, settings, mapping)
                # a run in memory that its caller did not name is said by its source ("run (dict)")
                return RunOutcome(label if named[index] else run.source, evaluation, notes)
            assert path is not None  # not in memory: a run file
            notes = []
            if streamed[index]:
                from trec_rag_eval.io.trec.pieces import RunNotGroupedError

                try:
                    evaluation = large_runs.evaluate_in_pieces(qrels, path, measures, settings, chunk_bytes, progress)
                    return RunOutcome(label, evaluation, evaluation.query_set_warnings())
                except RunNotGroupedError:
                    if stream:  # asked for explicitly: the error says how to sort the file
                        raise
                    notes.append(warning("not grouped by query, so read whole instead of in pieces"))
            if index == 0 and ahead is not None:
                # the evaluation's modules (~12 ms of imports) load while the run is still being parsed,
                # not after, when the ranking waits for them
                import trec_rag_eval.evaluation.evaluate  # noqa: F401
            run, report = inputs.read_run_file(path, run_format, qrels, id, ahead if index == 0 else None)
            evaluation, more = evaluate_run(qrels, run, measures, settings, mapping, report)
            return RunOutcome(label, evaluation, notes + more)
        except TrecRagEvalError as err:
            return RunOutcome(label, error=err)

    workers = min(len(runs), jobs or os.cpu_count() or 1) if len(runs) > 1 else 1
    if workers > 1 and not any(streamed):
        from collections import deque
        from concurrent.futures import Future, ThreadPoolExecutor, wait

        pool = ThreadPoolExecutor(max_workers=workers)
        futures: deque[Future[RunOutcome]] = deque()
        submitted = 0
        try:
            for _ in range(len(runs)):  # in run order, each as soon as it and those before it are done
                while submitted < len(runs) and len(futures) < AHEAD_PER_THREAD * workers:
                    futures.append(pool.submit(carried(one), submitted))  # in this call's scope
                    submitted += 1
                future = futures.popleft()
                # waited for in short steps: a thread blocked on a lock does not see Ctrl-C, a loop does
                while wait([future], timeout=0.1).not_done:
                    pass
                yield future.result()
        except BaseException:  # Ctrl-C, or the caller stopped reading: leave at once
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return
    for index in range(len(runs)):
        yield one(index)
