"""Domain exceptions. The CLI turns each into one ``Error: ...`` line at a single boundary."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping

from trec_rag_eval.credentials import redact
from trec_rag_eval.syntax import QUOTE_LIMIT, quote


class Worded:
    """A message that speaks of the library's parameters (``force=True``, ``judged_only``):
    ``parameters`` maps each such text in the message to the parameter's name, so the command line
    can say its flag instead (``worded``)."""

    parameters: Mapping[str, str] = {}

    def worded(self, spellings: Mapping[str, str]) -> str:
        """The message with each parameter said as ``spellings[name]`` (the CLI: its flags)."""
        text = str(self)
        for written, name in self.parameters.items():
            if name in spellings:
                text = text.replace(written, spellings[name])
        return text


class TrecRagEvalError(Worded, Exception):
    """Base class of every error this package raises on purpose. Its messages speak of parameters,
    never of flags (see ``Worded``). Its text never holds a credential this process sent, nor a URL's
    password (``credentials.redact``): a server's message or a URL quoted in it is said without them."""

    exit_code = 1

    def __str__(self) -> str:
        return redact(super().__str__())


class InputFormatError(TrecRagEvalError):
    """A line of an input file is not what was expected.

    ``str(err)`` reads ``path:line: reason: 'the line'`` so the user can jump to it; a line longer
    than ``QUOTE_LIMIT`` characters is cut, and its length said.
    """

    def __init__(self, path: str, line_no: int | None, reason: str, line: str | None = None) -> None:
        self.path = path
        self.line_no = line_no
        self.reason = reason
        self.line = line
        where = f"{path}:{line_no}" if line_no is not None else path
        text = f"{where}: {reason}"
        if line is not None:
            text += f": {quote(line)}"
        super().__init__(text)

    def __reduce__(self) -> tuple[type, tuple[str, int | None, str, str | None]]:
        # rebuilt from its fields, so the error crosses process boundaries (a Dask worker's task)
        return type(self), (self.path, self.line_no, self.reason, self.line)


class DuplicateDocumentError(InputFormatError):
    """A document listed twice for one query of a run. Found where the run is ranked, which knows no
    files: ``tables.duplicate_error`` turns it into the error citing both lines (or rows) where the run's
    reader says they stand (``Run.places``); this error as it is when they cannot be pointed at."""

    def __init__(self, path: str, query_id: str, doc_id: str) -> None:
        self.query_id = query_id
        self.doc_id = doc_id
        super().__init__(path, None, f"document {quote(doc_id)} listed twice for query {quote(query_id)}")

    def __reduce__(self) -> tuple[type, tuple[str, str, str]]:  # type: ignore[override]
        return type(self), (self.path, self.query_id, self.doc_id)


class MeasureSyntaxError(TrecRagEvalError):
    """A measure name or its parameters cannot be parsed; points at the bad characters."""

    exit_code = 2

    def __init__(self, text: str, start: int, end: int, reason: str) -> None:
        self.text = text
        self.start = start
        self.end = max(end, start + 1)
        self.reason = reason
        # a long request is shown as a window of QUOTE_LIMIT characters around the bad ones
        left = max(0, min(start - QUOTE_LIMIT // 4, len(text) - QUOTE_LIMIT))
        shown = text[left: left + QUOTE_LIMIT]
        caret = " " * (start - left) + "^" * max(1, min(self.end, left + QUOTE_LIMIT) - start)
        if len(shown) < len(text):
            shown = ("..." if left else "") + shown + ("..." if left + QUOTE_LIMIT < len(text) else "")
            caret = (" " * 3 if left else "") + caret
        super().__init__(f"bad measure {quote(text)}: {reason}\n  {shown}\n  {caret}")

    def __reduce__(self) -> tuple[type, tuple[str, int, int, str]]:
        return type(self), (self.text, self.start, self.end, self.reason)


class UsageError(TrecRagEvalError):
    """Options that contradict each other or cannot be honoured. ``parameters``: see
    ``TrecRagEvalError``."""

    exit_code = 2

    def __init__(self, message: str, parameters: Mapping[str, str] | None = None) -> None:
        self.message = message
        self.parameters = dict(parameters or {})
        super().__init__(message)

    def __reduce__(self) -> tuple[type, tuple[str, dict[str, str]]]:
        return type(self), (self.message, dict(self.parameters))


class InputTypeError(UsageError, TypeError):
    """An input of a type no entry point takes (a run given as ``42``, runs as one path): a usage error, named as
    the library's errors are (the command line's exit 2), and a ``TypeError``, as Python's own are."""


class SearchFailedError(TrecRagEvalError):
    """Some queries of a search run failed; what succeeded was still written and printed."""


class EngineError(TrecRagEvalError):
    """A search engine that cannot be used: it cannot be called as ``engine(query, k)``, or it
    returned a result whose document id cannot be read. Raised at once: every query would fail
    alike, and a table of zeros would hide it."""


class OutputExistsError(UsageError):
    """An output file exists and replacing it was not allowed. The message speaks of the Python
    parameter (``force=True``); the command line says ``--force`` instead."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(f"{path} already exists; pass force=True to overwrite it", {"pass force=True": "force"})

    def __reduce__(self) -> tuple[type, tuple[str]]:  # type: ignore[override]
        return type(self), (self.path,)


class OutputError(TrecRagEvalError):
    """An output cannot be written: its folder is missing or not writable, the disk is full, the
    pipe was closed. Nothing was left half-written (see ``io.atomic``)."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot write {path}: {reason}")


class TrecRagEvalWarning(Worded, UserWarning):
    """Something a caller should know but that does not stop the work (queries missing from a run,
    a convention that changes numbers). ``warnings.warn(..., TrecRagEvalWarning)`` from the library,
    or ``warnings.warn(TrecRagEvalWarning(text, parameters))`` when the text names parameters
    (``Worded``); the CLI prints the same text, with its flags, as a ``Warning: ...`` line."""

    kind = "warning"
    """``"warning"``, or ``"note"`` for a ``notes.Note`` that says what was done (the CLI's ``Note:`` line)."""

    def __init__(self, message: str = "", parameters: Mapping[str, str] | None = None, kind: str = "warning") -> None:
        super().__init__(message)
        if parameters:
            self.parameters = dict(parameters)
        self.kind = kind

    def __str__(self) -> str:  # as an error's: no credential, no URL's password
        return redact(super().__str__())


class EmptyRunWarning(TrecRagEvalWarning):
    """The run holds no result for any query. A caller that knows why (every engine call failed)
    says that instead, and silences this one."""


class MissingDependencyError(TrecRagEvalError):
    """An optional dependency is needed for this feature; the message gives the install line."""

    def __init__(self, package: str, extra: str, feature: str = "this feature") -> None:
        self.package = package
        self.extra = extra
        self.feature = feature
        super().__init__(
            f"{feature} needs the package {package!r}: pip install 'trec-rag-eval[{extra}]'"
        )

    def __reduce__(self) -> tuple[type, tuple[str, str, str]]:
        return type(self), (self.package, self.extra, self.feature)


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def caller_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the first line outside this package: the
    caller's line, whichever public function (and how many of the library's own calls) led there.
    1 is the frame that calls ``warnings.warn``: the function calling this one."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def warn(message: str | Warning, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` pointing at the caller's line (see ``caller_stacklevel``); ``message`` a text
    (of ``category``, by default a ``TrecRagEvalWarning``) or a warning instance."""
    if category is UserWarning and not isinstance(message, Warning):
        category = TrecRagEvalWarning
    # caller_stacklevel counts from this function's frame; warnings.warn's level 1 is this frame too
    warnings.warn(message, category, stacklevel=caller_stacklevel())
