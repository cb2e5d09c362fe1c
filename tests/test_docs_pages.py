"""The documentation's claims are checked: README.md and every page of the site (docs/). Their worked example,
their commands and transcripts, their Python blocks and what those print, the measure table, the lists of
choices, the layers."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import warnings

import pytest
from conftest import REPO, invoke
from docs_pages import DOCS, blocks, page, page_names, section, shown_outputs
from docs_pages import REPO as ROOT


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
    conventions = page("conventions.md")
    assert "AP = (1/2 + 2/3) / 3 = 0.3889" in conventions and "nDCG@3 = 0.5627" in conventions
    assert invoke("-l2", "-m", "map", str(qrels), str(run)).stdout == "map                   \tall\t0.5000\n"


@pytest.mark.parametrize("name", ["README.md", "getting-started.md"])
def test_quick_start_output_is_what_the_page_shows(name):
    result = invoke(os.path.join(REPO, "fixtures", "qrels.txt"), os.path.join(REPO, "fixtures", "run_bm25.txt"))
    table = result.stdout.strip()
    assert table in page(name)


def test_the_readme_is_short_and_links_into_the_site():
    readme = page("README.md")
    assert len(readme.splitlines()) <= 300
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", readme)
    assert len(links) >= 10
    for link in links:
        assert (ROOT / link).is_file(), link
    # the five first tasks, one example each
    for task in ("## Evaluate", "## Compare, with significance", "## A search function, from Python", "## Fuse runs",
                 "## Judge the holes with an LLM"):
        assert task in readme, task


def test_every_command_is_documented():
    from trec_rag_eval.cli import commands

    site = "".join(page(name) for name in page_names() if name != "cli.md")
    for name in commands():
        if name != "evaluate":
            assert re.search(rf"trec-rag-eval {re.escape(name)}\b", site), f"no page shows {name}"


def test_measure_table_is_generated_from_the_registry():
    from trec_rag_eval.cli import main  # noqa: F401  (the command below is the generator)

    table = invoke("measures", "--markdown").stdout
    measures = page("measures.md")
    start = measures.index("<!-- measures-table:start -->") + len("<!-- measures-table:start -->")
    end = measures.index("<!-- measures-table:end -->")
    assert measures[start:end].strip() == table.strip(), (
        "docs/measures.md's table is stale: paste `trec-rag-eval measures --markdown` between its markers")


def test_the_format_choices_the_pages_list_are_the_registrys():
    # `--format trec\|table\|...` and `-f table|markdown|...`: each list is the choices of one kind of result
    from trec_rag_eval.render.output_formats import OUTPUT_FORMATS, choices

    kinds = {kind for fmt in OUTPUT_FORMATS.values() for kind in fmt.kinds}
    known = {choices(kind) for kind in kinds}
    listed = [names for name in page_names() if name != "cli.md"
              for names in re.findall(r"`(?:--format|-f) ((?:[a-z]+\\?\|)+[a-z]+)`", page(name))]
    assert len(listed) >= 1
    for names in listed:
        assert tuple(names.replace("\\", "").split("|")) in known, names


def test_the_output_formats_section_has_a_line_for_each_format_of_evaluate():
    from trec_rag_eval.render.output_formats import EVALUATION, choices

    formats = section(page("evaluator.md"), "## Output formats")
    assert tuple(re.findall(r"^- `([a-z]+)`", formats, re.MULTILINE)) == choices(EVALUATION)



def test_the_formats_said_to_write_full_precision_are_those_that_do():
    # "In `json`, `csv` and `jsonl` a value is written at full precision": the formats of evaluate whose text of
    # P@3 = 1/3 (one relevant document of three) holds Python's shortest digits of the double, 0.3333333333333333
    import trec_rag_eval as tre
    from trec_rag_eval.render.output_formats import EVALUATION, choices

    formats = section(page("evaluator.md"), "## Output formats")
    sentence = " ".join(formats[formats.index("\nIn `"):].split())
    said = re.match(r"In ((?:`[a-z]+`(?:, | and )?)+) a value is written at full precision", sentence)
    assert said, sentence[:80]
    evaluation = tre.evaluate({"q": {"a": 1}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, "P@3")
    full = [name for name in choices(EVALUATION) if "0.3333333333333333" in evaluation.render(name)]
    assert re.findall(r"`([a-z]+)`", said.group(1)) == full

def test_architecture_lists_every_layer_of_the_contract():
    # the page's lines and import-linter's contract name the same layers, in the same order
    from conftest import pyproject

    contracts = pyproject()["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["type"] == "layers")["layers"]
    architecture = section(page("architecture.md"), "# Architecture")
    block = architecture[architecture.index("```\n") + 4:architecture.rindex("```")]
    described = [line.split("  ")[0].strip() for line in block.splitlines()]
    assert described == [layer for layer in layers if layer != "__main__"]
    assert len(described) <= 12


def test_the_pytrec_eval_example_prints_what_pytrec_eval_prints():
    example, shown = next((code, output) for code, output in shown_outputs(page("guides/coming-from.md"))
                          if "import pytrec_eval" in code)
    done = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, check=True,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [REPO, os.environ.get(
                              "PYTHONPATH")]))))
    assert done.stdout == shown
    # and pytrec_eval itself prints the same
    theirs = subprocess.run([sys.executable, "-c", example.replace("from trec_rag_eval import pytrec_eval",
                                                                    "import pytrec_eval")],
                            capture_output=True, text=True, check=True)
    assert theirs.stdout == shown


def test_the_python_reference_names_every_public_name():
    import trec_rag_eval

    reference = page("reference.md")
    documented = set(re.findall(r"^::: trec_rag_eval\.(?:api\.)?(\w+)$", reference, re.MULTILINE))
    assert set(trec_rag_eval.__all__) <= documented, set(trec_rag_eval.__all__) - documented


def test_every_page_is_in_the_site_navigation():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for name in page_names()[1:]:
        assert f": {name}\n" in nav, f"docs/{name} is not in mkdocs.yml's nav"


# --- every code block of the documentation runs as written ------------------------------------------------

# blocks the tests cannot run, and why (nothing else is left out)
NOT_RUN = {
    "generate-queries": "needs a network LLM",
    "trec-rag-eval judge ": "needs a network LLM",
    "tre.judge(": "needs a network LLM",
    "tre.generate_queries(": "needs a network LLM",
    "tcp://scheduler:": "needs a Dask cluster on the network",
    "python -m pytest": "the test command itself (it would run this test again)",
}
# Python blocks that take seconds (a BM25 index over chunks, several engines): with -m slow
SLOW_PYTHON = ("chunks.jsonl", "for start in range(0, len(words), 12)", "remove_stop_words=False")


def _all_blocks(*languages: str) -> list[tuple[str, int, str, str]]:
    """(page, number of the block in its page, language, body) of every block in ``languages``."""
    return [(name, number, lang, body) for name in page_names() for number, (lang, body) in
            enumerate(blocks(page(name)), start=1) if lang in languages]


def _block_id(value: object) -> str:
    return str(value) if not isinstance(value, str) or "\n" not in value else value.strip().splitlines()[0][:40]


def test_every_command_block_is_marked_runnable():
    # a block of commands left untagged would escape the tests below (docs/cli.md holds the commands' --help
    # texts, usage lines and examples as each command prints them: tests/test_cli_reference.py checks it)
    for name, _, _, body in _all_blocks("", "text"):
        if name == "cli.md":
            continue
        first = body.strip().splitlines()[0] if body.strip() else ""
        assert not first.startswith(("trec-rag-eval ", "pip ", "$ ", "export ")) or "[options]" in first.lower(), (
            name, body)


def _not_run(body: str) -> None:
    for marker, reason in NOT_RUN.items():
        if marker in body:
            pytest.skip(f"not run by the test: {reason}")


def _shell_script(lang: str, body: str) -> str:
    lines = body.splitlines()
    if lang == "console":  # a transcript: the commands are the "$ " lines
        lines = [line[2:] for line in lines if line.startswith("$ ")]
    # the package is importable already: installing it again would need the network
    return "\n".join(re.sub(r"^pip install [^&#]*(&&\s*|$|#.*)", "", line) or ":" for line in lines)


@pytest.fixture(scope="module")
def docs_workspace(tmp_path_factory):
    """A folder holding what the examples name: the fixtures, the tutorial's dataset and results, the qrels and
    runs of the comparison example, an importable engine; trec-rag-eval on the PATH."""
    from test_compare_cli import write_seed_example

    root = tmp_path_factory.mktemp("docs")
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
    # shipped corpus, made by the documentation's own Python block
    seed_docs = ["doc_install_python", "doc_setup_env", "doc_nginx_proxy", "doc_cuisine"]
    chunk_run = [f"{q} Q0 {d}#{n} {r} {20 - r} chunks" for q in ("q1", "q2")
                 for r, (d, n) in enumerate(((d, n) for d in seed_docs for n in (0, 1)), 1)]
    (root / "chunk_run.txt").write_text("\n".join(chunk_run) + "\n")
    (root / "chunk_map.tsv").write_text("".join(f"{d}#{n}\t{d}\n" for d in seed_docs for n in (0, 1)))
    chunker = next(body for _, _, _, body in _all_blocks("python") if "chunks.jsonl" in body and "open(" in body
                   and "re.split" in body)
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
    "name, number, lang, body",
    [pytest.param(*block, marks=() if block[2] == "console" else pytest.mark.slow)
     for block in _all_blocks("sh", "console")],
    ids=_block_id,
)
def test_shell_block_runs_as_written(docs_workspace, name, number, lang, body):
    _not_run(body)
    root, env = docs_workspace
    script = _shell_script(lang, body)
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, (
        f"{name}, block {number}:\n{script}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}")
    if lang == "console":  # a transcript shows the output too: it must be what the command prints
        shown = "\n".join(line for line in body.splitlines() if not line.startswith("$ "))
        assert done.stdout.strip() == shown.strip(), f"{name}, block {number}"


@pytest.mark.parametrize(
    "name, number, lang, body",
    [pytest.param(*block, marks=pytest.mark.slow if any(mark in block[3] for mark in SLOW_PYTHON) else ())
     for block in _all_blocks("python")],
    ids=_block_id,
)
def test_python_block_runs_as_written(docs_workspace, monkeypatch, name, number, lang, body):
    # each block alone, in a namespace of its own, from the folder holding the fixtures; what it prints is what
    # the text block right after it shows, when there is one
    _not_run(body)
    pytest.importorskip("pandas")
    root, _ = docs_workspace
    monkeypatch.chdir(root)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warnings a page shows are checked by the library's own tests
        exec(compile(body, f"{name}, block {number}", "exec"), {"__name__": "__docs__"})  # noqa: S102
    shown = dict(shown_outputs(page(name))).get(body)
    if shown is not None:
        assert printed.getvalue() == shown, f"{name}, block {number}"


def test_the_pages_hold_blocks_of_every_kind():
    # the parametrized tests above are not empty: the pages have transcripts, commands and Python
    kinds = [lang for _, _, lang, _ in _all_blocks("console", "sh", "python")]
    assert kinds.count("console") >= 8 and kinds.count("sh") >= 10 and kinds.count("python") >= 15
    assert DOCS.is_dir()
