"""The chunk -> document options every evaluating command shares: ``--doc-id-pattern`` and ``--doc-map``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from trec_rag_eval.errors import UsageError


def doc_map_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--doc-id-pattern REGEX`` and ``--doc-map FILE`` (passed as ``doc_id_pattern``, ``doc_map``)."""
    function = click.option(
        "--doc-map", "doc_map", type=click.Path(exists=True, dir_okay=False), default=None, metavar="FILE",
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


def resolve_doc_map(pattern: str | None, map_file: str | None) -> Any:
    """The ``io.chunks.DocIdMap`` the options ask for, or None."""
    if pattern is not None and map_file is not None:
        raise UsageError("give --doc-id-pattern or --doc-map, not both")
    if pattern is None and map_file is None:
        return None
    from trec_rag_eval.io.chunks import DocIdMap

    return DocIdMap.from_pattern(pattern) if pattern is not None else DocIdMap.from_file(map_file)  # type: ignore[arg-type]


def flag_words(text: str) -> str:
    """A note of the library as the command line says it: ``doc_map='...'`` is ``--doc-id-pattern '...'``."""
    return text.replace("doc_map='", "--doc-id-pattern '")


def collapse_and_echo(run: Any, doc_map: Any, qrels: Any, label: str) -> Any:
    """``runs.map_chunks``, its lines echoed on stderr prefixed by ``label``."""
    from trec_rag_eval.runs import map_chunks

    collapsed, lines = map_chunks(run, doc_map, qrels)
    for line in lines:
        kind, _, text = line.partition(": ")
        click.echo(f"{kind}: {label}: {flag_words(text)}", err=True)
    return collapsed
