"""What a search engine returns, read: each result's document id (a string, an item with an ``id``, an
``(id, score)`` pair, or where ``id=`` says), its score and its text, in the engine's order; the harness
(``engine.harness``) ranks them by the rule of every list of results (``io.ranked_lists``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from numbers import Integral
from operator import countOf, itemgetter
from typing import Any

import numpy as np

from trec_rag_eval.errors import EngineError
from trec_rag_eval.io.id_paths import MISSING, IdLocator, describe, locate_id
from trec_rag_eval.io.ranked_lists import list_scores, lists_scores
from trec_rag_eval.tables.bulk import distinct_ids, float_array, joined_strings


def ranked_results(results: Any, depth: int, id: IdLocator | None = None) -> tuple[list[str], list[float], bool]:
    """Doc ids in the engine's order (as ``normalise_results``), the scores that rank them in that
    order (``io.ranked_lists.list_scores``), and whether the given scores rose along the list."""
    doc_ids, given = read_search_results(results, depth, id)
    scores, rising = list_scores(given, doc_ids)
    return doc_ids, scores, rising


def ranked_search_results(value: Mapping[Any, Any]) -> tuple[list[str], np.ndarray, list[int], list[str]] | None:
    """``{query_id: results}`` ranked as ``ranked_results`` ranks each list, read on whole columns for the usual
    shapes: every result a dict whose ``"id"`` is a string and whose ``"score"`` a number, or every result an
    ``(id, score)`` pair of a string and a number, no id blank, none twice in one list. The doc ids and the scores
    that rank them (float64) of every list end to end, each list's length, and the queries whose given scores rise
    along their list; None for anything else (another kind of result, an id elsewhere or of another type, a score
    missing or of text, a document twice): then each list is read result by result (``ranked_results``), which
    says what is wrong or warns of the repeat."""
    lists = list(value.values())
    if not set(map(type, lists)) <= {list, tuple}:
        return None
    lengths = list(map(len, lists))
    first = next((hits[0] for hits in lists if hits), None)
    dicts = type(first) is dict
    id_of, score_of = (itemgetter("id"), itemgetter("score")) if dicts else (itemgetter(0), itemgetter(1))
    ids: list[Any] = []
    scores: list[Any] = []
    try:
        # list by list, each while its hits are in the cache (one pass over a million hits' dicts for each check took
        # 1.1x as long), each field in a pass of its own, in C (itemgetter; a Python step per hit, reading both into
        # its list's dict, took 1.6-1.9x as long): every hit of the kind of the first, each list's ids once (a repeat is
        # read result by result, its first place kept, and said) and none empty (tables.bulk.distinct_ids)
        for hits in lists:
            if dicts:
                if countOf(map(type, hits), dict) != len(hits):
                    return None
            elif not set(map(type, hits)) <= {tuple, list} or countOf(map(len, hits), 2) != len(hits):
                return None
            listed = list(map(id_of, hits))
            if not distinct_ids(listed):
                return None
            ids += listed
            scores += map(score_of, hits)
    except (KeyError, TypeError):  # a hit without an id or a score, an id no set holds
        return None
    joined = joined_strings(ids)
    if joined is None:
        return None
    if joined.split(None, 1) != [joined] and any(map(str.isspace, ids)):
        return None  # an id of white space alone (looked for only when the ids hold some white space)
    numbers = float_array(scores)  # as float() reads them, as the results read one by one are
    if numbers is None:
        return None
    ranked, rising = lists_scores(numbers, ids, lengths)
    return ids, ranked, lengths, [str(query_id) for query_id, rose in zip(value, rising.tolist(), strict=True) if rose]


def normalise_results(results: Any, depth: int) -> tuple[list[str], list[float] | None]:
    """Doc ids in the engine's order (first occurrence kept, cut at depth) and their scores, if given.

    Scores come back only when every item has one and they strictly decrease along the list.
    Raises ``EngineError`` when the results are not a list or an item has no usable id.
    """
    doc_ids, scores = read_search_results(results, depth)
    if any(s is None or not np.isfinite(s) for s in scores):
        return doc_ids, None
    given = [float(s) for s in scores if s is not None]
    if all(a > b for a, b in zip(given, given[1:], strict=False)):
        return doc_ids, given
    return doc_ids, None


def read_search_results(results: Any, depth: int, id: IdLocator | None = None, repeated: list[str] | None = None
                        ) -> tuple[list[str], list[float | None]]:
    """Doc ids in the engine's order (first occurrence kept, cut at depth) and their scores (None
    where an item has none); ``repeated``, when given, gets each later occurrence's id, passed over."""
    if results is None:
        return [], []
    if isinstance(results, (str, bytes, dict)) or not isinstance(results, Iterable):
        raise EngineError(f"the engine must return a list of results, got {type(results).__name__}")
    doc_ids: list[str] = []
    scores: list[float | None] = []
    seen: set[str] = set()
    for item in results:
        doc_id, score = result_item(item, id)
        if doc_id in seen:
            if repeated is not None:
                repeated.append(doc_id)
            continue
        seen.add(doc_id)
        doc_ids.append(doc_id)
        scores.append(score)
        if len(doc_ids) == depth:
            break
    return doc_ids, scores


# Where engines keep a result's id, in the order tried: the item itself, then its metadata (LangChain
# Documents often have id None and the id in metadata), then its node (LlamaIndex NodeWithScore).
ID_KEYS = ("id", "doc_id", "docid", "_id", "node_id", "id_")
NESTED_KEYS = ("metadata", "node")


def result_item(item: Any, id: IdLocator | None = None) -> tuple[str, float | None]:
    """(doc_id, score or None) of one result: an id (a string or an integer), an ``(id, score)``
    pair, a ``(document, score)`` pair (LangChain's ``similarity_search_with_score``), a dict or an
    object (``id``, ``doc_id``, ``metadata["id"]`` / ``["doc_id"]``, ``node.node_id``, ...).
    ``id``: where the id is instead (``io.id_paths``: a key path such as ``"metadata.source"`` or a
    callable), read from the dict or object (the document of a pair).

    An id that reads as None or blank is an error, never the document "None", nor an object's repr."""
    if isinstance(item, str) or _is_integer(item):
        return _usable_id(item, item), None
    if isinstance(item, (tuple, list)):
        if len(item) != 2:
            raise EngineError(f"a result pair must be (id, score), got {_short(item)}")
        if item[0] is None or isinstance(item[0], str) or _is_integer(item[0]):
            return _usable_id(item[0], item), _score(item[1], item)
        return result_item(item[0], id)[0], _score(item[1], item)
    if id is not None:
        found = locate_id(item, id)
        if found is MISSING:
            raise EngineError(f"no {describe(id)} in the result {_short(item)} (id={describe(id)})")
        if not (isinstance(found, str) or _is_integer(found)):
            raise EngineError(f"id={describe(id)} gives {_short(found)} for the result {_short(item)}, not a string "
                              "or an integer")
        return _usable_id(found, item), _score(_field(item, "score"), item)
    found = _find_id(item, depth=0)
    if found is _NOT_FOUND:
        raise EngineError(
            f"cannot find a document id in the result {_short(item)}: expected a string, an (id, score) pair, "
            f"or an item with one of {', '.join(ID_KEYS)} (itself, in its metadata or in its node); "
            "say where it is with id= (a key path such as 'metadata.source', or a callable)"
        )
    if found is None or not str(found).strip():
        raise EngineError(f"no usable document id in the result {_short(item)} (the id reads as {found!r}); say "
                          "where it is with id= (a key path such as 'metadata.source', or a callable)")
    return _usable_id(found, item), _score(_field(item, "score"), item)


_NOT_FOUND = object()

# Where engines keep a result's text: a dict's or an object's own field (LangChain's page_content,
# LlamaIndex's text), or its node's (NodeWithScore.node.text).
TEXT_KEYS = ("text", "page_content", "content", "contents", "chunk")


def result_text(item: Any) -> str | None:
    """The text a result carries, or None (an id alone, an ``(id, score)`` pair)."""
    if isinstance(item, (str, bytes)) or _is_integer(item):
        return None
    if isinstance(item, (tuple, list)):
        return result_text(item[0]) if len(item) == 2 else None
    for holder in (item, _field(item, "node")):
        if holder is _NOT_FOUND or holder is None:
            continue
        for key in TEXT_KEYS:
            value = _field(holder, key)
            if isinstance(value, str):
                return value
    return None


def result_texts(results: Sequence[Any], doc_ids: set[str], id: IdLocator | None = None) -> dict[str, str]:
    """doc_id -> text of the results that carry one (the ids kept by ``read_search_results``; ``id`` as there)."""
    found: dict[str, str] = {}
    for item in results:
        text = result_text(item)
        if text is None:
            continue
        doc_id = result_item(item, id)[0]
        if doc_id in doc_ids and doc_id not in found:
            found[doc_id] = text
    return found



def _is_integer(value: Any) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def _field(item: Any, key: str) -> Any:
    if isinstance(item, Mapping):
        return item.get(key, _NOT_FOUND)
    return getattr(item, key, _NOT_FOUND)


def _find_id(item: Any, depth: int) -> Any:
    """The first id that is neither None nor blank; else the first id field present (None or
    blank: reported as such); else ``_NOT_FOUND``."""
    first_present: Any = _NOT_FOUND
    for key in ID_KEYS:
        value = _field(item, key)
        if value is _NOT_FOUND:
            continue
        if value is not None and str(value).strip():
            return value
        if first_present is _NOT_FOUND:
            first_present = value
    if depth == 0:
        for key in NESTED_KEYS:
            nested = _field(item, key)
            if nested is _NOT_FOUND or nested is None:
                continue
            value = _find_id(nested, depth + 1)
            if value is not _NOT_FOUND and value is not None and str(value).strip():
                return value
            if first_present is _NOT_FOUND:
                first_present = value
    return first_present


def _usable_id(value: Any, item: Any) -> str:
    if value is None or value is _NOT_FOUND or not str(value).strip():
        raise EngineError(f"no usable document id in the result {_short(item)} (the id reads as {value!r})")
    return str(value)


def _score(value: Any, item: Any) -> float | None:
    if value is None or value is _NOT_FOUND:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise EngineError(f"the score of the result {_short(item)} is not a number: {value!r}") from None
    except OverflowError:  # an integer no double holds
        raise EngineError(f"the score of the result {_short(item)} is beyond the range of a floating-point number "
                          "(about 1.8e308)") from None


def _short(item: Any, limit: int = 120) -> str:
    text = repr(item)
    return text if len(text) <= limit else text[: limit - 3] + "..."
