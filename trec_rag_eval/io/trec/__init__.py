"""TREC's text formats, as trec_eval reads them: qrels and runs (``qrels_runs``; a run in pieces: ``pieces``),
preference judgments (``prefs``), z-score statistics (``zscores``) and topics (``topics``)."""
