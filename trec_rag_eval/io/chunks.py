"""Chunk -> document mapping: score a run of chunk ids against judgments made per document.

Retrievers return chunks (``doc_install_python#3``, ``doc_install_python::p2`` or opaque node ids)
while datasets judge documents. ``io.chunk_collapse.collapse_run`` maps every retrieved id to its document and keeps
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
- The collapse is a transform on the Run, done before the ranking; the kernels never see chunks. What it did is a
  ``CollapseReport`` (``Evaluation.collapse``), here with the mapping: an evaluation's type names it, and the
  collapse itself is imported only when a mapping is given.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trec_rag_eval.errors import InputFormatError, UsageError
from trec_rag_eval.io.sources import read_text, spooled
from trec_rag_eval.notes import Note, note, warning
from trec_rag_eval.syntax import FIELD_SEPARATORS

if TYPE_CHECKING:
    import polars as pl


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


def doc_map_asked(doc_map: Any = None, doc_id_pattern: str | re.Pattern[str] | None = None) -> Any:
    """The one chunk -> document mapping asked for: ``doc_map`` (anything ``as_doc_map`` takes), or
    ``doc_id_pattern``, a regular expression whose first group is the document id (what ``doc_map`` takes as
    a ``str``, named as the command line's ``--doc-id-pattern``); None when neither is given. Both given are
    refused, before anything is read: checked here alone, for every function that takes them."""
    if doc_id_pattern is None:
        return doc_map
    if doc_map is not None:
        raise UsageError("give doc_id_pattern or doc_map, not both", {"doc_id_pattern or doc_map": "doc_map"})
    if not isinstance(doc_id_pattern, (str, re.Pattern)):
        raise UsageError(f"doc_id_pattern must be a regular expression, got {type(doc_id_pattern).__name__}")
    return doc_id_pattern


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


UNJUDGED_WARNING_SHARE = 0.5
"""A mapping warns when, after it, more than this share of the distinct retrieved documents are judged
for no query AND fewer than this share of the queries retrieve a document judged for them: the
mapping most likely produces ids the qrels do not use. Either alone is normal with sparse judgments
(a few per query, as in the French RAG tutorial's dataset): most retrieved documents are then judged nowhere."""


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

    def notes(self) -> list[Note]:
        """What the user is told of the mapping: what it did (a note), then its warnings."""
        return [note(self.summary())] + [warning(text) for text in self.warnings()]

    def summary(self) -> str:
        """One line: what the collapse did."""
        if not self.collapsed:
            return f"chunk ids mapped by {self.mapping}: not collapsed (the qrels judge chunks)"
        return (
            f"chunk ids mapped by {self.mapping}: {self.rows_in} retrieved chunks -> {self.rows_out} documents "
            f"({self.merged} chunks of an already retrieved document merged, {len(self.unmapped)} ids unmapped)"
        )
