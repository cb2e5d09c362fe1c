"""Readers and writers. Every error names the file and the line. The tables they produce (``Qrels``,
``Run``) are ``trec_rag_eval.tables``, the floor below the readers and the core."""
