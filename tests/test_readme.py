"""The README's claims are checked: its worked example, its commands, its measure table."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys

import pytest
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


def test_the_format_choices_the_readme_lists_are_the_registrys():
    # `--format trec\|table\|...` and `-f table|markdown|...`: each list is the choices of one kind of result
    from trec_rag_eval.render.output_formats import OUTPUT_FORMATS, choices

    kinds = {kind for fmt in OUTPUT_FORMATS.values() for kind in fmt.kinds}
    known = {choices(kind) for kind in kinds}
    listed = re.findall(r"`(?:--format|-f) ((?:[a-z]+\\?\|)+[a-z]+)`", README)
    assert len(listed) >= 1
    for names in listed:
        assert tuple(names.replace("\\", "").split("|")) in known, names


def test_the_output_formats_section_has_a_line_for_each_format_of_evaluate():
    from trec_rag_eval.render.output_formats import EVALUATION, choices

    section = README[README.index("### Output formats"):]
    section = section[:section.index("\n#")]
    assert tuple(re.findall(r"^- `([a-z]+)`", section, re.MULTILINE)) == choices(EVALUATION)


def test_architecture_lists_every_layer_of_the_contract():
    # the README's ten lines and import-linter's contract name the same layers, in the same order
    from conftest import pyproject

    contracts = pyproject()["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["type"] == "layers")["layers"]
    section = README[README.index("## Architecture"):README.index("## Dependencies")]
    block = section[section.index("```\n") + 4:section.rindex("```")]
    described = [line.split("  ")[0].strip() for line in block.splitlines()]
    assert described == [layer for layer in layers if layer != "__main__"]
    assert len(described) <= 12


def test_the_pytrec_eval_example_prints_what_the_readme_shows():
    blocks = readme_blocks()
    at = next(i for i, (lang, body) in enumerate(blocks) if lang == "python" and "import pytrec_eval" in body)
    shown_lang, shown = blocks[at + 1]
    assert shown_lang == "text"
    done = subprocess.run([sys.executable, "-c", blocks[at][1]], capture_output=True, text=True, check=True,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [REPO, os.environ.get(
                              "PYTHONPATH")]))))
    assert done.stdout == shown
    # and pytrec_eval itself prints the same
    theirs = subprocess.run([sys.executable, "-c", blocks[at][1].replace("from trec_rag_eval import pytrec_eval",
                                                                          "import pytrec_eval")],
                            capture_output=True, text=True, check=True)
    assert theirs.stdout == shown


# --- every shell block of the README runs as written ----------------------------------------------

FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
# blocks the test cannot run, and why (nothing else is skipped)
NOT_RUN = {
    "generate-queries": "needs a network LLM",
    "trec-rag-eval judge ": "needs a network LLM",
    "tcp://scheduler:": "needs a Dask cluster on the network",
    "python -m pytest": "the test command itself (it would run this test again)",
}


def readme_blocks() -> list[tuple[str, str]]:
    return [(lang, body) for lang, body in FENCE.findall(README)]


def test_every_command_block_is_marked_runnable():
    # a block of commands left untagged would escape the test below
    for lang, body in readme_blocks():
        first = body.strip().splitlines()[0] if body.strip() else ""
        if lang in ("", "text"):
            assert not first.startswith(("trec-rag-eval ", "pip ", "$ ", "export ")) or "[options]" in first, body


def _shell_script(lang: str, body: str) -> str:
    lines = body.splitlines()
    if lang == "console":  # a transcript: the commands are the "$ " lines
        lines = [line[2:] for line in lines if line.startswith("$ ")]
    # the package is importable already: installing it again would need the network
    return "\n".join(re.sub(r"^pip install [^&]*(&&\s*|$)", "", line) or ":" for line in lines)


@pytest.fixture(scope="module")
def readme_workspace(tmp_path_factory):
    """A folder holding what the README's examples name: the fixtures, the tutorial's dataset and results,
    the qrels and runs of the comparison example, an importable engine; trec-rag-eval on the PATH."""
    from test_compare_cli import write_seed_example

    root = tmp_path_factory.mktemp("readme")
    shutil.copytree(os.path.join(REPO, "fixtures"), root / "fixtures")
    shutil.copy(root / "fixtures" / "eval_dataset_tutorial.json", root / "eval_dataset.json")
    shutil.copy(root / "fixtures" / "results_tutorial.json", root / "results.json")
    results = json.loads((root / "results.json").read_text(encoding="utf-8"))
    reranked = {query: list(reversed(ids)) for query, ids in results.items()}
    (root / "results_reranked.json").write_text(json.dumps(reranked, ensure_ascii=False), encoding="utf-8")
    write_seed_example(root)  # qrels.txt, run_A.txt, run_B.txt, run_C.txt
    shutil.copy(root / "run_A.txt", root / "run.txt")
    (root / "my_search.py").write_text(
        "def search(query, k):\n    return ['doc_install_python', 'doc_nginx_proxy', 'doc_cuisine'][:k]\n")
    # the chunk examples: a run of chunk ids for the tutorial's dataset, its map, and the sentence chunks of the
    # shipped corpus, made by the README's own Python block
    seed_docs = ["doc_install_python", "doc_setup_env", "doc_nginx_proxy", "doc_cuisine"]
    chunk_run = [f"{q} Q0 {d}#{n} {r} {20 - r} chunks" for q in ("q1", "q2")
                 for r, (d, n) in enumerate(((d, n) for d in seed_docs for n in (0, 1)), 1)]
    (root / "chunk_run.txt").write_text("\n".join(chunk_run) + "\n")
    (root / "chunk_map.tsv").write_text("".join(f"{d}#{n}\t{d}\n" for d in seed_docs for n in (0, 1)))
    chunker = next(body for lang, body in readme_blocks() if lang == "python" and "chunks.jsonl" in body)
    subprocess.run([sys.executable, "-c", chunker], cwd=root, check=True)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "trec-rag-eval"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m trec_rag_eval "$@"\n')
    launcher.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join(filter(None, [REPO, os.environ.get("PYTHONPATH")])))
    # validate's example needs a published scores file: trec_eval -q's format for run.txt
    published = subprocess.run(["trec-rag-eval", "-q", "-m", "official", "qrels.txt", "run.txt"], cwd=root, env=env,
                               capture_output=True, text=True, check=True)
    (root / "published.txt").write_text(published.stdout)
    return root, env


# A transcript (console) shows what its commands print: compared in the default run. The other blocks only
# have to run (each command a Python process of its own, a second or more): with -m slow, as CI runs them.
@pytest.mark.parametrize(
    "lang, body",
    [pytest.param(lang, body, marks=() if lang == "console" else pytest.mark.slow)
     for lang, body in readme_blocks() if lang in ("sh", "console")],
    ids=lambda value: value.strip().splitlines()[0][:50] if "\n" in value.strip() or " " in value else value,
)
def test_readme_shell_block_runs_as_written(readme_workspace, lang, body):
    for marker, reason in NOT_RUN.items():
        if marker in body:
            pytest.skip(f"not run by the test: {reason}")
    root, env = readme_workspace
    script = _shell_script(lang, body)
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, f"{script}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    if lang == "console":  # a transcript shows the output too: it must be what the command prints
        shown = "\n".join(line for line in body.splitlines() if not line.startswith("$ "))
        assert done.stdout.strip() == shown.strip()
