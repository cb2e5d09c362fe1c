"""Context cost at k: the tokens the top k results of each query would put into an LLM's prompt.

Quality at k is half of choosing k for a RAG pipeline; the other half is what k costs: every result
passed to the model is prompt tokens paid on every question. Where the results' texts are known (a
corpus, or search results carrying their text), ``measure_context_cost`` counts, for each query and each k,
the tokens of its top k results, ranked as the measures rank them (score descending, then doc id
descending, trec_eval's rule: see ``core.ranking``), and reports the mean and the 95th percentile
over the evaluated queries (a query with no results sends 0 tokens, as it scores 0).

Tokens are counted by the ``tokenizer`` given: any callable taking a text and returning a number
of tokens or a sequence of tokens (``tiktoken.get_encoding("cl100k_base").encode``, a Hugging Face
tokenizer's ``encode``, ``lambda text: len(text) // 4``). By default, ``count_words``: the number of
whitespace-separated words, a documented, model-free stand-in (English prose runs about 1.3 BPE
tokens per word; French a little more). A retrieved document with no known text counts 0 tokens and
is counted in ``missing_texts``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from trec_rag_eval.errors import UsageError
from trec_rag_eval.tables import Run, byte_key, column_list
from trec_rag_eval.value_equality import same_fields

if TYPE_CHECKING:
    from trec_rag_eval.measures.model import Measure

WORDS = re.compile(r"\S+")
DEFAULT_KS = (1, 3, 5, 10)
Tokenizer = Callable[[str], Any]


def count_words(text: str) -> int:
    """The default token count: whitespace-separated words (``"l'eau est froide"`` -> 3)."""
    return len(WORDS.findall(text))


def tokenizer_name(tokenizer: Tokenizer | None) -> str:
    if tokenizer is None or tokenizer is count_words:
        return "words (whitespace-separated)"
    name = getattr(tokenizer, "__qualname__", None) or type(tokenizer).__name__
    owner = getattr(tokenizer, "__self__", None)
    return f"{type(owner).__name__}.{name}" if owner is not None and "." not in name else str(name)


@dataclass(frozen=True, eq=False)  # its own __eq__ (value_equality.same_fields), and no hash
class ContextCost:
    """Tokens of the top k results per query: ``tokens[k]`` is aligned with ``query_ids``."""

    ks: list[int]
    query_ids: list[str]
    tokens: dict[int, np.ndarray] = field(repr=False)
    tokenizer: str = "words (whitespace-separated)"
    missing_texts: list[str] = field(default_factory=list)
    """Retrieved document ids (in some query's top max(k)) with no text: counted 0 tokens."""

    def __eq__(self, other: object) -> bool:
        """The same counts, array by array (``value_equality.same_fields``; dataclass's equality raised)."""
        return same_fields(self, other) if type(other) is type(self) else NotImplemented

    def mean(self, k: int) -> float:
        values = self.tokens[k]
        return float(values.mean()) if len(values) else float("nan")

    def p95(self, k: int) -> float:
        """95th percentile over queries (numpy's linear interpolation, as the harness's latency)."""
        values = self.tokens[k]
        return float(np.percentile(values, 95)) if len(values) else float("nan")

    @property
    def summary(self) -> dict[int, dict[str, float]]:
        """``{k: {"mean": ..., "p95": ...}}``."""
        return {k: {"mean": self.mean(k), "p95": self.p95(k)} for k in self.ks}

    def per_query(self) -> dict[str, dict[int, int]]:
        """``{query_id: {k: tokens}}``."""
        return {q: {k: int(self.tokens[k][i]) for k in self.ks} for i, q in enumerate(self.query_ids)}


def _ranked(run: Run) -> dict[str, list[str]]:
    """Each query's doc ids in ranking order: score descending, ties by doc id descending (byte order)."""
    by_query: dict[str, list[tuple[float, str]]] = {}
    for query_id, doc_id, score in zip(*(column_list(run, c) for c in ("query_id", "doc_id", "score")), strict=True):
        by_query.setdefault(query_id, []).append((float(score), doc_id))
    ranked = {}
    for query_id, rows in by_query.items():
        rows.sort(key=lambda row: byte_key(row[1]), reverse=True)
        rows.sort(key=lambda row: row[0], reverse=True)  # stable: ties keep doc id descending
        ranked[query_id] = [doc_id for _, doc_id in rows]
    return ranked


def _count(tokenizer: Tokenizer, text: str, doc_id: str) -> int:
    counted = tokenizer(text)
    if isinstance(counted, (int, np.integer)) and not isinstance(counted, bool):
        return int(counted)
    try:
        return len(counted)
    except TypeError:
        raise UsageError(f"the tokenizer returned {type(counted).__name__} for the text of {doc_id!r}: it must "
                         "return a number of tokens or a list of tokens") from None


def as_ks(k_values: Any) -> list[int]:
    ks = [k_values] if isinstance(k_values, int) else list(k_values)
    if not ks or any(isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1 for k in ks):
        raise UsageError(f"k_values must be positive integers, got {k_values!r}")
    return sorted({int(k) for k in ks})


def measure_context_cost(run: Run, texts: Mapping[str, str] | Callable[[str], str | None], k_values: Sequence[int],
                         query_ids: Sequence[str] | None = None, tokenizer: Tokenizer | None = None) -> ContextCost:
    """The tokens of each query's top k results, for each k of ``k_values`` (see the module docstring).

    ``texts``: doc id -> text (a mapping, or a callable returning None when unknown). ``query_ids``:
    the queries to report, in order (the evaluation's; a query absent from the run sends 0 tokens);
    default, the run's queries."""
    ks = as_ks(k_values)
    count = tokenizer or count_words
    lookup = texts.get if isinstance(texts, Mapping) else texts
    ranked = _ranked(run)
    queries = list(ranked) if query_ids is None else list(query_ids)
    depth = max(ks)
    sizes: dict[str, int] = {}
    missing: dict[str, None] = {}
    tokens = {k: np.zeros(len(queries), dtype=np.int64) for k in ks}
    for i, query_id in enumerate(queries):
        running, top = 0, ranked.get(query_id, [])[:depth]
        cumulative = []
        for doc_id in top:
            if doc_id not in sizes:
                text = lookup(doc_id)
                if text is None:
                    missing[doc_id] = None
                sizes[doc_id] = 0 if text is None else _count(count, str(text), doc_id)
            running += sizes[doc_id]
            cumulative.append(running)
        for k in ks:
            tokens[k][i] = cumulative[min(k, len(cumulative)) - 1] if cumulative else 0
    return ContextCost(ks, queries, tokens, tokenizer_name(tokenizer), list(missing))


def measure_ks(measures: Sequence[Any], default: Sequence[int] = DEFAULT_KS) -> list[int]:
    """The k at which to count context tokens: the measures' whole cutoffs (``Measure.cutoff``), so the
    tokens sit beside the quality at the same k; ``default`` when no measure has one."""
    ks = sorted({int(m.cutoff) for m in measures
                 if m.cutoff is not None and float(m.cutoff).is_integer() and m.cutoff >= 1})
    return ks or as_ks(default)


class _Evaluated(Protocol):
    """What ``context_columns`` reads of an ``Evaluation``."""

    @property
    def context(self) -> ContextCost | None: ...

    @property
    def measures(self) -> list[Measure]: ...

    @property
    def summary(self) -> Any: ...
    """The mean of each measure (a ``ByMeasure``), looked up by ``Measure``."""


def context_columns(evaluation: _Evaluated) -> dict[str, list[Any]]:
    """The columns of ``Evaluation.context_table``."""
    context = evaluation.context
    if context is None:
        raise UsageError("no context cost: evaluate with the results' texts (corpus=..., or search results "
                         "carrying text) to count the tokens of the top k")
    families: dict[str, dict[int, float]] = {}
    for m in evaluation.measures:
        if m.cutoff is not None and m.cutoff in context.ks and evaluation.summary.get(m) is not None \
                and m.spec.value_type != "str":
            families.setdefault(str(m).rsplit("@", 1)[0], {})[int(m.cutoff)] = float(evaluation.summary[m])
    columns: dict[str, list[Any]] = {"k": list(context.ks)}
    for name, by_k in families.items():
        columns[name] = [by_k.get(k, math.nan) for k in context.ks]
    columns["tokens_mean"] = [context.mean(k) for k in context.ks]
    columns["tokens_p95"] = [context.p95(k) for k in context.ks]
    return columns
