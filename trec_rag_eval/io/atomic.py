"""The one writer: every file this package writes (TREC files, JSON, Parquet, plots, HTML reports,
``-o``) and the results it prints go through here, so none is ever lost or half-written.

* ``check_output_paths`` runs before any work: each folder exists and is a folder, no output is an
  existing folder, none exists unless ``force``, no two outputs name the same file, and no output
  or progress file is an input or lies inside an input folder (the same file by device and
  inode: links and other spellings included).
* ``write_atomic`` writes through a temporary file in the destination's folder, then moves it
  into place in one step. Without ``force`` the move is a hard link, which fails if the destination
  appeared meanwhile. A target that exists and is not a regular file (``/dev/stdout``, a pipe, a
  device) is written in place: there is no file to replace, and renaming over it would destroy it.
* ``all_or_none`` groups the writes of one command: each is staged, and they are moved into place
  together when the block succeeds; if anything fails, no output is left behind (and a file
  replaced under ``force`` is put back).
* ``OutputFile`` writes one output a piece at a time (each run's part of an evaluation as it is
  done) with ``write_atomic``'s promise: a temporary file, moved into place by ``commit``, removed
  if anything fails first.
* ``write_stream`` prints to standard output.
* ``output_to`` and ``write_output`` are how a command writes its results: to standard output, or with ``-o``
  through ``OutputFile``; ``write_atomic`` is an ``OutputFile`` written once.

Every operating-system failure (missing folder, permission, full disk, broken pipe) becomes an
``OutputError`` naming the file and the reason. No text written or printed here holds a credential the process
sent (``credentials.redact_sent``: a URL's password, an API key, in any form).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO, TextIO

from trec_rag_eval import credentials
from trec_rag_eval.errors import OutputError, OutputExistsError, UsageError
from trec_rag_eval.io.sources import is_url

PathLike = str | os.PathLike[str]


def _reason(err: OSError) -> str:
    return err.strerror or str(err)


_STREAM = re.compile(r"/dev/(?:stdout|stderr|stdin|fd/\d+)|/proc/(?:self|thread-self|\d+)/fd/\d+")
"""A process's own streams: whatever they point at (a terminal, a pipe, or a regular file when the
shell redirected them), they are written in place, never replaced nor removed (replacing
``/dev/stdout`` by a file, or removing it, would take it from every process on the machine)."""


def _is_special(path: str) -> bool:
    """An existing target that is not a regular file (a device, a pipe) or is one of the process's
    streams (``/dev/stdout``, ``/dev/fd/N``): written in place."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    if _STREAM.fullmatch(os.path.abspath(path)):
        return True
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def refuse_overwrite(path: PathLike, force: bool) -> None:
    """Fail before any work when ``path`` exists (as a regular file) and ``force`` is not given."""
    name = os.fspath(path)
    if not force and os.path.lexists(name) and not _is_special(name):
        raise OutputExistsError(name)


def refuse_url(name: str) -> None:
    """An output named by a URL is refused: inputs may be URLs (io.sources); what is written stays on this machine."""
    if is_url(name):
        raise OutputError(name, "is a URL: outputs are written to local paths; write it here, then copy it with "
                                "your storage's own tool")


def check_output(path: PathLike, force: bool) -> None:
    """Everything that can be known about writing ``path`` before the work starts."""
    name = os.fspath(path)
    refuse_url(name)
    if os.path.isdir(name):
        raise OutputError(name, "is a folder, expected a file name")
    if _is_special(name):
        return
    _check_folder(name)
    refuse_overwrite(name, force)


def _check_folder(name: str) -> None:
    """The folder ``name`` is to be written in exists, is a folder, and can be written in."""
    folder = os.path.dirname(name) or "."
    if not os.path.exists(folder):
        raise OutputError(name, f"the folder {folder} does not exist")
    if not os.path.isdir(folder):
        raise OutputError(name, f"{folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(name, f"the folder {folder} is not writable")


def check_output_paths(paths: Iterable[PathLike | None], force: bool, inputs: Iterable[PathLike | None] = (),
                       progress: Iterable[PathLike | None] = ()) -> None:
    """The one rule that no command loses a user's file, checked before any work (None is skipped):

    * each output passes ``check_output`` (its folder exists, it is not a folder, it does not exist
      unless ``force``), and no two outputs name the same file;
    * no output is one of the ``inputs``, nor inside an input folder (a run among the runs of a
      folder, a partition of a Parquet folder): ``force`` allows replacing a file, never the data
      being read;
    * each ``progress`` file (read back, appended to, then removed: ``--progress-file``) may exist,
      but is neither an input, nor inside an input folder, nor an output; its folder exists, as an output's.

    "The same file" is decided on the file itself, not on its spelling: symbolic links, ``..``,
    hard links and bind mounts all name one file (its device and inode); a file not written yet is
    named by its real path."""
    read: list[tuple[str, tuple[object, ...], str | None]] = []  # (as given, identity, real folder if a folder)
    for path in inputs:
        if path is None or os.fspath(path) == "-":
            continue
        name = os.fspath(path)
        read.append((name, _identity(name), os.path.realpath(name) if os.path.isdir(name) else None))
    seen: dict[tuple[object, ...], tuple[str, str]] = {}  # identity -> (name, what it is)
    for path in paths:
        if path is None:
            continue
        name = os.fspath(path)
        if not _is_special(name):  # /dev/stdout or a pipe: written in place, never replaced
            _refuse_inputs(name, "output", read, "writing it would destroy what is being read; "
                                                "choose another output")
        check_output(name, force)
        key = _identity(name)
        if key in seen:
            raise UsageError(f"two outputs name the same file: {seen[key][0]} and {name}")
        seen[key] = (name, "output")
    for path in progress:
        if path is None:
            continue
        name = os.fspath(path)
        if os.path.isdir(name):
            raise OutputError(name, "is a folder, expected the name of a progress file")
        if _is_special(name):  # /dev/stdout, a pipe: it could not be read back, and removing it would be a loss
            raise OutputError(name, "is not a regular file (a device or a pipe): a progress file is read back, "
                                    "appended to and removed when the work is done; give a file name")
        _check_folder(name)  # said now, not at the first answer appended to it (nor never, if none comes)
        _refuse_inputs(name, "progress file", read, "it is read back, appended to and removed when the work is "
                                                     "done; choose another progress file")
        key = _identity(name)
        if key in seen:
            other, what = seen[key]
            raise UsageError(f"the progress file {name} is also the {what} {other}: it is removed when the work "
                             "is done; choose another progress file")
        seen[key] = (name, "progress file")


def _refuse_inputs(name: str, what: str, read: list[tuple[str, tuple[object, ...], str | None]],
                   consequence: str) -> None:
    key = _identity(name)
    real = os.path.realpath(name)
    for given, identity, folder in read:
        if identity == key:
            raise UsageError(f"the {what} {name} is also an input ({given}): {consequence}")
        if folder is None:
            continue
        if real.startswith(folder.rstrip(os.sep) + os.sep):
            raise UsageError(f"the {what} {name} is inside the input folder {given}: it would replace or join "
                             f"the files being read; {consequence.rpartition('; ')[2]}")
        if key[0] == "file" and _links(name) > 1:  # another name (a hard link) of a file inside the folder
            same = next((os.path.join(top, file) for top, _, files in os.walk(folder) for file in files
                         if _identity(os.path.join(top, file)) == key), None)
            if same is not None:
                raise UsageError(f"the {what} {name} is also an input ({same}, in the input folder {given}): "
                                 f"{consequence}")


def _links(name: str) -> int:
    try:
        return os.stat(name).st_nlink
    except (OSError, ValueError):
        return 1


def _identity(name: str) -> tuple[object, ...]:
    """One key per file: its device and inode when it exists (so a symbolic link, a hard link or
    another spelling is the same file), else its real path (symbolic links and '..' resolved)."""
    try:
        info = os.stat(name)
    except (OSError, ValueError):
        return ("path", os.path.realpath(name))
    return ("file", info.st_dev, info.st_ino)


@dataclass
class _Staged:
    temporary: str
    target: str
    force: bool


@dataclass
class _Stage:
    staged: list[_Staged] = field(default_factory=list)


_STAGE: contextvars.ContextVar[_Stage | None] = contextvars.ContextVar("trec_rag_eval_output_stage", default=None)


def write_atomic(path: PathLike, content: str | bytes, force: bool = False) -> None:
    """Write ``content`` (text as UTF-8) to ``path`` without ever leaving half a file (see the
    module docstring); inside ``all_or_none`` the file is only staged until the block ends. The one
    way there: an ``OutputFile`` written once."""
    with OutputFile(path, force) as out:
        out.write(content)
        out.commit()


@contextlib.contextmanager
def all_or_none(paths: Iterable[PathLike | None] = (), force: bool = False,
                inputs: Iterable[PathLike | None] = ()) -> Iterator[None]:
    """Every ``write_atomic`` inside the block is staged, then all are moved into place at its
    end; if the block or a move fails, none is left (files replaced under ``force`` come back).
    ``paths`` (and the ``inputs`` they must not name) are checked first with ``check_output_paths``."""
    check_output_paths(paths, force, inputs)
    stage = _Stage()
    token = _STAGE.set(stage)
    try:
        yield
        _STAGE.reset(token)
        _commit(stage.staged)
    finally:
        if _STAGE.get() is stage:
            _STAGE.reset(token)
        for staged in stage.staged:
            _remove(staged.temporary)


def _commit(staged: list[_Staged]) -> None:
    placed: list[tuple[_Staged, str | None]] = []
    try:
        for item in staged:
            backup = _backup(item.target) if item.force else None
            try:
                _place(item)
            except BaseException:
                if backup is not None:
                    _remove(backup)
                raise
            placed.append((item, backup))
    except BaseException:
        for item, backup in reversed(placed):  # undo: the command writes all of its outputs or none
            if backup is not None:
                os.replace(backup, item.target)
            else:
                _remove(item.target)
        raise
    for _, backup in placed:
        if backup is not None:
            _remove(backup)


def _backup(target: str) -> str | None:
    """A hard link to the file ``target`` is about to replace, to put it back if a later output fails."""
    if not os.path.isfile(target):
        return None
    backup = _temporary_name(target, ".bak")
    try:
        os.link(target, backup)
    except OSError:
        return None  # no hard links here: the replaced file cannot come back, as before
    return backup


def _temporary_name(target: str, suffix: str) -> str:
    folder, name = os.path.split(target)
    handle, temporary = _mkstemp(dir=folder or ".", prefix=f".{name}.", suffix=suffix)
    os.close(handle)
    os.unlink(temporary)
    return temporary


def _place(item: _Staged) -> None:
    """Move the staged temporary file to its target: replace under ``force``, else link (atomic
    no-clobber), falling back to check-then-rename where hard links are not supported."""
    try:
        if item.force:
            os.replace(item.temporary, item.target)
            return
        try:
            os.link(item.temporary, item.target)
        except FileExistsError:
            raise OutputExistsError(item.target) from None
        except OSError:  # no hard links on this file system: check, then rename
            if os.path.lexists(item.target):
                raise OutputExistsError(item.target) from None
            os.replace(item.temporary, item.target)
    except OutputExistsError:
        raise
    except OSError as err:
        raise OutputError(item.target, _reason(err)) from None


class OutputFile:
    """An output written a piece at a time (the evaluate command's, one run after another), with
    ``write_atomic``'s promise: the pieces go to a temporary file beside ``path``, which ``commit``
    moves into place (never over an existing file without ``force``; inside ``all_or_none``, staged
    with the command's other outputs). Closed without ``commit`` (an error, Ctrl-C, nothing to
    write), it leaves nothing behind. A target that is not a regular file (``/dev/stdout``, a pipe)
    is written in place, each piece as it comes."""

    def __init__(self, path: PathLike, force: bool = False) -> None:
        target = os.fspath(path)
        self._in_place: BinaryIO | None = None
        self._special = _is_special(target)
        if not self._special and os.path.islink(target):  # a link's file is written, the link kept
            target = os.path.realpath(target)
        self.target, self.force = target, force
        self._temporary: str | None = None
        self._out: BinaryIO | None = None
        if self._special:
            return
        check_output(target, force)
        folder, name = os.path.split(target)
        try:
            handle, self._temporary = _mkstemp(dir=folder or ".", prefix=f".{name}.", suffix=".tmp")
        except OSError as err:
            raise OutputError(target, _reason(err)) from None
        self._out = os.fdopen(handle, "wb")

    def write(self, content: str | bytes) -> None:
        data = _without_credentials(content).encode("utf-8") if isinstance(content, str) else content
        try:
            if self._special:
                if self._in_place is None:
                    self._in_place = open(self.target, "ab" if _STREAM.fullmatch(os.path.abspath(self.target))
                                          else "wb")
                self._in_place.write(data)
                self._in_place.flush()
                return
            if self._out is None:
                raise ValueError(f"{self.target}: written after it was committed or discarded")
            self._out.write(data)
        except OSError as err:
            self.discard()
            raise OutputError(self.target, _reason(err)) from None

    def commit(self) -> None:
        """Move what was written into place: under ``force`` it replaces the file, else a hard link puts it
        there, which fails if the file appeared meanwhile (inside ``all_or_none``, staged until the block ends).
        A target written in place is closed (created empty when nothing was written)."""
        if self._special:
            if self._in_place is None:
                self.write(b"")
            self._close_in_place()
            return
        if self._out is None or self._temporary is None:
            raise ValueError(f"{self.target}: committed after it was committed or discarded")
        out, temporary = self._out, self._temporary
        self._out = None
        try:
            out.flush()
            os.fsync(out.fileno())
            out.close()
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)  # mkstemp makes 0600; give the usual permissions
        except OSError as err:
            self.discard()
            raise OutputError(self.target, _reason(err)) from None
        stage = _STAGE.get()
        if stage is not None:
            if any(_identity(s.target) == _identity(self.target) for s in stage.staged):
                self.discard()
                raise UsageError(f"two outputs name the same file: {self.target}")
            stage.staged.append(_Staged(temporary, self.target, self.force))
            self._temporary = None  # the stage removes it
            return
        try:
            _place(_Staged(temporary, self.target, self.force))
        finally:
            self.discard()

    def discard(self) -> None:
        """Leave nothing: the temporary file is removed (a target written in place keeps what it got)."""
        with contextlib.suppress(OutputError):
            self._close_in_place()
        if self._out is not None:
            with contextlib.suppress(OSError):
                self._out.close()
            self._out = None
        if self._temporary is not None:
            _remove(self._temporary)
            self._temporary = None

    def _close_in_place(self) -> None:
        if self._in_place is not None:
            in_place, self._in_place = self._in_place, None
            try:
                in_place.close()
            except OSError as err:
                raise OutputError(self.target, _reason(err)) from None

    def __enter__(self) -> OutputFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()  # after commit, nothing is left to remove


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


STANDARD_OUTPUT = "standard output"


class StandardOutput:
    """Standard output as ``output_to`` gives it: each piece printed and flushed as it comes (``write_stream``);
    there is nothing to commit or discard."""

    def write(self, content: str) -> None:
        write_stream(content, sys.stdout)

    def commit(self) -> None:
        pass

    def discard(self) -> None:
        pass

    def __enter__(self) -> StandardOutput:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def output_to(path: PathLike | None, force: bool = False) -> OutputFile | StandardOutput:
    """Where a command's results go, a piece at a time: standard output when ``path`` is None, else an
    ``OutputFile`` (its pieces appear at ``path`` all at once, on ``commit``). Use it as a context manager."""
    return StandardOutput() if path is None else OutputFile(path, force)


def write_output(text: str, path: PathLike | None, force: bool = False) -> None:
    """A command's whole text: printed when ``path`` is None, else written to ``path`` (``write_atomic``)."""
    with output_to(path, force) as out:
        out.write(text)
        out.commit()


def write_stream(text: str, stream: TextIO, name: str = STANDARD_OUTPUT) -> None:
    """Print ``text`` and flush it, so a full disk or a closed pipe is reported here, once, as an
    ``OutputError``, rather than by the interpreter at exit."""
    try:
        stream.write(_without_credentials(text))
        stream.flush()
    except OSError as err:
        discard(stream)
        raise OutputError(name, _reason(err)) from None


def _without_credentials(text: str) -> str:
    """``text`` without any form of a credential the process sent (``credentials.redact_sent``); no call at all
    while it has sent none."""
    return credentials.redact_sent(text) if credentials.SENT_FORMS else text


def discard(stream: TextIO) -> None:
    """Point a broken stream at the null device, so what its buffer still holds is not written (and
    reported again) when the interpreter exits."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)


def _mkstemp(dir: str, prefix: str, suffix: str) -> tuple[int, str]:
    """``tempfile.mkstemp``: tempfile (with shutil and random) is imported only when an output is written to
    a file, not by every command that prints."""
    import tempfile

    return tempfile.mkstemp(dir=dir, prefix=prefix, suffix=suffix)
