"""Judgments, topics and runs as others publish them: a BEIR dataset folder (``beir``), an ir_datasets
name (``irds``)."""
