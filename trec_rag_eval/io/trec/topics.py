"""Topics files: the text of each query, ``query_id<TAB>query text`` per line, or an ir_datasets
dataset's queries (``irds:<dataset id>``)."""

from __future__ import annotations

import os

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io.ids import id_problem
from trec_rag_eval.io.sources import is_irds_name, read_text


def load_topics(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read a topics file: ``query_id<TAB>query text`` per line, the text kept verbatim; or the queries of
    an ir_datasets dataset (``irds:<dataset id>``)."""
    name = os.fspath(path)
    if is_irds_name(name):
        from trec_rag_eval.io.published.irds import read_irds_topics

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
