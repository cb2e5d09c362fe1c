"""The version of trec-rag-eval, said once (setup.cfg reads it from here)."""

__version__ = "0.1.0"
