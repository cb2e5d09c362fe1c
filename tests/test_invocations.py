"""trec_eval's everyday commands on a mid-size generated pair, in every line order and through --stream:
the same bytes as trec_eval 10.

The four invocations the benchmark times (benchmarks/run.py --invocation): the five standard measures,
the official set, ``-m all_trec`` and ``-q -m all_trec``. The pair is the benchmark's generator at 300
queries x 300 documents (90,000 lines, 3.7 MB: read by the columnar reader, ranked in parts, and its
``-q`` output built column-wise), written sorted, partially disordered and shuffled.

The expected bytes come from trec_eval itself when it is installed (``TREC_EVAL=/path/to/trec_eval``, or
``trec_eval`` on the PATH); otherwise from tests/golden/invocations/, which trec_eval 10 (usnistgov/trec_eval
f4253652c8efd0d86ddffd0d163cc0a0f813111a) printed on these files (``python tests/test_invocations.py
--trec-eval PATH`` writes them again). Those apply only to the same generated files: their SHA-256 are
stored beside them and checked first.
"""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import GOLDEN, benchmark_generator, invoke, trec_eval_binary

generate = benchmark_generator()

QUERIES, DEPTH, SEED = 300, 300, 11
EXPECTED = Path(GOLDEN) / "invocations"
INVOCATIONS = {  # name: (trec_eval's arguments, ours beyond them)
    "five": (["-m", "P.10", "-m", "recall.100", "-m", "map", "-m", "recip_rank", "-m", "ndcg_cut.10"], []),
    "official": ([], ["-m", "official"]),
    "all_trec": (["-m", "all_trec"], []),
    "all_trec-q": (["-q", "-m", "all_trec"], []),
}


def _pair(out: Path, order: str) -> tuple[Path, Path]:
    return generate.ensure_pair(out, QUERIES, DEPTH, SEED, log=lambda *_: None, order=order)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _golden(name: str) -> Path:
    return EXPECTED / (f"{name}.txt.gz" if name.endswith("-q") else f"{name}.txt")


def _read_golden(name: str) -> str:
    path = _golden(name)
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return data.decode("utf-8")


@pytest.fixture(scope="module")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    out = tmp_path_factory.mktemp("invocations")
    return {order: _pair(out, order) for order in generate.ORDERS}


@pytest.fixture(scope="module")
def expected(pairs: dict[str, tuple[Path, Path]]) -> dict[str, str]:
    """trec_eval's output of each invocation: run here when trec_eval is installed, else the golden files
    (after checking that they were made on these very files)."""
    binary = trec_eval_binary()
    qrels, run = pairs["sorted"]
    if binary is not None:
        return {name: subprocess.run([binary, *args, str(qrels), str(run)], capture_output=True, text=True,
                                     check=True).stdout for name, (args, _) in INVOCATIONS.items()}
    stored = dict(line.split() for line in (EXPECTED / "inputs.sha256").read_text().splitlines())
    made = {"qrels": _digest(qrels), "run": _digest(run)}
    if made != stored:
        pytest.skip("the generator wrote other files than the golden outputs were made on (another numpy or polars "
                    "version?): set TREC_EVAL=/path/to/trec_eval to compare with trec_eval itself")
    return {name: _read_golden(name) for name in INVOCATIONS}


@pytest.mark.parametrize("order", generate.ORDERS)
@pytest.mark.parametrize("name", list(INVOCATIONS))
def test_the_bytes_of_trec_eval(pairs, expected, order: str, name: str) -> None:
    qrels, run = pairs[order]
    args, ours = INVOCATIONS[name]
    result = invoke("--format", "trec", *ours, *args, str(qrels), str(run))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == expected[name]


@pytest.mark.parametrize("order", ["sorted", "partial"])
@pytest.mark.parametrize("name", list(INVOCATIONS))
def test_the_bytes_of_trec_eval_read_in_pieces(pairs, expected, order: str, name: str) -> None:
    qrels, run = pairs[order]
    args, ours = INVOCATIONS[name]
    # 1 MB pieces: four of them, each query whole in one
    result = invoke("--format", "trec", "--stream", "--chunk-size", "1", *ours, *args, str(qrels), str(run))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == expected[name]


def test_a_shuffled_run_cannot_be_read_in_pieces(pairs) -> None:
    qrels, run = pairs["shuffled"]
    result = invoke("--format", "trec", "--stream", "-m", "all_trec", str(qrels), str(run))
    assert result.exit_code != 0 and result.stdout == ""
    assert "comes back after other queries" in result.stderr and "sort" in result.stderr


def test_the_golden_files_are_what_trec_eval_prints(pairs) -> None:
    """Where trec_eval is installed, the committed expectations are checked against it (and its version)."""
    binary = trec_eval_binary()
    if binary is None:
        pytest.skip("trec_eval is not installed (TREC_EVAL=/path/to/trec_eval): the golden files are used as they are")
    qrels, run = pairs["sorted"]
    stored = dict(line.split() for line in (EXPECTED / "inputs.sha256").read_text().splitlines())
    assert stored == {"qrels": _digest(qrels), "run": _digest(run)}
    for name, (args, _) in INVOCATIONS.items():
        printed = subprocess.run([binary, *args, str(qrels), str(run)], capture_output=True, text=True, check=True)
        assert printed.stdout == _read_golden(name), name


def _write_goldens(binary: str, out: Path) -> None:
    qrels, run = _pair(out, "sorted")
    EXPECTED.mkdir(parents=True, exist_ok=True)
    (EXPECTED / "inputs.sha256").write_text(f"qrels {_digest(qrels)}\nrun {_digest(run)}\n")
    for name, (args, _) in INVOCATIONS.items():
        printed = subprocess.run([binary, *args, str(qrels), str(run)], capture_output=True, check=True).stdout
        path = _golden(name)
        path.write_bytes(gzip.compress(printed, mtime=0) if path.suffix == ".gz" else printed)
        print(f"{path}: trec_eval {' '.join(args)}")


if __name__ == "__main__":
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description="Write tests/golden/invocations/ with a trec_eval binary.")
    parser.add_argument("--trec-eval", required=True, metavar="PATH")
    with tempfile.TemporaryDirectory() as folder:
        _write_goldens(parser.parse_args().trec_eval, Path(folder))
    sys.exit(0)
