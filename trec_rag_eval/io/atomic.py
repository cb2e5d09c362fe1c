"""Writing files without ever losing the user's data: refuse to overwrite, then write atomically."""

from __future__ import annotations

import os
import tempfile

from trec_rag_eval.errors import UsageError


def write_text_atomic(path: str, text: str, force: bool = False) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and ``os.replace``.

    An existing file is replaced only with ``force``; a crash midway leaves the old file whole.
    """
    if os.path.exists(path) and not force:
        raise UsageError(f"{path} exists; pass --force to replace it")
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
