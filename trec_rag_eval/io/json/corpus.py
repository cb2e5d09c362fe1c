"""A corpus kept as JSONL, one ``{"id": ..., "text": ...}`` object a line (the BM25 engine indexes it,
query generation and the LLM judge read its passages)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from trec_rag_eval.call_scope import per_call
from trec_rag_eval.errors import InputFormatError, InputTypeError
from trec_rag_eval.io.sources import iter_lines


@per_call
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


def corpus_documents(corpus: Any) -> list[dict[str, str]]:
    """``[{"id", "text"}]`` from a JSONL path (``read_corpus``), such a list, or a mapping doc id -> text."""
    if isinstance(corpus, (str, os.PathLike)):
        return read_corpus(corpus)
    if isinstance(corpus, Mapping):
        return [{"id": str(doc_id), "text": str(text)} for doc_id, text in corpus.items()]
    if isinstance(corpus, Sequence) and all(isinstance(d, Mapping) and "id" in d and "text" in d for d in corpus):
        return [{"id": str(d["id"]), "text": str(d["text"])} for d in corpus]
    raise InputTypeError("corpus must be a JSONL path ({\"id\", \"text\"} a line), a list of {\"id\", \"text\"} dicts "
                         f"or a mapping doc id -> text; got {type(corpus).__name__}", {"corpus": "corpus"})


def corpus_texts(corpus: Any) -> dict[str, str]:
    """doc id -> text, from any shape ``corpus_documents`` takes."""
    if isinstance(corpus, Mapping):
        return {str(doc_id): str(text) for doc_id, text in corpus.items()}
    return {d["id"]: d["text"] for d in corpus_documents(corpus)}
