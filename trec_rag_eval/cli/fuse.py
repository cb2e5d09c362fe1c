"""``trec-rag-eval fuse RUN... -o FUSED``: a thin click layer over ``trec_rag_eval.api.fuse``."""

from __future__ import annotations

import sys
from typing import Any

import click

from trec_rag_eval.api import check_outputs
from trec_rag_eval.cli import options as common
from trec_rag_eval.cli.llm import judgments_option
from trec_rag_eval.cli.params import SEED, InputPath, Integer, QrelsPath, Real
from trec_rag_eval.io.atomic import write_stream
from trec_rag_eval.render.fusion import fusion_text

# its commands and their lines in `trec-rag-eval --help`, read without importing this module (cli.commands)
COMMANDS = {"fuse": "Fuse runs into one (RRF, CombSUM/MNZ, weighted sum, Borda, ...)."}

METHOD_CHOICES = ("rrf", "combsum", "combmnz", "combmax", "combmin", "combanz", "wsum", "borda", "isr",
                  "sum", "mnz", "max", "min", "anz", "bordafuse")
NORM_CHOICES = ("minmax", "zscore", "sum", "max", "rank", "none", "min-max", "zmuv")


class NumberList(click.ParamType):
    """Comma-separated numbers: ``0.3,0.7``."""

    name = "numbers"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> list[float]:
        if isinstance(value, list):
            return value
        number = Real(0.0)
        return [number.convert(part.strip(), param, ctx) for part in str(value).split(",")]


@click.command("fuse")
@click.argument("runs", nargs=-1, required=True, type=InputPath(exists=True, dir_okay=False, allow_dash=True))
@common.output("Where to write the fused run (refuses to overwrite without --force; never one of the inputs).",
               required=True, metavar="FUSED")
@click.option("--method", type=click.Choice(METHOD_CHOICES), default="rrf", show_default=True,
              help="Fusion method (ranx's names sum, mnz, max, min, anz, bordafuse are accepted).")
@click.option("--norm", type=click.Choice(NORM_CHOICES), default=None,
              help="Score normalisation per run and query before a score method [default: minmax]; "
                   "rrf, isr and borda read ranks and ignore it.")
@click.option("--k", "k", type=Real(0.0), default=None, help="RRF's constant: 1 / (k + rank) [default: 60].")
@click.option("--weights", type=NumberList(), default=None, metavar="W1,W2,...",
              help="One weight per run, in the order given (wsum, rrf). wsum's default: equal weights.")
@click.option("--depth", type=Integer(1), default=None, metavar="N", help="Keep the top N documents of each query.")
@click.option("--run-tag", default=None, help="Run tag of the fused run [default: fused-METHOD].")
@click.option("--optimize", "optimize", type=QrelsPath(exists=True), default=None, metavar="QRELS",
              help="Choose wsum's weights or rrf's k on these judgments by cross-validation over queries, "
                   "and write the run with the setting chosen on all queries.")
@click.option("-m", "--measure", default="nDCG@10", show_default=True, help="The measure --optimize maximises.")
@click.option("--folds", type=Integer(2, 1_000_000), default=5, show_default=True,
              help="Folds of the cross-validation.")
@click.option("--seed", type=SEED, default=42, show_default=True, help="Seed of the split into folds.")
@click.option("--step", type=Real(0.0, 1.0, open=False), default=0.1, show_default=True,
              help="Grid step of wsum's weights (every vector of multiples of STEP summing to 1).")
@click.option("--ks", type=NumberList(), default=None, metavar="K1,K2,...",
              help="Values of k rrf tries [default: 1,2,5,10,20,...,100].")
@click.option("--write-format", "write_format", type=click.Choice(["trec", "json", "parquet"]), default=None,
              help="Format of FUSED [default: from its suffix: .json/.jsonl JSON results, .parquet Parquet, "
                   "else a TREC run].")
@common.level("With --optimize: lowest judgment that counts as relevant.")
@common.run_format()
@common.qrels_format()
@judgments_option
@common.force("Allow -o to replace an existing file (never an input).")
def fuse_command(runs: tuple[str, ...], output: str, method: str, norm: str | None, k: float | None,
                 weights: list[float] | None, depth: int | None, run_tag: str | None, optimize: str | None,
                 measure: str, folds: int, seed: int, step: float, ks: list[float] | None,
                 write_format: str | None, relevance_level: int, run_format: str, qrels_format: str,
                 judgments: str | None, force: bool) -> None:
    """Fuse two or more runs into one (hybrid search) and write it.

    \b
    trec-rag-eval fuse bm25.txt dense.txt -o hybrid.txt                  (RRF, k = 60)
    trec-rag-eval fuse --method wsum --weights 0.3,0.7 bm25.txt dense.txt -o hybrid.txt
    trec-rag-eval fuse --method combmnz --norm zscore A B C -o fused.txt
    trec-rag-eval fuse --method wsum --optimize qrels.txt A B -o tuned.txt

    \b
    Methods (s: a run's normalised score, r: its rank, m: runs that retrieved the document):
      rrf      sum of w / (k + r)                  combsum  sum of s
      combmnz  m * sum of s                        combanz  sum of s / m
      combmax  max of s                            combmin  min of s
      wsum     sum of w * s                        isr      m * sum of 1 / r^2
      borda    sum of C - r + 1 points (C: documents of the query; (C - n + 1) / 2 where a run of n misses it)
    Input ranks follow trec_eval (score descending, then doc id descending); the fused run is
    ordered by fused score, ties by doc id descending.

    --optimize QRELS chooses wsum's weights (a grid of --step) or rrf's k (--ks) by --folds-fold
    cross-validation over queries on -m, prints the held-out score beside the training one, and
    writes the run with the setting chosen on all queries.
    """
    from trec_rag_eval import api

    check_outputs([output], force, [*runs, optimize])  # before any work
    tables = [api.read_run(path, None if run_format == "auto" else run_format) for path in runs]
    qrels = None
    views: dict[str, Any] = {"judgments": judgments}  # without --optimize, the library refuses --judgments
    if optimize is not None:  # the judgments chosen as they are read
        qrels = api.read_qrels(optimize, None if qrels_format == "auto" else qrels_format, judgments=judgments)
        views = {}
    fusion = api.fuse(tables, method, norm, k, weights, depth=depth, run_tag=run_tag, optimize=qrels,
                      measure=measure, folds=folds, seed=seed, step=step, ks=ks,
                      relevance_level=relevance_level, **views)
    fusion.write(output, write_format, force=force)
    write_stream(fusion_text(fusion) + f"Wrote {output}: {fusion.n_documents} documents for {fusion.n_queries} "
                 f"queries\n", sys.stdout)
