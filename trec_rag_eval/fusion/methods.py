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

Infinite scores (``standing_in``): a run's ``inf`` ranks above its finite scores and ``-inf`` below, as in
evaluation, and the rank methods and ``rank`` read nothing else. Before minmax, zscore, sum or max, each
infinite score of a query stands one spread beyond the run's finite scores of that query: ``+inf`` at
``max + s``, ``-inf`` at ``min - s``, with ``s = max - min`` (``|max|`` when the finite scores are all
equal, 1 when that is 0 or there is none). The run's order is kept, the normalised scores are finite, and
the stand-ins move with the scores under any change of scale or shift, which those normalisations ignore.
``none`` combines the scores as numbers: ``inf`` plus a finite score is ``inf``; ``inf`` plus ``-inf`` has
no value and is refused (``check_fused``). A run's scores of a query beyond 2**400 (or all below
2**-400) are scaled by a power of two before a normalisation (exact, and the normalisations ignore it), so
huge and tiny scores normalise as their ratios say; a fused score beyond a double's range is refused,
never written as ``inf`` or NaN.
Fused scores are rounded to 12 significant digits (``rounded``), so scores equal by definition tie
exactly; ties are ordered by doc_id descending, trec_eval's rule. These
are ranx's conventions (its ``min-max``, ``zmuv``, ``sum``, ``max``, ``rank``), which ranx's names
also select. rrf, isr and borda read ranks, so the normalisation does not change them.
"""

from __future__ import annotations

import math
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
    first), documents in no particular order. ``scores`` are finite but under ``none``.
    """

    query_ids: list[str]
    doc_ids: list[str]
    scores: np.ndarray
    ranks: np.ndarray
    lengths: np.ndarray
    candidates: np.ndarray
    names: list[str]
    """The runs' names, for messages."""

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


SCALED_NORMS = ("minmax", "zscore", "sum", "max")
"""The normalisations computed from the scores' values (``standing_in`` prepares them)."""


SCALED_BEYOND = 400
"""Scores of a query larger than 2**400 or all smaller than 2**-400 are scaled before a normalisation."""


def standing_in(scores: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """A run's scores, grouped by query (each group from ``starts[i]``), as the scale-free normalisations
    read them: a group whose largest finite magnitude is beyond 2**400 or below 2**-400 scaled by the power
    of two that brings it into [0.5, 1) (exact; minmax, zscore, sum and max ignore a positive scale; between
    those bounds no spread, sum or square overflows or underflows, and a subnormal score keeps its value),
    and each infinite score put one spread beyond the group's finite scores (see the module docstring)."""
    counts = np.diff(np.append(starts, len(scores)))
    finite = np.isfinite(scores)
    magnitude = np.maximum.reduceat(np.where(finite, np.abs(scores), 0.0), starts)
    exponent = np.frexp(magnitude)[1]
    exponent = np.repeat(np.where((exponent > SCALED_BEYOND) | (exponent < -SCALED_BEYOND), exponent, 0), counts)
    with np.errstate(under="ignore"):  # a score far below its query's largest one: 0 at this scale
        scaled = np.ldexp(scores, -exponent)
    low = np.minimum.reduceat(np.where(finite, scaled, np.inf), starts)
    high = np.maximum.reduceat(np.where(finite, scaled, -np.inf), starts)
    empty = ~np.isfinite(low)  # no finite score: as if it were 0
    low[empty] = high[empty] = 0.0
    spread = high - low
    spread = np.where(spread > 0, spread, np.where(high != 0, np.abs(high), 1.0))
    top, bottom = np.repeat(high + spread, counts), np.repeat(low - spread, counts)
    return np.where(scaled == np.inf, top, np.where(scaled == -np.inf, bottom, scaled))


def _normalised(frame: pl.DataFrame, norm: str) -> pl.Expr:
    score = pl.col("standing") if norm in SCALED_NORMS else pl.col("score")
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
        return score / score.max().over(by)  # a positive maximum: checked by _check_max
    raise UsageError(f"unknown normalisation {norm!r}")


def align(runs: Sequence[Run], norm: str, names: Sequence[str] | None = None) -> Aligned:
    """Rank and normalise each run, and line them up on the union of their (query, document) rows
    (``names``: the runs' names in messages; their sources by default)."""
    parts = []
    for index, run in enumerate(runs):
        frame = ranked_frame(run)
        if norm in SCALED_NORMS:
            starts = np.flatnonzero(np.diff(frame["query_id"].rle_id().to_numpy(), prepend=-1))
            standing = standing_in(frame["score"].to_numpy(), starts) if frame.height else np.empty(0)
            frame = frame.with_columns(pl.Series("standing", standing, dtype=pl.Float64))
            if norm == "max":
                _check_max(frame, run.source)
        frame = frame.with_columns(_normalised(frame, norm).cast(pl.Float64).alias("normalised"),
                                   pl.lit(index, dtype=pl.Int64).alias("run"))
        if norm == "max":
            _check_ratios(frame, run.source)
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
                   lengths[:, union_query], candidates[union_query],
                   [run.source for run in runs] if names is None else list(names))


def _check_ratios(frame: pl.DataFrame, source: str) -> None:
    """max normalisation divides by each query's top score: a tiny top puts a large score of the other sign
    beyond a double's range."""
    beyond = frame.filter(~pl.col("normalised").is_finite())
    if beyond.height:
        query_id, doc_id, score = beyond.row(0)[:3]
        top = float(frame.filter(pl.col("query_id") == query_id)["score"].max())  # type: ignore[arg-type]
        raise UsageError(f"{source}: query {quote(query_id)}: max normalisation divides by the top score, {top:g}, "
                         f"which puts document {quote(doc_id)} ({score:g}) beyond a double's range (use minmax or "
                         "zscore)")


def _check_max(frame: pl.DataFrame, source: str) -> None:
    """max normalisation divides by each query's top score (its stand-in for ``inf``): it must be positive."""
    tops = frame.group_by("query_id", maintain_order=True).agg(
        pl.col("standing").max(), pl.col("score").max().alias("top"),
        pl.col("score").filter(pl.col("score").is_finite()).max().alias("finite"))
    bad = tops.filter(pl.col("standing") <= 0)
    if not bad.height:
        return
    query_id, _, top, finite = bad.row(0)
    said = f"{top:g}" if finite is None or top != math.inf else (
        f"inf, which stands one spread above the finite scores (the largest {finite:g}), so not above 0 here")
    raise UsageError(f"{source}: query {quote(query_id)}: max normalisation divides by the top score, which is "
                     f"{said}: it needs a positive one (use minmax or zscore)")


def combine(aligned: Aligned, method: str, k: float = 60.0, weights: Sequence[float] | None = None) -> np.ndarray:
    """The fused score of every row of ``aligned`` (see the module docstring for each definition); a
    score with no value (``inf - inf``) or beyond a double's range is refused (``check_fused``)."""
    if method not in METHODS:
        raise UsageError(f"unknown fusion method {method!r}")
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):  # what they give is checked below
        fused, terms = _combined(aligned, method, k, weights)
    check_fused(aligned, fused, terms, weights if method in WEIGHTED else None)
    return fused


def _combined(aligned: Aligned, method: str, k: float,
              weights: Sequence[float] | None) -> tuple[np.ndarray, np.ndarray | None]:
    """The fused scores and, for the weighted methods, each run's unweighted share (runs x rows)."""
    present = aligned.present
    count = present.sum(axis=0)
    w = np.ones(len(aligned.scores)) if weights is None else np.asarray(weights, dtype=np.float64)
    scores = np.where(present, aligned.scores, 0.0)
    if method == "combsum":
        return summed(scores), None
    if method == "combmnz":
        return summed(scores) * count, None
    if method == "combanz":
        return summed(scores, count), None
    if method == "combmax":
        return np.where(present, aligned.scores, -np.inf).max(axis=0), None
    if method == "combmin":
        return np.where(present, aligned.scores, np.inf).min(axis=0), None
    if method == "wsum":
        return _weighted(w, scores), scores
    ranks = np.where(present, aligned.ranks, 1.0)
    if method == "rrf":
        shares = np.where(present, 1.0 / (k + ranks), 0.0)
        return _weighted(w, shares), shares
    if method == "isr":
        return np.where(present, 1.0 / ranks**2, 0.0).sum(axis=0) * count, None
    points = np.where(present, aligned.candidates - ranks + 1.0, (aligned.candidates - aligned.lengths + 1.0) / 2.0)
    return points.sum(axis=0), None


def _weighted(w: np.ndarray, shares: np.ndarray) -> np.ndarray:
    """sum of w_i * share_i over the runs; a run of weight 0 adds 0, whatever its share (even infinite). A row
    with an infinite share (of a run that counts) is that infinity, whatever the finite products add up to
    (NaN for inf - inf, refused by ``check_fused``); a finite product beyond a double elsewhere makes the sum
    infinite, also refused there."""
    counted = w[:, None] != 0
    finite = np.isfinite(shares)
    fused = summed(np.where(counted & finite, w[:, None] * np.where(finite, shares, 0.0), 0.0))
    infinite = counted & ~finite
    if infinite.any():
        rows = infinite.any(axis=0)
        fused[rows] = np.where(infinite, shares, 0.0).sum(axis=0)[rows]
    return fused


def summed(values: np.ndarray, count: np.ndarray | None = None) -> np.ndarray:
    """The sum of each column of ``values`` (runs x rows) as its exact sum rounded, not as the runs'
    order of additions gives it: ``1e308 + 0.5 - 1e308`` is 0.5, not 0 (Neumaier's compensated sum,
    exact for the few terms of a fusion; exact fractions for a row of values near a double's limit,
    whose partial sums could overflow); divided by ``count`` when given (a mean that fits a double though
    its sum does not). A row holding an infinity is added as numbers (``inf``, or NaN for ``inf - inf``,
    which ``check_fused`` refuses)."""
    out = values.sum(axis=0) if count is None else values.sum(axis=0) / count
    if values.shape[0] < 2:
        return out
    finite = np.isfinite(values).all(axis=0)
    safe = finite & (np.abs(values).max(axis=0) < np.finfo(np.float64).max / values.shape[0])
    part = values[:, safe]
    total, error = part[0].copy(), np.zeros(part.shape[1])
    for term in part[1:]:
        after = total + term
        error += np.where(np.abs(total) >= np.abs(term), (total - after) + term, (term - after) + total)
        total = after
    out[safe] = total + error if count is None else (total + error) / count[safe]
    for row in np.flatnonzero(finite & ~safe).tolist():
        from fractions import Fraction

        exact = sum((Fraction(value) for value in values[:, row].tolist()), Fraction(0))
        if count is not None:
            exact /= int(count[row])
        try:
            out[row] = float(exact)
        except OverflowError:  # beyond a double: refused by check_fused
            out[row] = math.inf if exact > 0 else -math.inf
    return out


TINY = float(np.finfo(np.float64).tiny)
"""The smallest normal double: below it a number keeps fewer digits."""
NORMALISE = "normalise the scores (norm='minmax', 'zscore', 'sum', 'max' or 'rank')"


def check_fused(aligned: Aligned, fused: np.ndarray, terms: np.ndarray | None,
                weights: Sequence[float] | None) -> None:
    """Refuse fused scores that are not numbers the inputs give: ``inf - inf`` (no value), a value beyond a
    double's range from finite scores (overflow), or a weighted share lost below the smallest double."""
    counts = aligned.present if weights is None else aligned.present & (np.asarray(weights)[:, None] != 0)
    # infinite from finite scores (of the runs that count): an overflow
    bad = np.isnan(fused) | (np.isinf(fused) & np.isfinite(aligned.scores).all(axis=0, where=counts))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        where = f"query {quote(aligned.query_ids[row])}, document {quote(aligned.doc_ids[row])}"
        column = np.where(counts[:, row], aligned.scores[:, row], 0.0)
        high, low = np.flatnonzero(column == np.inf), np.flatnonzero(column == -np.inf)
        if np.isnan(fused[row]) and high.size and low.size:
            raise UsageError(f"{where}: run {aligned.names[high[0]]} scores it inf and run {aligned.names[low[0]]} "
                             f"-inf, and their sum has no value: {NORMALISE} or fuse ranks (rrf, isr, borda)",
                             {"norm=": "norm"})
        raise UsageError(f"{where}: the fused score is beyond a double's range (about 1.8e308): the scores or "
                         f"weights are too large to combine as they are; {NORMALISE} or scale the weights down",
                         {"norm=": "norm"})
    if weights is None or terms is None:
        return
    w = np.asarray(weights, dtype=np.float64)[:, None]
    counted = (w != 0) & np.isfinite(terms)
    with np.errstate(under="ignore", over="ignore"):  # an overflow is refused above; here only the small count
        weighted = np.where(counted, np.abs(w * np.where(counted, terms, 0.0)), 0.0)
    # the weights push a fused score whose shares are normal doubles below them: its digits are lost
    lost = ((weighted.max(axis=0) < TINY) & (np.where(counted, np.abs(terms), 0.0).max(axis=0) >= TINY)
            & np.isfinite(fused))  # an infinite share makes the score that infinity, whatever the others
    if lost.any():
        row = int(np.flatnonzero(lost)[0])
        run = int(np.flatnonzero(counted[:, row] & (np.abs(terms[:, row]) >= TINY))[0])
        raise UsageError(f"run {aligned.names[run]}'s weight {float(weights[run])!r} times its scores falls below the "
                         "normal doubles (about 2.2e-308: its share of the fused scores loses its digits): weights "
                         "are relative (0.3,0.7 and 3,7 rank alike): scale them up")


SIGNIFICANT_DIGITS = 12


def rounded(scores: np.ndarray, digits: int = SIGNIFICANT_DIGITS) -> np.ndarray:
    """``scores`` to ``digits`` significant digits: sums that are equal by definition but not in
    floating point (1/3 + 2/3 and 1) become one number, so they tie, and the tie rule orders them.
    Each is an integer divided (or multiplied) by an exact power of ten: the float nearest the
    decimal rounding, as ``float(f"{x:.12g}")`` gives it (but for the rare value within an ulp of a half).
    The rounding is a pure function of the value, so equal inputs stay equal."""
    out = scores.astype(np.float64, copy=True)
    magnitude = np.abs(out)
    # a power of ten beyond a double's range (below 1e-280 or above 1e280): Python's own rounding, one by one
    plain = np.isfinite(out) & (magnitude >= 1e-280) & (magnitude <= 1e280)
    values = out[plain]
    shift = (digits - 1) - np.floor(np.log10(np.abs(values)))
    up = shift >= 0
    mantissa = np.round(values * 10.0 ** shift)
    values = np.where(up, mantissa / 10.0 ** np.where(up, shift, 0), mantissa * 10.0 ** np.where(up, 0, -shift))
    out[plain] = values
    extreme = np.flatnonzero(np.isfinite(out) & ~plain & (out != 0))
    out[extreme] = [float(f"{value:.{digits}g}") for value in out[extreme].tolist()]
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
    return Run(frame.select("query_id", "doc_id", "score"), run_tag, source, checked=True)
