"""Inputs named by URL, read through fsspec (the ``cloud`` extra: fsspec, with s3fs and gcsfs for ``s3://`` and
``gs://``), imported only when a URL is given: what a URL is (``URL``, ``protocol``), its file system
(``filesystem``), what is asked of it (``ask``, ``info``, ``kind``), and whatever fsspec or its back-end raises
said as one ``InputFormatError`` naming the URL and saying what to do (``failure``): a protocol fsspec does not
know, a package missing for it, a missing object, credentials refused, a store out of reach. ``io.sources`` asks
here for every input given by URL, and nobody else does.

A URL is a scheme of two characters or more followed by ``://``: ``irds:msmarco-passage`` (an ir_datasets name)
and ``C:\\runs`` (a Windows drive) are not URLs. A URL keeps the user's spelling throughout, so every message names
what the user gave.
"""

from __future__ import annotations

import errno
import re
import urllib.parse
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from trec_rag_eval.call_scope import first_in_this_call
from trec_rag_eval.credentials import remember_url
from trec_rag_eval.errors import InputFormatError

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+)://")
"""What a URL is (``io.sources.is_url``): a scheme of two characters or more, then ``://``."""
LOCAL_PROTOCOLS = ("file", "local")
"""URLs of this machine's own files (fsspec's local file system)."""


def protocol(url: str) -> str:
    """The scheme of ``url`` (``s3`` for ``s3://bucket/run.txt``), in lower case."""
    found = URL.match(url)
    return found.group(1).lower() if found else ""


def filesystem(url: str) -> tuple[AbstractFileSystem, str]:
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
        raise failure(url, err) from None
    except Exception as err:  # noqa: BLE001 - a back-end's own trouble (a malformed bucket name...)
        raise failure(url, err) from None


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


def failure(url: str, err: BaseException) -> InputFormatError:
    """What fsspec or its back-end raised while reading ``url``, in one line."""
    if isinstance(err, InputFormatError):
        return err
    hidden = out_of_reach(url, err)
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


def out_of_reach(url: str, err: BaseException) -> InputFormatError | None:
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


def ask(url: str, question: str, *args: Any, **kwargs: Any) -> Any:
    """``question(path, *args, **kwargs)`` of ``url``'s file system, its failures one ``InputFormatError``."""
    fs, path = filesystem(url)
    try:
        return getattr(fs, question)(path, *args, **kwargs)
    except Exception as err:  # noqa: BLE001 - whatever the back-end raises, said once
        raise failure(url, err) from None


def info(url: str, unknown_without_credentials: bool = False) -> dict[str, Any] | str | None:
    """fsspec's description of ``url`` (its ``type``, a file's ``size``), or None when nothing is there.
    fsspec's ``exists``, ``isdir`` and ``isfile`` answer False to any failure; asked here, credentials
    refused or a store out of reach are said as such, never as a missing file; or, with
    ``unknown_without_credentials``, ``"unknown"`` when this machine has none the store accepts."""
    fs, path = filesystem(url)
    try:
        described: dict[str, Any] = fs.info(path)
    except FileNotFoundError as err:
        hidden = out_of_reach(url, err)  # a connection refused, an HTTP 403, said as "not found" by fsspec
        if hidden is not None:
            raise hidden from None
        return None
    except Exception as err:  # noqa: BLE001 - whatever the back-end raises, said once
        if unknown_without_credentials and _without_credentials_here(err):
            return "unknown"
        raise failure(url, err) from None
    return described


def kind(url: str, unknown_without_credentials: bool = False) -> str | None:
    """``"file"``, ``"directory"`` (for object storage: a prefix holding objects), or None when nothing
    is there (``info``; ``"unknown"`` with ``unknown_without_credentials``, as it says)."""
    found = info(url, unknown_without_credentials)
    if found is None or isinstance(found, str):
        return found
    return "directory" if found.get("type") == "directory" else "file"


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


def _host_not_found() -> type[OSError]:
    """``socket.gaierror``, imported only when a URL could not be read (socket is not needed to read files)."""
    import socket

    return socket.gaierror
