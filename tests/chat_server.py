"""A real chat-completions endpoint on 127.0.0.1 for the LLM tests (no mocked client): subclasses answer."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Reply:
    """How a request is answered: JSON, raw bytes, or nothing (the client times out)."""

    def __init__(self, handler: BaseHTTPRequestHandler) -> None:
        self.handler = handler

    def json(self, status: int, payload: dict, headers: dict | None = None) -> None:
        self.raw(status, json.dumps(payload).encode(), headers)

    def raw(self, status: int, data: bytes, headers: dict | None = None) -> None:
        handler = self.handler
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                handler.send_header(key, value)
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests)


def completion(content: str, prompt_tokens: int, completion_tokens: int, model: str = "test-model") -> dict:
    """A chat.completion body with ``content`` and its usage."""
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


class ChatServer:
    """Serves ``POST /v1/chat/completions`` in threads; ``answer(prompt, reply)`` decides each reply.
    Use as a context manager; ``base_url`` is what the client is given."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                assert self.path == "/v1/chat/completions"
                server.answer(body["messages"][0]["content"], Reply(self))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # type: ignore[method-assign]
        # shutdown() waits for the serving loop to look at its flag, every poll_interval (0.5 s by default, a
        # quarter of a second lost per test on average); 0.02 s costs a few wake-ups a test
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def answer(self, prompt: str, reply: Reply) -> None:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
