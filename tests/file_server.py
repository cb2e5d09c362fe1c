"""A real HTTP file server on 127.0.0.1 for the tests of inputs by URL (no mocked client), and a port of this
machine where nothing listens."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer


class FileServer:
    """Serves ``folder`` over HTTP; ``refuse`` maps a file name to (status, message) answered instead, the
    message holding ``{authorization}`` where the request's Authorization header is echoed. Use as a context
    manager; ``url(name)`` is a file's URL, with ``userinfo@`` when given."""

    def __init__(self, folder: str | os.PathLike[str], refuse: dict[str, tuple[int, str]] | None = None) -> None:
        refusals = dict(refuse or {})
        self.seen: list[str] = []
        seen = self.seen

        class Handler(SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs) -> None:
                super().__init__(*args, directory=os.fspath(folder), **kwargs)

            def log_message(self, *args: object) -> None:
                pass

            def _refused(self) -> bool:
                seen.append(self.headers.get("Authorization", ""))
                name = self.path.lstrip("/").split("?")[0]
                if name not in refusals:
                    return False
                status, message = refusals[name]
                body = message.format(authorization=self.headers.get("Authorization", "")).encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)
                return True

            def do_GET(self) -> None:
                if not self._refused():
                    super().do_GET()

            def do_HEAD(self) -> None:
                if not self._refused():
                    super().do_HEAD()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def url(self, name: str, userinfo: str | None = None) -> str:
        return f"http://{userinfo + '@' if userinfo else ''}127.0.0.1:{self.httpd.server_port}/{name}"

    def __enter__(self) -> FileServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextmanager
def closed_port() -> Iterator[int]:
    """A port of 127.0.0.1 held (bound, never listening) for the block: a connection to it is refused at once,
    and no other program can take it meanwhile."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]
