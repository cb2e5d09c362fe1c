"""Writing files without ever losing the user's data: refuse to overwrite, then write atomically.

Every file this package writes goes through ``write_atomic``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from trec_rag_eval.errors import OutputExistsError


def refuse_overwrite(path: str | os.PathLike[str], force: bool) -> None:
    """Fail before any work when ``path`` exists and ``force`` is not given."""
    if not force and os.path.exists(path):
        raise OutputExistsError(os.fspath(path))


def write_atomic(path: str | os.PathLike[str], content: str | bytes, force: bool = False) -> None:
    """Write ``content`` (text as UTF-8) through a temporary file in the same folder, then move it
    into place in one step, so a crash never leaves half a file.

    Without ``force`` the move is a hard link, which fails if the destination exists, so even a
    file created meanwhile is never overwritten.
    """
    target = Path(path)
    refuse_overwrite(target, force)
    data = content.encode("utf-8") if isinstance(content, str) else content
    handle, temporary = tempfile.mkstemp(dir=target.parent if str(target.parent) else ".",
                                         prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp makes 0600; give the usual permissions
        if force:
            os.replace(temporary, target)
            return
        try:
            os.link(temporary, target)
        except FileExistsError:
            raise OutputExistsError(os.fspath(target)) from None
        except OSError:  # no hard links on this file system: check, then rename
            if target.exists():
                raise OutputExistsError(os.fspath(target)) from None
            os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
