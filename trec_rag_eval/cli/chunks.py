"""The chunk -> document options every evaluating command shares: ``--doc-id-pattern`` and ``--doc-map``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from trec_rag_eval.cli.params import LocalPath


def doc_map_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--doc-id-pattern REGEX`` and ``--doc-map FILE`` (passed as ``doc_id_pattern``, and ``doc_map`` a ``Path``,
    so that it is not taken for a pattern): the library's keywords, which it checks (one of the two)."""
    function = click.option(
        "--doc-map", "doc_map", type=LocalPath(exists=True, dir_okay=False), default=None,
        metavar="FILE",
        help="Map retrieved chunk ids to document ids: chunk_id<TAB>doc_id lines, a JSON object "
             "{chunk_id: doc_id} (or a list of {chunk_id, doc_id}), or a Parquet file with those "
             "columns. Each document then counts once, at its best chunk's rank and score.",
    )(function)
    return click.option(
        "--doc-id-pattern", "doc_id_pattern", default=None, metavar="REGEX",
        help="Map retrieved chunk ids to document ids with a regular expression whose first group is "
             "the document id, e.g. '^(.*)#\\d+$' or '^(.*)::p\\d+$'. Ids it does not match are kept "
             "and counted. Qrels that judge chunk ids are used as they are.",
    )(function)


def id_key_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--id-key KEY.PATH`` (passed as ``id_key``): the library's ``id=``."""
    return click.option(
        "--id-key", "id_key", default=None, metavar="KEY.PATH",
        help="Where each result of JSON results keeps its document id when none of the usual keys (id, "
             "doc_id, docid, ...) does: a key path, e.g. metadata.source (LangChain documents saved as JSON).",
    )(function)
