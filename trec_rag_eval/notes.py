"""What the user should be told about an input or a result, as a value: a ``Note``.

The library makes notes (queries missing from a run, chunk ids mapped, a run read whole after all)
and hands them on with its results; it never prints them. Python callers receive them as
``TrecRagEvalWarning`` warnings (``Note.warn``); the command line words each once, with its flags
for the parameters the text names (``Note.worded``), as a ``Warning: ...`` or ``Note: ...`` line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from trec_rag_eval.credentials import redact
from trec_rag_eval.errors import TrecRagEvalWarning, Worded, warn

Kind = Literal["warning", "note"]


@dataclass(frozen=True, eq=True)
class Note(Worded):
    """One thing to tell: ``kind`` (a ``"warning"`` may change what the numbers mean; a ``"note"`` says
    what was done), its ``message``, the ``subject`` it concerns (a file or run, or None), and the
    parameters its message names (``Worded.parameters``: the written text -> the parameter)."""

    kind: Kind
    message: str
    subject: str | None = None
    parameters: Mapping[str, str] = field(default_factory=dict)

    def __str__(self) -> str:  # a server's message or a URL in it without credentials (``credentials.redact``)
        return redact(f"{self.subject}: {self.message}" if self.subject else self.message)

    def about(self, subject: str) -> Note:
        """The same note, said of ``subject`` (a file or run)."""
        return replace(self, subject=subject)

    def warn(self) -> None:
        """Say it to a Python caller: a ``TrecRagEvalWarning`` (a note too: it changes nothing but is
        worth knowing), pointing at the caller's line outside the package (``errors.warn``)."""
        warn(TrecRagEvalWarning(str(self), self.parameters, self.kind))


def warning(message: str, subject: str | None = None, parameters: Mapping[str, str] | None = None) -> Note:
    """A note of kind ``"warning"``."""
    return Note("warning", message, subject, dict(parameters or {}))


def note(message: str, subject: str | None = None, parameters: Mapping[str, str] | None = None) -> Note:
    """A note of kind ``"note"``."""
    return Note("note", message, subject, dict(parameters or {}))
