"""The benchmark report's verdict on the speed targets: ratios of medians, read the right way round."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _load_run_module():
    sys.path.insert(0, str(BENCHMARKS))  # run.py imports generate.py from beside it
    try:
        spec = importlib.util.spec_from_file_location("benchmark_run", BENCHMARKS / "run.py")
        module = importlib.util.module_from_spec(spec)
        assert spec.loader is not None
        sys.modules["benchmark_run"] = module  # its dataclasses look their module up there
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCHMARKS))


run = _load_run_module()


def _timing(walls, rss_mb):
    return run.Timing(wall=list(walls), rss_kb=[rss_mb * 1024] * len(walls))


def test_big_case_ratios_are_peer_median_over_ours():
    timings = {
        "trec-rag-eval": _timing([2.0, 2.5, 3.0], 800),  # median 2.5 s
        "ir_measures CLI": _timing([20.0, 21.0, 30.0], 1200),  # 21 / 2.5 = 8.4x: met
        "pytrec_eval (polars)": _timing([7.0, 8.0, 9.0], 1400),  # 8 / 2.5 = 3.2x: not met
        "pytrec_eval (loop)": _timing([12.5, 13.0, 14.0], 1200),  # 13 / 2.5 = 5.2x: met
    }
    rows = run.targets_table("big", timings)
    assert rows[2:] == [
        "| 8x faster than ir_measures CLI | 8.4x | yes |",
        "| 5x faster than pytrec_eval (polars) | 3.2x | no |",
        "| 5x faster than pytrec_eval (loop) | 5.2x | yes |",
        "| peak memory at most pytrec_eval's (1.17 GB) | 800 MB | yes |",  # min(1400, 1200) MB = 1200/1024 GB
    ]


def test_small_case_checks_the_start_up_limit_only():
    assert run.targets_table("small", {"trec-rag-eval": _timing([0.31, 0.29, 0.35], 30)})[2:] == [
        "| trec-rag-eval under 0.3 s | 0.31 s | no |"]
    assert run.targets_table("small", {"trec-rag-eval": _timing([0.2, 0.25, 0.4], 30)})[2] == (
        "| trec-rag-eval under 0.3 s | 0.25 s | yes |")
