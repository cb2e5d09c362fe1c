"""Evaluate a search engine from Python, with a BM25 baseline and LLM query generation.

``Evaluator(engine).evaluate(dataset)`` runs every query through the engine and scores the run;
``BM25Engine(corpus)`` is the offline baseline; ``engine.generate`` writes LLM-generated datasets.
Nothing heavy is imported here: bm25s and openai load only when used.
"""

from __future__ import annotations

from trec_rag_eval.engine.bm25 import BM25Engine
from trec_rag_eval.engine.harness import EngineEvaluation, Evaluator, QueryFailure, SearchOutcome
from trec_rag_eval.io.corpus import read_corpus

__all__ = ["BM25Engine", "EngineEvaluation", "Evaluator", "QueryFailure", "SearchOutcome", "read_corpus"]
