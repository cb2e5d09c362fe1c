"""Qrels and runs as columnar tables: the one shape every reader produces and every evaluator reads."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import polars as pl

from trec_rag_eval.errors import InputFormatError

QRELS_SCHEMA = {"query_id": pl.Utf8, "iteration": pl.Utf8, "doc_id": pl.Utf8, "relevance": pl.Int64}
RUN_SCHEMA = {"query_id": pl.Utf8, "doc_id": pl.Utf8, "score": pl.Float64}


@dataclass(frozen=True)
class Qrels:
    """Relevance judgments: one row per (query_id, doc_id).

    ``frame`` has the columns of ``QRELS_SCHEMA``. A negative relevance means "in the pool but
    not judged" (trec_eval's convention); 0 means judged non-relevant. ``source`` names the file
    (or other origin) for error messages; ``topics`` optionally maps query_id -> query text.
    """

    frame: pl.DataFrame
    source: str = "<qrels>"
    topics: dict[str, str] | None = field(default=None, compare=False)

    @classmethod
    def from_dict(cls, judgments: dict[str, dict[str, int]], source: str = "<qrels>") -> Qrels:
        """Build from ``{query_id: {doc_id: relevance}}`` (the pytrec_eval / ranx shape)."""
        rows = [(q, "0", d, int(r)) for q, docs in judgments.items() for d, r in docs.items()]
        return cls(pl.DataFrame(rows, schema=QRELS_SCHEMA, orient="row"), source)

    def to_dict(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for q, d, r in self.frame.select("query_id", "doc_id", "relevance").iter_rows():
            out.setdefault(q, {})[d] = r
        return out

    @property
    def query_ids(self) -> list[str]:
        """Query ids in trec_eval order (byte order of the id)."""
        return sorted(self.frame["query_id"].unique().to_list(), key=_byte_key)


@dataclass(frozen=True)
class Run:
    """A ranked result list: one row per (query_id, doc_id) with its score.

    The rank column of a TREC file is not kept: trec_eval ignores it, and so do we. The ranking
    is always rebuilt by score descending, then doc_id descending (see ``core.ranking``).
    ``run_tag`` is the tag of the last line of the file, which trec_eval prints as ``runid``.
    """

    frame: pl.DataFrame
    run_tag: str = "run"
    source: str = "<run>"

    @classmethod
    def from_dict(cls, scores: dict[str, dict[str, float]], run_tag: str = "run", source: str = "<run>") -> Run:
        """Build from ``{query_id: {doc_id: score}}`` (the pytrec_eval / ranx shape)."""
        rows = [(q, d, float(s)) for q, docs in scores.items() for d, s in docs.items()]
        return cls(pl.DataFrame(rows, schema=RUN_SCHEMA, orient="row"), run_tag, source)

    def duplicate_error(self, query_id: str, doc_id: str) -> InputFormatError:
        """The error for a document listed twice for a query, citing both lines when the run
        came from a TREC file."""
        reason = f"document {doc_id!r} listed twice for query {query_id!r}"
        if os.path.isfile(self.source):
            from trec_rag_eval.io.trec import lines_of

            lines = lines_of(self.source, query_id, doc_id)
            if len(lines) >= 2:
                return InputFormatError(self.source, lines[1], f"{reason} (first at line {lines[0]})")
        return InputFormatError(self.source, None, reason)

    def to_dict(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for q, d, s in self.frame.select("query_id", "doc_id", "score").iter_rows():
            out.setdefault(q, {})[d] = s
        return out


def _byte_key(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")
