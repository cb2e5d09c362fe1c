"""The output formats: one registry (``render.output_formats``) that every command and result reads."""

from __future__ import annotations

import pytest

import trec_rag_eval as tre
from trec_rag_eval.errors import UsageError

QRELS = {"1": {"a": 1, "b": 0}, "2": {"a": 2}}
RUN = {"1": {"a": 2.0, "b": 1.0}, "2": {"b": 1.0, "a": 0.5}}


def test_an_unknown_format_is_a_usage_error_naming_the_choices():
    evaluation = tre.evaluate(QRELS, RUN, ["P@1", "AP"])
    with pytest.raises(UsageError, match="^unknown format 'xml'; expected one of trec, table, json, csv, jsonl$"):
        evaluation.render("xml")
