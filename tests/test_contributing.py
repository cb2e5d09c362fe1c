"""CONTRIBUTING.md's recipes stay true: every file they name exists, and every code example they quote is
the code as it stands in the file the recipe names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trec_rag_eval.measures.registry import BINARY

ROOT = Path(__file__).resolve().parent.parent
TEXT = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")


def test_every_file_named_exists():
    named = set(re.findall(r"`((?:trec_rag_eval|tests)/[\w/]+(?:\.py)?)`", TEXT))
    assert len(named) > 15
    missing = [path for path in sorted(named) if "<name>" not in path and not (ROOT / path).exists()]
    assert not missing, missing


def test_every_quoted_example_is_the_code_of_its_file():
    # each ```python block follows the sentence naming its file; its lines stand in that file as written
    files = {
        "def success(": "trec_rag_eval/measures/binary.py",
        'Family("success"': "trec_rag_eval/measures/registry.py",
        "class Jsonl(": "trec_rag_eval/render/output_formats.py",
        "from trec_rag_eval.checks.validate import validate_tables": "trec_rag_eval/api/analyses.py",
    }
    blocks = re.findall(r"```python\n(.*?)```", TEXT, re.S)
    assert len(blocks) == len(files)
    for block in blocks:
        [path] = [path for start, path in files.items() if block.lstrip().startswith(start)]
        source = (ROOT / path).read_text(encoding="utf-8")
        for line in block.splitlines():
            assert line.strip() in source, (path, line)


def test_the_facade_stays_a_house_of_small_functions():
    # recipe 3: a job's facade function goes in the facade module of what it serves, which the recipe names; the
    # cap on its length is every module's, one rule stated with test_architecture's number
    from test_architecture import MAX_MODULE_LINES

    assert (f"every module of the package stays at {MAX_MODULE_LINES} lines or fewer (`tests/test_architecture.py`)"
            in " ".join(TEXT.split()))
    modules = {path.name for path in (ROOT / "trec_rag_eval" / "api").glob("*.py")} - {"__init__.py"}
    assert modules == set(re.findall(r"`trec_rag_eval/api/(\w+\.py)`", TEXT)) - {"__init__.py"}


def test_a_facade_function_is_api_name_by_its_module_s_all_alone():
    # recipe 3: a function added to a facade module and to that module's __all__ is api.<name>, no other edit
    import inspect

    from trec_rag_eval import api

    for module in (api.evaluations, api.analyses, api.llm_and_search, api.command_checks):
        public = {name for name, value in vars(module).items() if inspect.isfunction(value)
                  and value.__module__ == module.__name__ and not name.startswith("_")}
        assert public <= set(module.__all__), module.__name__
        assert all(getattr(api, name) is getattr(module, name) for name in module.__all__)


def test_the_facade_rule_it_states_is_the_contract():
    from conftest import pyproject

    contracts = pyproject()["tool"]["importlinter"]
    [facade] = [c for c in contracts["contracts"] if c["name"] == "The command line goes through the facade"]
    assert facade["source_modules"] == ["trec_rag_eval.cli"]
    for module in ("trec_rag_eval.service", "trec_rag_eval.core", "trec_rag_eval.measures", "trec_rag_eval.cluster"):
        assert module in facade["forbidden_modules"]
    assert "trec_rag_eval.io.atomic" not in facade["forbidden_modules"]
    assert "A command never imports a reader, the core, the measures" in TEXT


# Recipe 1 on a toy measure: a kernel and one registry entry, nothing else, and every way in knows it
TOY = '''
import numpy as np

from trec_rag_eval.measures.model import Family, IrMeasures, register
from trec_rag_eval.measures.registry import BINARY


def hit(ctx, m):
    """1 if a relevant document is in the top k (Success@k, written again)."""
    return (ctx.cnt_at(int(m.at)) > 0).astype(np.float64)


register(Family("hit", hit, "1 if a relevant document is in the top k (a toy).", kind="int_cutoffs",
                defaults=(1, 2), names=("Hit@k",), aliases=("Found@k",), params=BINARY, ranx={"hit": "Hit"},
                ir_measures=IrMeasures("Success"), reference="CONTRIBUTING.md's toy"))
'''

# q1 ranks d2 (not relevant), d1 (relevant), d3 (relevant); q2 finds nothing relevant:
# hit@1: q1 0, q2 0 -> 0.0; hit@2 and hit@3: q1 1, q2 0 -> 0.5; at level 2 (-l 2) only d3 counts: hit@2 0, hit@3 0.5
TOY_QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d4 1\n"
TOY_RUN = "q1 Q0 d2 1 3.0 t\nq1 Q0 d1 2 2.0 t\nq1 Q0 d3 3 1.0 t\nq2 Q0 d5 1 2.0 t\nq2 Q0 d6 2 1.0 t\n"


def _with_toy(tmp_path, code: str) -> str:
    import subprocess
    import sys

    (tmp_path / "toy_measure.py").write_text(TOY, encoding="utf-8")
    (tmp_path / "qrels").write_text(TOY_QRELS, encoding="utf-8")
    (tmp_path / "run").write_text(TOY_RUN, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", "import toy_measure\n" + code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**__import__("os").environ, "PYTHONPATH": os_path(tmp_path)})
    assert done.returncode == 0, done.stderr
    return done.stdout


def os_path(tmp_path) -> str:
    import os

    return os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")])


def test_a_measure_is_a_kernel_and_one_entry_the_facade_knows_it_by_every_name(tmp_path):
    out = _with_toy(tmp_path, """
import trec_rag_eval as tre
asked = ["hit.1,3", "Hit@2", "Found@2", "hit@3", "Hit(rel=2)@2"]
result = tre.evaluate("qrels", "run", asked)
print(list(result.summary))
for name in ["hit.1", "Hit@1", "hit.3", "Hit@3", "hit@3", "Hit@2", "Found@2", "hit@2", "Hit(rel=2)@2"]:
    print(name, result.summary[name])
""")
    # trec_eval's names, ours, its alias (one measure with Hit@2), ranx's (one with hit.3), with a parameter
    assert out.splitlines() == ["['Hit@1', 'hit@3', 'Hit@2', 'Hit(rel=2)@2']", "hit.1 0.0", "Hit@1 0.0", "hit.3 0.5",
                                "Hit@3 0.5", "hit@3 0.5", "Hit@2 0.5", "Found@2 0.5", "hit@2 0.5", "Hit(rel=2)@2 0.0"]


def test_a_measure_is_a_kernel_and_one_entry_the_command_line_knows_it(tmp_path):
    out = _with_toy(tmp_path, """
from trec_rag_eval.cli import main
main(["-m", "hit", "-m", "P.2", "-m", "Hit(rel=2)@3", "-l", "1", "qrels", "run"])
""")
    # trec_eval's order: registered last, after P; its default cutoffs 1 and 2; the notation after trec_eval's
    assert out == ("P_2                   \tall\t0.2500\nhit_1                 \tall\t0.0000\n"
                   "hit_2                 \tall\t0.5000\nHit(rel=2)@3          \tall\t0.5000\n")


def test_a_measure_is_a_kernel_and_one_entry_listed_and_cross_checked(tmp_path):
    out = _with_toy(tmp_path, """
from trec_rag_eval.cli import main
main(["measures"])
""")
    assert "Hit@k, Found@k\n    1 if a relevant document is in the top k (a toy).\n" in out
    assert "    trec_eval: -   ir-measures: Success   aggregate: mean\n" in out  # not one of trec_eval's
    pytest.importorskip("ir_measures")
    out = _with_toy(tmp_path, """
from trec_rag_eval.cli import main
main(["crosscheck", "-m", "Hit@2", "-m", "Found(rel=2)@3", "qrels", "run"])
""")
    assert "  Hit@2           agree     Success@2 via pytrec_eval: mean 0.500000\n" in out
    assert "  Found(rel=2)@3  agree     Success(rel=2)@3 via pytrec_eval: mean 0.500000\n" in out


@pytest.mark.parametrize(("entry", "error"), [
    ({"names": ("AP",), "params": BINARY}, "'AP' names two measure families: map and toy"),
    ({"names": ("AP@k",), "params": BINARY}, "'AP@k' names two measure families: map_cut and toy"),
    ({"names": ("AP@k",)}, "'AP@k' is written with other parameters by map and toy"),
    ({"names": ("Toy@k",), "ranx": {"mrr": "Toy"}}, "toy: ranx's name 'mrr' is already read as MRR"),
    ({"names": ("Toy@q",)}, "toy: a name is written NAME, NAME@k, NAME@p or NAME@x, not 'Toy@q'"),
    ({"names": ("Toy",), "aliases": ("SetP(beta=2)",)}, "toy: 'SetP(beta=2)' is not a name with one of its parameters"),
])
def test_a_name_that_would_mean_two_things_is_refused_and_nothing_is_registered(entry, error):
    from trec_rag_eval.measures.ir_notation import NAMES
    from trec_rag_eval.measures.model import REGISTERED, Family, register
    from trec_rag_eval.measures.requests import RANX_NAMES

    before = (dict(REGISTERED), dict(NAMES), dict(RANX_NAMES))
    with pytest.raises(ValueError) as refused:
        register(Family("toy", lambda ctx, m: None, "A toy.", **entry))
    assert str(refused.value) == error
    assert (dict(REGISTERED), dict(NAMES), dict(RANX_NAMES)) == before
