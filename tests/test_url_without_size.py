"""A URL whose server does not say its size (HTTP without Content-Length: fsspec's ``info`` gives ``size: None``,
and so does its ``size``): the run is listed with no size and read whole, as the run files' listing promises; a
question that needs the size (reading it in pieces, a cluster's byte ranges) is refused in words, never a
``TypeError`` from ``int(None)``."""

from __future__ import annotations

import pytest

import trec_rag_eval.io.sources as sources
import trec_rag_eval.io.urls as urls
from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.service.inputs import run_files

URL = "http://127.0.0.1:9/run.txt"


@pytest.fixture
def no_size(monkeypatch: pytest.MonkeyPatch) -> None:
    # what fsspec's HTTPFileSystem answers for a server that sends no Content-Length
    monkeypatch.setattr(urls, "info", lambda path, *args: {"name": path, "size": None, "type": "file"})
    monkeypatch.setattr(urls, "ask", lambda path, question, *args, **kwargs: None)


@pytest.mark.usefixtures("no_size")
def test_a_url_without_a_size_has_none_and_is_listed() -> None:
    assert sources.size_if_file(URL) is None
    assert run_files([URL]) == ([URL], {})


@pytest.mark.usefixtures("no_size")
def test_the_size_of_a_url_that_does_not_say_it_is_refused_in_words() -> None:
    with pytest.raises(InputFormatError, match="does not say its size") as caught:
        sources.size(URL)
    # said to a command-line user and a Python caller alike: no parameter or flag name (the error carries none to
    # translate), the way out in words
    assert URL in str(caught.value) and str(caught.value).endswith("read it whole, or download it first")
