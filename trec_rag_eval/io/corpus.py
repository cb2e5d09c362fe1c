"""A corpus kept as JSONL, one ``{"id": ..., "text": ...}`` object a line (the BM25 engine indexes it,
query generation and the LLM judge read its passages)."""

from __future__ import annotations

import json
import os

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io.text import iter_lines


def read_corpus(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """Read a JSONL corpus: one ``{"id": ..., "text": ...}`` object a line (``_id`` and ``title`` accepted).

    A title, when present, is prepended to the text. Blank lines are skipped; errors name path:line.
    """
    source = str(path)
    documents: list[dict[str, str]] = []
    seen: dict[str, int] = {}
    for line_no, line in iter_lines(source):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputFormatError(source, line_no, f"invalid JSON ({err.msg})", line) from None
        if not isinstance(item, dict):
            raise InputFormatError(source, line_no, 'expected an object {"id", "text"}', line)
        doc_id = item.get("id", item.get("_id"))
        text = item.get("text")
        if doc_id is None or not isinstance(text, str):
            raise InputFormatError(source, line_no, 'expected an object with "id" and "text"', line)
        doc_id = str(doc_id)
        if doc_id in seen:
            reason = f"duplicate document id {doc_id!r} (first on line {seen[doc_id]})"
            raise InputFormatError(source, line_no, reason)
        seen[doc_id] = line_no
        title = item.get("title")
        documents.append({"id": doc_id, "text": f"{title}\n{text}" if title else text})
    if not documents:
        raise InputFormatError(source, None, "the corpus has no documents")
    return documents
