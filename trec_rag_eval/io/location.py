"""Where an input lies: a local path, or a URL that fsspec reads (``s3://``, ``gs://``, ``abfs://``,
``file://``, ``memory://``, ...). Every reader asks here whether a path exists, is a folder, how large
it is, what a folder holds, and opens it: a local path goes through ``os`` and ``open`` exactly as
before; a URL through fsspec (the ``cloud`` extra: fsspec, with s3fs and gcsfs for ``s3://`` and
``gs://``), imported only when a URL is given.

A URL is a scheme of two characters or more followed by ``://``: ``irds:msmarco-passage`` (an
ir_datasets name, ``is_irds_name``: read by ir_datasets, neither a file nor a URL) and ``C:\\runs`` (a Windows
drive) are not URLs. A URL keeps the user's spelling
throughout: a folder's files are named by the folder's URL and their names, so every message names
what the user gave. Whatever fsspec or its back-end raises is one ``InputFormatError`` naming the URL
and saying what to do: a protocol fsspec does not know, a package missing for it, a missing object,
credentials refused.

Only reading goes through here: outputs are local paths (``io.atomic``).
"""

from __future__ import annotations

import errno
import os
import posixpath
import re
import stat
import urllib.parse
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from trec_rag_eval.call_scope import first_in_this_call
from trec_rag_eval.credentials import remember_url
from trec_rag_eval.errors import InputFormatError

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+)://")
LOCAL_PROTOCOLS = ("file", "local")
"""URLs of this machine's own files (fsspec's local file system)."""


def is_url(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a URL (``scheme://...``) rather than a local path."""
    return isinstance(path, str) and _URL.match(path) is not None


IRDS_PREFIX = "irds:"
"""How an input named by ir_datasets begins (``irds:msmarco-passage/trec-dl-2019``; ``io.published.irds``)."""


def is_irds_name(value: object) -> bool:
    """Whether ``value`` names an ir_datasets dataset (``irds:<dataset id>``), read by ir_datasets, not a file."""
    return isinstance(value, str) and value.startswith(IRDS_PREFIX)


def protocol(url: str) -> str:
    """The scheme of ``url`` (``s3`` for ``s3://bucket/run.txt``), in lower case."""
    found = _URL.match(url)
    return found.group(1).lower() if found else ""


def local_path(path: str) -> str | None:
    """The local file a ``file://`` URL names, the path itself when it is no URL; None for any other
    URL (its data is not on this machine's file system)."""
    if not is_url(path):
        return path
    if protocol(path) not in LOCAL_PROTOCOLS:
        return None
    return _filesystem(path)[1]


def _filesystem(url: str) -> tuple[AbstractFileSystem, str]:
    """fsspec's file system for ``url`` and the path within it; one error line for what cannot be."""
    try:
        from fsspec.core import url_to_fs
    except ImportError:
        raise InputFormatError(url, None, "reading a URL needs the package fsspec: pip install "
                               "'trec-rag-eval[cloud]' (or give a local path)") from None
    scheme = protocol(url)
    remember_url(url)  # a password in it is sent (HTTP Basic auth): never shown, in any form
    try:
        fs, path = url_to_fs(url)
        # fsspec keeps one file system per URL's options for the process, with its listings (s3fs: folders
        # and sizes, for ever): refreshed once per call, so a run rewritten since the last call is not read
        # to its old size, nor a folder listed as it was
        if first_in_this_call(("listings", id(fs))):
            fs.invalidate_cache()
        return fs, path
    except ImportError as err:  # fsspec knows the protocol; the package behind it is not installed
        package = _package_for(scheme, err)
        raise InputFormatError(url, None, f"reading {scheme}:// URLs needs the package {package}: pip install "
                               f"{package} (or pip install 'trec-rag-eval[cloud]')") from None
    except ValueError as err:
        if "not known" in str(err).lower():
            raise InputFormatError(url, None, f"unknown protocol {scheme}://: expected a local path or a URL "
                                   "that fsspec reads (file://, s3://, gs://, abfs://, https://, memory://, ...)"
                                   ) from None
        raise _failure(url, err) from None
    except Exception as err:  # noqa: BLE001 - a back-end's own trouble (a malformed bucket name...)
        raise _failure(url, err) from None


def _package_for(scheme: str, err: ImportError) -> str:
    """The package to install for ``scheme``, from fsspec's registry (its message names it too)."""
    try:
        from fsspec.registry import known_implementations

        target = known_implementations.get(scheme, {}).get("class", "")
    except ImportError:
        target = ""
    if target:
        return target.split(".")[0]
    words = re.findall(r"[Ii]nstall ([A-Za-z0-9_.\-]+)", str(err))
    return words[0] if words else err.name or "its package"


def _failure(url: str, err: BaseException) -> InputFormatError:
    """What fsspec or its back-end raised while reading ``url``, in one line."""
    if isinstance(err, InputFormatError):
        return err
    hidden = _out_of_reach(url, err)
    if hidden is not None:
        return hidden
    if isinstance(err, FileNotFoundError):
        return InputFormatError(url, None, "no such file")
    if isinstance(err, IsADirectoryError):
        return InputFormatError(url, None, "is a directory, expected a file")
    scheme = protocol(url)
    if isinstance(err, PermissionError):
        return InputFormatError(url, None, f"cannot read: permission denied ({_said(err)}); check the credentials "
                                f"{scheme}:// uses on this machine (and on every worker of a cluster)")
    return InputFormatError(url, None, f"cannot read: {_said(err)}; check the URL, and the credentials {scheme}:// "
                            "uses on this machine (and on every worker of a cluster)")


def _said(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _chain(err: BaseException) -> Iterator[BaseException]:
    """``err`` and what it was raised from or during, outermost first."""
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _out_of_reach(url: str, err: BaseException) -> InputFormatError | None:
    """What a failure hides when the store was never asked or refused the request: fsspec's HTTP file system
    raises "not found" for a connection refused, a host unknown or an HTTP 403 alike. None when nothing in
    ``err``'s chain says so (a file that is really not there, or another failure)."""
    parts = urllib.parse.urlsplit(url)
    # host[:port] of an http(s) URL, the user information left out (an s3:// URL names a bucket, not a host)
    named = parts.netloc.rpartition("@")[2] if protocol(url) in ("http", "https") else ""
    for cause in _chain(err):
        host, port = getattr(cause, "host", None), getattr(cause, "port", None)  # aiohttp's connection errors
        where = f"{host}:{port}" if isinstance(host, str) and port else host if isinstance(host, str) else named
        status = getattr(cause, "status", None)  # an HTTP reply (aiohttp's ClientResponseError)
        if isinstance(status, int) and not isinstance(cause, OSError) and status >= 400:
            if status in (404, 410):
                return None
            said = f"HTTP {status} {getattr(cause, 'message', '') or ''}".strip()
            if status in (401, 403):
                return InputFormatError(url, None, f"cannot read: permission denied ({said}); check the credentials "
                                        "the URL gives")
            return InputFormatError(url, None, f"cannot read: the server answered {said}")
        underlying = getattr(cause, "os_error", None)  # aiohttp's connection errors wrap the socket's
        for failure in (cause, underlying):
            if isinstance(failure, _host_not_found()):
                host = getattr(cause, "host", None) or parts.hostname or where
                return InputFormatError(url, None, f"cannot read: the host {host} was not found; check the URL")
            if isinstance(failure, ConnectionRefusedError) or (
                    isinstance(failure, OSError) and failure.errno == errno.ECONNREFUSED):
                at = f" by {where}" if where else ""
                return InputFormatError(url, None, f"cannot read: the connection was refused{at}; check the URL, "
                                        "and that its server is running")
            if isinstance(failure, OSError) and failure.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
                return InputFormatError(url, None, f"cannot read: {where or 'the host'} cannot be reached "
                                        f"({_said(failure)}); check the URL and the network")
        if isinstance(cause, TimeoutError):
            return InputFormatError(url, None, f"cannot read: no answer from {where or 'the store'} in time; "
                                    "check the URL, and that its server is running and reachable")
        if type(cause) is ValueError and "@" in parts.netloc:  # the client refused the credentials before asking
            return InputFormatError(url, None, f"cannot read: the credentials in the URL cannot be sent "
                                    f"({_said(cause)}); check the user name and password the URL gives")
    return None


def _ask(url: str, question: str, *args: Any, **kwargs: Any) -> Any:
    """``question(path, *args, **kwargs)`` of ``url``'s file system, its failures one ``InputFormatError``."""
    fs, path = _filesystem(url)
    try:
        return getattr(fs, question)(path, *args, **kwargs)
    except Exception as err:  # noqa: BLE001 - whatever the back-end raises, said once
        raise _failure(url, err) from None


def _info(url: str, unknown_without_credentials: bool = False) -> dict[str, Any] | str | None:
    """fsspec's description of ``url`` (its ``type``, a file's ``size``), or None when nothing is there.
    fsspec's ``exists``, ``isdir`` and ``isfile`` answer False to any failure; asked here, credentials
    refused or a store out of reach are said as such, never as a missing file; or, with
    ``unknown_without_credentials``, ``"unknown"`` when this machine has none the store accepts."""
    fs, path = _filesystem(url)
    try:
        info: dict[str, Any] = fs.info(path)
    except FileNotFoundError as err:
        hidden = _out_of_reach(url, err)  # a connection refused, an HTTP 403, said as "not found" by fsspec
        if hidden is not None:
            raise hidden from None
        return None
    except Exception as err:  # noqa: BLE001 - whatever the back-end raises, said once
        if unknown_without_credentials and _without_credentials_here(err):
            return "unknown"
        raise _failure(url, err) from None
    return info


def _kind(url: str, unknown_without_credentials: bool = False) -> str | None:
    """``"file"``, ``"directory"`` (for object storage: a prefix holding objects), or None when nothing
    is there (``_info``; ``"unknown"`` with ``unknown_without_credentials``, as it says)."""
    info = _info(url, unknown_without_credentials)
    if info is None or isinstance(info, str):
        return info
    return "directory" if info.get("type") == "directory" else "file"


def exists(path: str) -> bool:
    """Whether ``path`` (a local path or a URL) names a file or a folder."""
    if not is_url(path):
        return os.path.exists(path)
    return _kind(path) is not None


def is_dir(path: str) -> bool:
    """Whether ``path`` (a local path or a URL) is a folder (for object storage: a prefix holding objects)."""
    if not is_url(path):
        return os.path.isdir(path)
    return _kind(path) == "directory"


def is_dir_here(path: str) -> bool | None:
    """``is_dir``, or None when this machine cannot tell because it lacks the credentials to ask (none found,
    or refused): a cluster's workers, which read the runs with their own, may still (the command then leaves
    the question to them)."""
    if not is_url(path):
        return os.path.isdir(path)
    kind = _kind(path, unknown_without_credentials=True)
    return None if kind == "unknown" else kind == "directory"


_CREDENTIALS_ERRORS = ("NoCredentialsError", "PartialCredentialsError", "DefaultCredentialsError",
                       "CredentialUnavailableError", "ClientAuthenticationError", "RefreshError")
"""Back-ends' names for "no usable credentials here" (botocore's, google-auth's, azure-identity's)."""


def _without_credentials_here(err: BaseException) -> bool:
    """Whether ``err`` says this machine has no credentials the store accepts: none found, or refused."""
    for cause in _chain(err):
        if isinstance(cause, PermissionError) or type(cause).__name__ in _CREDENTIALS_ERRORS:
            return True
        status = getattr(cause, "status", None)
        if isinstance(status, int) and not isinstance(cause, OSError) and status in (401, 403):
            return True
    return False


def is_file(path: str) -> bool:
    """Whether ``path`` (a local path or a URL) is a file."""
    if not is_url(path):
        return os.path.isfile(path)
    return _kind(path) == "file"


def size(path: str) -> int:
    """The size in bytes of the file at ``path`` (a local path or a URL); a URL whose server does not say it (HTTP
    without a Content-Length) is refused in words, for what needs the size: reading a run in pieces."""
    if not is_url(path):
        return os.path.getsize(path)
    found = _ask(path, "size")
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
    info = _info(path)
    if not isinstance(info, dict) or info.get("type") == "directory":
        return None
    found = info.get("size")
    if found is None:
        found = _ask(path, "size")  # a back-end whose info leaves it out; None again: no size said (HTTP)
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
    entries = _ask(path, "ls", True)
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
    fs, root = _filesystem(path)
    try:
        names = fs.find(root, withdirs=False, detail=False)
    except Exception as err:  # noqa: BLE001
        raise _failure(path, err) from None
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
    handle: IO[bytes] = (_ask(path, "open", "rb", HEAD_BLOCK_BYTES, cache_type="none") if head
                         else _ask(path, "open", "rb"))
    return handle


def _host_not_found() -> type[OSError]:
    """``socket.gaierror``, imported only when a URL could not be read (socket is not needed to read files)."""
    import socket

    return socket.gaierror
