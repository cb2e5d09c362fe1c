"""The result of a fusion: the fused run, how it was made and, when tuned, the cross-validation."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from trec_rag_eval.core.frames import check_shape, frame
from trec_rag_eval.errors import UsageError
from trec_rag_eval.fusion.optimize import Tuning
from trec_rag_eval.renderer_registry import show, shown_by
from trec_rag_eval.tables import Run, num_rows, query_id_set
from trec_rag_eval.value_equality import same_fields

RUN_WRITE_FORMATS = ("trec", "json", "parquet")


@shown_by("trec_rag_eval.render.results:register_fusion")
@dataclass(frozen=True, eq=False)  # its own __eq__ (value_equality.same_fields), and no hash
class Fusion:
    """``run`` is the fused ``Run`` (its rows in ranking order); ``runs`` the names of the runs fused;
    ``k`` rrf's constant (None for the other methods); ``weights`` one per run (None: unweighted);
    ``tuning`` the cross-validation when the parameters were optimised (``fusion.optimize.Tuning``)."""

    run: Run
    runs: list[str]
    method: str
    norm: str
    k: float | None
    weights: list[float] | None
    depth: int | None
    tuning: Tuning | None = None

    def __eq__(self, other: object) -> bool:
        """The same values, NaN equal to NaN (``value_equality.same_fields``); not hashable, as the tables."""
        return same_fields(self, other) if type(other) is type(self) else NotImplemented

    @property
    def n_queries(self) -> int:
        return len(query_id_set(self.run))

    @property
    def n_documents(self) -> int:
        """Rows of the fused run: (query, document) pairs."""
        return num_rows(self.run)

    @property
    def settings_text(self) -> str:
        parts = [self.method]
        if self.k is not None:
            parts.append(f"k={self.k:g}")
        if self.norm != "none":
            parts.append(f"norm={self.norm}")
        if self.weights is not None:
            parts.append("weights=" + ",".join(f"{w:g}" for w in self.weights))
        if self.depth is not None:
            parts.append(f"depth={self.depth}")
        return " ".join(parts)

    def __str__(self) -> str:
        """``trec-rag-eval fuse``'s report: what was fused and how, the cross-validation when tuned
        (``render.fusion``)."""
        return str(show(self, "text"))

    def __repr__(self) -> str:
        return (f"Fusion(method={self.method!r}, runs={self.runs!r}, settings={self.settings_text!r}, "
                f"queries={len(query_id_set(self.run))}, documents={num_rows(self.run)})")

    def to_dict(self) -> dict[str, Any]:
        """How the run was made, the cross-validation (None unless tuned) and the run itself as
        ``{query_id: {doc_id: score}}`` (pytrec_eval's and ranx's shape) under ``"run"``."""
        tuning = self.tuning
        return {
            "runs": list(self.runs), "method": self.method, "norm": self.norm, "k": self.k,
            "weights": self.weights, "depth": self.depth,
            "tuning": None if tuning is None else {
                "measure": tuning.measure, "parameter": tuning.parameter, "settings_tried": tuning.n_settings,
                "seed": tuning.seed, "queries": tuning.n_queries, "held_out": tuning.held_out,
                "training": tuning.training,
                "chosen": {"k": tuning.chosen.k, "weights": tuning.chosen.weights, "score": tuning.chosen_score},
                "folds": [{"fold": f.fold, "queries": f.n_queries, "k": f.chosen.k, "weights": f.chosen.weights,
                           "training": f.training, "held_out": f.held_out} for f in tuning.folds],
            },
            "run": self.run.to_dict(),
        }

    def to_pandas(self, shape: str = "run") -> Any:
        """``run``: the fused run (query_id, doc_id, rank, score), or ``folds``: one row per fold."""
        return self._frame(shape, "pandas")

    def to_polars(self, shape: str = "run") -> Any:
        return self._frame(shape, "polars")

    def _frame(self, shape: str, library: str) -> Any:
        check_shape(shape, ("run", "folds"))
        if shape == "folds":
            folds = [] if self.tuning is None else self.tuning.folds
            return frame({"fold": [f.fold for f in folds], "queries": [f.n_queries for f in folds],
                          "k": [f.chosen.k for f in folds],
                          "weights": [f.chosen.weights for f in folds],
                          "training": [f.training for f in folds], "held_out": [f.held_out for f in folds]}, library)
        table = self.run.frame
        ranks = [0] * table.height
        previous, position = None, 0
        for i, query_id in enumerate(table["query_id"].to_list()):
            position = position + 1 if query_id == previous else 1
            ranks[i], previous = position, query_id
        return frame({"query_id": table["query_id"].to_list(), "doc_id": table["doc_id"].to_list(),
                      "rank": ranks, "score": table["score"].to_list()}, library)

    def _repr_html_(self) -> str:
        """The first 20 rows of the fused run, or the cross-validation's folds (``render.results``)."""
        return str(show(self, "html"))

    def write(self, path: str | os.PathLike[str], format: str | None = None, *, force: bool = False) -> int:
        """Write the fused run: ``trec`` (the default), ``json`` results or ``parquet`` (chosen by
        the file's suffix when ``format`` is None: .json/.jsonl, .parquet); return the rows or queries written."""
        from trec_rag_eval.io.parquet import write_parquet_run
        from trec_rag_eval.io.writers import write_results_json, write_trec_run

        chosen = format or run_format_for_path(path)
        if chosen not in RUN_WRITE_FORMATS:
            raise UsageError(f"unknown run format {chosen!r}; expected one of {', '.join(RUN_WRITE_FORMATS)}")
        if chosen == "json":
            return write_results_json(self.run, path, force=force)
        if chosen == "parquet":
            return write_parquet_run(self.run, path, force=force)
        return write_trec_run(self.run, path, force=force)


def run_format_for_path(path: str | os.PathLike[str]) -> str:
    """The run format a file name asks for: .parquet, .json/.jsonl, else TREC."""
    name = os.fspath(path).lower()
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith((".json", ".jsonl")):
        return "json"
    return "trec"
