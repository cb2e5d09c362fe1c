"""Fusion: each method on a small case computed by hand, every method against ranx's ``fuse`` on 50
seeded random run triples, the tie rule, cross-validated tuning, the command and its errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import REPO, first_by_default, invoke

import trec_rag_eval as tre
from trec_rag_eval.errors import OutputExistsError, UsageError

FIXTURES = f"{REPO}/fixtures"

# --- by hand ------------------------------------------------------------------------------------
# query q: A ranks a (3.0), b (2.0), c (1.0); B ranks c (10), d (5). Candidates C = {a, b, c, d}: 4.
A = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
B = {"q": {"c": 10.0, "d": 5.0}}
# min-max: A: a 1, b 0.5, c 0; B: c 1, d 0
HAND = {
    "combsum": {"a": 1.0, "b": 0.5, "c": 0.0 + 1.0, "d": 0.0},
    "combmnz": {"a": 1.0, "b": 0.5, "c": 2 * 1.0, "d": 0.0},
    "combanz": {"a": 1.0, "b": 0.5, "c": 1.0 / 2, "d": 0.0},
    "combmax": {"a": 1.0, "b": 0.5, "c": 1.0, "d": 0.0},
    "combmin": {"a": 1.0, "b": 0.5, "c": 0.0, "d": 0.0},
    "wsum": {"a": 0.5 * 1.0, "b": 0.5 * 0.5, "c": 0.5 * 0 + 0.5 * 1, "d": 0.0},
    "rrf": {"a": 1 / 61, "b": 1 / 62, "c": 1 / 63 + 1 / 61, "d": 1 / 62},
    "isr": {"a": 1.0, "b": 1 / 4, "c": 2 * (1 / 9 + 1), "d": 1 / 4},
    # A (n=3): a 4, b 3, c 2, d (4-3+1)/2 = 1; B (n=2): c 4, d 3, a and b (4-2+1)/2 = 1.5
    "borda": {"a": 4 + 1.5, "b": 3 + 1.5, "c": 2 + 4, "d": 1 + 3},
}


@pytest.mark.parametrize("method", sorted(HAND))
def test_each_method_by_hand(method):
    fused = tre.fuse({"A": A, "B": B}, method).run.to_dict()["q"]
    assert fused == pytest.approx(HAND[method], rel=1e-11, abs=1e-12)  # 12 significant digits


def test_ties_are_broken_by_doc_id_descending_and_written_in_that_order():
    # combmax: a and c both 1.0 -> c before a (doc id descending, trec_eval's rule); b 0.5; d 0
    fusion = tre.fuse({"A": A, "B": B}, "combmax")
    assert fusion.to_pandas()["doc_id"].tolist() == ["c", "a", "b", "d"]
    assert fusion.to_pandas()["rank"].tolist() == [1, 2, 3, 4]


def test_input_ranks_follow_trec_eval_ties():
    # A ties x and y at 1.0: trec_eval ranks y (doc id descending) first, so y gets 1/(60+1)
    fused = tre.fuse({"A": {"q": {"x": 1.0, "y": 1.0}}, "B": {"q": {"z": 1.0}}}, "rrf").run.to_dict()["q"]
    assert fused == pytest.approx({"y": 1 / 61, "x": 1 / 62, "z": 1 / 61})


def test_normalisations_by_hand():
    run = {"q": {"a": 4.0, "b": 2.0, "c": 0.0}}
    other = {"q": {"a": 5.0}}  # one document: minmax, zscore and sum divide by 0, so it scores 0
    alone = {"minmax": 0.0, "zscore": 0.0, "sum": 0.0, "max": 1.0, "rank": 1.0, "none": 5.0}
    expected = {
        "minmax": {"a": 1.0, "b": 0.5, "c": 0.0},
        "zscore": {"a": 2 / math.sqrt(8 / 3), "b": 0.0, "c": -2 / math.sqrt(8 / 3)},  # mean 2, population sd
        "sum": {"a": 4 / 6, "b": 2 / 6, "c": 0.0},
        "max": {"a": 1.0, "b": 0.5, "c": 0.0},
        "rank": {"a": 1.0, "b": 1 - 1 / 3, "c": 1 - 2 / 3},
        "none": {"a": 4.0, "b": 2.0, "c": 0.0},
    }
    for norm, values in expected.items():
        # combmax with a second run holding only "a"
        fused = tre.fuse({"A": run, "B": other}, "combmax", norm).run.to_dict()["q"]
        values = dict(values, a=max(values["a"], alone[norm]))
        assert fused == pytest.approx(values), norm


# --- against ranx -------------------------------------------------------------------------------
OURS_TO_RANX = {"rrf": "rrf", "combsum": "sum", "combmnz": "mnz", "combmax": "max", "combmin": "min",
                "combanz": "anz", "wsum": "wsum", "borda": "bordafuse", "isr": "isr"}
RANX_NORMS = {"minmax": "min-max", "zscore": "zmuv", "sum": "sum", "max": "max", "rank": "rank"}


def random_triple(seed: int) -> list[dict[str, dict[str, float]]]:
    """Three runs over the same 4 queries, each retrieving 1 to 15 of 25 documents with scores drawn
    from a continuous distribution (distinct: every run's ranking is unambiguous, and fused scores tie
    only where the definitions make them equal: 0 and 1 after min-max, Borda's points), scales
    differing between runs."""
    rng = np.random.default_rng(seed)
    runs = []
    for scale in (1.0, 10.0, 0.01):
        run = {}
        for query in ("q1", "q2", "q3", "q4"):
            size = int(rng.integers(1, 16))
            docs = rng.choice(25, size=size, replace=False)
            scores = rng.uniform(0.05, 1.0, size) * scale + rng.uniform(0, 5)
            run[query] = {f"d{d:02d}": float(s) for d, s in zip(docs, scores, strict=True)}
        runs.append(run)
    return runs


def ranx_run(scores, name):
    from ranx import Run

    # inserted in ranking order: ranx reads ranks from the order of its dict
    ordered = {q: dict(sorted(docs.items(), key=lambda item: (-item[1], _desc(item[0])))) for q, docs in scores.items()}
    return Run(ordered, name=name)


def _desc(doc_id: str) -> list[int]:
    return [-ord(ch) for ch in doc_id]


def tie_order(scores: dict[str, float]) -> list[str]:
    """The stated rule applied to any scores: descending (to 1e-9), then doc id descending."""
    return [d for d, _ in sorted(scores.items(), key=lambda item: (-round(item[1], 9), _desc(item[0])))]


# every method with ranx's default normalisation, and every normalisation under combsum and combmnz
CASES = [*((method, "minmax") for method in OURS_TO_RANX),
         *((method, norm) for method in ("combsum", "combmnz") for norm in RANX_NORMS if norm != "minmax")]


@pytest.mark.parametrize("block", first_by_default(range(10)))  # 5 triples by default, 50 with -m slow
def test_fusion_matches_ranx_on_random_triples(block):
    import ranx  # in the test extra: the oracle
    checked = 0
    for seed in range(block * 5, block * 5 + 5):
        triple = random_triple(seed)
        named = {f"r{i}": run for i, run in enumerate(triple)}
        theirs_runs = [ranx_run(run, name) for name, run in named.items()]
        for method, norm in CASES:
            weights = [0.2, 0.5, 0.3] if method == "wsum" else None
            params = {"weights": weights} if weights else {}
            theirs = ranx.fuse(theirs_runs, norm=RANX_NORMS[norm], method=OURS_TO_RANX[method], params=params).to_dict()
            ours = tre.fuse(named, method, norm, weights=weights)
            frame = ours.to_polars()
            for query in ("q1", "q2", "q3", "q4"):
                rows = frame.filter(frame["query_id"] == query)
                mine = dict(zip(rows["doc_id"].to_list(), rows["score"].to_list(), strict=True))
                assert set(mine) == set(theirs[query]), (seed, method, norm, query)
                for doc, score in theirs[query].items():
                    assert mine[doc] == pytest.approx(score, rel=1e-9, abs=1e-9), (seed, method, norm, query, doc)
                # the same documents in the same order: ranx's scores ordered by the stated tie rule
                assert rows["doc_id"].to_list() == tie_order(theirs[query]), (seed, method, norm, query)
            checked += 1
    assert checked == 5 * len(CASES)


# --- tuning -------------------------------------------------------------------------------------
RUNS = [f"{FIXTURES}/run_bm25.txt", f"{FIXTURES}/run_hybrid.txt"]


def test_optimize_reports_held_out_scores_from_cross_validation():
    fusion = tre.fuse(RUNS, "wsum", optimize=f"{FIXTURES}/qrels.txt", measure="nDCG@10", folds=4, seed=7)
    tuning = fusion.tuning
    assert tuning is not None and tuning.parameter == "weights" and tuning.n_settings == 11
    assert [f.n_queries for f in tuning.folds] == [2, 2, 2, 2]
    # recompute the held-out score from the definition: each fold's choice scored on that fold
    grid = [[i / 10, 1 - i / 10] for i in range(10, -1, -1)]
    per_setting = [tre.evaluate(f"{FIXTURES}/qrels.txt", tre.fuse(RUNS, "wsum", weights=w).run, "nDCG@10")
                   for w in grid]
    query_ids = per_setting[0].query_ids
    values = np.array([[e.per_query[q]["nDCG@10"] for q in query_ids] for e in per_setting])
    order = np.random.default_rng(7).permutation(len(query_ids))
    held = []
    for part, fold in zip(np.array_split(order, 4), tuning.folds, strict=True):
        train = np.setdiff1d(order, part)
        best = int(np.argmax(values[:, train].mean(axis=1)))
        assert fold.chosen.weights == pytest.approx(grid[best])
        assert fold.training == pytest.approx(values[best, train].mean())
        assert fold.held_out == pytest.approx(values[best, part].mean())
        held.extend(values[best, part])
    assert tuning.held_out == pytest.approx(np.mean(held))
    best = int(np.argmax(values.mean(axis=1)))
    assert fusion.weights == pytest.approx(grid[best]) and tuning.chosen_score == pytest.approx(values[best].mean())
    # the fused run is the one with the chosen weights
    assert fusion.run.to_dict() == tre.fuse(RUNS, "wsum", weights=grid[best]).run.to_dict()
    assert "held out" in str(fusion) and fusion.to_pandas("folds").shape == (4, 6)
    assert fusion.to_dict()["tuning"]["held_out"] == tuning.held_out


def test_optimize_rrf_tunes_k():
    fusion = tre.fuse(RUNS, "rrf", optimize=f"{FIXTURES}/qrels.txt", folds=2, ks=[1, 60])
    assert fusion.tuning is not None and fusion.tuning.parameter == "k" and fusion.k in (1.0, 60.0)


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "combmnz", "optimize": f"{FIXTURES}/qrels.txt"}, "combmnz has no parameter to tune"),
    ({"method": "nope"}, "unknown fusion method 'nope'"),
    ({"norm": "l2", "method": "combsum"}, "unknown normalisation 'l2'"),
    ({"method": "combsum", "weights": [1, 2]}, "weights apply to wsum and rrf"),
    ({"method": "wsum", "weights": [1]}, "one per run expected (2 runs), got 1"),
    ({"k": -1}, "k must be a finite number >= 0"),
    ({"method": "wsum", "optimize": f"{FIXTURES}/qrels.txt", "folds": 9}, "needs at least 9 queries"),
    ({"method": "wsum", "optimize": f"{FIXTURES}/qrels.txt", "step": 0.3}, "step must divide 1"),
])
def test_bad_parameters_are_named(kwargs, message):
    with pytest.raises(UsageError, match=None) as err:
        tre.fuse(RUNS, **kwargs)
    assert message in str(err.value)


def test_max_normalisation_needs_a_positive_top_score():
    with pytest.raises(UsageError, match="query 'q': max normalisation divides by the top score, which is -1"):
        tre.fuse({"A": {"q": {"a": -1.0, "b": -2.0}}, "B": B}, "combsum", "max")


def test_ranx_names_are_accepted():
    ours = tre.fuse(RUNS, "combmnz", "zscore").run.to_dict()
    assert tre.fuse(RUNS, "mnz", "zmuv").run.to_dict() == ours


def test_a_duplicate_document_is_refused(tmp_path):
    run = tmp_path / "dup.txt"
    run.write_text("q1 Q0 d1 1 2.0 x\nq1 Q0 d1 2 1.0 x\n")
    with pytest.raises(tre.InputFormatError, match="listed twice"):
        tre.fuse([str(run), RUNS[0]])


# --- the command --------------------------------------------------------------------------------
def test_command_writes_what_the_library_fuses(tmp_path):
    out = tmp_path / "fused.txt"
    result = invoke("fuse", *RUNS, "--method", "wsum", "--weights", "0.3,0.7", "-o", str(out))
    assert result.exit_code == 0, result.output
    expected = tre.fuse(RUNS, "wsum", weights=[0.3, 0.7])
    assert tre.read_run(str(out)).to_dict() == expected.run.to_dict()
    lines = out.read_text().splitlines()
    assert lines[0].split()[3] == "1" and lines[0].split()[5] == "fused-wsum"
    # the command's report is the fusion's (str), then what it wrote
    assert result.stdout == f"{expected}Wrote {out}: {expected.n_documents} documents for {expected.n_queries} " \
                            "queries\n"
    # JSON results by suffix, the same ranking
    as_json = tmp_path / "fused.json"
    assert invoke("fuse", *RUNS, "--method", "wsum", "--weights", "0.3,0.7", "-o", str(as_json)).exit_code == 0
    assert tre.read_run(str(as_json)).to_dict() == expected.run.to_dict()


def test_command_optimize_prints_held_out(tmp_path):
    out = tmp_path / "tuned.txt"
    result = invoke("fuse", *RUNS, "--method", "rrf", "--optimize", f"{FIXTURES}/qrels.txt", "--folds", "2",
                    "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "held out" in result.stdout and "k chosen on nDCG@10 by 2-fold cross-validation" in result.stdout


def test_command_never_overwrites_an_input(tmp_path):
    copy = tmp_path / "a.txt"
    copy.write_text(open(RUNS[0]).read())
    result = invoke("fuse", str(copy), RUNS[1], "-o", str(copy), "--force")
    assert result.exit_code == 2 and "is also an input" in result.output
    assert copy.read_text() == open(RUNS[0]).read()


def test_tuning_shows_its_progress_when_asked(capsys):
    tre.fuse(RUNS, "rrf", optimize=f"{FIXTURES}/qrels.txt", folds=2, ks=[1, 60], progress=True)
    assert "Tuning" in capsys.readouterr().err
    tre.fuse(RUNS, "rrf", optimize=f"{FIXTURES}/qrels.txt", folds=2, ks=[1, 60])  # 2 settings: no bar
    assert "Tuning" not in capsys.readouterr().err


def test_the_fused_run_is_written_in_every_run_format(tmp_path):
    fusion = tre.fuse(RUNS, "combsum")
    expected = fusion.run.to_dict()
    for name, fmt in (("f.txt", "trec"), ("f.json", "json"), ("f.parquet", "parquet"), ("f.out", "json")):
        path = tmp_path / name
        fusion.write(path, None if name != "f.out" else fmt)
        assert tre.read_run(str(path)).to_dict() == expected, name
    with pytest.raises(OutputExistsError):
        fusion.write(tmp_path / "f.txt")  # never replaced without force


# --- a parameter that would change nothing is refused, not ignored --------------------------------------------

@pytest.mark.parametrize(("kwargs", "message"), [
    ({"folds": 3}, "folds= tunes optimize= (the qrels on which the setting is chosen): give optimize=, or leave it "
                   "out"),
    ({"measure": "P@5", "seed": 3}, "measure= and seed= tune optimize="),
    ({"step": 0.2, "ks": [1, 2], "progress": True}, "step=, ks= and progress= tune optimize="),
    ({"relevance_level": 2}, "relevance_level= tunes optimize="),
    ({"method": "combsum", "k": 10}, "k=10 is rrf's constant: combsum has none"),
])
def test_tuning_parameters_without_optimize_are_refused(kwargs, message):
    with pytest.raises(UsageError) as err:
        tre.fuse(RUNS, **kwargs)
    assert message in str(err.value)


@pytest.mark.parametrize(("flags", "message"), [
    (["--folds", "3"], "Error: --folds tunes --optimize (the qrels on which the setting is chosen): give --optimize, "
                       "or leave it out\n"),
    (["-m", "P@5", "--seed", "3"], "Error: -m and --seed tune --optimize (the qrels on which the setting is chosen): "
                                   "give --optimize, or leave them out\n"),
    (["--step", "0.2", "--ks", "1,2", "-l", "2"], "Error: --step, --ks and -l tune --optimize (the qrels on which the "
                                                  "setting is chosen): give --optimize, or leave them out\n"),
    (["--method", "combsum", "--k", "10"], "Error: --k 10 is rrf's constant: combsum has none\n"),
])
def test_the_command_refuses_them_naming_its_flags(tmp_path, flags, message):
    out = tmp_path / "fused.txt"
    result = invoke("fuse", *RUNS, *flags, "-o", str(out))
    assert (result.exit_code, result.stderr) == (2, message)
    assert not out.exists()


def test_the_defaults_given_by_name_are_not_refused():
    # the values a caller spells out are the defaults: the same fused run
    assert tre.fuse(RUNS, "rrf", k=60).run.to_dict() == tre.fuse(RUNS, "rrf").run.to_dict()


@pytest.mark.parametrize("method, norm, said", [
    ("rrf", "zscore", True), ("isr", "minmax", True), ("borda", "sum", True),
    ("rrf", "none", False), ("rrf", None, False), ("combsum", "zscore", False),
])
def test_a_normalisation_given_to_a_rank_method_is_said_to_change_nothing(tmp_path, method, norm, said):
    # rrf, isr and borda read ranks: a --norm given with them is said once, never silently dropped
    args = ["fuse", "--method", method, *(["--norm", norm] if norm else []),
            f"{FIXTURES}/run_bm25.txt", f"{FIXTURES}/run_hybrid.txt", "-o", str(tmp_path / "fused.txt")]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    notes = [line for line in result.stderr.splitlines() if line.startswith("Note: ")]
    expected = (f"Note: --norm '{norm}' changes nothing: {method} reads each run's ranks, which a normalisation "
                "of its scores leaves as they are")
    assert notes == ([expected] if said else [])
    if said:  # the fused run is the one without --norm
        plain = invoke(*[a for a in args if a not in ("--norm", norm)][:-1], str(tmp_path / "plain.txt"))
        assert plain.exit_code == 0
        assert (tmp_path / "fused.txt").read_text() == (tmp_path / "plain.txt").read_text()


def test_the_library_says_it_with_its_parameter_name():
    runs = [f"{FIXTURES}/run_bm25.txt", f"{FIXTURES}/run_hybrid.txt"]
    with pytest.warns(tre.TrecRagEvalWarning, match=r"^norm='zscore' changes nothing: rrf reads"):
        tre.fuse(runs, "rrf", "zscore")


def test_the_facade_and_the_service_give_fuse_the_same_defaults():
    """A parameter that tunes optimize= is refused when it differs from its default, read from the service's
    signature (``service.analyses.fuse_runs``): the facade's must be the same, or a default given from Python
    would be refused as a change."""
    import inspect

    from trec_rag_eval.service.analyses import fuse_runs

    def defaults(function):
        return {name: p.default for name, p in inspect.signature(function).parameters.items()}

    assert defaults(tre.fuse) == defaults(fuse_runs)
