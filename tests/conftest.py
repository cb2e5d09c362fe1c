"""Shared test helpers: our golden files (tests/golden), where trec_eval's own test data may live, and a
command-line runner."""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import threading

import pytest
from click.testing import CliRunner

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE = os.path.join(REPO, "..", "shared", "reference", "trec_eval")
GOLDEN = os.path.join(REPO, "tests", "golden")

# trec_eval's own test data is not ours to commit: the byte-exact checks run on our golden files
# (tests/golden, always there), and test_trec_eval_reference.py repeats them on trec_eval's data only
# where ../shared/reference sits beside the checkout; elsewhere it is not collected (the header says so),
# rather than reported as dozens of skips.
collect_ignore = [] if os.path.isdir(REFERENCE) else ["test_trec_eval_reference.py"]


# No test lets a cloud SDK look for credentials: not on the network (an instance's metadata service), not in
# this machine's files or environment. Set here, for the whole session and every process it starts (Dask
# workers, command lines); a test that needs a store starts a fake one on 127.0.0.1 and gives it fake keys.
CLOUD_ISOLATION = {
    "AWS_EC2_METADATA_DISABLED": "true",        # botocore: no instance metadata service (169.254.169.254)
    "AWS_CONFIG_FILE": os.devnull,              # nor ~/.aws/config, ~/.aws/credentials
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "NO_GCE_CHECK": "True",                     # google-auth: no probe of the GCE metadata server
    "GCE_METADATA_HOST": "127.0.0.1:9",         # and, were it asked anyway, a closed port of this machine
    "GCE_METADATA_IP": "127.0.0.1:9",
}
CLOUD_CREDENTIALS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                     "AWS_DEFAULT_PROFILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                     "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ENDPOINT_URL",
                     "AWS_ENDPOINT_URL_S3", "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_STORAGE_CONNECTION_STRING",
                     "AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT_KEY")
os.environ.update(CLOUD_ISOLATION)
for _name in CLOUD_CREDENTIALS:
    os.environ.pop(_name, None)


def _loopback(address: object) -> bool:
    """Whether a socket address is on this machine (127.0.0.0/8, ::1, localhost), or no IP address at all
    (a Unix socket)."""
    if not isinstance(address, tuple):
        return True
    host = str(address[0])
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:  # a name: create_connection resolves names before it connects, so this is a raw connect
        return False


def _guarded(connect):
    def guarded(self, address, *args):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address):
            raise OSError(f"the tests connect to this machine only (127.0.0.1, ::1), not to {address!r}")
        return connect(self, address, *args)
    return guarded


# the rule above, enforced in the test process: any connection off this machine fails at once, loudly
socket.socket.connect = _guarded(socket.socket.connect)  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded(socket.socket.connect_ex)  # type: ignore[method-assign]


def pyproject() -> dict:
    """pyproject.toml, parsed (tomllib from Python 3.11, its backport tomli before: the test extra installs it)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as handle:
        return tomllib.load(handle)


def trec_eval_binary() -> str | None:
    """trec_eval itself, the oracle of some tests: ``TREC_EVAL=/path/to/trec_eval``, else ``trec_eval`` on the
    PATH; None when neither is there (those tests then skip, saying how to give it)."""
    path = os.environ.get("TREC_EVAL") or shutil.which("trec_eval")
    return path if path and os.access(path, os.X_OK) else None


NO_TREC_EVAL = "trec_eval not found: set TREC_EVAL=/path/to/trec_eval or put trec_eval on the PATH"


def pytest_report_header(config):
    if os.path.isdir(REFERENCE):
        return f"trec_eval's own test data: {os.path.normpath(REFERENCE)} (test_trec_eval_reference.py runs)"
    return (f"trec_eval's own test data: not at {os.path.normpath(REFERENCE)}, so test_trec_eval_reference.py "
            "is not collected; the golden files in tests/golden cover the same conventions")


def benchmark_generator():
    """benchmarks/generate.py as a module (the benchmarks are scripts, not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("benchmark_generate", os.path.join(REPO, "benchmarks", "generate.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pytest_collection_modifyitems(config, items):
    """Without -m, the tests marked slow are left out (``-m slow`` runs them, as CI does), unless the
    command names them (``tests/test_cluster.py::test_x``)."""
    if config.option.markexpr or any("::" in arg for arg in config.args):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


def first_by_default(values, *, keep: int = 1) -> list:
    """The cases of a heavy parametrized test (seeded blocks, one per command, ...): the first ``keep`` run by
    default, the others are marked slow (``-m slow``, as CI runs them). The default run keeps a representative
    case of every comparison, and stays short; a tuple is one case of several arguments."""
    return [pytest.param(*(value if isinstance(value, tuple) else (value,)),
                         marks=() if index < keep else pytest.mark.slow) for index, value in enumerate(values)]


def golden_path(name: str) -> str:
    """A golden input (tests/golden/inputs) or, with a slash, a file under tests/golden (``expected/out.binary``)."""
    path = os.path.join(GOLDEN, name if "/" in name else os.path.join("inputs", name))
    assert os.path.exists(path), f"golden file missing: {path}"
    return path


def golden_module(name: str):
    """tests/golden/NAME.py as a module (regenerate: the cases of commands.txt; make_inputs: the inputs)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(f"golden_{name}", os.path.join(GOLDEN, f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def reference_path(name: str) -> str:
    """A file of trec_eval's test data in ../shared/reference; skips the test when it is absent."""
    path = os.path.join(REFERENCE, name)
    if not os.path.exists(path):
        pytest.skip(f"trec_eval reference data not found at {REFERENCE} (../shared beside the checkout)")
    return path


class _ConsoleScript:
    """Lets CliRunner drive ``main()``, which routes ``QRELS RUN`` to evaluate and turns errors
    into one ``Error:`` line, exactly as the installed console script does."""

    name = "trec-rag-eval"

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        from trec_rag_eval.cli import main

        main(list(args or []))


def invoke(*args: str, input: str | None = None):
    """Run ``trec-rag-eval ARGS`` in-process: a click Result with .exit_code, .stdout, .stderr."""
    return CliRunner().invoke(_ConsoleScript(), list(args), input=input, catch_exceptions=False)


@pytest.fixture
def run_cli():
    return invoke


@pytest.fixture(params=["lists", "polars"])
def table_form(request, monkeypatch):
    """Run a test twice: with small inputs read and ranked as Python lists (no polars, as a small
    evaluation does), then with everything read and ranked as a large file is (runs through the fast
    reader into an Arrow table, or polars frames when the careful reader had to read them)."""
    if request.param == "polars":
        monkeypatch.setattr("trec_rag_eval.io.trec.qrels_runs.SMALL_FILE_BYTES", 0)
        monkeypatch.setattr("trec_rag_eval.core.ranking.LIST_FORM_MAX_ROWS", -1)
        monkeypatch.setattr("trec_rag_eval.core.ranking.CHECKED_LIST_MAX_ROWS", -1)
    return request.param


def feed_fifo(path, data: bytes) -> threading.Thread:
    """The named pipe at ``path`` fed ``data`` once by a writer thread (as ``cat run > f &``)."""

    def feed() -> None:
        try:
            with open(path, "wb") as out:  # blocks until the reader opens it
                out.write(data)
        except OSError:
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    return writer


def unblock_fifo(path) -> None:
    """If nothing opened the pipe, open it once so its writer thread can end."""
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    except OSError:
        pass
