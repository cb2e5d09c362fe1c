"""Readers and writers. Every error names the file and the line."""

from __future__ import annotations

from trec_rag_eval.io.tables import Qrels, Run

__all__ = ["Qrels", "Run"]
