"""A whole text file as a string, the way every reader but the TREC one takes it: gzip undone,
UTF-8 (a byte-order mark dropped), and errors that name the file and, for bad bytes, the line."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from trec_rag_eval.errors import InputFormatError


def read_text(path: str) -> str:
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise InputFormatError(path, None, f"cannot read the file: {err.strerror or err}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as err:
            raise InputFormatError(path, None, f"corrupt gzip data: {err}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise InputFormatError(path, line, f"not UTF-8 text (byte {data[err.start]:#04x})") from None
