"""The built-in baseline engine: BM25 over a JSONL corpus, through the bm25s library.

Scoring is bm25s's Lucene variant by default: each query term adds
``idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` with ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``
(no ``(k1 + 1)`` factor, as in Lucene 8+; it does not change the ranking).
Tokens come from ``engine.tokens.Analyzer`` (lowercase, accents folded, stop words, optional
stemmer). Results are ordered by score descending, then doc_id ascending so equal scores come out
in a stated order; documents that share no token with the query (score 0) are not returned.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from trec_rag_eval.engine.tokens import Analyzer
from trec_rag_eval.errors import MissingDependencyError, UsageError
from trec_rag_eval.io.json.corpus import read_corpus


def _import_bm25s() -> Any:
    try:
        import bm25s
    except ImportError:
        raise MissingDependencyError("bm25s", "bm25") from None
    return bm25s


class BM25Engine:
    """BM25 search over a corpus; ``search(query, k)`` returns ``[{"id", "score"}]``, best first.

    ``corpus`` is a JSONL path or a list of ``{"id", "text"}`` dicts. ``language`` picks the stop
    words ("fr" or "en"); ``stemmer`` is any ``str -> str`` function, e.g. PyStemmer's
    ``Stemmer.Stemmer("french").stemWord`` (none by default).
    """

    def __init__(
        self,
        corpus: str | os.PathLike[str] | Iterable[dict[str, str]],
        language: str = "fr",
        k1: float = 1.5,
        b: float = 0.75,
        remove_stop_words: bool = True,
        fold_accents: bool = True,
        stemmer: Callable[[str], str] | None = None,
        method: str = "lucene",
    ) -> None:
        documents = read_corpus(corpus) if isinstance(corpus, (str, os.PathLike)) else list(corpus)
        if not documents:
            raise UsageError("cannot build a BM25 index over an empty corpus")
        self.doc_ids = [str(d["id"]) for d in documents]
        self.settings = {"language": language, "k1": k1, "b": b, "stop_words": remove_stop_words,
                         "fold_accents": fold_accents, "stemmer": stemmer is not None, "method": method}
        self.analyze = Analyzer(language, remove_stop_words=remove_stop_words, fold=fold_accents,
                                stemmer=stemmer)
        bm25s = _import_bm25s()
        self._index = bm25s.BM25(k1=k1, b=b, method=method)
        self._index.index([self.analyze(d["text"]) for d in documents], show_progress=False)
        # Ties: score descending, then doc_id ascending. Precompute each doc's position in id order.
        by_id = np.argsort(np.array(self.doc_ids, dtype=object), kind="stable")
        self._id_order = np.argsort(by_id, kind="stable")

    def search(self, query: str, k: int = 10) -> list[dict[str, Any]]:
        """The top ``k`` documents with a positive score, as ``{"id", "score"}``."""
        tokens = self.analyze(query)
        if not tokens or k < 1:
            return []
        scores = np.asarray(self._index.get_scores(tokens), dtype=np.float64)
        order = np.lexsort((self._id_order, -scores))
        top = [i for i in order[:k] if scores[i] > 0]
        return [{"id": self.doc_ids[i], "score": float(scores[i])} for i in top]

    # French engines (as in the French RAG tutorial this tool follows) answer to ``rechercher``.
    rechercher = search

    def __call__(self, query: str, k: int = 10) -> list[dict[str, Any]]:
        return self.search(query, k)

    def __repr__(self) -> str:
        options = ", ".join(f"{key}={value!r}" for key, value in self.settings.items())
        return f"BM25Engine({len(self.doc_ids)} documents, {options})"
