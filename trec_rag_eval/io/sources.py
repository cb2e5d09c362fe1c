"""Where an input lies and how its bytes are read: the one way this package finds, lists and opens what it reads.

Where: a local path, or a URL that fsspec reads (``s3://``, ``gs://``, ``abfs://``, ``file://``, ``memory://``,
...). Every reader asks here whether a path exists, is a folder, how large it is, what a folder holds, and opens it:
a local path goes through ``os`` and ``open``; a URL through ``io.urls`` (fsspec, imported only when a URL is
given, its failures one ``InputFormatError`` naming the URL). ``irds:msmarco-passage`` (an ir_datasets name,
``is_irds_name``: read by ir_datasets) is neither a file nor a URL. A folder's files are named by the folder's
spelling (a URL's by the folder's URL) and their names, so every message names what the user gave.

How: gzip undone (detected from the first two bytes, whatever the name), UTF-8 decoded, and every failure an
``InputFormatError`` that names the file and, for bytes that are not UTF-8, the line. Every reader goes through
here: the TREC readers (which keep bytes for their fast path and decode line by line with ``decode_line``), JSON
datasets and results, topics, BEIR, reference scores for ``validate``, the BM25 corpus and the generator's progress
file.

A path that can be read only once (``-`` for standard input, ``/dev/stdin``, a named pipe, a
process substitution ``<(...)``: anything that is neither a regular file nor a folder) is read
whole on first use and kept in memory for the rest of the call that reads it (``spooled``, in the
call's scope: ``trec_rag_eval.call_scope``), so detecting its format and then parsing it read the
same bytes, every message still names it as the user did, and the next call reads it anew.

Only reading goes through here: outputs are local paths (``io.atomic``).
"""

from __future__ import annotations

import errno
import gzip
import io
import os
import posixpath
import stat
import sys
import zlib
from collections.abc import Iterator
from typing import IO, BinaryIO, cast

from trec_rag_eval.call_scope import current_call, this_call
from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io import urls

SIDECAR_SUFFIX = ".llm.tsv"
"""What the name of ``judge``'s sidecar adds to its qrels file's: ``judged.qrels`` -> ``judged.qrels.llm.tsv`` (beside
a URL, the object of that name). Here, where every path is asked whether it is a file, so that looking for it
(``service.inputs.read_judgments``) does not import ``io.judgments``, which reads and writes it."""


def is_url(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a URL (``scheme://...``, ``io.urls.URL``) rather than a local path."""
    return isinstance(path, str) and urls.URL.match(path) is not None


IRDS_PREFIX = "irds:"
"""How an input named by ir_datasets begins (``irds:msmarco-passage/trec-dl-2019``; ``io.published.irds``)."""


def is_irds_name(value: object) -> bool:
    """Whether ``value`` names an ir_datasets dataset (``irds:<dataset id>``), read by ir_datasets, not a file."""
    return isinstance(value, str) and value.startswith(IRDS_PREFIX)


def local_path(path: str) -> str | None:
    """The local file a ``file://`` URL names, the path itself when it is no URL; None for any other
    URL (its data is not on this machine's file system)."""
    if not is_url(path):
        return path
    if urls.protocol(path) not in urls.LOCAL_PROTOCOLS:
        return None
    return urls.filesystem(path)[1]


def exists(path: str) -> bool:
    """Whether ``path`` (a local path or a URL) names a file or a folder."""
    if not is_url(path):
        return os.path.exists(path)
    return urls.kind(path) is not None


def is_dir(path: str) -> bool:
    """Whether ``path`` (a local path or a URL) is a folder (for object storage: a prefix holding objects)."""
    if not is_url(path):
        return os.path.isdir(path)
    return urls.kind(path) == "directory"


def is_dir_here(path: str) -> bool | None:
    """``is_dir``, or None when this machine cannot tell because it lacks the credentials to ask (none found,
    or refused): a cluster's workers, which read the runs with their own, may still (the command then leaves
    the question to them)."""
    if not is_url(path):
        return os.path.isdir(path)
    kind = urls.kind(path, unknown_without_credentials=True)
    return None if kind == "unknown" else kind == "directory"


def is_file(path: str) -> bool:
    """Whether ``path`` (a local path or a URL) is a file."""
    if not is_url(path):
        return os.path.isfile(path)
    return urls.kind(path) == "file"


def size(path: str) -> int:
    """The size in bytes of the file at ``path`` (a local path or a URL); a URL whose server does not say it (HTTP
    without a Content-Length) is refused in words, for what needs the size: reading a run in pieces."""
    if not is_url(path):
        return os.path.getsize(path)
    found = urls.ask(path, "size")
    if found is None:
        raise InputFormatError(path, None, "the server does not say its size, which reading it in pieces needs: "
                               "read it whole, or download it first")
    return int(found)


def size_if_file(path: str) -> int | None:
    """The size in bytes of ``path`` when it is a file (a local regular file, or a URL's object), None for
    anything else (a folder, a pipe or a device, nothing there) and for a URL whose server does not say it:
    ``is_file`` and ``size`` in one question (one ``stat``, one request)."""
    if not is_url(path):
        try:
            status = os.stat(path)
        except (OSError, ValueError):
            return None
        return status.st_size if stat.S_ISREG(status.st_mode) else None
    info = urls.info(path)
    if not isinstance(info, dict) or info.get("type") == "directory":
        return None
    found = info.get("size")
    if found is None:
        found = urls.ask(path, "size")  # a back-end whose info leaves it out; None again: no size said (HTTP)
    return int(found) if found is not None else None


def join(folder: str, name: str) -> str:
    """``name`` inside ``folder``, in the folder's own spelling (a URL's with ``/``)."""
    if not is_url(folder):
        return os.path.join(folder, name)
    return f"{folder.rstrip('/')}/{name}"


def basename(path: str) -> str:
    """The last part of ``path``'s name (a folder's name without its trailing separator)."""
    if not is_url(path):
        return os.path.basename(os.path.normpath(path))
    return posixpath.basename(path.rstrip("/"))


def list_dir(path: str) -> list[tuple[str, bool]]:
    """(name, is a file) of every entry of the folder ``path``, in no particular order."""
    if not is_url(path):
        return [(name, os.path.isfile(os.path.join(path, name))) for name in os.listdir(path)]
    entries = urls.ask(path, "ls", True)
    return [(posixpath.basename(str(entry["name"]).rstrip("/")), entry.get("type") == "file") for entry in entries]


def files_under(path: str) -> list[str]:
    """Every file under the folder ``path``, sub-folders included, each named in ``path``'s spelling,
    in no particular order; names starting with '.' or '_' (and what is under them) are skipped, as
    data platforms mark their own files (``_SUCCESS``, ``.crc``)."""
    found: list[str] = []
    if not is_url(path):
        for folder, subfolders, files in os.walk(path):
            subfolders[:] = [d for d in subfolders if not d.startswith((".", "_"))]
            found.extend(os.path.join(folder, f) for f in files if not f.startswith((".", "_")))
        return found
    fs, root = urls.filesystem(path)
    try:
        names = fs.find(root, withdirs=False, detail=False)
    except Exception as err:  # noqa: BLE001
        raise urls.failure(path, err) from None
    prefix = root.rstrip("/") + "/"
    for name in names:
        relative = str(name)[len(prefix):] if str(name).startswith(prefix) else posixpath.basename(str(name))
        if relative and not any(part.startswith((".", "_")) for part in relative.split("/")):
            found.append(join(path, relative))
    return found


HEAD_BLOCK_BYTES = 1 << 16
"""What a URL opened to read its first bytes (format detection, gzip and Parquet magic) fetches at a
time: object stores' file systems fetch several megabytes a request by default."""


def open_bytes(path: str, head: bool = False) -> IO[bytes]:
    """``path`` opened for reading bytes: a local file with ``open`` (whose ``OSError`` is the
    caller's to word, as before), a URL through fsspec (its failures one ``InputFormatError``);
    ``head``: only its first bytes will be read, so a URL fetches no more than ``HEAD_BLOCK_BYTES``."""
    if not is_url(path):
        return open(path, "rb")
    # the first bytes: no read-ahead cache, which would fetch a block beyond what is read
    handle: IO[bytes] = (urls.ask(path, "open", "rb", HEAD_BLOCK_BYTES, cache_type="none") if head
                         else urls.ask(path, "open", "rb"))
    return handle


GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"
"""UTF-8's byte-order mark: dropped where a file starts with it, as polars drops it."""
GZIP_ERRORS = (OSError, EOFError, zlib.error)
"""What a truncated or corrupt gzip stream raises while it is read."""


STANDARD_INPUT = "-"


def read_once(path: str) -> bool:
    """Whether ``path`` can be read only once: standard input ``-``, a pipe, a FIFO, a device, or a name
    that is gone since the call read it (what the call kept is its content). A URL, a regular file or a
    folder is read where it lies, as often as needed, without asking the call."""
    if path == STANDARD_INPUT:
        return True
    if is_url(path):  # read through fsspec, as often as needed
        return False
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        call = current_call()
        return call is not None and path in call.inputs
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def spooled(path: str) -> bytes | None:
    """The whole content of ``path`` when it can be read only once (standard input ``-``, a pipe, a
    FIFO, a character device such as ``/dev/stdin``), read on first use and kept for every later
    reader of the same name in the same call (``call_scope``); None for a regular file, a folder or a
    missing path (read as usual), which the call is not asked about."""
    if not read_once(path):
        return None
    call = this_call(path)
    with call.lock:
        if path not in call.inputs:
            try:
                if path == STANDARD_INPUT:
                    data = sys.stdin.buffer.read()
                else:
                    with open(path, "rb") as handle:
                        data = handle.read()
            except OSError as err:
                raise InputFormatError(path, None, f"cannot read the file: {err.strerror or err}") from None
            call.inputs[path] = data
        return call.inputs[path]


def file_size(path: str) -> int:
    """The size in bytes of ``path`` (before gzip is undone), a pipe's included (``spooled``)."""
    data = spooled(path)
    return len(data) if data is not None else size(path)


def check_file(path: str) -> None:
    """The file exists and is a file; the errors every reader gives."""
    if spooled(path) is not None:
        return
    if not exists(path):
        raise InputFormatError(path, None, NO_SUCH_FILE)
    if is_dir(path):
        raise InputFormatError(path, None, A_FOLDER)


NO_SUCH_FILE = "no such file"
A_FOLDER = "is a directory, expected a file"


def check_local_input(path: str, folder: bool = False) -> None:
    """An input a user named, checked before anything is read, in the words its reader would use when reading it:
    it exists, it is a file (or, where ``folder``, a folder too: a BEIR folder, a folder of runs), and it can be
    read. A URL or ``irds:`` name is left to its reader (a URL's existence is a request away), and so is a pipe or
    a device (``/dev/stdin``, ``<(...)``: read once, by its reader). ``-`` is a file of that name here: where an
    argument takes standard input, the command line hands it on unchecked."""
    if is_url(path) or is_irds_name(path):
        return
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        raise InputFormatError(path, None, NO_SUCH_FILE) from None
    if stat.S_ISDIR(mode):
        if not folder:
            raise InputFormatError(path, None, A_FOLDER)
        if not os.access(path, os.R_OK | os.X_OK):
            raise InputFormatError(path, None, f"cannot read the folder: {os.strerror(errno.EACCES)}")
    elif stat.S_ISREG(mode) and not os.access(path, os.R_OK):
        # the words of an open() refused (read_bytes): the reader would say the same when it opens it
        raise InputFormatError(path, None, f"cannot read the file: {os.strerror(errno.EACCES)}")


def bytes_to_read(path: str) -> bytes | None:
    """The bytes of the file at ``path`` when it is not read where it lies: a pipe or standard input (read once),
    a URL (fetched once where it lies), gzip (decompressed); None for a local file, read in place. A missing
    file, a folder or an empty file is refused as every reader refuses it."""
    check_file(path)
    if (spooled(path) is not None or is_url(path)) and not is_gzip(path):
        data = read_bytes(path)
        if not data:
            raise InputFormatError(path, None, "empty file")
        return data
    if is_gzip(path):
        data = read_bytes(path)
        if not data.strip():
            raise InputFormatError(path, None, "empty file (after gzip decompression)")
        return data
    if os.path.getsize(path) == 0:
        raise InputFormatError(path, None, "empty file")
    return None


def is_gzip(path: str) -> bool:
    data = spooled(path)
    if data is not None:
        return data[:2] == GZIP_MAGIC
    try:
        with open_bytes(path, head=True) as handle:
            return handle.read(2) == GZIP_MAGIC
    except OSError as err:  # unreadable (permissions): said once, naming the file
        raise InputFormatError(path, None, f"cannot read the file: {err.strerror or err}") from None


def gzip_error(path: str, err: BaseException) -> InputFormatError:
    return InputFormatError(path, None, f"broken gzip file ({err})")


def read_bytes(path: str) -> bytes:
    """The whole content of ``path``, gzip undone."""
    check_file(path)
    kept = spooled(path)
    if kept is not None:
        data = kept
    else:
        try:
            with open_bytes(path) as handle:
                data = handle.read()
        except OSError as err:
            raise InputFormatError(path, None, f"cannot read the file: {err.strerror or err}") from None
    if data[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except GZIP_ERRORS as err:
            raise gzip_error(path, err) from None
    return data


def open_binary(path: str) -> BinaryIO:
    """``path`` opened for reading bytes in pieces, through gzip when it is compressed; read errors of
    a corrupt gzip stream are the caller's to turn into ``gzip_error``."""
    check_file(path)
    data = spooled(path)
    if data is not None:
        memory = io.BytesIO(data)
        return cast(BinaryIO, gzip.GzipFile(fileobj=memory, mode="rb")) if data[:2] == GZIP_MAGIC else memory
    try:
        if not is_url(path):
            return cast(BinaryIO, gzip.open(path, "rb")) if is_gzip(path) else open(path, "rb")
        handle = open_bytes(path)
        if handle.read(2) != GZIP_MAGIC:
            handle.seek(0)
            return cast(BinaryIO, handle)
        handle.seek(0)
        return cast(BinaryIO, _ClosingGzip(cast(BinaryIO, handle)))
    except OSError as err:
        raise InputFormatError(path, None, f"cannot read the file: {err.strerror or err}") from None


class _ClosingGzip(gzip.GzipFile):
    """A gzip stream over a file object it owns: closing it closes that file (an fsspec handle)."""

    def __init__(self, handle: BinaryIO) -> None:
        super().__init__(fileobj=handle, mode="rb")
        self._owned = handle

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._owned.close()


def not_utf8(path: str, line_no: int, byte: int) -> InputFormatError:
    return InputFormatError(path, line_no, f"not UTF-8 text (byte {byte:#04x})")


def decode(path: str, data: bytes, first_line: int = 1) -> str:
    """``data`` as text (a leading byte-order mark dropped); bad bytes are reported with their line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = first_line + data.count(b"\n", 0, err.start)
        raise not_utf8(path, line, data[err.start]) from None


def decode_line(path: str, line_no: int, raw: bytes) -> str:
    """One line's bytes as text (the TREC readers decode line by line)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise not_utf8(path, line_no, raw[err.start]) from None


def read_text(path: str) -> str:
    """The whole file as text: gzip undone, UTF-8 decoded."""
    return decode(path, read_bytes(path))


def iter_lines(path: str) -> Iterator[tuple[int, str]]:
    """(line number, text without its line end) for every line, read in pieces (a corpus larger
    than memory as text is still read line by line); a byte-order mark on line 1 is dropped."""
    with open_binary(path) as handle:
        line_no = 0
        while True:
            try:
                raw = handle.readline()
            except GZIP_ERRORS as err:
                raise gzip_error(path, err) from None
            if not raw:
                return
            line_no += 1
            if line_no == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            yield line_no, decode_line(path, line_no, raw.rstrip(b"\r\n"))


def read_head(path: str, size: int = 65536) -> str:
    """About the first ``size`` bytes of the file as text (gzip undone), for format detection:
    undecodable bytes are replaced, the reader chosen afterwards reports them."""
    return head_text(path, head_bytes(path, size), size)


def head_bytes(path: str, size: int = 65536) -> bytes:
    """The first ``size`` bytes of the file as they lie (gzip not undone): what ``read_head`` reads, for a caller
    that also looks at the bytes themselves (``io.loading.Head``: Parquet's magic bytes and the text from one
    read)."""
    whole = spooled(path)
    if whole is not None:
        return whole[:size]
    try:
        with open_bytes(path, head=size <= HEAD_BLOCK_BYTES) as handle:
            return handle.read(size)
    except OSError as err:
        raise InputFormatError(path, None, f"cannot read the file: {err.strerror or err}") from None


def head_text(path: str, data: bytes, size: int = 65536) -> str:
    """``data``, the first ``size`` bytes of ``path`` (``head_bytes``), as text: gzip undone, undecodable bytes
    replaced (the reader chosen afterwards reports them)."""
    if data[:2] == GZIP_MAGIC:
        try:
            data = zlib.decompressobj(31).decompress(data, size)
        except zlib.error as err:
            raise gzip_error(path, err) from None
    return data.decode("utf-8-sig", errors="replace")
