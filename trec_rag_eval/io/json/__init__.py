"""JSON and JSONL, the way RAG pipelines keep evaluation datasets and search results: what a file holds and
the shapes read (``content``), datasets (``datasets``), search results as runs (``runs``), the rows' shared
vocabulary (``rows``), the reader that knows each element's line (``scanner``), and a corpus (``corpus``)."""
