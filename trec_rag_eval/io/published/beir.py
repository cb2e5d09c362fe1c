"""BEIR data: judgments from a dataset folder or one qrels TSV,
with the query texts of the dataset's ``queries.jsonl``. Registered in ``io.loading`` as ``beir``:
detected from a folder or a first line of three fields; it reads judgments, and refuses to read a
run (``read_beir_run``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io.ids import id_problem
from trec_rag_eval.io.loading import BEIR_HEADER_WORDS
from trec_rag_eval.io.sources import is_dir, is_file, is_url, join, list_dir, read_text
from trec_rag_eval.syntax import (
    RELEVANCE_RANGE,
    OutOfRangeError,
    parse_integer,
    quote,
    separator_hint,
    split_fields,
)
from trec_rag_eval.tables import Qrels, ResultsReport, Run

if TYPE_CHECKING:  # polars is imported where used
    import polars as pl

    from trec_rag_eval.io.id_paths import IdLocator


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
        return Qrels(frame, tsv_name, _beir_topics(frame, queries_name), checked=True)
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
        queries_file = next(iter(queries_beside(folder)), None)
    frame = _read_beir_tsv(os.fspath(tsv))
    return Qrels(frame, os.fspath(tsv), _beir_topics(
        frame, os.fspath(queries_file) if queries_file is not None and queries_file.exists() else None), checked=True)


def queries_beside(tsv: Path) -> list[Path]:
    """The ``queries.jsonl`` files a local qrels TSV may take its query texts from, first the one
    ``read_beir`` reads: its folder's, then its folder's folder's (``qrels/test.tsv`` beside
    ``queries.jsonl``); those that exist."""
    return [p for p in (tsv.parent / "queries.jsonl", tsv.parent.parent / "queries.jsonl") if p.exists()]


def _beir_topics(frame: pl.DataFrame, queries_file: str | None) -> dict[str, str] | None:
    """The texts of ``queries_file`` (BEIR's queries.jsonl) of the queries ``frame`` judges."""
    if queries_file is None:
        return None
    wanted = set(frame["query_id"].to_list())
    return {q: t for q, t in _read_beir_queries(queries_file).items() if q in wanted} or None


def _beir_files_at_url(url: str) -> tuple[str, str | None]:
    """``read_beir``'s qrels TSV and queries.jsonl for a URL (a dataset folder, or the TSV itself),
    found as for a local path, through ``io.sources``."""
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
            and {query_id.lower(), doc_id.lower()} & BEIR_HEADER_WORDS
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
    """``{"_id": ..., "text": ...}`` per line; other keys are ignored. A file of one line is one row
    (``io.json.rows.row_entries``), not a JSON object keyed by query."""
    from trec_rag_eval.io.json.rows import row_entries
    from trec_rag_eval.io.json.scanner import parse_document

    topics: dict[str, str] = {}
    for entry in row_entries(parse_document(path)):
        row = entry.value
        if not isinstance(row, dict) or "_id" not in row or not isinstance(row.get("text"), str):
            raise InputFormatError(path, entry.line, 'expected {"_id": ..., "text": ...}')
        topics[str(row["_id"])] = row["text"]
    return topics


def read_beir_run(path: str, qrels: Qrels | None, id: IdLocator | None) -> tuple[Run, ResultsReport]:
    """A 'run' that looks like BEIR: a folder is refused; three fields on the first line (a run cut
    short, bytes before it, BEIR qrels given as the run) are the TREC reader's error on that line."""
    from trec_rag_eval.io.trec.qrels_runs import read_trec_run

    if is_dir(path):
        raise InputFormatError(path, None, "this looks like a BEIR dataset folder (qrels), not a run")
    try:
        return read_trec_run(path), ResultsReport()
    except InputFormatError as err:
        if "got 3" not in err.reason:
            raise
        raise InputFormatError(err.path, err.line_no, f"{err.reason} (three columns, as in BEIR qrels: the judgments "
                               "come first, then the runs)", err.line) from None
