"""The one evaluation service: every entry point evaluates through here.

The facade (``trec_rag_eval.api``) calls it for Python callers; each command of the command line
calls the facade. Whatever the path, the same steps run in the same order, so the same data gives
the same numbers and the same notes:

1. ``service.inputs.read_judgments``: the qrels in any shape (a path in any format, with its topics; a
   table, a dict, a DataFrame), and when ``judge`` left its sidecar, the judgments asked for (human, LLM,
   both).
2. ``service.pipeline.evaluate_runs``: each run, in the order given, as a ``RunOutcome`` (its evaluation
   and notes, or the error that stopped it: a run with bad input fails alone, on every path). A run is a
   path (read where it lies, the first one read ahead on a background thread while the judgments are read,
   ``service.inputs``; in pieces when it is too large for the memory, ``service.large_runs``), or any in-memory shape
   (``service.inputs.run_from_any_shape``). Chunk ids are mapped (``doc_map``) and queries missing from a
   run noted the same way for both. With ``cluster``, the runs go to Dask workers; with ``shards``, the
   files are pieces of one run (``service.spread``).

Notes are values (``notes.Note``): the facade warns Python callers with them, the command line
prints them with its flags.
"""
