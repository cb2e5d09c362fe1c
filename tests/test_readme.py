"""The README's claims are checked: its worked example, its commands, its measure table."""

from __future__ import annotations

import math
import os
import re

from conftest import REPO, invoke

README = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()


def test_worked_example(tmp_path):
    qrels = tmp_path / "q.txt"
    run = tmp_path / "r.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n1 0 c 2\n1 0 d 1\n")
    run.write_text("1 Q0 b 1 3.0 t\n1 Q0 a 2 2.0 t\n1 Q0 c 3 2.0 t\n1 Q0 x 4 1.0 t\n")
    result = invoke("-m", "P.2", "-m", "recall.3", "-m", "recip_rank", "-m", "map", "-m", "ndcg_cut.3",
                    str(qrels), str(run))
    dcg = 2 / math.log2(3) + 1 / math.log2(4)
    idcg = 2 + 1 / math.log2(3) + 1 / math.log2(4)
    expected = {"map": (1 / 2 + 2 / 3) / 3, "recip_rank": 1 / 2, "P_2": 1 / 2, "recall_3": 2 / 3,
                "ndcg_cut_3": dcg / idcg}
    for name, value in expected.items():
        assert f"{name:<22}\tall\t{value:6.4f}\n" in result.stdout
    assert "AP = (1/2 + 2/3) / 3 = 0.3889" in README and "nDCG@3 = 0.5627" in README
    assert invoke("-l2", "-m", "map", str(qrels), str(run)).stdout == "map                   \tall\t0.5000\n"


def test_quick_start_output_is_what_the_readme_shows():
    result = invoke(os.path.join(REPO, "fixtures", "qrels.txt"), os.path.join(REPO, "fixtures", "run_bm25.txt"))
    table = result.stdout.strip()
    assert table in README


def test_every_command_is_documented():
    from trec_rag_eval.cli import COMMANDS

    for name in COMMANDS:
        if name != "evaluate":
            assert re.search(rf"trec-rag-eval {re.escape(name)}\b", README), f"README never shows {name}"


def test_measure_table_is_generated_from_the_registry():
    from trec_rag_eval.cli import main  # noqa: F401  (the command below is the generator)

    table = invoke("measures", "--markdown").stdout
    start = README.index("<!-- measures-table:start -->") + len("<!-- measures-table:start -->")
    end = README.index("<!-- measures-table:end -->")
    assert README[start:end].strip() == table.strip()


def test_architecture_lists_every_layer_of_the_contract():
    # the README's ten lines and import-linter's contract name the same layers, in the same order
    import tomllib

    with open(os.path.join(REPO, "pyproject.toml"), "rb") as handle:
        contracts = tomllib.load(handle)["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["type"] == "layers")["layers"]
    section = README[README.index("## Architecture"):README.index("## Dependencies")]
    block = section[section.index("```\n") + 4:section.rindex("```")]
    described = [line.split("  ")[0].strip() for line in block.splitlines()]
    assert described == [layer for layer in layers if layer != "__main__"]
    assert len(described) <= 12
