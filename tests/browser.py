"""A page opened in a real headless browser (Debian's chromium), for the tests of the HTML report and of the
documentation site: a small checking script is put into the head of a copy of the page, chromium's ``--dump-dom``
gives the page back after load with the marker that script wrote, and the console is read from chromium's log on
stderr."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def open_in_chromium(page: Path, check_script: str, marker: str, profile: Path,
                     url: Callable[[Path], str] = Path.as_uri, flags: Sequence[str] = ()) -> tuple[dict, list[str]]:
    """Load a copy of ``page`` (``checked-NAME`` beside it, so its relative links still resolve) with
    ``check_script`` first in its head, at ``url(copy)``; return the JSON the script wrote in ``<pre id=marker>``
    and chromium's console lines."""
    assert CHROMIUM is not None
    checked = page.with_name("checked-" + page.name)
    text = page.read_text(encoding="utf-8")
    assert "<head>" in text
    # in <head>, so the error listener is in place before any image, style sheet or script starts loading
    checked.write_text(text.replace("<head>", "<head>" + check_script, 1), encoding="utf-8")
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *flags, "--dump-dom", url(checked)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(rf'<pre id="{re.escape(marker)}">(.*?)</pre>', done.stdout, re.S)
    assert found, "the check script did not run: " + done.stdout[-500:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return json.loads(html.unescape(found.group(1))), console
