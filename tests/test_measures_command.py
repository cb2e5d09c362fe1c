"""`measures` lists every registry measure, generated from the registry."""

from __future__ import annotations

from conftest import invoke

from trec_rag_eval.measures.ir_notation import NAMES
from trec_rag_eval.measures.registry import FAMILIES


def test_every_family_and_every_notation_name_is_listed() -> None:
    result = invoke("measures")
    assert result.exit_code == 0
    text = result.stdout
    for family in FAMILIES.values():
        if family.name != "runid":
            assert family.definition in text, family.name
    for name in NAMES:
        assert any(line.split(", ")[0].startswith(name) or f", {name}" in line for line in text.splitlines()
                   if not line.startswith(" ")), name


def test_entries_show_all_three_names_and_parameters() -> None:
    lines = invoke("measures").stdout.splitlines()
    start = lines.index("nDCG@k, NDCG@k")
    block = "\n".join(lines[start:start + 6])
    assert "trec_eval: ndcg_cut.k   ir-measures: nDCG" in block
    assert "dcg: gain: 'log2' = judgment (trec_eval), 'exp-log2' = 2^judgment - 1 (gdeval) (default 'log2')" in block
    assert "ideal: ideal ranking from every judged document (trec_eval) or from the retrieved list only" in block


def test_markdown_table_has_one_row_per_family() -> None:
    text = invoke("measures", "--markdown").stdout
    rows = text.splitlines()[2:]
    assert len(rows) == len(FAMILIES)  # runid (the run tag) too: a name -m takes
    assert "| `Success@k, HitRate@k` | `success.k` | `Success` |" in text  # HitRate@k is an alias of Success@k
    assert text.splitlines()[0] == "| notation | trec_eval | ir-measures | definition | aggregate |"
