"""Read judgments or a run from a file in any supported format: the format is detected from the
content, or given (``load_qrels``, ``load_run``, ``load_run_report``, ``load_run_shards``), and what a
file holds (``detect_kind``).

Detection reads the start of the file (after gzip, if compressed):

* a Parquet file (its magic bytes ``PAR1``) or a folder of ``*.parquet`` partitions: Parquet
  (see ``parquet``);
* another folder, a TSV whose first line is a header such as ``query-id<TAB>corpus-id<TAB>score``, or
  rows of three fields: BEIR (qrels TSV, with the query texts of a ``queries.jsonl`` beside it; see ``beir``);
* a first non-blank character ``[`` or ``{``: JSON or JSONL (see ``io.json.content``);
* anything else: TREC (``query_id iteration doc_id relevance`` / ``query_id Q0 doc_id rank score tag``).

Each format's readers are its record in ``io.format_registry``.
"""

from __future__ import annotations

import dataclasses
import os

from trec_rag_eval.errors import InputFormatError, UsageError
from trec_rag_eval.io.format_registry import (
    FORMATS,
    HEAD_BYTES,
    detect,
    head_lines,
    qrels_formats,
    run_formats,
)
from trec_rag_eval.io.id_paths import IdLocator
from trec_rag_eval.io.location import exists, is_irds_name
from trec_rag_eval.io.text import STANDARD_INPUT, read_head
from trec_rag_eval.io.trec.topics import load_topics
from trec_rag_eval.syntax import split_fields
from trec_rag_eval.tables import Qrels, ResultsReport, Run, joined_places

QRELS_FORMATS = qrels_formats()
"""Values of ``load_qrels(format=...)`` (``io.format_registry``). ``json`` detects the JSON
shape; ``rag``/``ragas`` (rows), ``llamaindex`` and ``dict`` (ranx/pytrec_eval) force one."""
RUN_FORMATS = run_formats()
"""Values of ``load_run(format=...)`` (``io.format_registry``)."""


def detect_format(path: str | os.PathLike[str]) -> str:
    """The name of the format of ``path``, from its content (``io.format_registry.detect``): ``"trec"``,
    ``"json"``, ``"beir"`` or ``"parquet"``."""
    return detect(os.fspath(path))


def detect_kind(path: str | os.PathLike[str]) -> str:
    """What a file holds: ``"dataset"`` (judgments), ``"results"`` (a run) or ``"both"`` (ragas rows).

    TREC: more lines of six fields than of four make a run (the first line decides a tie), otherwise qrels, so
    that a run whose first line lost a field is still a run, its error naming that line. BEIR: a dataset. Parquet: a
    ``score`` column makes a run, otherwise judgments. JSON: see ``io.json.content.json_content_kind``.
    """
    name = os.fspath(path)
    fmt = detect_format(name)
    if fmt == "parquet":
        from trec_rag_eval.io.parquet import column_names

        return "results" if "score" in column_names(name) else "dataset"
    if fmt == "json":
        from trec_rag_eval.io.json import content

        return content.json_content_kind(name)
    if fmt == "beir":
        return "dataset"
    counts = [len(split_fields(line)) for line in head_lines(read_head(name, HEAD_BYTES))]
    six, four = counts.count(6), counts.count(4)
    if six != four:
        return "results" if six > four else "dataset"
    return "results" if counts[:1] == [6] else "dataset"


def load_qrels(
    path: str | os.PathLike[str], format: str | None = None, *, topics: str | os.PathLike[str] | None = None
) -> Qrels:
    """Read judgments from a TREC qrels file, a JSON/JSONL dataset, BEIR data, Parquet, or an ir_datasets
    dataset named ``irds:<dataset id>`` (``irds:msmarco-passage/trec-dl-2019``; the ``irds`` extra).

    ``format`` is one of ``QRELS_FORMATS`` (None or "auto": detect). ``topics`` names a
    ``query_id<TAB>text`` file whose texts are attached as ``Qrels.topics`` (for TREC qrels).
    """
    name = os.fspath(path)
    if is_irds_name(name):  # irds:<dataset id>: qrels and topics from ir_datasets (the irds extra)
        from trec_rag_eval.io.published.irds import read_irds_qrels

        irds = read_irds_qrels(name)
        return dataclasses.replace(irds, topics=load_topics(topics)) if topics is not None else irds
    fmt = _choose(name, format, QRELS_FORMATS, "qrels_format", "load_qrels(format=...)")
    read = FORMATS[fmt].read_qrels
    assert read is not None  # QRELS_FORMATS lists the formats that read judgments
    qrels = read(name)
    if topics is not None:
        qrels = dataclasses.replace(qrels, topics=load_topics(topics))
    return qrels


def load_run(path: str | os.PathLike[str], format: str | None = None, qrels: Qrels | None = None,
             id: IdLocator | None = None) -> Run:
    """Read a TREC run, JSON/JSONL results or Parquet; ``qrels`` (with topics) matches results keyed by query text.
    Result lists whose scores rise along them are ranked in their order all the same, and warned about
    (``io.ranked_lists``; ``load_run_report`` leaves that to its caller, in its report). ``id``: where
    each JSON result keeps its document id (``io.id_paths``)."""
    run, report = load_run_report(path, format, qrels, id)
    if report.disordered:
        from trec_rag_eval.errors import warn
        from trec_rag_eval.io.ranked_lists import order_warning

        warn(f"{os.fspath(path)}: {order_warning(report.disordered)}")
    return run


def load_run_shards(paths: list[str], format: str | None = None) -> Run:
    """One run written as several files (shards, in any order of queries): their rows together,
    the run tag that of the last shard, as the last line's is for one file."""
    if not paths:
        raise UsageError("no run shard given")
    import polars as pl

    runs = [load_run(path, format) for path in paths]
    return Run(pl.concat([run.frame for run in runs]), runs[-1].run_tag, paths[0],
               joined_places([run.places for run in runs]))


def load_run_report(
    path: str | os.PathLike[str], format: str | None = None, qrels: Qrels | None = None,
    id: IdLocator | None = None,
) -> tuple[Run, ResultsReport]:
    """``load_run`` plus what JSON results showed and a Run cannot hold (repeated ids, empty lists),
    for ``checks.rag.check_rag``. A TREC run gives an empty report (its reader refuses repeats)."""
    name = os.fspath(path)
    fmt = _choose(name, format, RUN_FORMATS, "run_format", "load_run(format=...)")
    if id is not None and fmt not in ("json", "auto"):
        raise UsageError(f"{name}: id= says where JSON results keep their document ids; a {fmt} run has them in "
                         "its doc_id column")
    read = FORMATS[fmt].read_run
    assert read is not None  # RUN_FORMATS and detection give formats that read runs
    return read(name, qrels, id)


def _choose(path: str, format: str | None, allowed: tuple[str, ...], parameter: str, written: str) -> str:
    """The format to read ``path`` with; ``parameter`` (written ``written`` in the message) names the
    choice in errors."""
    if format is None or format == "auto":
        if path != STANDARD_INPUT and not exists(path):
            raise InputFormatError(path, None, "no such file")
        return detect_format(path)
    if format not in allowed:
        raise UsageError(f"unknown format {format!r} for {written}; expected one of {', '.join(allowed)}",
                         {written: parameter})
    return format
