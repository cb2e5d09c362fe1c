"""The command line's checks before any work, in the library's words: each input it names (``check_input``), its
outputs against its inputs (``check_outputs``), what compare is asked to show (``check_compare``), the cross-check's
options (``check_crosscheck``)."""

from __future__ import annotations

import os
from collections.abc import Sequence

__all__ = ["check_input", "check_outputs", "check_compare", "check_crosscheck"]
"""The facade's names this module holds: ``trec_rag_eval.api`` takes them all (``api.<name>``)."""


def check_input(path: str, folder: bool = False) -> None:
    """Before any work: refuse an input named by a local path that is missing, cannot be read, or is a folder
    where ``folder`` is not allowed, in the words its reader would use (``io.sources.check_local_input``); a URL,
    an ``irds:`` name or a pipe is left to its reader."""
    from trec_rag_eval.io.sources import check_local_input

    check_local_input(path, folder)


def check_outputs(outputs: Sequence[str | os.PathLike[str] | None], force: bool = False,
                  inputs: Sequence[str | os.PathLike[str] | None] = (),
                  progress: Sequence[str | os.PathLike[str] | None] = ()) -> None:
    """Before any work: refuse every output (and ``progress`` file) that would replace or join what
    is read: an input, a file inside an input folder, or a file an input brings along (its
    ``.llm.tsv`` judgments, a BEIR TSV's ``queries.jsonl``), whatever the spelling (links
    included); outputs that exist unless ``force``; two outputs naming one file
    (``io.output_checks.check_outputs_against_inputs``)."""
    from trec_rag_eval.io.output_checks import check_outputs_against_inputs

    check_outputs_against_inputs(outputs, force, inputs, progress)


def check_compare(pairs: str = "baseline", *, per_query: bool = False, plot: str | os.PathLike[str] | None = None
                  ) -> None:
    """Before any work: refuse what the compare command is asked to show that the pairs compared do not have (each
    query's deltas, their figure: only deltas to a baseline have them), as ``compare`` refuses an interval of every
    pair (``service.analyses.check_pairs``)."""
    from trec_rag_eval.service.analyses import check_pairs

    check_pairs(pairs, {}, {"per_query": per_query, "plot": plot})


def check_crosscheck(qrels_format: str | None = None, shards: bool = False) -> None:
    """Before any work: refuse a cross-check of runs evaluated with these options of ``evaluate_many`` (judgments
    ir-measures cannot read, runs in pieces): the evaluate command's ``--crosscheck``, ``crosscheck`` of each run
    it evaluated (``service.analyses.check_crosscheck_options``, which ``crosscheck`` also calls)."""
    from trec_rag_eval.service.analyses import check_crosscheck_options

    check_crosscheck_options(qrels_format, shards)
