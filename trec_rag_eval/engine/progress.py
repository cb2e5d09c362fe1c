"""The progress bars of the engine (``trec_rag_eval.progress``, where every layer finds them)."""

from __future__ import annotations

from trec_rag_eval.progress import bar as bar
from trec_rag_eval.progress import progress_bar as progress_bar
