"""What a query or document id may be: the rule every reader and writer applies, said once.

An id is what a TREC file can hold in one whitespace-separated column: not empty, no whitespace, no
NUL character (trec_eval stops reading a C string there, or crashes);
a query id must not start with ``#``, which TREC readers (ours, trec_eval's) take for a comment.
"""

from __future__ import annotations

from collections.abc import Iterable

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.syntax import quote


def id_problem(text: str, query_id: bool) -> str | None:
    """Why ``text`` cannot be an id (``query_id``: a query's, else a document's), or None when it can.
    The reason reads after the id: ``f"query id {text!r} {problem}"``."""
    if not text:
        return "is empty"
    if any(ch.isspace() for ch in text):
        return "contains whitespace, which a TREC file cannot hold"
    if "\x00" in text:
        return "contains a NUL character, which trec_eval cannot read (C strings end there)"
    if query_id and text.startswith("#"):
        return "starts with '#', which a TREC file reads as a comment"
    return None


def doc_ids_usable(ids: list[str], joined: str) -> bool:
    """Whether no document id of a column of strings (``joined``: them end to end) has an ``id_problem``, told on the
    whole column at once: none empty, no whitespace nor NUL character in any."""
    return "" not in ids and "\x00" not in joined and joined.split(None, 1) == [joined]


def has_whitespace(text: str) -> bool:
    """Whether ``text`` holds whitespace (a JSON key that does is a query text, not an id)."""
    return any(ch.isspace() for ch in text)


def check_ids(source: str, query_ids: Iterable[str], doc_ids: Iterable[str]) -> None:
    """Refuse, before writing, an id a reader would refuse (``source`` names the table)."""
    for what, ids in (("query id", query_ids), ("document id", doc_ids)):
        for value in ids:
            problem = id_problem(value, what == "query id")
            if problem is not None:
                raise InputFormatError(source, None, f"{what} {quote(value)} {problem}")
