"""``trec-rag-eval agree QRELS_A QRELS_B [RUN...]``: a thin click layer over ``trec_rag_eval.api.agree``."""

from __future__ import annotations

import click

from trec_rag_eval.api import check_outputs
from trec_rag_eval.cli import options as common
from trec_rag_eval.cli.params import PROBABILITY, SEED, InputPath, Integer, QrelsPath
from trec_rag_eval.render.output_formats import AGREEMENT, OUTPUT_FORMATS

# its commands and their lines in `trec-rag-eval --help`, read without importing this module (cli.commands)
COMMANDS = {"agree": "Do two sets of judgments agree? Kappa, alpha, and the ranking of systems (tau, tau_AP)."}

VIEWS = ("human", "llm", "both")


class Views(click.ParamType):
    """``A,B``: which judgments of a file ``judge`` wrote each side uses, e.g. ``human,llm``."""

    name = "views"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> tuple[str, str]:
        if isinstance(value, tuple):
            return value  # type: ignore[return-value]
        parts = [part.strip() for part in str(value).split(",")]
        if len(parts) != 2 or any(part not in VIEWS for part in parts):
            self.fail(f"{value!r}: expected two of {', '.join(VIEWS)} separated by a comma (A's, then B's), "
                      "e.g. human,llm", param, ctx)
        return parts[0], parts[1]


@click.command("agree")
@click.argument("qrels_a", type=QrelsPath(exists=True))
@click.argument("qrels_b", type=QrelsPath(exists=True))
@click.argument("runs", nargs=-1, type=InputPath(exists=True, dir_okay=False))
@click.option("-m", "--measure", "measures", multiple=True, metavar="NAME",
              help="Measure whose system ranking is compared (repeatable) [default: nDCG@10, R@5, MRR].")
@click.option("--judgments", type=Views(), default=None, metavar="A,B",
              help="Which judgments of files `judge` wrote each side uses: human, llm or both (e.g. human,llm). "
                   "Given the same judged file twice, the default is human,llm.")
@common.level("Lowest grade that counts as relevant (binary kappa and alpha, binary measures).")
@click.option("--confidence", type=PROBABILITY, default=0.95, show_default=True,
              help="Level of the bootstrap interval of Kendall's tau.")
@click.option("--n-resamples", type=Integer(1, 10_000_000), default=1000, show_default=True,
              help="Bootstrap resamples of the queries.")
@click.option("--seed", type=SEED, default=42, show_default=True, help="Seed of the bootstrap.")
@common.output_options(AGREEMENT, default="text")
@common.run_format()
def agree_command(qrels_a: str, qrels_b: str, runs: tuple[str, ...], measures: tuple[str, ...],
                  judgments: tuple[str, str] | None, relevance_level: int, confidence: float, n_resamples: int,
                  seed: int, output_format: str, output: str | None, run_format: str, force: bool) -> None:
    """Do two sets of judgments agree, on the labels and on the ranking of systems?

    \b
    trec-rag-eval agree human.qrels llm.qrels
    trec-rag-eval agree human.qrels llm.qrels bm25.txt dense.txt hybrid.txt -m nDCG@10
    trec-rag-eval agree judged.qrels judged.qrels RUN...          (judge's output: human vs LLM)
    trec-rag-eval agree --judgments human,both judged.qrels judged.qrels RUN...

    \b
    Labels, on the (query, document) pairs both judge: Cohen's kappa, binary (grade >= -l) and
    linearly weighted over the grades; Krippendorff's alpha (nominal, interval); the confusion
    matrix; the pairs only one side judges.
    Rankings, given runs: for each measure, the runs ordered under A and under B on the queries
    both judge, Kendall's tau (with a bootstrap interval over queries), tau_AP (B against A:
    errors at the top weigh more) and the pairs of runs that swap.
    """
    from trec_rag_eval import api

    check_outputs([output], force, [qrels_a, qrels_b, *runs])  # before any work
    tables = [api.read_run(path, None if run_format == "auto" else run_format) for path in runs]
    result = api.agree(qrels_a, qrels_b, tables or None, list(measures) or None, judgments=judgments,
                       relevance_level=relevance_level, confidence=confidence, n_resamples=n_resamples, seed=seed)
    text = OUTPUT_FORMATS[output_format].render(AGREEMENT, result)
    common.write_results(text, output, force)
