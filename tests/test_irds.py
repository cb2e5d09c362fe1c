"""Qrels and topics by ir_datasets name (``irds:<dataset id>``), tested with datasets registered from local
files: no network. A missing ``irds`` extra and a download that fails give one clear error each."""

from __future__ import annotations

import sys
import uuid

import pytest

from trec_rag_eval.errors import InputFormatError, MissingDependencyError, UsageError
from trec_rag_eval.io.loading import load_qrels
from trec_rag_eval.io.trec.qrels_runs import read_trec_qrels
from trec_rag_eval.io.trec.topics import load_topics

ir_datasets = pytest.importorskip("ir_datasets")

QRELS = "1 0 a 2\n1 0 b 0\n1 0 c 1\n2 0 d 1\n"
QUERIES = "1\tdiversity in retrieval\n2\tsecond query\n"
RUN = "1 Q0 c 1 3.0 t\n1 Q0 a 2 2.0 t\n1 Q0 x 3 1.0 t\n2 Q0 d 1 5.0 t\n"

pytestmark = pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")


def _register(qrels_download, queries_download=None) -> str:
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TsvQueries

    parts = [TrecQrels(qrels_download, {0: "not relevant", 1: "relevant", 2: "highly relevant"})]
    if queries_download is not None:
        parts.append(TsvQueries(queries_download, namespace="test"))
    name = f"trec-rag-eval-test/{uuid.uuid4().hex}"
    ir_datasets.registry.register(name, Dataset(*parts))
    return name


@pytest.fixture
def local_dataset(tmp_path):
    from ir_datasets.util import LocalDownload

    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "queries.tsv").write_text(QUERIES)
    (tmp_path / "run").write_text(RUN)
    name = _register(LocalDownload(str(tmp_path / "qrels")), LocalDownload(str(tmp_path / "queries.tsv")))
    return f"irds:{name}", tmp_path


def test_qrels_and_topics_by_name_equal_the_files(local_dataset) -> None:
    name, folder = local_dataset
    by_name, by_file = load_qrels(name), read_trec_qrels(folder / "qrels")
    assert by_name.frame.rows() == by_file.frame.rows()
    assert by_name.source == name
    assert by_name.topics == {"1": "diversity in retrieval", "2": "second query"}
    assert load_topics(name) == by_name.topics


def test_evaluate_by_name_from_python_and_the_command_line(local_dataset, run_cli) -> None:
    import trec_rag_eval as tre

    name, folder = local_dataset
    # q1: c (1), a (2), x: P@3 = 2/3, RR = 1; q2: d first: P@3 = 1/3, RR = 1; means 1/2 and 1
    result = tre.evaluate(name, str(folder / "run"), ["P@3", "RR"])
    assert dict(result.summary) == pytest.approx({"P@3": 0.5, "RR": 1.0})
    assert result.to_dict() == tre.evaluate(str(folder / "qrels"), str(folder / "run"), ["P@3", "RR"]).to_dict()
    out = run_cli("--format", "trec", "-m", "P.3", name, str(folder / "run"))
    assert out.exit_code == 0 and out.stdout == "P_3                   \tall\t0.5000\n"


def test_without_the_extra_the_error_names_it(local_dataset, monkeypatch, run_cli) -> None:
    name, folder = local_dataset
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # import ir_datasets now raises ImportError
    with pytest.raises(MissingDependencyError) as caught:
        load_qrels(name)
    assert "pip install 'trec-rag-eval[irds]'" in str(caught.value)
    out = run_cli(name, str(folder / "run"))
    assert out.exit_code != 0 and "trec-rag-eval[irds]" in out.stderr and "Traceback" not in out.stderr


class _Unreachable:
    """A download that fails as one without network does."""

    def stream(self):
        raise ConnectionError("Failed to establish a new connection: [Errno 101] Network is unreachable")

    def path(self, force=True):
        raise ConnectionError("Failed to establish a new connection: [Errno 101] Network is unreachable")


def test_a_failed_download_names_the_dataset_and_the_cause() -> None:
    name = "irds:" + _register(_Unreachable())
    with pytest.raises(InputFormatError) as caught:
        load_qrels(name)
    text = str(caught.value)
    assert text.startswith(name) and "could not provide the qrels" in text and "Network is unreachable" in text


def test_unknown_and_empty_names() -> None:
    with pytest.raises(UsageError, match="ir_datasets has no dataset 'no-such/dataset'"):
        load_qrels("irds:no-such/dataset")
    with pytest.raises(UsageError, match="expected irds:<dataset id>"):
        load_qrels("irds:")


def test_crosscheck_and_compare_take_the_name(local_dataset, run_cli) -> None:
    name, folder = local_dataset
    out = run_cli("crosscheck", "-m", "P@3", "-m", "RR", name, str(folder / "run"))
    assert out.exit_code == 0 and "Verdict: OK: 2 agree" in out.stdout
    (folder / "run2").write_text(RUN.replace("1 Q0 c 1 3.0", "1 Q0 c 1 0.5"))
    out = run_cli("compare", "-m", "P@3", "-f", "csv", name, str(folder / "run"), str(folder / "run2"))
    assert out.exit_code == 0, out.stderr


def test_topics_by_name(local_dataset, run_cli, tmp_path) -> None:
    # a TREC qrels file judging query 1 only, the dataset's topics naming 1 and 2: query 2 is evaluated (0)
    name, folder = local_dataset
    (tmp_path / "one.qrels").write_text("1 0 a 2\n1 0 c 1\n")
    out = run_cli("--format", "trec", "-q", "-m", "P.3", "--topics", name, str(tmp_path / "one.qrels"),
                  str(folder / "run"))
    assert out.exit_code == 0, out.stderr
    assert [line.split("\t")[1] for line in out.stdout.splitlines()] == ["1", "2", "all"]
