"""Chunk -> document mapping: score a run of chunk ids against judgments made per document.

Retrievers return chunks (``doc_install_python#3``, ``doc_install_python::p2`` or opaque node ids)
while datasets judge documents. ``collapse_run`` maps every retrieved id to its document and keeps
each document once per query, at its best chunk's score (hence its best rank); the ranking then
orders the documents by the usual rule (score descending, doc id descending in byte order), so two
documents whose best chunks tie are ordered by document id, never by chunk id.

Decided here once:
- The mapping is a ``DocIdMap``: a regular expression whose first group is the document id
  (searched, so anchor it yourself: ``'^(.*)#\\d+$'``), a ``chunk_id -> doc_id`` table (TSV, JSON
  or Parquet file, or a dict), or any callable returning the document id or None.
- An id the mapping does not cover (no match, not in the table, None) is kept as it is: it may
  already be a document id. Such ids are counted and reported, never dropped.
- Judgments per chunk are left alone: when most judged ids of the qrels are themselves chunk ids
  (the mapping turns them into another id), the run is not collapsed and the report says so.
- The collapse is a transform on the Run, done before the ranking; the kernels never see chunks.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trec_rag_eval.errors import InputFormatError, UsageError
from trec_rag_eval.io.text import read_text, spooled
from trec_rag_eval.syntax import FIELD_SEPARATORS
from trec_rag_eval.tables import Qrels, Run, column_head, column_list, derived, duplicate_error, run_columns

if TYPE_CHECKING:
    import polars as pl

UNJUDGED_WARNING_SHARE = 0.5
"""A mapping warns when, after it, more than this share of the distinct retrieved documents are judged
for no query AND fewer than this share of the queries retrieve a document judged for them: the
mapping most likely produces ids the qrels do not use. Either alone is normal with sparse judgments
(a few per query, as in the French RAG tutorial's dataset): most retrieved documents are then judged nowhere."""


class DocIdMap:
    """chunk_id -> doc_id, or None when the mapping does not cover the id; ``str()`` describes it."""

    def __init__(self, function: Callable[[str], Any], description: str, *, pattern: re.Pattern[str] | None = None,
                 table: dict[str, str] | None = None) -> None:
        self._function = function
        self.description = description
        self._pattern = pattern      # applied by ``io.patterns`` (Python's semantics, bounded time)
        self._table = table

    def __call__(self, chunk_id: str) -> str | None:
        if self._pattern is not None:
            return self.map_ids([chunk_id])[0]
        doc_id = self._function(chunk_id)
        return None if doc_id is None or doc_id == "" else str(doc_id)

    def map_ids(self, ids: list[str]) -> list[str | None]:
        """The document of each id, None where the mapping does not cover it; a pattern is applied
        to all of them at once (``io.patterns``: Python's ``re`` semantics, bounded time)."""
        if self._pattern is not None:
            from trec_rag_eval.io.patterns import first_groups

            return [group or None for group in first_groups(self._pattern, ids)]
        return [self(chunk_id) for chunk_id in ids]

    def __str__(self) -> str:
        return self.description

    def series(self, ids: pl.Series) -> pl.Series:
        """The document of each id of a polars Series, null where the mapping does not cover it.

        A pattern means what Python's ``re`` makes of it, whatever the ids (``io.patterns`` runs it
        in polars' engine only where that is provably the same, and bounds Python's time); a
        callable runs once per distinct id."""
        import polars as pl

        if self._table is not None:
            return ids.replace_strict(self._table, default=None, return_dtype=pl.Utf8)
        if self._pattern is not None:
            from trec_rag_eval.io.patterns import extract_first_group

            extracted = extract_first_group(self._pattern, ids)
            return pl.select(pl.when(extracted == "").then(None).otherwise(extracted)).to_series().alias(ids.name)
        distinct = ids.unique().to_list()
        table = {chunk_id: self(chunk_id) for chunk_id in distinct}
        return ids.replace_strict(table, default=None, return_dtype=pl.Utf8)

    def __repr__(self) -> str:
        return f"DocIdMap({self.description})"

    @classmethod
    def from_pattern(cls, pattern: str | re.Pattern[str]) -> DocIdMap:
        """The first group of ``pattern`` (``re.search``) is the document id."""
        if isinstance(pattern, str):
            try:
                compiled = re.compile(pattern)
            except re.error as err:
                raise UsageError(f"the document id pattern '{pattern}' is not a regular expression: {err}") from None
        else:
            compiled = pattern
        if compiled.groups < 1:
            raise UsageError(
                f"the document id pattern '{compiled.pattern}' has no group: put the document id in "
                r"parentheses, e.g. '^(.*)#\d+$'"
            )

        if not isinstance(compiled.pattern, str):
            raise UsageError(f"the document id pattern {compiled.pattern!r} must be a text (str) pattern, not bytes")

        def document(chunk_id: str) -> str | None:
            match = compiled.search(chunk_id)
            return None if match is None else match.group(1)

        return cls(document, f"pattern '{compiled.pattern}'", pattern=compiled)

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, str], source: str = "<mapping>") -> DocIdMap:
        """A table ``{chunk_id: doc_id}``; ids not in it are not covered. Ids are strings or integers
        (None, a list, a boolean or a float is refused: it is no id), and ``1`` and ``"1"`` mapped to
        different documents are refused as two places mapping one chunk."""
        table: dict[str, str] = {}
        key_of: dict[str, Any] = {}
        for chunk, doc in mapping.items():
            for value, what in ((chunk, "chunk id"), (doc, f"document id of chunk {chunk!r}")):
                if isinstance(value, bool) or not isinstance(value, (str, int)):
                    raise UsageError(f"doc_map {source}: the {what} must be a string or an integer, got {value!r}")
                if value == "":
                    raise UsageError(f"doc_map {source}: the {what} is empty")
            text, target = str(chunk), str(doc)
            if text in table and table[text] != target:
                raise UsageError(f"doc_map {source}: chunk {key_of[text]!r} and chunk {chunk!r} are one id "
                                 f"{text!r} mapped to {table[text]!r} and to {target!r}")
            table[text] = target
            key_of.setdefault(text, chunk)
        return cls(table.get, f"map {source} ({len(table)} chunks)", table=table)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> DocIdMap:
        """Read a map file (see ``read_doc_map``)."""
        return cls.from_mapping(read_doc_map(path), os.fspath(path))


def as_doc_map(value: Any) -> DocIdMap | None:
    """A ``DocIdMap`` from what the Python API accepts: a DocIdMap, a regular expression (``str``
    or compiled), a path to a map file (``os.PathLike``), a dict, or a callable; None stays None."""
    if value is None or isinstance(value, DocIdMap):
        return value
    if isinstance(value, (str, re.Pattern)):
        return DocIdMap.from_pattern(value)
    if isinstance(value, os.PathLike):
        return DocIdMap.from_file(value)
    if isinstance(value, Mapping):
        return DocIdMap.from_mapping(value)
    if callable(value):
        return DocIdMap(value, f"function {getattr(value, '__name__', type(value).__name__)}")
    raise UsageError(
        "a document id mapping must be a regular expression, a path to a map file, a dict or a "
        f"callable; got {type(value).__name__}"
    )


# --- map files ------------------------------------------------------------------------------------

_HEADER_WORDS = {"chunk_id", "chunk-id", "chunk", "passage_id", "node_id", "segment_id", "id"}
_CHUNK_KEYS = ("chunk_id", "chunk", "passage_id", "node_id", "segment_id", "id")
_DOC_KEYS = ("doc_id", "document_id", "docid", "doc", "document", "corpus_id")


def read_doc_map(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read a chunk -> document map: TSV, JSON or Parquet, chosen by the content (Parquet by its
    ``PAR1`` magic).

    - TSV: ``chunk_id<TAB>doc_id`` a line, an optional header (``chunk_id<TAB>doc_id``).
    - JSON: an object ``{"chunk_id": "doc_id"}``, or a list of ``{"chunk_id", "doc_id"}`` objects
      (also ``node_id``/``passage_id``/``segment_id``/``id`` and ``document_id``/``docid``).
    - Parquet (needs polars): columns ``chunk_id`` and ``doc_id`` (or the names above), else the
      first two columns.

    A chunk mapped twice to different documents is an error naming both places.
    """
    name = os.fspath(path)
    kept = spooled(name)  # a pipe (--doc-map <(...)) is read once
    try:
        if kept is not None:
            magic = kept[:4]
        else:
            with open(name, "rb") as handle:
                magic = handle.read(4)
    except OSError as err:
        raise InputFormatError(name, None, f"cannot read the map file: {err.strerror or err}") from None
    if magic == b"PAR1":
        return _read_parquet_map(name)
    text = read_text(name)
    if text.lstrip()[:1] in ("{", "["):
        return _read_json_map(name)
    return _read_tsv_map(name, text)


def _add(table: dict[str, str], where: dict[str, str], chunk: str, doc: str, path: str, place: str,
         line_no: int | None, line: str | None) -> None:
    """``place``: "line 3" of a text file, "row 3" of Parquet, "item 3" of a JSON list, or for a JSON
    object "chunk 'c3'"; said before the reason when there is no ``line_no`` to cite."""
    prefix = f"{place}: " if line_no is None else ""
    if not chunk or not doc:
        raise InputFormatError(path, line_no, f"{prefix}empty chunk id or document id", line)
    if chunk in table and table[chunk] != doc:
        reason = f"chunk {chunk!r} is mapped to {table[chunk]!r} ({where[chunk]}) and to {doc!r}"
        raise InputFormatError(path, line_no, prefix + reason, line)
    table[chunk] = doc
    where.setdefault(chunk, place)


def _read_tsv_map(path: str, text: str) -> dict[str, str]:
    table: dict[str, str] = {}
    where: dict[str, str] = {}
    first = True
    for line_no, raw in enumerate(text.split("\n"), start=1):  # lines end at \n only, as in TREC files
        line = raw.rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            reason = f"expected 2 tab-separated columns (chunk_id doc_id), got {len(fields)}"
            raise InputFormatError(path, line_no, reason, line)
        chunk, doc = (f.strip(FIELD_SEPARATORS) for f in fields)  # a no-break space is part of an id
        if first and chunk.lower() in _HEADER_WORDS and doc.lower() in _DOC_KEYS:
            first = False
            continue  # the header
        first = False
        _add(table, where, chunk, doc, path, f"line {line_no}", line_no, line)
    if not table:
        raise InputFormatError(path, None, "the map file maps no chunk")
    return table


def _read_json_map(path: str) -> dict[str, str]:
    """An object ``{"chunk_id": "doc_id"}``, or an array (or JSONL) of ``{"chunk_id", "doc_id"}``
    objects. Ids are strings or integers, as in datasets: null, a list, a boolean or a fraction is
    refused with its line; so is a key given twice in one object. An object with a chunk key and a
    document key (``_CHUNK_KEYS``, ``_DOC_KEYS``) is one row: a JSONL file of one line."""
    from trec_rag_eval.io.json.rows import check_id, entry_error, json_excerpt, row_entries
    from trec_rag_eval.io.json.scanner import parse_document

    document = parse_document(path)   # refuses a repeated key, NaN and the like, with the line
    keys = {entry.key for entry in document.entries} if document.kind == "object" else set()
    by_chunk = document.kind == "object" and not (keys & set(_CHUNK_KEYS) and keys & set(_DOC_KEYS))
    table: dict[str, str] = {}
    where: dict[str, str] = {}
    for entry in document.entries if by_chunk else row_entries(document):
        if by_chunk:
            chunk, doc = check_id(path, entry, "the chunk id", entry.key), entry.value
        else:
            item = entry.value
            chunk_key = next((k for k in _CHUNK_KEYS if isinstance(item, dict) and k in item), None)
            doc_key = next((k for k in _DOC_KEYS if isinstance(item, dict) and k in item), None)
            if chunk_key is None or doc_key is None:
                raise entry_error(path, entry, f'expected {{"chunk_id": ..., "doc_id": ...}}, got {json_excerpt(item)}')
            chunk, doc = check_id(path, entry, f"the chunk id ({chunk_key})", item[chunk_key]), item[doc_key]
        doc = check_id(path, entry, "the document id", doc)
        place = f"line {entry.line}" if entry.line is not None else entry.where()
        _add(table, where, chunk, doc, path, place, entry.line, None)
    if not table:
        raise InputFormatError(path, None, "the map file maps no chunk")
    return table


def _read_parquet_map(path: str) -> dict[str, str]:
    import polars as pl

    try:
        frame = pl.read_parquet(path)
    except Exception as err:  # noqa: BLE001 - polars raises several kinds for a broken file
        raise InputFormatError(path, None, f"cannot read the Parquet file: {err}") from None
    columns = frame.columns
    chunk_col = next((c for c in _CHUNK_KEYS if c in columns), None)
    doc_col = next((c for c in _DOC_KEYS if c in columns), None)
    if chunk_col is None or doc_col is None:
        if len(columns) < 2:
            raise InputFormatError(path, None, f"expected columns chunk_id and doc_id, got {columns}")
        chunk_col, doc_col = columns[0], columns[1]
    table: dict[str, str] = {}
    where: dict[str, str] = {}
    chunks = frame[chunk_col].cast(pl.Utf8).to_list()
    docs = frame[doc_col].cast(pl.Utf8).to_list()
    for row, (chunk, doc) in enumerate(zip(chunks, docs, strict=True), start=1):  # as io.parquet numbers rows
        _add(table, where, chunk or "", doc or "", path, f"row {row}", None, None)
    if not table:
        raise InputFormatError(path, None, "the map file maps no chunk")
    return table


# --- the collapse ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CollapseReport:
    """What mapping a run's chunk ids to documents did.

    ``collapsed``: False when the qrels judge chunk ids themselves (the run is left as it was).
    ``rows_in``/``rows_out``: run rows before and after; ``merged`` = rows_in - rows_out, the
    chunks that met a better chunk of the same document for the same query.
    ``unmapped``: (id, times retrieved) for retrieved ids the mapping does not cover, most
    frequent first; ``queries_with_judged`` of the ``queries_with_results`` retrieve a document
    judged for them; ``unknown_share``: share of the distinct retrieved ids (after mapping) that no
    query of the qrels judges.
    """

    mapping: str
    collapsed: bool
    rows_in: int
    rows_out: int
    distinct_ids: int
    mapped_ids: int
    unmapped: tuple[tuple[str, int], ...] = ()
    unknown_share: float = 0.0
    chunk_judgments: int = 0
    judged_ids: int = 0
    queries_with_results: int = 0
    queries_with_judged: int = 0

    @property
    def merged(self) -> int:
        return self.rows_in - self.rows_out

    @property
    def unmapped_rows(self) -> int:
        return sum(count for _, count in self.unmapped)

    def warnings(self) -> list[str]:
        """Lines for stderr: unmapped ids (counted, the most frequent named), per-chunk judgments,
        and a mapping that leaves most retrieved ids unknown to the qrels."""
        out = []
        if not self.collapsed:
            out.append(
                f"the qrels judge chunk ids ({self.chunk_judgments} of {self.judged_ids} judged ids are "
                f"chunks under {self.mapping}): judgments per chunk are used as they are, no collapse"
            )
            return out
        if self.unmapped:
            shown = ", ".join(f"{doc_id} ({count})" for doc_id, count in self.unmapped[:5])
            more = f", ... ({len(self.unmapped) - 5} more)" if len(self.unmapped) > 5 else ""
            out.append(
                f"{len(self.unmapped)} of {self.distinct_ids} retrieved ids ({self.unmapped_rows} rows) are not "
                f"covered by {self.mapping} and were kept as they are: {shown}{more}"
            )
        if (self.unknown_share > UNJUDGED_WARNING_SHARE
                and self.queries_with_judged < UNJUDGED_WARNING_SHARE * self.queries_with_results):
            out.append(
                f"after mapping with {self.mapping}, only {self.queries_with_judged} of {self.queries_with_results} "
                f"queries retrieve a document judged for them and {self.unknown_share:.1%} of the retrieved "
                "documents are judged for no query: check that the mapping gives the ids the qrels use"
            )
        return out

    def summary(self) -> str:
        """One line: what the collapse did."""
        if not self.collapsed:
            return f"chunk ids mapped by {self.mapping}: not collapsed (the qrels judge chunks)"
        return (
            f"chunk ids mapped by {self.mapping}: {self.rows_in} retrieved chunks -> {self.rows_out} documents "
            f"({self.merged} chunks of an already retrieved document merged, {len(self.unmapped)} ids unmapped)"
        )


def _map_distinct(mapping: DocIdMap, distinct: list[str]) -> tuple[dict[str, str], set[str]]:
    """Each distinct id -> its document (itself when the mapping does not cover it), and the ids not
    covered. The mapping runs once per distinct id: a run repeats ids across queries."""
    doc_of: dict[str, str] = {}
    unmapped: set[str] = set()
    for doc_id, target in zip(distinct, mapping.map_ids(distinct), strict=True):
        if target is None:
            unmapped.add(doc_id)
            target = doc_id
        doc_of[doc_id] = target
    return doc_of, unmapped


def judges_chunks(qrels: Qrels, mapping: DocIdMap) -> tuple[int, int]:
    """(judged ids that the mapping turns into another id, distinct judged ids) of the qrels."""
    judged = list(dict.fromkeys(column_list(qrels, "doc_id")))
    chunks = 0
    for doc_id, target in zip(judged, mapping.map_ids(judged), strict=True):
        if target is not None and target != doc_id:
            chunks += 1
    return chunks, len(judged)


def collapse_run(run: Run, mapping: Any, qrels: Qrels | None = None) -> tuple[Run, CollapseReport]:
    """Map the run's ids to documents and keep each document once per query, at its best score.

    ``mapping`` is anything ``as_doc_map`` takes. With ``qrels``, judgments per chunk are detected
    (then the run is returned as it is) and the share of retrieved documents no query judges is
    reported. Rows keep their first-appearance order; the ranking re-sorts them anyway.
    """
    doc_map = as_doc_map(mapping)
    if doc_map is None:
        raise UsageError("collapse_run needs a mapping")
    judged = _Judged(qrels, *(judges_chunks(qrels, doc_map) if qrels is not None else (0, 0)))
    if isinstance(run.data, dict):   # small runs as lists: no polars needed
        return _collapse_lists(run, doc_map, judged)
    return _collapse_frame(run, doc_map, judged)


@dataclass(frozen=True)
class _Judged:
    qrels: Qrels | None
    chunk_judgments: int
    judged_ids: int

    @property
    def per_chunk(self) -> bool:
        """Most judged ids are chunks: the judgments are per chunk, the run is left alone."""
        return self.judged_ids > 0 and self.chunk_judgments * 2 > self.judged_ids


@dataclass(frozen=True)
class _Found:
    """What the collapsed run retrieved, against the qrels: for the warning of a wrong mapping."""

    unknown_share: float = 0.0
    queries_with_results: int = 0
    queries_with_judged: int = 0


def _report(doc_map: DocIdMap, judged: _Judged, rows_in: int, rows_out: int | None, distinct: int,
            counts: dict[str, int], found: Callable[[Qrels], _Found]) -> CollapseReport:
    """The report; ``rows_out`` None when the qrels judge chunks (nothing is collapsed then).
    ``found(qrels)`` is asked only when there are qrels and a collapse."""
    unmapped = tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
    seen = found(judged.qrels) if rows_out is not None and judged.qrels is not None else _Found()
    return CollapseReport(str(doc_map), rows_out is not None, rows_in, rows_in if rows_out is None else rows_out,
                          distinct, distinct - len(unmapped), unmapped, seen.unknown_share, judged.chunk_judgments,
                          judged.judged_ids, seen.queries_with_results, seen.queries_with_judged)


def _found_in_lists(best: dict[tuple[str, str], float], qrels: Qrels) -> _Found:
    columns = [column_list(qrels, name) for name in ("query_id", "doc_id", "relevance")]
    pairs = {(q, d) for q, d, r in zip(*columns, strict=True) if r >= 0}
    documents = {d for _, d in best}
    return _Found(len(documents - set(columns[1])) / len(documents) if documents else 0.0,
                  len({q for q, _ in best}), len({q for q, d in best if (q, d) in pairs}))


def _found_in_frame(merged: pl.DataFrame, qrels: Qrels) -> _Found:
    import polars as pl

    judged = qrels.frame.filter(pl.col("relevance") >= 0).select("query_id", "doc_id")
    documents = merged.select(pl.col("doc_id").unique())
    known = documents.join(qrels.frame.select(pl.col("doc_id").unique()), on="doc_id", how="semi").height
    unknown = 1 - known / documents.height if documents.height else 0.0
    hits = merged.join(judged, on=["query_id", "doc_id"], how="semi")["query_id"].n_unique()
    return _Found(float(unknown), merged["query_id"].n_unique(), hits)


def _collapse_lists(run: Run, doc_map: DocIdMap, judged: _Judged) -> tuple[Run, CollapseReport]:
    doc_ids = column_list(run, "doc_id")
    distinct = list(dict.fromkeys(doc_ids))
    doc_of, not_covered = _map_distinct(doc_map, distinct)
    counts = dict(Counter(doc_id for doc_id in doc_ids if doc_id in not_covered)) if not_covered else {}
    if judged.per_chunk:
        return run, _report(doc_map, judged, len(doc_ids), None, len(distinct), counts, lambda _: _Found())
    # each (query, document) keeps its best chunk's score; NaN never wins over a real score
    best: dict[tuple[str, str], float] = {}
    seen: set[tuple[str, str]] = set()
    for query_id, doc_id, score in zip(column_list(run, "query_id"), doc_ids, column_list(run, "score"),
                                       strict=True):
        if (query_id, doc_id) in seen:  # a chunk listed twice is an error, as without a map (trec_eval's rule)
            raise duplicate_error(run, query_id, doc_id)
        seen.add((query_id, doc_id))
        key = (query_id, doc_of[doc_id])
        kept = best.get(key)
        if kept is None or score > kept or (math.isnan(kept) and not math.isnan(score)):
            best[key] = score
    collapsed = Run(run_columns([(q, d, float(score)) for (q, d), score in best.items()]), run.run_tag, run.source,
                    empty_queries=run.empty_queries)
    return collapsed, _report(doc_map, judged, len(doc_ids), len(best), len(distinct), counts,
                              lambda qrels: _found_in_lists(best, qrels))


def _collapse_frame(run: Run, doc_map: DocIdMap, judged: _Judged) -> tuple[Run, CollapseReport]:
    import numpy as np
    import polars as pl

    frame = run.frame
    # a chunk listed twice is an error, as without a map (trec_eval's rule): told by sorted 64-bit hashes of
    # the pairs (a tenth of the time of polars' exact test, which runs only when two hashes are equal)
    hashes = np.sort(frame.select("query_id", "doc_id").hash_rows(seed=20240607).to_numpy())
    if bool(np.any(hashes[1:] == hashes[:-1])):
        again = frame.select((~pl.struct("query_id", "doc_id").is_first_distinct()).arg_true().first()).item()
        if again is not None:
            raise duplicate_error(run, frame["query_id"][again], frame["doc_id"][again])
    documents = doc_map.series(frame["doc_id"])
    uncovered = frame.filter(documents.is_null()).group_by("doc_id").len()
    counts = dict(zip(uncovered["doc_id"].to_list(), uncovered["len"].to_list(), strict=True))
    distinct = frame["doc_id"].n_unique()
    if judged.per_chunk:
        return run, _report(doc_map, judged, frame.height, None, distinct, counts, lambda _: _Found())
    merged = (frame.with_columns(documents.fill_null(frame["doc_id"]).alias("doc_id"))
              .group_by(["query_id", "doc_id"], maintain_order=True)
              .agg(pl.col("score").max()))       # polars' max skips NaN, as the list form does
    report = _report(doc_map, judged, frame.height, merged.height, distinct, counts,
                     lambda qrels: _found_in_frame(merged, qrels))
    return Run(merged, run.run_tag, run.source, empty_queries=run.empty_queries), report


_SUFFIX = re.compile(r"([^A-Za-z0-9]+)((?:[A-Za-z]+[^A-Za-z0-9]*)?)(\d+)")
"""A chunk suffix: a separator, an optional word (and its own separator), a number: ``#3``, ``::p2``,
``_chunk_7``."""
HINT_SAMPLE = 1000


def guess_doc_id_pattern(run: Run, qrels: Qrels) -> tuple[str, str, str] | None:
    """When most of the first ``HINT_SAMPLE`` retrieved ids are judged nowhere but look like chunks
    of judged documents (a judged id, a separator, an optional word and a number: ``doc#3``,
    ``doc::p2``, ``doc_chunk_7``), the pattern that maps them, with one example chunk and its
    document; None otherwise. Cheap: it reads a sample of the run, never the whole of it."""
    sample = list(dict.fromkeys(column_head(run, "doc_id", HINT_SAMPLE)))
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
                match = _SUFFIX.fullmatch(chunk_id[cut:])
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
        return derived(qrels, "doc_ids", lambda: frozenset(qrels.data["doc_id"])).intersection(doc_ids)
    import polars as pl

    column = qrels.frame["doc_id"]
    return set(column.filter(column.is_in(pl.Series(doc_ids, dtype=pl.Utf8).implode())).to_list())


def _escape(text: str) -> str:
    """``re.escape`` for the characters that need it only, so a suggested pattern reads as typed
    (``#`` and ``-`` stay as they are outside a character class)."""
    return "".join("\\" + ch if ch in ".^$*+?{}[]\\|()" else ch for ch in text)
