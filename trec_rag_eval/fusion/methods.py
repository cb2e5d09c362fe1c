"""Score normalisations and fusion methods over runs aligned document by document.

``align(runs, norm)`` reads each run once: its ranking (trec_eval's rule: score descending, then
doc_id descending in byte order), its scores normalised per query, and the union of the documents
every run retrieved for each query. ``combine(aligned, method, k, weights)`` then computes one
fused score per (query, document) with numpy over all rows at once, so trying many weights or many
k (``fusion.optimize``) reuses the one alignment.

Definitions (``s_i`` the normalised score of the document in run ``i``, ``r_i`` its rank there from 1,
``n_i`` the length of run ``i``'s list for the query, ``C`` the number of distinct documents the runs
retrieved for it, ``m`` the number of runs that retrieved the document; a sum over ``i`` runs over
the runs that retrieved it unless said otherwise):

* combsum ``sum s_i``; combmnz ``m * sum s_i``; combanz ``sum s_i / m``; combmax ``max s_i``;
  combmin ``min s_i`` (Fox and Shaw, TREC-2, 1993);
* wsum ``sum w_i s_i`` (a run that did not retrieve the document adds 0);
* rrf ``sum w_i / (k + r_i)``, w_i = 1 unless weights are given (Cormack, Clarke and Buettcher,
  SIGIR 2009);
* isr ``m * sum 1 / r_i**2`` (Mourao, Martins and Magalhaes, CMIG 2015);
* borda ``sum over all runs``: ``C - r_i + 1`` points where the run ranks the document,
  ``(C - n_i + 1) / 2`` where it does not (Aslam and Montague, SIGIR 2001).

Normalisations, per run and per query: minmax ``(s - min) / (max - min)``; zscore ``(s - mean) / sd``
(population sd); sum ``(s - min) / sum(s - min)``; max ``s / max`` (a positive max, or an error);
rank ``1 - (r - 1) / n``; none.
When the denominator is 0 (one document, or all scores equal) every normalised score is 0.
Fused scores are rounded to 12 significant digits (``rounded``), so scores equal by definition tie
exactly; ties are ordered by doc_id descending, trec_eval's rule. These
are ranx's conventions (its ``min-max``, ``zmuv``, ``sum``, ``max``, ``rank``), which ranx's names
also select. rrf, isr and borda read ranks, so the normalisation does not change them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from trec_rag_eval.errors import InputFormatError, UsageError
from trec_rag_eval.syntax import quote
from trec_rag_eval.tables import Run

METHODS = ("rrf", "combsum", "combmnz", "combmax", "combmin", "combanz", "wsum", "borda", "isr")
NORMS = ("minmax", "zscore", "sum", "max", "rank", "none")
RANK_METHODS = ("rrf", "isr", "borda")
"""Methods that read each run's ranks: no normalisation applies to them."""
WEIGHTED = ("wsum", "rrf")
"""Methods that take one weight per run."""

METHOD_NAMES = {
    **{name: name for name in METHODS},
    # ranx's names (ranx.fuse(method=...)) and their spellings with an underscore
    "sum": "combsum", "mnz": "combmnz", "max": "combmax", "min": "combmin", "anz": "combanz",
    "comb_sum": "combsum", "comb_mnz": "combmnz", "comb_max": "combmax", "comb_min": "combmin",
    "comb_anz": "combanz", "bordafuse": "borda", "weighted_sum": "wsum",
}
NORM_NAMES = {
    **{name: name for name in NORMS},
    "min-max": "minmax", "min_max": "minmax", "zmuv": "zscore", "z-score": "zscore", "z_score": "zscore",
}


def method_name(method: str) -> str:
    """Our name of a fusion method given in any accepted spelling (ours or ranx's)."""
    key = str(method).strip().lower()
    if key not in METHOD_NAMES:
        raise UsageError(f"unknown fusion method {quote(str(method))}; expected one of {', '.join(METHODS)} "
                         "(ranx's names sum, mnz, max, min, anz, bordafuse are accepted too)")
    return METHOD_NAMES[key]


def norm_name(norm: str | None) -> str:
    """Our name of a normalisation given in any accepted spelling (None: none)."""
    if norm is None:
        return "none"
    key = str(norm).strip().lower()
    if key not in NORM_NAMES:
        raise UsageError(f"unknown normalisation {quote(str(norm))}; expected one of {', '.join(NORMS)} "
                         "(ranx's names min-max and zmuv are accepted too)")
    return NORM_NAMES[key]


@dataclass(frozen=True)
class Aligned:
    """The runs side by side: one row per (query, document) any run retrieved.

    ``scores[i]`` is run i's normalised score (NaN where it did not retrieve the document),
    ``ranks[i]`` its rank from 1 (NaN likewise), ``lengths[i]`` the length of its list for the
    row's query (0 when the run has no result for that query), ``candidates`` the number of
    distinct documents of the row's query. Queries are in order of first appearance (the first run
    first), documents in no particular order.
    """

    query_ids: list[str]
    doc_ids: list[str]
    scores: np.ndarray
    ranks: np.ndarray
    lengths: np.ndarray
    candidates: np.ndarray

    @property
    def present(self) -> np.ndarray:
        return ~np.isnan(self.ranks)


def ranked_frame(run: Run) -> pl.DataFrame:
    """The run's rows with their ``rank`` (1..n per query: score descending, then doc_id descending),
    and the query's list length ``n``; a duplicate document or a NaN score is refused."""
    frame = run.frame.select("query_id", "doc_id", "score")
    if frame["score"].is_nan().any():
        row = frame.filter(pl.col("score").is_nan()).row(0)
        raise InputFormatError(run.source, None, f"query {quote(row[0])}, document {quote(row[1])}: a NaN score "
                                                 "cannot be fused (no order and no sum is defined for it)")
    duplicated = frame.select(pl.struct("query_id", "doc_id").is_duplicated()).to_series()
    if duplicated.any():
        row = frame.filter(duplicated).row(0)
        raise InputFormatError(run.source, None, f"document {quote(row[1])} listed twice for query {quote(row[0])}")
    frame = frame.sort(["query_id", "score", "doc_id"], descending=[False, True, True], maintain_order=True)
    return frame.with_columns(
        pl.int_range(1, pl.len() + 1).over("query_id").cast(pl.Float64).alias("rank"),
        pl.len().over("query_id").cast(pl.Float64).alias("n"),
    )


def _normalised(frame: pl.DataFrame, norm: str) -> pl.Expr:
    score = pl.col("score")
    by = "query_id"
    if norm == "none":
        return score
    if norm == "rank":
        return 1.0 - (pl.col("rank") - 1.0) / pl.col("n")
    if norm == "minmax":
        low, span = score.min().over(by), score.max().over(by) - score.min().over(by)
        return pl.when(span > 0).then((score - low) / span).otherwise(0.0)
    if norm == "zscore":
        sd = score.std(ddof=0).over(by)
        return pl.when(sd > 0).then((score - score.mean().over(by)) / sd).otherwise(0.0)
    if norm == "sum":
        low = score.min().over(by)
        total = (score - low).sum().over(by)
        return pl.when(total > 0).then((score - low) / total).otherwise(0.0)
    if norm == "max":
        return score / score.max().over(by)  # a positive maximum: checked by align
    raise UsageError(f"unknown normalisation {norm!r}")


def align(runs: Sequence[Run], norm: str) -> Aligned:
    """Rank and normalise each run, and line them up on the union of their (query, document) rows."""
    parts = []
    for index, run in enumerate(runs):
        frame = ranked_frame(run)
        if norm == "max":
            tops = frame.group_by("query_id", maintain_order=True).agg(pl.col("score").max())
            bad = tops.filter(pl.col("score") <= 0)
            if bad.height:
                query_id, top = bad.row(0)
                raise UsageError(f"{run.source}: query {quote(query_id)}: max normalisation divides by the top "
                                 f"score, which is {top:g}: it needs a positive one (use minmax or zscore)")
        frame = frame.with_columns(_normalised(frame, norm).cast(pl.Float64).alias("normalised"),
                                   pl.lit(index, dtype=pl.Int64).alias("run"))
        parts.append(frame.select("query_id", "doc_id", "run", "normalised", "rank", "n"))
    long = pl.concat(parts)
    if long.is_empty():
        raise UsageError("nothing to fuse: every run is empty")
    queries = long.select("query_id").unique(maintain_order=True).with_row_index("query_order")
    union = (long.select("query_id", "doc_id").unique(maintain_order=True)
             .join(queries, on="query_id").sort("query_order", maintain_order=True)
             .with_row_index("row"))
    long = long.join(union.select("query_id", "doc_id", "row"), on=["query_id", "doc_id"])
    rows, count = long["row"].to_numpy(), union.height
    run_index = long["run"].to_numpy()
    scores = np.full((len(runs), count), np.nan)
    ranks = np.full((len(runs), count), np.nan)
    scores[run_index, rows] = long["normalised"].to_numpy()
    ranks[run_index, rows] = long["rank"].to_numpy()
    # each run's list length per query, spread over the query's rows
    union_query = union.join(queries, on="query_id")["query_order"].to_numpy()
    lengths = np.zeros((len(runs), queries.height))
    per_query = long.group_by("run", "query_id").agg(pl.col("n").first()).join(queries, on="query_id")
    lengths[per_query["run"].to_numpy(), per_query["query_order"].to_numpy()] = per_query["n"].to_numpy()
    candidates = np.bincount(union_query, minlength=queries.height).astype(np.float64)
    return Aligned(union["query_id"].to_list(), union["doc_id"].to_list(), scores, ranks,
                   lengths[:, union_query], candidates[union_query])


def combine(aligned: Aligned, method: str, k: float = 60.0, weights: Sequence[float] | None = None) -> np.ndarray:
    """The fused score of every row of ``aligned`` (see the module docstring for each definition)."""
    present = aligned.present
    count = present.sum(axis=0)
    w = np.ones(len(aligned.scores)) if weights is None else np.asarray(weights, dtype=np.float64)
    scores = np.where(present, aligned.scores, 0.0)
    if method == "combsum":
        return scores.sum(axis=0)
    if method == "combmnz":
        return scores.sum(axis=0) * count
    if method == "combanz":
        return scores.sum(axis=0) / count
    if method == "combmax":
        return np.where(present, aligned.scores, -np.inf).max(axis=0)
    if method == "combmin":
        return np.where(present, aligned.scores, np.inf).min(axis=0)
    if method == "wsum":
        return (w[:, None] * scores).sum(axis=0)
    ranks = np.where(present, aligned.ranks, 1.0)
    if method == "rrf":
        return (w[:, None] * np.where(present, 1.0 / (k + ranks), 0.0)).sum(axis=0)
    if method == "isr":
        return np.where(present, 1.0 / ranks**2, 0.0).sum(axis=0) * count
    if method == "borda":
        points = np.where(present, aligned.candidates - ranks + 1.0,
                          (aligned.candidates - aligned.lengths + 1.0) / 2.0)
        return points.sum(axis=0)
    raise UsageError(f"unknown fusion method {method!r}")


SIGNIFICANT_DIGITS = 12


def rounded(scores: np.ndarray, digits: int = SIGNIFICANT_DIGITS) -> np.ndarray:
    """``scores`` to ``digits`` significant digits: sums that are equal by definition but not in
    floating point (1/3 + 2/3 and 1) become one number, so they tie, and the tie rule orders them.
    Each is an integer divided (or multiplied) by an exact power of ten: the float nearest the
    decimal rounding, as ``float(f"{x:.12g}")`` gives it (but for the rare value within an ulp of a half).
    The rounding is a pure function of the value, so equal inputs stay equal."""
    out = scores.astype(np.float64, copy=True)
    nonzero = np.isfinite(out) & (out != 0)
    values = out[nonzero]
    shift = (digits - 1) - np.floor(np.log10(np.abs(values)))
    up = shift >= 0
    mantissa = np.round(values * 10.0 ** shift)
    values = np.where(up, mantissa / 10.0 ** np.where(up, shift, 0), mantissa * 10.0 ** np.where(up, 0, -shift))
    out[nonzero] = values
    return out


def fused_run(aligned: Aligned, scores: np.ndarray, run_tag: str, depth: int | None = None,
              source: str = "<fused run>") -> Run:
    """The fused run: each query's documents by fused score (``rounded``) descending, then doc_id
    descending (byte order, trec_eval's tie rule), cut at ``depth`` documents when given; queries in
    first-appearance order. The scores written are the rounded ones, so any evaluator ranks the file
    as it is written."""
    frame = pl.DataFrame({"query_id": aligned.query_ids, "doc_id": aligned.doc_ids, "score": rounded(scores)},
                         schema={"query_id": pl.Utf8, "doc_id": pl.Utf8, "score": pl.Float64})
    frame = frame.with_row_index("_row").with_columns(pl.col("_row").min().over("query_id").alias("_query"))
    frame = frame.sort(["_query", "score", "doc_id"], descending=[False, True, True], maintain_order=True)
    if depth is not None:
        frame = frame.filter(pl.int_range(pl.len()).over("query_id") < depth)
    return Run(frame.select("query_id", "doc_id", "score"), run_tag, source)
