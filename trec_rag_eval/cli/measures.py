"""``trec-rag-eval measures``: every measure of the registry, generated from it (never by hand)."""

from __future__ import annotations

import sys

import click

# its commands and their lines in `trec-rag-eval --help`, read without importing this module (cli.commands)
COMMANDS = {"measures": "List every measure with its definition and names."}


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--markdown", is_flag=True, help="Print the measure table of the documentation (Markdown).")
def measures_command(markdown: bool) -> None:
    """List every measure: definition, parameters, reference, and its names in our notation,
    in ir-measures and in trec_eval.

    \b
    Both notations are accepted by -m: trec_eval's (P.5,10  ndcg_cut.10  map) and
    ir-measures' (P@5  nDCG(dcg='exp-log2')@10  AP). Parameters: Name(key=value,...)@k.
    """
    from trec_rag_eval.io.atomic import write_stream
    from trec_rag_eval.render.measures import markdown_table, measure_list

    write_stream(markdown_table() if markdown else measure_list(), sys.stdout)
