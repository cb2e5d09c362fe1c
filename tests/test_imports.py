"""Heavy dependencies load only when a command needs them (STYLE: lazy imports)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True).stdout.split()
    return set(out)


HEAVY = {"polars", "pyarrow", "numpy", "scipy", "matplotlib", "ir_measures", "openai", "bm25s"}


def test_importing_the_package_loads_nothing_heavy():
    assert not HEAVY & _modules_after("import trec_rag_eval")


def test_help_loads_nothing_heavy():
    code = "from trec_rag_eval.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass"
    assert not HEAVY & _modules_after(code)


@pytest.mark.parametrize("command", ["evaluate", "convert", "measures"])
def test_evaluating_does_not_load_the_optional_extras(command):
    # each subcommand imports what it uses: none of these needs scipy, plotting, an LLM client or BM25
    code = f"import trec_rag_eval.cli.{command}"
    assert not {"scipy", "matplotlib", "ir_measures", "openai", "bm25s"} & _modules_after(code)


def test_a_small_trec_evaluation_does_not_load_polars(tmp_path):
    # polars' import alone takes longer than evaluating trec_eval's 1,500-line test run
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n")
    run.write_text("1 Q0 d1 1 2.5 t\n1 Q0 d2 2 2.5 t\n2 Q0 d9 1 1.0 t\n")
    code = (f"from trec_rag_eval.cli import main\ntry:\n    main([{str(qrels)!r}, {str(run)!r}, '-m', 'all_trec'])\n"
            "except SystemExit:\n    pass")
    loaded = _modules_after(code)
    assert "numpy" in loaded  # the evaluation really ran
    assert "polars" not in loaded and "pyarrow" not in loaded
    # nor the search-engine harness and the LLM client (http, email): only the commands that use them load them
    assert not {m for m in loaded if m.startswith(("trec_rag_eval.engine", "trec_rag_eval.llm", "email"))}


RARE_FAMILIES = {"trec_rag_eval.measures." + name for name in ("preferences", "preference_counts", "groups",
                                                                  "diversity", "cwl", "ideal_ordering")}


def test_the_quick_start_loads_no_module_of_a_family_it_does_not_compute():
    # the registry names every family, but a kernel of preferences, judgment groups, diversity or C/W/L is
    # imported when a measure of it is first computed: the README's first command, and an evaluation of the
    # RAG set in memory, load none of those modules (nor the rankings of preferences and judgment groups)
    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    code = (f"from trec_rag_eval.cli import main\ntry:\n    main([{str(fixtures / 'qrels.txt')!r}, "
            f"{str(fixtures / 'run_bm25.txt')!r}])\nexcept SystemExit:\n    pass")
    rare = RARE_FAMILIES | {"trec_rag_eval.core.preference_ranking", "trec_rag_eval.core.group_ranking"}
    loaded = _modules_after(code)
    assert "trec_rag_eval.measures.registry" in loaded and not rare & loaded
    assert "trec_rag_eval.io.parquet" not in loaded  # a text file is never asked for Parquet's columns
    in_memory = _modules_after("import trec_rag_eval as tre\ntre.evaluate({'q': {'a': 1}}, {'q': {'a': 1.0}})")
    assert "trec_rag_eval.measures.binary" in in_memory and not rare & in_memory
    # named, a family's module is not loaded yet; computed, it is, and its kernel gives the measure's value:
    # SDCG@2 scales DCG by the DCG of 2 documents of gain 1, so the one relevant document first gives
    # 1 / (1 + 1/log2(3)) = 0.6131...
    code = ("import trec_rag_eval as tre, sys\nfrom trec_rag_eval.measures.requests import parse_measure\n"
            "parse_measure('SDCG(max_rel=1)@2')\nprint('trec_rag_eval.measures.cwl' in sys.modules)\n"
            "print(tre.evaluate({'q': {'a': 1}}, {'q': {'a': 1.0, 'b': 0.5}}, 'SDCG(max_rel=1)@2')"
            ".summary_by_name['SDCG(max_rel=1)@2'])")
    named, computed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                     check=True).stdout.split()
    assert named == "False" and float(computed) == pytest.approx(1 / (1 + 1 / math.log2(3)), abs=1e-12)


QUICK_START_LEAVES = {
    "trec_rag_eval.io.chunk_collapse",  # chunk ids mapped to documents: doc_map (its report is io.chunks')
    "trec_rag_eval.core.frames",  # pandas and polars tables of results: to_pandas, to_polars
    "trec_rag_eval.tables.judgment_kinds",  # judgment groups and preferences: their qrels formats
    "trec_rag_eval.render.data_formats",  # the data formats: --format json, csv, jsonl
    "json", "csv",  # what only those formats write with
    "trec_rag_eval.io.judgments",  # judge's sidecar beside the qrels (looked for without it), its views: --judgments
}
"""What the README's first command loads none of: the modules of features it does not use, each loaded where its
feature starts (what it costs the command is their import: classes made, patterns compiled). The types of the
results stay importable (``typing.get_type_hints(Evaluation)``): their modules are loaded."""


def test_the_quick_start_loads_no_module_of_a_feature_it_does_not_use():
    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    code = (f"from trec_rag_eval.cli import main\ntry:\n    main([{str(fixtures / 'qrels.txt')!r}, "
            f"{str(fixtures / 'run_bm25.txt')!r}])\nexcept SystemExit:\n    pass")
    loaded = _modules_after(code)
    assert "trec_rag_eval.render.table" in loaded  # the table was written
    assert not QUICK_START_LEAVES & loaded
    # asked for, each feature loads its module
    csv_format = _modules_after(code.replace("'])", "', '--format', 'csv'])"))
    assert {"trec_rag_eval.render.data_formats", "csv"} <= csv_format


def test_a_large_run_is_read_with_pyarrow_and_ranked_with_polars(tmp_path):
    # the other side of the threshold: above SMALL_FILE_BYTES the columnar readers are worth their import
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("1 0 d1 1\n2 0 d7 2\n")
    # ~1.6 MB, two queries, every score tied with one other (its doc ids decide)
    run.write_text("".join(f"{1 + i % 2} Q0 d{i} {i} {1.0 / (i // 2 + 1)!r} t\n" for i in range(60_000)))
    code = (f"from trec_rag_eval.cli import main\ntry:\n    main([{str(qrels)!r}, {str(run)!r}])\n"
            "except SystemExit:\n    pass")
    loaded = _modules_after(code)
    assert "polars" in loaded and "pyarrow" in loaded
    # pyarrow imports pandas (0.4 s) from pa.array() and to_numpy() when it is installed: never used here
    assert "pandas" not in loaded
    # nor the modules whose import would hold the GIL mid-ranking: pyarrow.compute (Arrow's take,
    # pl.from_arrow), numpy.ma (polars' conversion of numpy arrays)
    assert "pyarrow.compute" not in loaded and "numpy.ma" not in loaded


@pytest.mark.parametrize("output", ["trec", "csv", "jsonl", "table", "json"])
def test_a_large_per_query_output_is_written_without_numpy_ma(tmp_path, output):
    # -q's text is built a column at a time (above 20,000 values: 300 queries x ~120 measures here);
    # handing numpy arrays to polars directly would import numpy.ma (~7 ms holding the GIL, mid-render)
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("".join(f"{q} 0 d{q}-1 1\n{q} 0 d{q}-7 2\n" for q in range(300)))
    run.write_text("".join(f"{q} Q0 d{q}-{i} {i} {200 - i} t\n" for q in range(300) for i in range(200)))
    code = (f"from trec_rag_eval.cli import main\ntry:\n    main(['-q', '-m', 'all_trec', '--format', {output!r}, "
            f"{str(qrels)!r}, {str(run)!r}, '-o', {str(tmp_path / 'out')!r}])\nexcept SystemExit:\n    pass")
    loaded = _modules_after(code)
    assert (tmp_path / "out").stat().st_size > 300 * 500  # every query's values were written
    assert "polars" in loaded and "numpy.ma" not in loaded


def test_a_small_json_evaluation_does_not_load_polars():
    # the RAG side: the tutorial's dataset and results, read as JSON, checked and evaluated
    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    args = [str(fixtures / "eval_dataset_tutorial.json"), str(fixtures / "results_tutorial.json")]
    code = f"from trec_rag_eval.cli import main\ntry:\n    main({args!r})\nexcept SystemExit:\n    pass"
    loaded = _modules_after(code)
    assert "trec_rag_eval.checks.rag" in loaded and "numpy" in loaded
    assert "polars" not in loaded


def test_the_public_api_is_listed_without_loading_it():
    # __all__ and dir() name the API; the functions and types load on first use
    code = "import trec_rag_eval as t\nassert 'evaluate' in t.__all__ and 'evaluate' in dir(t)"
    loaded = _modules_after(code)
    assert not HEAVY & loaded
    assert "trec_rag_eval.api" not in loaded


def test_functions_named_like_submodules_stay_functions():
    # compare/ is a package too; importing it must not hide the function
    import importlib

    import trec_rag_eval

    importlib.import_module("trec_rag_eval.compare")
    from trec_rag_eval import compare

    assert callable(compare) and compare.__module__ == "trec_rag_eval.api.analyses"
    assert trec_rag_eval.compare is compare


def test_importing_the_package_does_not_even_load_typing():
    # typing alone costs more than the package's own module: the facade stays a few milliseconds
    added = _modules_after("import trec_rag_eval") - _modules_after("pass")  # site and .pth files aside
    assert "typing" not in added


def test_the_tables_floor_loads_no_columnar_library():
    # Qrels and Run sit below the readers and the core: building small ones from lists or dicts, and reading
    # them back, must not pay polars' or pyarrow's import
    code = ("from trec_rag_eval.tables import Qrels, Run, column_list\n"
            "q = Qrels({'1': {'d1': 1}})\nr = Run({'1': {'d1': 2.0, 'd2': 1.0}})\n"
            "assert column_list(r, 'doc_id') == ['d1', 'd2'] and q.to_dict() == {'1': {'d1': 1}}")
    loaded = _modules_after(code)
    assert "trec_rag_eval.tables.shapes" in loaded and "numpy" in loaded
    assert "polars" not in loaded and "pyarrow" not in loaded
    assert not {name for name in loaded if name.startswith(("trec_rag_eval.io", "trec_rag_eval.core"))}


SMALL = ("import trec_rag_eval as tre\n"
         "qrels = {'1': {'a': 1, 'b': 0}, '2': {'c': 2}, '3': {'d': 1}}\n"
         "runs = {'x': {'1': {'a': 2.0, 'b': 1.0}, '2': {'c': 1.0, 'e': 3.0}, '3': {'d': 1.0}},\n"
         "        'y': {'1': {'a': 1.0, 'b': 2.0}, '2': {'c': 3.0, 'e': 1.0}, '3': {'f': 1.0}}}\n")


def _beyond(loaded: set[str], reference: str) -> set[str]:
    """The modules of ``loaded`` that neither the standard library, nor trec_rag_eval, nor the process that runs
    ``reference`` alone (``import numpy``: numpy and what it loads) has."""
    return {m for m in loaded - _modules_after(reference)
            if m.split(".")[0] not in sys.stdlib_module_names and not m.startswith("trec_rag_eval")}


def test_a_small_evaluation_from_python_loads_numpy_alone():
    # a notebook's first tre.evaluate on dicts: the tables as lists, ranked and measured with numpy; neither
    # polars, pyarrow, pandas nor scipy (each would add a tenth of a second to a few seconds to the first call)
    loaded = _modules_after(SMALL + "str(tre.evaluate(qrels, runs['x'], ['nDCG@10', 'AP', 'P@5']))")
    assert _beyond(loaded, "import numpy") == set()
    assert not {m for m in loaded if m.startswith(("trec_rag_eval.compare", "trec_rag_eval.engine",
                                                     "trec_rag_eval.llm", "trec_rag_eval.cluster"))}


def test_a_small_comparison_from_python_loads_numpy_alone():
    # the paired t-test, its interval and the MDD read compare.distributions' t and compare.noncentral_t's: no scipy
    # at all (scipy.special alone, ~0.3 s of imports, was nearly all of a first comparison), nor polars, pyarrow, pandas
    loaded = _modules_after(SMALL + "str(tre.compare(qrels, runs, 'nDCG@10'))")
    assert "trec_rag_eval.compare.distributions" in loaded  # the comparison ran
    assert _beyond(loaded, "import numpy") == set()
    assert "trec_rag_eval.compare.allpairs" not in loaded  # the tests of every pair are named without it


@pytest.mark.parametrize("flags", [[], ["--format", "json"], ["--interval", "bootstrap"], ["--test", "randomization"]])
def test_the_compare_command_loads_numpy_alone(flags, tmp_path):
    # the command's default comparison, another format, test and interval on two runs: no scipy either (the
    # resampling loads numpy.random, the bootstrap's percentiles numpy.ma: numpy's own)
    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    paths = [str(fixtures / name) for name in ("qrels.txt", "run_bm25.txt", "run_hybrid.txt")]
    output = tmp_path / "comparison"
    code = (f"from trec_rag_eval.cli import main\ntry:\n    main(['compare', *{flags!r}, *{paths!r}, '-o', "
            f"{str(output)!r}])\nexcept SystemExit:\n    pass")
    loaded = _modules_after(code)
    assert "hybrid" in output.read_text()  # the comparison was written
    assert not {m for m in loaded if m.startswith("scipy")}
    if not flags:  # the default: numpy alone (and click, the command line's own); not even numpy.random
        assert _beyond(loaded, "import numpy, click") == set()


def test_every_kernel_imported_later_names_a_function_of_its_module():
    # a misspelt _later("module", "name") would only show on the first evaluation of that family
    import importlib

    from trec_rag_eval.measures.model import REGISTERED, Deferred

    deferred = [family for family in REGISTERED.values() if isinstance(family.kernel, Deferred)]  # 36 families
    assert {family.kernel.module for family in deferred} == RARE_FAMILIES - {"trec_rag_eval.measures.preference_counts"}
    for family in deferred:
        assert callable(getattr(importlib.import_module(family.kernel.module), family.kernel.name)), family.name
