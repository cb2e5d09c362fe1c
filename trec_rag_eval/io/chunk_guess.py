"""A mapping of chunk ids to documents guessed from a run's first ids when none is given
(``guess_doc_id_pattern``): what ``run_outcome.map_chunks`` suggests in a note. Apart from the collapse itself
(``io.chunk_collapse``), which a run is put through only when a mapping is asked for: every evaluation of a
run from a file looks at its ids, few map chunks."""

from __future__ import annotations

import re
from collections import Counter

from trec_rag_eval.tables import Qrels, derived_from

_SUFFIX = r"([^A-Za-z0-9]+)((?:[A-Za-z]+[^A-Za-z0-9]*)?)(\d+)"
"""A chunk suffix: a separator, an optional word (and its own separator), a number: ``#3``, ``::p2``,
``_chunk_7``: compiled on first use (``re``'s cache), by a run whose ids have a separator."""
HINT_SAMPLE = 1000
"""The first retrieved ids of a run the guess reads (``run_outcome.map_chunks`` takes them, ``column_head``)."""


def guess_doc_id_pattern(head: list[str], qrels: Qrels) -> tuple[str, str, str] | None:
    """When most of ``head`` (a run's first ``HINT_SAMPLE`` retrieved ids) are judged nowhere but look like
    chunks of judged documents (a judged id, a separator, an optional word and a number: ``doc#3``,
    ``doc::p2``, ``doc_chunk_7``), the pattern that maps them, with one example chunk and its
    document; None otherwise. Cheap: it reads a sample of the run, never the whole of it. Its caller asks
    only when some id of the sample has a separator (never for MS MARCO's numbers, ``d17``)."""
    sample = list(dict.fromkeys(head))
    known = _judged_among(qrels, sample)
    unknown = [doc_id for doc_id in sample if doc_id not in known]
    if not unknown or len(unknown) * 2 <= len(sample):
        return None
    # where each unknown id could be cut before a separator, longest prefix first; only those
    # prefixes are looked up (none at all for ids without a separator, such as MS MARCO's numbers)
    cuts = {chunk_id: [] if chunk_id.isalnum() else  # one C call for an id without any separator
            [cut for cut in range(len(chunk_id) - 1, 0, -1) if not chunk_id[cut].isalnum()]
            for chunk_id in unknown}
    prefixes = list({chunk_id[:cut] for chunk_id, at in cuts.items() for cut in at})
    judged = _judged_among(qrels, prefixes) if prefixes else set()
    votes: Counter[str] = Counter()
    example: dict[str, tuple[str, str]] = {}
    for chunk_id in unknown:
        # the longest judged prefix that ends just before a separator
        for cut in cuts[chunk_id]:
            if chunk_id[:cut] in judged:
                match = re.fullmatch(_SUFFIX, chunk_id[cut:])
                if match:
                    separator, word, _ = match.groups()  # word: "", "p" or "chunk_"
                    pattern = "^(.*)" + _escape(separator + word) + r"\d+$"
                    votes[pattern] += 1
                    example.setdefault(pattern, (chunk_id, chunk_id[:cut]))
                break
    if not votes:
        return None
    pattern, count = votes.most_common(1)[0]
    if count * 2 <= len(unknown):
        return None
    return pattern, *example[pattern]


def _judged_among(qrels: Qrels, doc_ids: list[str]) -> set[str] | frozenset[str]:
    """The ids of ``doc_ids`` that the qrels judge (for some query); a large qrels table is searched
    for the few ids, not turned into a Python set."""
    if isinstance(qrels.data, dict):  # the judged ids as a set, made once per Qrels
        known = derived_from(qrels)
        if "doc_ids" not in known:
            known["doc_ids"] = frozenset(qrels.data["doc_id"])
        return known["doc_ids"].intersection(doc_ids)  # type: ignore[no-any-return]
    import polars as pl

    column = qrels.frame["doc_id"]
    return set(column.filter(column.is_in(pl.Series(doc_ids, dtype=pl.Utf8).implode())).to_list())


def _escape(text: str) -> str:
    """``re.escape`` for the characters that need it only, so a suggested pattern reads as typed
    (``#`` and ``-`` stay as they are outside a character class)."""
    return "".join("\\" + ch if ch in ".^$*+?{}[]\\|()" else ch for ch in text)
