"""Evaluate a search engine from Python, with a BM25 baseline.

``Evaluator(engine).evaluate(dataset)`` runs every query through the engine and scores the run
(``harness``); ``BM25Engine(corpus)`` is the offline baseline (``bm25``, with the word analyser of
``tokens``); ``load`` imports an engine or a tokenizer named by text. Nothing heavy is imported here:
bm25s loads only when used. Asking an LLM (test queries, relevance judgments) is ``trec_rag_eval.llm``'s.
"""

from __future__ import annotations

from trec_rag_eval.engine.bm25 import BM25Engine
from trec_rag_eval.engine.harness import EngineEvaluation, Evaluator, QueryFailure, SearchOutcome
from trec_rag_eval.io.json.corpus import read_corpus

__all__ = ["BM25Engine", "EngineEvaluation", "Evaluator", "QueryFailure", "SearchOutcome", "read_corpus"]
