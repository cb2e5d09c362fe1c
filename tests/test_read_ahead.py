"""A large TREC run is read on a background thread while the qrels are read (``service.inputs.read_ahead``):
the same numbers and the same errors, in the same order, as reading one after the other."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from conftest import benchmark_generator, invoke

import trec_rag_eval as tre
from trec_rag_eval.io import loading
from trec_rag_eval.io.trec.qrels_runs import SMALL_FILE_BYTES
from trec_rag_eval.service import inputs as runs
from trec_rag_eval.service.inputs import run_files

generate = benchmark_generator()


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    out = tmp_path_factory.mktemp("ahead")
    qrels, run = generate.ensure_pair(out, 200, 200, 11, log=lambda _: None)  # 40,000 lines, ~1.6 MB
    assert Path(run).stat().st_size > SMALL_FILE_BYTES
    return str(qrels), str(run)


@pytest.fixture
def readers(monkeypatch):
    """The names of the threads that read runs (load_run_report), in call order."""
    names: list[str] = []
    real = loading.load_run_report

    def spy(*args, **kwargs):
        names.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(loading, "load_run_report", spy)
    return names


def test_the_run_is_read_ahead_and_gives_the_same_bytes(pair, readers, monkeypatch):
    qrels, run = pair
    ahead = invoke("--format", "trec", "-q", "-m", "all_trec", qrels, run)
    assert ahead.exit_code == 0, ahead.stderr
    assert readers == ["trec-rag-eval read-ahead"]
    readers.clear()
    monkeypatch.setattr(runs, "read_ahead", lambda *args, **kwargs: None)
    after = invoke("--format", "trec", "-q", "-m", "all_trec", qrels, run)
    assert readers == ["MainThread"]
    assert after.stdout == ahead.stdout


def test_from_python_too(pair, readers):
    qrels, run = pair
    evaluation = tre.evaluate(qrels, run, "nDCG@10")
    assert readers == ["trec-rag-eval read-ahead"]
    assert evaluation.summary["nDCG@10"] == tre.evaluate(tre.read_qrels(qrels), tre.read_run(run), "nDCG@10").summary[
        "nDCG@10"]


def test_not_for_small_json_streamed_or_several_shards(pair, tmp_path, readers):
    qrels, run = pair
    small = tmp_path / "small.run"
    small.write_text("".join(Path(run).read_text().splitlines(keepends=True)[:100]))
    assert runs.read_ahead(str(small), small.stat().st_size) is None
    assert runs.read_ahead(run, Path(run).stat().st_size, stream=True) is None
    # a folder of runs and a missing file have no size (service.inputs.run_files): a missing file's error comes
    # in its turn
    missing = str(tmp_path / "missing.run")
    assert run_files([str(tmp_path), missing, run], folders=False) == ([str(tmp_path), missing, run],
                                                                      {run: Path(run).stat().st_size})
    assert runs.read_ahead(str(tmp_path), None) is None
    assert invoke("--stream", "-m", "map", qrels, run).exit_code == 0
    assert "trec-rag-eval read-ahead" not in readers


def test_errors_come_in_the_same_order(pair, tmp_path):
    """A bad qrels file is reported first (as when the run was read after it); a bad run line is
    reported with its file and line number, from the reader's thread, without a traceback."""
    qrels, run = pair
    lines = Path(run).read_text().splitlines(keepends=True)
    bad_run = tmp_path / "bad.run"
    bad_run.write_text("".join(lines[:30000]) + "q1 Q0 d1 1 high tag\n" + "".join(lines[30000:]))
    bad_qrels = tmp_path / "bad.qrels"
    bad_qrels.write_text("q1 0 d1 one\n")
    both = invoke("-m", "map", str(bad_qrels), str(bad_run))
    assert both.exit_code != 0 and both.stderr.startswith(f"Error: {bad_qrels}:1: ")
    run_only = invoke("-m", "map", qrels, str(bad_run))
    assert run_only.exit_code != 0
    assert run_only.stderr == f"Error: {bad_run}:30001: score must be a number, got 'high': 'q1 Q0 d1 1 high tag'\n"


@pytest.mark.parametrize("preset_by_user", [False, True])
def test_pyarrow_is_imported_with_its_allocator_settings_and_the_environment_unchanged(preset_by_user):
    """jemalloc reads its settings when pyarrow loads: ours are set for that import only (what a
    child process inherits is unchanged), and a setting of the user's is kept as it is."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "JE_ARROW_MALLOC_CONF"}
    if preset_by_user:
        env["JE_ARROW_MALLOC_CONF"] = "narenas:2"
    # numpy first: numpy before 2.3 sets OpenBLAS's variables as it loads (OPENBLAS_MAIN_FREE), pyarrow's import
    # would load it, and those are not ours to check
    code = ("import os, sys, numpy; from trec_rag_eval.allocators import import_pyarrow; "
            "seen = []; real = os.environ.__class__.__setitem__\n"
            "def spy(self, key, value):\n"
            "    seen.append((key, value)); real(self, key, value)\n"
            "os.environ.__class__.__setitem__ = spy\n"
            "import_pyarrow(); assert 'pyarrow' in sys.modules\n"
            "print(seen, os.environ.get('JE_ARROW_MALLOC_CONF'))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    ours = "[('JE_ARROW_MALLOC_CONF', 'dirty_decay_ms:100,muzzy_decay_ms:0')] None"
    expected = "[] narenas:2" if preset_by_user else ours
    assert out.strip() == expected


@pytest.mark.parametrize("preset_by_user", [False, True])
def test_the_command_sets_numpy_and_polars_allocators_unless_told(preset_by_user):
    """numpy's huge pages cost compaction inside page faults, OpenBLAS's idle threads spin ~0.1 s
    as the run's parse starts, polars' jemalloc keeps freed pages most of a second
    (``trec_rag_eval.allocators``); a user's own settings win."""
    import os
    import subprocess
    import sys

    names = ("NUMPY_MADVISE_HUGEPAGE", "OPENBLAS_NUM_THREADS", "_RJEM_MALLOC_CONF")
    env = {k: v for k, v in os.environ.items() if k not in names}
    if preset_by_user:
        env.update({"NUMPY_MADVISE_HUGEPAGE": "1", "OPENBLAS_NUM_THREADS": "2", "_RJEM_MALLOC_CONF": "narenas:2"})
    code = ("import os, sys; from trec_rag_eval.cli import main\ntry: main(['measures'])\nexcept SystemExit: pass\n"
            "import numpy; print(numpy._core.multiarray._get_madvise_hugepage(), os.environ['OPENBLAS_NUM_THREADS'],"
            " os.environ['_RJEM_MALLOC_CONF'],"
            " len(os.listdir('/proc/self/task')) if os.path.isdir('/proc/self/task') else 1, file=sys.stderr)")
    huge_pages, blas, polars_conf, threads = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stderr.split()
    if preset_by_user:
        assert (huge_pages, blas, polars_conf) == ("True", "2", "narenas:2")
    else:
        assert (huge_pages, blas, polars_conf) == ("False", "1", "dirty_decay_ms:100,muzzy_decay_ms:0")
        assert threads == "1"  # no BLAS thread started with numpy


def test_the_command_collects_reference_cycles_less_often():
    """The command's imports and a small file's rows make hundreds of thousands of objects, few in cycles: the
    command looks for cycles every COLLECT_EVERY new objects, not Python's 700; a library caller keeps Python's,
    also after running the command in its own process (main(args): a test, a notebook), and a threshold of its
    own (500) is given back as it was."""
    import subprocess
    import sys

    code = ("import gc, sys\nimport trec_rag_eval as tre\ntre.evaluate({'q': {'a': 1}}, {'q': {'a': 1.0}})\n"
            "print(gc.get_threshold()[0], file=sys.stderr)\nimport trec_rag_eval.cli as cli\nroute = cli._route\n"
            "def seen(args):\n    print(gc.get_threshold()[0], file=sys.stderr)\n    return route(args)\n"
            "cli._route = seen\n"
            "def command():\n    try: cli.main(['measures'])\n    except SystemExit: pass\n"
            "    print(gc.get_threshold()[0], file=sys.stderr)\n"
            "command()\ngc.set_threshold(500, 10, 10)\ncommand()\nprint(gc.get_threshold(), file=sys.stderr)")
    seen = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stderr.splitlines()
    # the library; during the command, after it; the same with the caller's own threshold
    assert seen == ["700", "50000", "700", "50000", "500", "(500, 10, 10)"]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the resident set from /proc")
def test_polars_reads_its_allocator_settings_from_the_commands_variable():
    """The variable is the one polars' jemalloc reads: with freed pages kept 0 ms, the 160 MB polars
    frees leave the resident set at once; by default they stay (until jemalloc's decay)."""
    import os
    import subprocess
    import sys

    from trec_rag_eval.allocators import POLARS_JEMALLOC_CONF

    code = ("import numpy as np, polars as pl\n"
            "def anon(): return int([l for l in open('/proc/self/status') if l.startswith('RssAnon')][0].split()[1])\n"
            "s = pl.Series(np.arange(20_000_000, dtype=np.uint64)); h = s.hash(1); before = anon(); del h\n"
            "print((before - anon()) // 1024)")
    env = {k: v for k, v in os.environ.items() if k != POLARS_JEMALLOC_CONF}
    freed_mb = [int(subprocess.run([sys.executable, "-c", code], env=run_env, capture_output=True, text=True,
                                   check=True).stdout)
                for run_env in (env, {**env, POLARS_JEMALLOC_CONF: "dirty_decay_ms:0,muzzy_decay_ms:0"})]
    assert freed_mb[0] < 50 and freed_mb[1] > 100, freed_mb


def test_freed_memory_of_threads_is_handed_back():
    """glibc keeps what threads freed in their arenas; ``release_freed_memory`` returns it
    (``malloc_trim``), so the next step's peak does not carry it."""
    import platform

    import numpy as np

    from trec_rag_eval import allocators

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("malloc_trim is glibc's")
    assert allocators._malloc_trim() is not None

    def resident() -> int:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1])

    def churn(_: int) -> None:  # many 2 MB arrays made and dropped: kept by the thread's arena
        for _ in range(50):
            np.ones(1 << 18).sum()

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(churn, range(4)))
    before = resident()
    allocators.release_freed_memory()
    assert resident() < before


def test_an_error_waits_for_the_reader_before_leaving(pair, tmp_path, monkeypatch):
    """An interpreter that exits while pyarrow's threads still parse can crash on its way out
    (exit 139 after 'Error: bad measure' on a 293 MB run): the command and evaluate() wait for the
    reader they started, whatever stops them."""
    qrels, run = pair
    waited: list[str] = []
    real_wait = runs.RunReader.wait

    def wait(self):
        waited.append(self.path)
        real_wait(self)

    monkeypatch.setattr(runs.RunReader, "wait", wait)
    bad = invoke("-m", "no_such_measure", qrels, run)
    assert bad.exit_code == 2 and waited == [run]
    bad_qrels = tmp_path / "bad.qrels"
    bad_qrels.write_text("q1 0 d1 one\n")
    waited.clear()
    assert invoke("-m", "map", str(bad_qrels), run).exit_code == 1 and waited == [run]
    waited.clear()
    with pytest.raises(tre.InputFormatError):
        tre.evaluate(str(bad_qrels), run)
    assert waited == [run]
