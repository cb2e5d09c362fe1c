"""The format registry (``io.formats``): every format in one place, used by loading, the service and
convert; a format added there is detected, read and evaluated on every path."""

from __future__ import annotations

import pytest

import trec_rag_eval as tre
from trec_rag_eval.io import formats
from trec_rag_eval.io.any_format import QRELS_FORMATS, RUN_FORMATS, detect_format
from trec_rag_eval.io.formats import FORMATS, Format, register_format


def test_the_choices_come_from_the_registry():
    assert QRELS_FORMATS == ("auto", "trec", "json", "beir", "parquet", "rag", "ragas", "llamaindex", "dict")
    assert RUN_FORMATS == ("auto", "trec", "json", "parquet")  # BEIR's run reader only answers detection
    assert set(QRELS_FORMATS[1:]) == {name for name, fmt in FORMATS.items() if fmt.read_qrels is not None}


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="registered already"):
        register_format(Format("trec", "again"))
    with pytest.raises(ValueError, match="registered already"):
        register_format(Format("auto", "the word for detection"))


def test_outputs_choose_their_format_by_suffix():
    assert formats.for_output("x.parquet").name == "parquet"
    assert formats.for_output("X.PARQUET").name == "parquet"
    assert formats.for_output("x.qrels").name == "trec"


def test_a_registered_format_is_detected_read_and_evaluated(tmp_path):
    # a toy format: "q,d,grade" lines after a "#toy" line; one registration makes it a format everywhere
    def read_toy(path):
        lines = open(path, encoding="utf-8").read().split("\n")[1:]
        judged: dict[str, dict[str, int]] = {}
        for query_id, doc_id, grade in (line.split(",") for line in lines if line):
            judged.setdefault(query_id, {})[doc_id] = int(grade)
        return tre.Qrels.from_dict(judged, source=path)

    register_format(Format("toy", "comma-separated judgments", sniff=lambda path, head: head().startswith("#toy"),
                    read_qrels=read_toy))
    # formats are sniffed in the registry's order: put the toy first, as a format that TREC's fallback would take
    FORMATS.update({"toy": FORMATS.pop("toy"), **{name: FORMATS.pop(name) for name in list(FORMATS) if name != "toy"}})
    try:
        qrels = tmp_path / "judgments.toy"
        qrels.write_text("#toy\nq1,d1,1\nq1,d2,0\nq2,d3,2\n", encoding="utf-8")
        run = tmp_path / "run.txt"
        run.write_text("q1 Q0 d2 1 2.0 r\nq1 Q0 d1 2 1.0 r\nq2 Q0 d3 1 1.0 r\n", encoding="utf-8")
        assert detect_format(qrels) == "toy"
        # by hand: q1 has d1 relevant at rank 2 (RR 1/2), q2 has d3 at rank 1 (RR 1): MRR 0.75
        assert tre.evaluate(str(qrels), str(run), "MRR").summary["MRR"] == 0.75
        trec = tmp_path / "judgments.qrels"
        trec.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n", encoding="utf-8")
        assert tre.evaluate(str(trec), str(run), "MRR").summary["MRR"] == 0.75  # the same data, the same number
    finally:
        FORMATS.pop("toy")
