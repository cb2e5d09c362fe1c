"""trec-rag-eval: retrieval evaluation with trec_eval's exact conventions, for IR and RAG.

Public API only; importing this package does no work and imports nothing heavy.
"""

from __future__ import annotations

__version__ = "0.1.0"
