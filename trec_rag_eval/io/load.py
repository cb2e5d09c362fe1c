"""Open any supported qrels or run file: the format is detected from the content, or given.

Detection reads the start of the file (after gzip, if compressed):

* a Parquet file (its magic bytes ``PAR1``) or a folder of ``*.parquet`` partitions: Parquet
  (see ``parquet``);
* another folder, a TSV whose first line is a header such as ``query-id<TAB>corpus-id<TAB>score``, or
  rows of three fields: BEIR (qrels TSV, with the query texts of a ``queries.jsonl`` beside it);
* a first non-blank character ``[`` or ``{``: JSON or JSONL (see ``json_formats``);
* anything else: TREC (``query_id iteration doc_id relevance`` / ``query_id Q0 doc_id rank score tag``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trec_rag_eval.errors import InputFormatError, TrecRagEvalError, UsageError
from trec_rag_eval.io.formats import (
    FORMATS,
    HEAD_BYTES,
    detect,
    first_data_line,
    qrels_formats,
    run_formats,
)
from trec_rag_eval.io.id_paths import IdLocator
from trec_rag_eval.io.ids import id_problem
from trec_rag_eval.io.location import exists, is_dir, is_file, is_url, join, list_dir, local_path
from trec_rag_eval.io.text import STANDARD_INPUT, read_head, read_text
from trec_rag_eval.syntax import (
    RELEVANCE_RANGE,
    OutOfRangeError,
    parse_integer,
    quote,
    separator_hint,
    split_fields,
)
from trec_rag_eval.tables import Qrels, ResultsReport, Run, empty_keys, joined_places
from trec_rag_eval.tables.shapes import (
    QRELS_KINDS,
    RUN_KINDS,
    check_frame,
    is_table_data,
    library_of,
    qrels_data,
    run_data,
    source_name,
)

if TYPE_CHECKING:  # polars and the JSON readers are imported where used: a TREC pair needs neither
    import polars as pl

QRELS_FORMATS = qrels_formats()
"""Values of ``load_qrels(format=...)`` (``io.formats``). ``json`` detects the JSON
shape; ``rag``/``ragas`` (rows), ``llamaindex`` and ``dict`` (ranx/pytrec_eval) force one."""
RUN_FORMATS = run_formats()
"""Values of ``load_run(format=...)`` (``io.formats``)."""
_BEIR_HEADER_WORDS = {"query-id", "query_id", "qid", "corpus-id", "corpus_id", "doc-id", "doc_id", "docid"}


def detect_format(path: str | os.PathLike[str]) -> str:
    """The name of the format of ``path``, from its content (``io.formats.detect``): ``"trec"``,
    ``"json"``, ``"beir"`` or ``"parquet"``."""
    return detect(os.fspath(path))


def detect_kind(path: str | os.PathLike[str]) -> str:
    """What a file holds: ``"dataset"`` (judgments), ``"results"`` (a run) or ``"both"`` (ragas rows).

    TREC: six fields on the first line make a run, otherwise qrels. BEIR: a dataset. Parquet: a
    ``score`` column makes a run, otherwise judgments. JSON: see ``json_formats.json_content_kind``.
    """
    name = os.fspath(path)
    fmt = detect_format(name)
    if fmt == "parquet":
        from trec_rag_eval.io.parquet import column_names

        return "results" if "score" in column_names(name) else "dataset"
    if fmt == "json":
        from trec_rag_eval.io import json_formats

        return json_formats.json_content_kind(name)
    if fmt == "beir":
        return "dataset"
    return "results" if len(split_fields(first_data_line(read_head(name, HEAD_BYTES)))) == 6 else "dataset"


def load_qrels(
    path: str | os.PathLike[str], format: str | None = None, *, topics: str | os.PathLike[str] | None = None
) -> Qrels:
    """Read judgments from a TREC qrels file, a JSON/JSONL dataset, BEIR data, Parquet, or an ir_datasets
    dataset named ``irds:<dataset id>`` (``irds:msmarco-passage/trec-dl-2019``; the ``irds`` extra).

    ``format`` is one of ``QRELS_FORMATS`` (None or "auto": detect). ``topics`` names a
    ``query_id<TAB>text`` file whose texts are attached as ``Qrels.topics`` (for TREC qrels).
    """
    name = os.fspath(path)
    from trec_rag_eval.io.irds import is_irds_name

    if is_irds_name(name):  # irds:<dataset id>: qrels and topics from ir_datasets (the irds extra)
        from trec_rag_eval.io.irds import read_irds_qrels

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


def load_topics(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read a topics file: ``query_id<TAB>query text`` per line, the text kept verbatim; or the queries of
    an ir_datasets dataset (``irds:<dataset id>``)."""
    name = os.fspath(path)
    from trec_rag_eval.io.irds import is_irds_name

    if is_irds_name(name):
        from trec_rag_eval.io.irds import read_irds_topics

        return read_irds_topics(name)
    topics: dict[str, str] = {}
    first_line: dict[str, int] = {}
    text = read_text(name)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for line_no, line in enumerate(lines, start=1):
        if line.endswith("\r"):
            line = line[:-1]
        if not line:
            continue
        query_id, tab, query_text = line.partition("\t")
        if not tab:
            raise InputFormatError(name, line_no, "expected query_id<TAB>query text", line)
        problem = id_problem(query_id, query_id=True)
        if problem is not None:
            raise InputFormatError(name, line_no, f"query id {query_id!r} {problem}", line)
        if query_id in topics:
            raise InputFormatError(
                name, line_no, f"query {query_id} already has a text at line {first_line[query_id]}", line
            )
        topics[query_id] = query_text
        first_line[query_id] = line_no
    return topics


def check_outputs_against_inputs(outputs: Sequence[str | os.PathLike[str] | None], force: bool = False,
                                 inputs: Sequence[str | os.PathLike[str] | None] = (),
                                 progress: Sequence[str | os.PathLike[str] | None] = ()) -> None:
    """Before any work: refuse every output (and ``progress`` file) that would replace or join what
    is read: an input, a file inside an input folder, or a file an input brings along (``files_read``),
    whatever the spelling (links included); outputs that exist unless ``force``; two outputs naming
    one file (``io.atomic.check_output_paths``)."""
    from trec_rag_eval.io.atomic import check_output_paths

    read = [name for path in inputs if path is not None for name in files_read(path)]
    check_output_paths(outputs, force, read, progress)


def files_read(path: str | os.PathLike[str]) -> list[str]:
    """Every file reading ``path`` as qrels or a run may open: the path itself (a folder stands for
    every file inside it), the LLM-judgment sidecar beside it (``PATH.llm.tsv``, read by
    ``--judgments`` and ``judge``), and for a BEIR qrels TSV the ``queries.jsonl`` it takes the query
    texts from. What the command line checks its outputs against, so none replaces an input."""
    given = os.fspath(path)
    name = local_path(given)
    if name is None:  # a URL whose data is not on this machine: no output can replace it
        return []
    found = [name, f"{name}.llm.tsv"]
    if os.path.isfile(name):
        try:
            beir = detect_format(name) == "beir"
        except TrecRagEvalError:
            beir = False  # the reader reports it, with the line
        if beir:
            here = Path(name)
            found += [os.fspath(p) for p in (here.parent / "queries.jsonl", here.parent.parent / "queries.jsonl")
                      if p.exists()]
    return found


def read_beir(path: str | os.PathLike[str]) -> Qrels:
    """BEIR judgments: a dataset folder (``qrels/test.tsv``, or its only TSV) or one qrels TSV.

    The TSV holds ``query-id<TAB>corpus-id<TAB>score`` rows after an optional header. Query texts
    come from the ``queries.jsonl`` of the dataset folder (``_id``, ``text``), kept for the queries
    that have judgments.
    """
    name = os.fspath(path)
    if is_url(name):
        tsv_name, queries_name = _beir_files_at_url(name)
        frame = _read_beir_tsv(tsv_name)
        return Qrels(frame, tsv_name, _beir_topics(frame, queries_name))
    folder = Path(name)
    queries_file: Path | None
    if folder.is_dir():
        qrels_dir = folder / "qrels"
        candidates = sorted(qrels_dir.glob("*.tsv")) if qrels_dir.is_dir() else []
        chosen = qrels_dir / "test.tsv" if (qrels_dir / "test.tsv").exists() else None
        if chosen is None and len(candidates) == 1:
            chosen = candidates[0]
        if chosen is None:
            found = ", ".join(c.name for c in candidates) or "none"
            raise InputFormatError(
                name,
                None,
                f"a BEIR folder needs qrels/test.tsv or a single qrels/*.tsv "
                f"(found: {found}); pass the TSV file itself",
            )
        tsv, queries_file = chosen, folder / "queries.jsonl"
    else:
        tsv = folder
        queries_file = next(
            (
                p
                for p in (folder.parent / "queries.jsonl", folder.parent.parent / "queries.jsonl")
                if p.exists()
            ),
            None,
        )
    frame = _read_beir_tsv(os.fspath(tsv))
    return Qrels(frame, os.fspath(tsv), _beir_topics(
        frame, os.fspath(queries_file) if queries_file is not None and queries_file.exists() else None))


def _beir_topics(frame: pl.DataFrame, queries_file: str | None) -> dict[str, str] | None:
    """The texts of ``queries_file`` (BEIR's queries.jsonl) of the queries ``frame`` judges."""
    if queries_file is None:
        return None
    wanted = set(frame["query_id"].to_list())
    return {q: t for q, t in _read_beir_queries(queries_file).items() if q in wanted} or None


def _beir_files_at_url(url: str) -> tuple[str, str | None]:
    """``read_beir``'s qrels TSV and queries.jsonl for a URL (a dataset folder, or the TSV itself),
    found as for a local path, through ``io.location``."""
    if is_dir(url):
        qrels_dir = join(url, "qrels")
        names = sorted(entry for entry, file in list_dir(qrels_dir) if file and entry.endswith(".tsv")
                       ) if is_dir(qrels_dir) else []
        chosen = "test.tsv" if "test.tsv" in names else names[0] if len(names) == 1 else None
        if chosen is None:
            raise InputFormatError(url, None, f"a BEIR folder needs qrels/test.tsv or a single qrels/*.tsv (found: "
                                   f"{', '.join(names) or 'none'}); pass the TSV file itself")
        queries = join(url, "queries.jsonl")
        return join(qrels_dir, chosen), queries if is_file(queries) else None
    scheme, _, rest = url.partition("://")
    parts = rest.rstrip("/").split("/")
    # its folder's queries.jsonl, or its folder's folder's (qrels/test.tsv beside queries.jsonl), within the URL
    folders = [f"{scheme}://{'/'.join(parts[:-up])}" for up in (1, 2) if len(parts) > up]
    return url, next((join(folder, "queries.jsonl") for folder in folders if is_file(join(folder, "queries.jsonl"))),
                     None)


def _read_beir_tsv(path: str) -> pl.DataFrame:
    rows: list[tuple[str, str, str, int]] = []
    seen: dict[tuple[str, str], int] = {}
    lines = read_text(path).split("\n")
    for line_no, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        if not split_fields(line):
            continue
        fields = line.split("\t") if "\t" in line else split_fields(line)
        if len(fields) != 3:
            raise InputFormatError(
                path,
                line_no,
                f"expected 3 columns (query-id corpus-id score), separated by tabs, got {len(fields)}"
                f"{separator_hint(line)}",
                line,
            )
        query_id, doc_id, score = (f.strip(" ") for f in fields)
        if (
            not rows
            and line_no == _first_data_line(lines)
            and {query_id.lower(), doc_id.lower()} & _BEIR_HEADER_WORDS
        ):
            continue  # the header
        try:
            relevance = parse_integer(score, RELEVANCE_RANGE)
        except OutOfRangeError as err:
            raise InputFormatError(path, line_no, f"the score {err}", line) from None
        except ValueError:
            raise InputFormatError(
                path, line_no, f"the score {quote(score)} is not an integer{separator_hint(score)}", line) from None
        for what, value in (("query id", query_id), ("corpus id", doc_id)):
            problem = id_problem(value, what == "query id")
            if problem is not None:
                raise InputFormatError(path, line_no, f"{what} {quote(value)} {problem}", line)
        if (query_id, doc_id) in seen:
            raise InputFormatError(
                path,
                line_no,
                f"{query_id} {doc_id} is already judged at line {seen[(query_id, doc_id)]}",
                line,
            )
        seen[(query_id, doc_id)] = line_no
        rows.append((query_id, "0", doc_id, relevance))
    import polars as pl

    from trec_rag_eval.tables import QRELS_SCHEMA

    return pl.DataFrame(rows, schema=QRELS_SCHEMA, orient="row")


def _first_data_line(lines: list[str]) -> int:
    return next((i for i, line in enumerate(lines, start=1) if split_fields(line)), 1)


def _read_beir_queries(path: str) -> dict[str, str]:
    """``{"_id": ..., "text": ...}`` per line; other keys are ignored."""
    from trec_rag_eval.io.json_scanner import parse_document

    topics: dict[str, str] = {}
    for entry in parse_document(path).entries:
        row = entry.value
        if not isinstance(row, dict) or "_id" not in row or not isinstance(row.get("text"), str):
            raise InputFormatError(path, entry.line, 'expected {"_id": ..., "text": ...}')
        topics[str(row["_id"])] = row["text"]
    return topics


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


def as_qrels(value: Any, name: str = "qrels") -> Qrels:
    """Judgments from any object ``tables.shapes`` accepts, a path to any file ``load_qrels`` reads, or a
    ``Qrels`` as it is."""
    if isinstance(value, Qrels):
        return value
    if isinstance(value, (str, os.PathLike)):
        return load_qrels(value)
    if isinstance(value, list) and value and isinstance(value[0], Mapping) and "doc_id" not in value[0]:
        from trec_rag_eval.io.json_formats import read_dataset_rows

        return read_dataset_rows(value, f"{name} (list of dataset rows)")
    source = source_name(value, name)
    if library_of(value) == "polars" and is_table_data(value, "relevance"):
        check_frame(value, source, "relevance")
    return Qrels(qrels_data(value, name, QRELS_KINDS), source, unjudged=empty_keys(value))


def _keyed_by_query_id(value: Mapping[Any, Any], qrels: Qrels, source: str) -> Mapping[Any, Any]:
    """``{query text: results}`` (the French RAG tutorial's results) keyed by the qrels' query ids, as the
    JSON results reader matches a file's keys: a key that is a query id stays, one that is exactly
    one query's text becomes its id, any other stays (an extra query, warned about)."""
    assert qrels.topics is not None
    ids = set(qrels.topics) | set(qrels.query_ids)
    if all(key in ids for key in value):
        return value
    by_text: dict[str, list[str]] = {}
    for query_id, text in qrels.topics.items():
        by_text.setdefault(text, []).append(query_id)
    keyed: dict[Any, Any] = {}
    for key, results in value.items():
        query_id = key
        if isinstance(key, str) and key not in ids and key in by_text:
            if len(by_text[key]) > 1:
                raise InputFormatError(source, None, f"the query text {quote(key)} matches several queries "
                                       f"({', '.join(by_text[key])}); key the results by query id")
            query_id = by_text[key][0]
        if query_id in keyed:
            raise InputFormatError(source, None, f"query {query_id!r} has results twice: by its id and by its "
                                   "text")
        keyed[query_id] = results
    return keyed


def as_run(value: Any, qrels: Qrels | None = None, name: str = "run", run_tag: str = "run",
           id: IdLocator | None = None) -> Run:
    """A run from any object ``tables.shapes`` accepts, a path to any file ``load_run`` reads, or a
    ``Run`` as it is; ``qrels`` (with topics) lets JSON results keyed by query text find their query ids."""
    if isinstance(value, Run):
        return value
    if isinstance(value, (str, os.PathLike)):
        return load_run(value, qrels=qrels, id=id)
    source = source_name(value, name)
    if isinstance(value, Mapping) and qrels is not None and qrels.topics:
        value = _keyed_by_query_id(value, qrels, source)
    if library_of(value) == "polars" and is_table_data(value, "score"):
        check_frame(value, source, "score")
    return Run(run_data(value, name, RUN_KINDS), run_tag, source)
