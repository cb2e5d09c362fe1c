"""The vocabulary of JSON rows, shared by datasets and results: key aliases, finding a key, the
query a row stands for, lists of ``{id, value}``, and errors that name the row.

Keys are compared after NFC normalisation and case-folding, so a "requête" typed with a combining
accent (macOS) is the same key.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable
from typing import Any, cast

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io.id_paths import MISSING, IdLocator, describe, locate_id
from trec_rag_eval.io.ids import id_problem
from trec_rag_eval.io.json.scanner import Entry, JsonDocument

# Key aliases, in the order they are looked up.
ID_KEYS = ("id", "query_id", "qid", "_id", "topic_id", "query-id")
QUERY_TEXT_KEYS = ("requête", "requete", "query", "question", "user_input", "query_text", "topic")
RELEVANT_KEYS = (
    "pertinents",
    "relevant",
    "relevant_docs",
    "relevant_ids",
    "reference_context_ids",
    "expected_ids",
    "qrels",
)
NON_RELEVANT_KEYS = ("non_pertinents", "non_relevant", "not_relevant", "irrelevant", "negatives")
RESULT_KEYS = (
    "résultats",
    "resultats",
    "results",
    "retrieved",
    "retrieved_ids",
    "retrieved_context_ids",
    "retrieved_docs",
    "hits",
    "candidates",
    "ranking",
    "documents",
    "docs",
)
DOC_ID_KEYS = ("id", "doc_id", "docid", "_id", "corpus_id", "corpus-id", "document_id", "node_id", "pid")
RELEVANCE_KEYS = ("relevance", "pertinence", "grade", "rel", "label", "score")
SCORE_KEYS = ("score", "similarity", "distance_score")


def is_rows(document: JsonDocument) -> bool:
    """Rows (array, JSONL, single row, ragas samples) rather than an object keyed by query."""
    if document.kind != "object":
        return True
    obj = {cast(str, e.key): e.value for e in document.entries}  # an object's entries all have a key
    return looks_like_row(obj) or (set(obj) == {"samples"} and isinstance(obj["samples"], list))


def looks_like_row(obj: dict[str, Any]) -> bool:
    """One row (a one-line JSONL file) rather than an object keyed by query id: it has a judgments or
    results key, and a text or number beside it (the query, an id) or only known keys. An object
    keyed by query id holds only lists and objects, whatever its ids are (even "results")."""
    if not any(find_key(obj, keys) is not None for keys in (RELEVANT_KEYS, RESULT_KEYS)):
        return False
    known = set(ID_KEYS + QUERY_TEXT_KEYS + RELEVANT_KEYS + NON_RELEVANT_KEYS + RESULT_KEYS)
    has_scalar = any(not isinstance(v, (list, dict)) for v in obj.values())
    query_object = any(  # TREC RAG requests: "query": {"qid": ..., "text": ...}
        isinstance(obj[k], dict) and find_key(obj[k], ID_KEYS) and isinstance(obj[k].get("text"), str)
        for k in obj
        if nfc(k).lower() in QUERY_TEXT_KEYS
    )
    return has_scalar or query_object or (len(obj) > 1 and all(k in known for k in obj))



def row_entries(document: JsonDocument) -> list[Entry]:
    """The rows of an array, a JSONL file, a single-row object or ragas' ``{"samples": [...]}``."""
    if document.kind != "object":
        return document.entries
    obj = {e.key: e.value for e in document.entries}
    if set(obj) == {"samples"} and isinstance(obj["samples"], list):
        line = document.entries[0].line
        return [Entry(line, i, None, row) for i, row in enumerate(obj["samples"], start=1)]
    return [Entry(document.entries[0].line if document.entries else 1, 1, None, obj)]


def row_identity(path: str, entry: Entry, row: dict[str, Any]) -> tuple[str, str | None, bool]:
    """The row's query id (its id, else q<position>), its query text (or None), and whether the id
    was given. Sets ``entry.label`` so later errors name the query."""
    given = row.get(find_key(row, ID_KEYS) or "")
    if isinstance(given, (str, int)) and not isinstance(given, bool) and id_problem(str(given), True) is None:
        entry.label = str(given)  # so an error about the text names the query already
    text_key = agreed_key(path, entry, row, QUERY_TEXT_KEYS)
    text_value = row[text_key] if text_key is not None else None
    explicit_id = None
    if isinstance(text_value, dict):  # TREC RAG requests: "query": {"qid": ..., "text": ...}
        inner_id = find_key(text_value, ID_KEYS)
        explicit_id = text_value[inner_id] if inner_id else None
        text_value = text_value.get("text")
    id_key = find_key(row, ID_KEYS)
    if id_key is not None:
        explicit_id = row[id_key]
    text = query_text(path, entry, text_key, text_value) if text_value is not None else None
    if explicit_id is None:
        entry.label = f"q{entry.position}"
        return entry.label, text, False
    entry.label = check_id(path, entry, f"query id ({id_key or text_key!r})", explicit_id)
    return entry.label, text, True


def query_text(path: str, entry: Entry, key: str | None, value: Any) -> str:
    if not isinstance(value, str):
        raise entry_error(path, entry, f"key {key!r}: the query text must be a string, got {kind_of(value)}")
    return value


def id_values(path: str, entry: Entry, where: str, value: Any, value_keys: tuple[str, ...],
               read_value: Callable[[str, Entry, str, Any, Any], Any], default: Any, element: str,
               value_name: str, id: IdLocator | None = None) -> list[tuple[str, Any]]:
    """(doc_id, value) pairs, in order, from what a dataset row holds as judgments or a results row as
    its ranking: an object ``{doc_id: value}``, or a list of ids (each gets ``default``) or of
    ``{"id": ..., <one of value_keys>: ...}`` objects (``element`` names one in errors). ``read_value``
    checks a value; ``value_name`` names it in the error for anything else. ``id``: where an object
    element keeps its id when the usual keys do not say (``io.id_paths``)."""
    out: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        for doc_id, item in value.items():
            checked = check_id(path, entry, f"{where}document id", doc_id)
            out.append((checked, read_value(path, entry, where, doc_id, item)))
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                doc_id = element_id(path, entry, where, item, element, id)
                value_key = agreed_key(path, entry, item, value_keys, where)
                found = default if value_key is None else read_value(path, entry, where, doc_id, item[value_key])
                out.append((doc_id, found))
            else:
                out.append((check_id(path, entry, f"{where}document id", item), default))
    else:
        raise entry_error(
            path,
            entry,
            f"{where}expected a list of document ids or an object {{doc_id: {value_name}}}, got {kind_of(value)}",
        )
    return out


def element_id(path: str, entry: Entry, where: str, element: dict[str, Any], what: str,
               id: IdLocator | None = None) -> str:
    """The document id of a ``{"id": ..., ...}`` element of a list (judgment or result), or where
    ``id`` says it is (a key path such as ``"metadata.source"``, or a callable)."""
    if id is not None:
        found = locate_id(element, id)
        if found is MISSING:
            raise entry_error(path, entry, f"{where}{what} has nothing at id={describe(id)}: {json_excerpt(element)}")
        return check_id(path, entry, f"{where}document id", found)
    id_key = find_key(element, DOC_ID_KEYS)
    if id_key is None:
        raise entry_error(path, entry, f"{where}{what} has no id key "
                     f"(expected one of {', '.join(DOC_ID_KEYS[:4])}): {json_excerpt(element)}")
    return check_id(path, entry, f"{where}document id", element[id_key])


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def find_key(obj: dict[str, Any], aliases: tuple[str, ...]) -> str | None:
    """The key of ``obj`` that is one of ``aliases`` (NFC-normalised, case-insensitive), or None."""
    wanted = {alias: i for i, alias in enumerate(aliases)}
    best: tuple[int, str] | None = None
    for key in obj:
        rank = wanted.get(nfc(key).lower()) if isinstance(key, str) else None
        if rank is not None and (best is None or rank < best[0]):
            best = (rank, key)
    return best[1] if best else None


ONE_MEANING = {
    QUERY_TEXT_KEYS: ("requête", "requete", "query"),
    RELEVANT_KEYS: ("pertinents", "relevant"),
    NON_RELEVANT_KEYS: ("non_pertinents", "non_relevant"),
    RESULT_KEYS: ("résultats", "resultats", "results"),
    RELEVANCE_KEYS: ("pertinence", "relevance"),
}
"""For each alias list, the keys that say one thing in French and in English: a row giving two of
them with different values is ambiguous and refused; with the same value, one is kept. Other tools'
words are left alone: a row may hold "question" beside "query", or "documents" (texts) beside
"retrieved_ids", and the alias order decides, as documented."""


def agreed_key(path: str, entry: Entry, obj: dict[str, Any], aliases: tuple[str, ...], where: str = "") -> str | None:
    """``find_key``, refusing an object where two aliases of one meaning (``ONE_MEANING``: ``requête``
    and ``query``, ``pertinents`` and ``relevant``, ...) hold different values: which one is meant
    cannot be told, and keeping either would drop the other in silence."""
    key = find_key(obj, aliases)
    same = ONE_MEANING.get(aliases, ())
    if key is None or nfc(key).lower() not in same:
        return key
    for other in obj:
        if other != key and isinstance(other, str) and nfc(other).lower() in same and obj[other] != obj[key]:
            raise entry_error(path, entry, f"{where}the keys {key!r} and {other!r} say the same thing with different "
                              f"values ({json_excerpt(obj[key], 40)} and {json_excerpt(obj[other], 40)}): keep one")
    return key


def missing_key_reason(row: dict[str, Any], aliases: tuple[str, ...]) -> str:
    names = " or ".join(repr(a) for a in aliases)
    present = ", ".join(repr(k) for k in list(row)[:6]) or "none"
    return f"missing required key {names} (keys present: {present})"


def require_object(path: str, entry: Entry, what: str) -> dict[str, Any]:
    if not isinstance(entry.value, dict):
        raise entry_error(path, entry, f"expected {what}, got {kind_of(entry.value)}")
    return entry.value


def check_id(path: str, entry: Entry, what: str, value: Any) -> str:
    """An id as text; refused if a TREC file could not hold it (empty, whitespace, not text)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise entry_error(path, entry, f"{what} must be a string or an integer, got {json_excerpt(value)}")
    text = str(value)
    problem = id_problem(text, what.startswith("query id"))
    if problem is not None:
        raise entry_error(path, entry, f"{what} {text!r} {problem}")
    return text


def entry_error(path: str, entry: Entry, reason: str) -> InputFormatError:
    return InputFormatError(path, entry.line, f"{entry.where()}: {reason}")


def kind_of(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def json_excerpt(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."
