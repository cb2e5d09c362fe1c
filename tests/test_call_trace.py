"""A run's way through the code stays short: the modules a call enters and the distinct module-to-module
edges it takes (``tests/call_trace.py``, ``sys.setprofile``), each under a ceiling. A hop that only
forwards (a facade calling a service calling a module calling the evaluation) is an edge more to read;
a new one fails here, and the ceiling comes down as hops go.

Measured when the ceilings were set (a warm call, in a process of its own): ``tre.evaluate(dict, dict, "nDCG@10")``
25 modules and 45 edges, the default command 48 modules and 97 edges; the service split in four modules by
responsibility (26 and 47, 50 and 102); the service called within the facade's call, not through a scope of its own
(26 and 44, 50 and 100); the command's settings given as the library's keywords (50 and 99); the kind of judgments
a class attribute of the table, and measure-keyed values built where ``ByMeasure`` lives, not by a generator of the
caller's (25 and 41, 49 and 96); the service's measures and settings, chosen before any run is read, evaluated as
they are (``evaluate_measures``), not resolved and made a second time (25 and 38, 49 and 94); what is derived from
a table kept in a dict of the table's that the ranking and the chunk check fill, where the table called back up
into them (25 and 36, 49 and 92); preference files recognised by the format registry beside the other formats, not
by io.prefs_files calling back into the registry's reading of the head (25 and 36, 48 and 88); a result looked up
by its own ``Measure`` found without parsing it again (25 and 36, 48 and 86); what the user is told of an
evaluation's query set a method of ``Evaluation``, and of a mapping of chunk ids one of ``CollapseReport``, where
evaluation/run_notes.py held both apart from their data (24 and 35, 47 and 85); the default RAG set parsed once per
process, as the names asked are (24 and 35, 46 and 84); the RAG checks chosen by what the reader reported
(``ResultsReport.searched``), not by detecting the run's format again (24 and 35, 46 and 83); whether a file is
read in place or as bytes (a pipe, a URL, gzip) decided by io.text, which reads it, not by the TREC reader asking
io.location (24 and 35, 46 and 82); Parquet's magic bytes sniffed by io.format_registry beside the other formats,
not by a call into the Parquet reader's module (24 and 35, 45 and 79); an ir_datasets name told by io.location,
which tells what every input's name is, not by the ir_datasets reader's module (24 and 35, 44 and 78); trec_eval's
command line read by the evaluate command and the group's routing, not by cli.trec_eval_args between them (24 and
35, 43 and 76); the registry of formats and the loading that chooses among them one module, io.loading (24 and 35,
42 and 74); which measures fit which kind of judgments chosen by measures.requests with the other measures asked,
not by a call into the evaluation layer (23 and 34, 41 and 73); the outputs checked against the inputs only when
there is an output to a file, not every input's head read for standard output (23 and 34, 41 and 70); a run too
small to be read in pieces even as gzip not opened to see whether it is gzip (23 and 34, 41 and 69); an output
format found by one look in the registry, the name checked among the choices only when it is not there (23 and 34,
40 and 68); a table built on the columns tables.shapes made taking them as they are, and a dict, a list or a numpy
array told from an Arrow table by its type first; ``id=`` checked once where the user gave it, not by every run
made in memory; the chunk-id guess asked for only when one of the run's first ids has a separator (20 and 29, 38
and 65); the evaluate command's document opening its output itself (``render.output.document_to``), not handed the
writer the command opened (20 and 29, 38 and 64); an integer option's default, a number already, taken as it is
within its range, not written out and parsed back (20 and 29, 38 and 63); judgments and runs in memory made by
service.inputs itself (``as_qrels``, ``as_run``), not by a module io.input_values between (19 and 27, 38 and 63); a
regular file, a folder or a URL read where it lies without asking the call scope, which keeps what can be read once
(19 and 27, 38 and 62); a measure's family, parameters by name and name as shown fields fixed when it is made,
read as attributes, not properties of measures.model called on every evaluation (18 and 23, 38 and 58); the
table, JSON, CSV and JSON Lines texts naming each measure by its field ``Measure.shown``, not by ``str()`` (18
and 23, 38 and 57); whether a run is read ahead and whether in pieces decided on its size, asked once per run
file where the runs are listed (``service.inputs.run_files``) and passed down, not by service.large_runs asking
io.location whether it is a file and how large, twice for the first run (18 and 23, 38 and 56); the judgments read
one per document by the ranking, which decides every document's relevance (``tables.per_document`` among its
rules), and -c's num_rel recounted over the ranking's judgments, not the evaluation reading the qrels a second time
to hand both (18 and 22, 38 and 55); the cutoff of a measure of a cutoff family fixed when the measure is made and
read by its kernel as an attribute (``Measure.at``), not by a function of measures.model called on every evaluation
(18 and 22, 37 and 54); the evaluate command's output file checked against its inputs where it is opened
(``render.output.document_to``), and standard output, which replaces no file, not checked at all: no call into the
facade and io.output_checks to learn there is nothing to check (18 and 22, 36 and 52); the chunk mapping's two
options handed to the library as its keywords (``doc_id_pattern=`` beside ``doc_map=``), which refuses both once, in
its words, not turned into one value by cli.chunks first (18 and 22, 35 and 51); a run's label made safe to show (a
URL's password out) where it is shown, among several runs, not for a run written alone, which shows none (18 and 22,
34 and 50); the readers' columns taken by ``Qrels`` and ``Run`` as checked, not asked about by tables.shapes again
(18 and 22, 33 and 49); the kernels' context counting its queries by their ids and finding where each query's rows
begin among some rows by a binary search over their query numbers (``np.searchsorted``, as it finds the pooled
rows'), not through a method of the ranking counting every row (18 and 21, 33 and 48); where an input lies and how
its bytes are read one module, io.sources (io.location and io.text, which asked it everything, before), the
questions fsspec answers for a URL apart in io.urls (18 and 21, 32 and 46); the judgments module, which chooses
among the views of what ``judge`` wrote, entered only when its sidecar is beside the qrels or a view is asked, not
on every evaluation to learn there is none (18 and 21, 31 and 44); whether a run file is read ahead or in pieces
decided beside its size, where the run files are listed and read (``service.inputs``), not by service.large_runs,
which evaluates the runs read in pieces (18 and 21, 30 and 43); a run file read by the service, which reads the
inputs (``service.inputs.read_run_file``: the run read ahead, else read now), and by a cluster's task itself, not by
run_outcome, which evaluates a run already read (18 and 21, 30 and 42)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
CEILINGS = {"api": (18, 21), "command": (30, 42)}


@pytest.mark.parametrize("call", sorted(CEILINGS))
def test_the_way_through_the_package_stays_short(call: str) -> None:
    result = subprocess.run([sys.executable, str(HERE / "call_trace.py"), call, "--edges"], capture_output=True,
                            text=True, timeout=120, check=True)
    shown = json.loads(result.stdout)
    modules, edges = CEILINGS[call]
    listed = "\n".join(shown["edge_list"])
    assert shown["modules"] <= modules, f"{call}: {shown['modules']} modules entered, at most {modules}:\n{listed}"
    assert shown["edges"] <= edges, f"{call}: {shown['edges']} edges, at most {edges}:\n{listed}"


def test_the_trace_counts_edges_between_modules_not_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A package made here: ``a.first`` calls ``a.second`` (one module, no edge), which calls ``b.leaf``
    through ``functools.reduce`` (a C frame between: still the edge a -> b) and ``c.Thing().value`` (a
    property is a call: a -> c); ``b.leaf`` calls ``c.helper`` (b -> c). Three edges however often each is
    taken, three modules (the package's ``__init__``, whose body alone runs, is none)."""
    package = tmp_path / "toy"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text(
        "import functools\nfrom toy import b, c\n\n"
        "def first():\n    return second() + second()\n\n"
        "def second():\n    return functools.reduce(lambda x, y: x + b.leaf(), [0, 1, 2]) + c.Thing().value\n")
    (package / "b.py").write_text("from toy import c\n\ndef leaf():\n    return c.helper()\n")
    (package / "c.py").write_text(
        "def helper():\n    return 1\n\n"
        "class Thing:\n    @property\n    def value(self):\n        return 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(HERE))
    from call_trace import trace
    from toy import a  # type: ignore[import-not-found]

    entered, edges = trace(a.first, str(package))
    assert entered == {"toy.a", "toy.b", "toy.c"}
    assert edges == {("toy.a", "toy.b"), ("toy.a", "toy.c"), ("toy.b", "toy.c")}
