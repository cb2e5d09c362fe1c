"""The LLM jobs of the facade's ``generate_queries`` and ``judge`` (``trec_rag_eval.api.llm_and_search``, which
forwards to them and holds their documentation): their outputs checked before any call, their inputs read, the
model asked, what was asked reported."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from trec_rag_eval.llm.judging import JudgeReport, JudgeSettings, judge_holes
from trec_rag_eval.notes import Note

if TYPE_CHECKING:
    from trec_rag_eval.llm.queries import GenerationReport
    from trec_rag_eval.tables import Qrels, Run

RunReader = Callable[..., "tuple[Run, list[Note]]"]
"""``(run, qrels, *, doc_map) -> (Run, notes)``: a run read as the service reads it (``service.inputs.read_whole_run``,
given by the facade: the LLM layer does not know the service)."""


def corpus_documents_of(corpus: Any) -> list[dict[str, str]]:
    from trec_rag_eval.io.json.corpus import corpus_documents

    return corpus_documents(corpus)


def llm_client(client: Any, base_url: str | None, api_key: str | None) -> Any:
    if client is not None:
        return client
    from trec_rag_eval.llm.client import make_client

    return make_client(base_url, api_key)


def generate_queries_file(corpus: Any, output: str | os.PathLike[str], *, model: str, n: int = 3,
                          language: str = "fr", base_url: str | None = None, api_key: str | None = None,
                          client: Any = None, concurrency: int = 4, timeout: float = 60.0, max_retries: int = 5,
                          temperature: float | None = None, progress_path: str | os.PathLike[str] | None = None,
                          force: bool = False, progress: bool = True,
                          on_note: Callable[[Note], None] | None = None) -> GenerationReport:
    """``api.generate_queries``: the questions asked of the model, the dataset written."""
    from trec_rag_eval.io.output_checks import check_outputs_against_inputs
    from trec_rag_eval.llm.client import progress_path_for
    from trec_rag_eval.llm.queries import GenerationSettings, generate_dataset, overlap_warning

    settings = GenerationSettings(model=model, n=n, language=language, concurrency=concurrency, timeout=timeout,
                                  max_retries=max_retries, temperature=temperature)
    settings.check()
    if client is None and base_url is not None:
        from trec_rag_eval.llm.client import check_base_url

        check_base_url(base_url)  # a malformed URL is one line, before anything is read
    progress_file = progress_path or progress_path_for(output)
    # before any call: the dataset and the progress file are distinct, and neither is the corpus
    inputs = [corpus] if isinstance(corpus, (str, os.PathLike)) else []
    check_outputs_against_inputs([output], force, inputs, [progress_file])
    documents = corpus_documents_of(corpus)
    chosen = llm_client(client, base_url, api_key)
    report = generate_dataset(documents, output, settings, chosen, force=force, progress_path=progress_file,
                              show_progress=progress)
    if report.mean_overlap is not None:
        (on_note or Note.warn)(overlap_warning(report.mean_overlap))
    return report


def judge_runs(dataset: Any, runs: Any, corpus: Any, output: str | os.PathLike[str], *, model: str,
               topics: str | os.PathLike[str] | None = None, depth: int = 10, language: str = "fr",
               calibrate: int = 0, seed: int = 42, max_chars: int = 8000, relevance_level: int = 1,
               base_url: str | None = None, api_key: str | None = None, client: Any = None, concurrency: int = 4,
               timeout: float = 60.0, max_retries: int = 5, temperature: float | None = None,
               progress_path: str | os.PathLike[str] | None = None, doc_map: Any = None, allow_failures: bool = False,
               force: bool = False, progress: bool = True, on_note: Callable[[Note], None] | None = None,
               read_run: RunReader, read_qrels: Callable[[Any], Qrels]) -> JudgeReport:
    """``api.judge``: the holes of the runs' pools judged by the model, the judgments and their sidecar written;
    ``read_run`` reads each run, ``read_qrels`` a ``dataset`` given in memory (the service's readers)."""
    from trec_rag_eval.evaluation.evaluate import evaluate_tables
    from trec_rag_eval.io.judgments import read_llm_judgments, sidecar_path_for
    from trec_rag_eval.io.loading import load_qrels
    from trec_rag_eval.io.output_checks import check_outputs_against_inputs
    from trec_rag_eval.llm.client import progress_path_for
    from trec_rag_eval.notes import note as make_note
    from trec_rag_eval.progress import bar

    note = on_note or Note.warn
    settings = JudgeSettings(model=model, language=language, depth=depth, calibrate=calibrate, seed=seed,
                             max_chars=max_chars, concurrency=concurrency, timeout=timeout, max_retries=max_retries,
                             temperature=temperature)
    settings.check()
    if client is None and base_url is not None:
        from trec_rag_eval.llm.client import check_base_url

        check_base_url(base_url)  # a malformed URL is one line, before anything is read
    progress_file = progress_path or progress_path_for(output)
    named = list(runs.items()) if isinstance(runs, Mapping) else [
        (os.fspath(run) if isinstance(run, (str, os.PathLike)) else f"run {i + 1}", run)
        for i, run in enumerate(runs if isinstance(runs, (list, tuple)) else [runs])]
    paths = [value for value in (dataset, corpus, topics, *(run for _, run in named))
             if isinstance(value, (str, os.PathLike))]
    if isinstance(doc_map, os.PathLike):  # a map file (a str is a pattern)
        paths.append(doc_map)
    # before any LLM call: the judgments, their sidecar and the progress file are three distinct
    # files, none of them an input (the dataset's own sidecar included)
    check_outputs_against_inputs([output, sidecar_path_for(output)], force, paths, [progress_file])
    if isinstance(dataset, (str, os.PathLike)):
        qrels = load_qrels(dataset, topics=topics)
        earlier = sidecar_path_for(dataset)
        previous = read_llm_judgments(earlier) if earlier.is_file() else []
    else:
        qrels, previous = read_qrels(dataset), []
    if previous:
        note(make_note(f"{os.fspath(dataset)} was written by judge: its {len(previous)} LLM judgments ({earlier}) "
                        "are not asked again, never taken for human ones, and carried into the new sidecar"))
    tables = []
    for label, run in named:
        table, said = read_run(run, qrels, doc_map=doc_map)
        for one in said:
            note(one.about(label))
        tables.append(table)
    documents = {d["id"]: d["text"] for d in corpus_documents_of(corpus)}
    chosen = llm_client(client, base_url, api_key)
    bars: list[Any] = []  # the bar starts once the number of documents to ask is known

    def on_start(total: int) -> None:
        if progress:
            bars.append(bar(total, "Judging", unit="doc"))

    def on_task(key: str, error: str | None) -> None:
        for shown in bars:
            shown.update(1)

    try:
        report = judge_holes(qrels, tables, documents, output, settings, chosen, relevance_level=relevance_level,
                             force=force, allow_failures=allow_failures, progress_path=progress_file,
                             on_start=on_start, on_task=on_task, previous=previous,
                             corpus_name=os.fspath(corpus) if isinstance(corpus, (str, os.PathLike)) else "the corpus")
    finally:
        for shown in bars:
            shown.close()
    for one in report.notes:  # what could not be judged as asked
        note(one)
    if report.qrels is not None:
        measure = f"Judged@{depth}"
        report.coverage = [(label, float(evaluate_tables(qrels, table, [measure]).value(measure)),
                            float(evaluate_tables(report.qrels, table, [measure]).value(measure)))
                           for (label, _), table in zip(named, tables, strict=True)]
    return report
