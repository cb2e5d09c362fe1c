"""Asking an OpenAI-compatible chat model many questions, resumably: what ``generate-queries`` and
``judge`` share.

Any OpenAI-compatible endpoint works (vLLM, Ollama, llama.cpp, hosted APIs) through the ``openai``
client, imported only here and only when used.

Robustness, decided here once:
- At most ``concurrency`` requests are in flight (a thread pool).
- 429 and 5xx replies, timeouts and connection errors are retried up to ``max_retries`` times,
  waiting ``Retry-After`` when the server sends it, else ``backoff * 2**attempt`` seconds (capped).
  Other 4xx replies and malformed replies fail the task at once. The client's own retries are
  switched off so that these are the only ones.
- Tokens are counted from each reply's ``usage`` (this run only; resumed tasks cost nothing).
- Each finished task is appended as one JSON line to a progress file beside the output, so a crash
  or Ctrl-C loses nothing; a rerun skips the tasks already there, and refuses a file made with other
  settings. A torn last line (a crash mid-write) is simply done again.
- When the endpoint cannot be reached at all (connection refused, or not accepted within
  ``CONNECT_TIMEOUT`` seconds) before it ever answered, the run stops at once, without retries:
  waiting out backoffs would only delay the error.
- Outputs are written by the caller through ``io.atomic`` (never over an existing file unless asked).
"""

from __future__ import annotations

import email.utils
import json
import os
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trec_rag_eval.arguments import check_count, check_positive
from trec_rag_eval.credentials import KEY_REDACTED, redact, remember_secret, remember_url, without_credentials
from trec_rag_eval.errors import InputFormatError, MissingDependencyError, OutputError, TrecRagEvalError, UsageError
from trec_rag_eval.io.sources import read_text

MAX_BACKOFF_SECONDS = 60.0
CONNECT_TIMEOUT = 5.0
"""Seconds to wait for a connection to be accepted (the reply itself may take ``timeout``)."""


REFUSED = (401, 403, 404)
"""HTTP statuses that refuse the caller, not the request: a wrong key, no access, an unknown model."""


class LLMFailure(TrecRagEvalError):
    """One task got no usable reply (after retries when the error was retryable).

    ``unreachable``: the server never answered at all (connection refused or lost), which says
    nothing about the task and everything about the endpoint. ``refused``: the server answered
    401, 403 or 404 (a wrong key, no access, an unknown model): every task would get the same."""

    def __init__(self, message: str, unreachable: bool = False, refused: bool = False) -> None:
        super().__init__(redact(message))  # a server may echo the Authorization header back
        self.unreachable = unreachable
        self.refused = refused


REDACTED = KEY_REDACTED


def _remember_key(key: str | None) -> None:
    """Note an API key this process sends, so ``redact`` (``credentials.redact``) keeps it, in any form (as
    sent, URL-encoded, in base64), out of everything printed or written: a 401 whose body echoes the
    Authorization header, an error message, a reply. The placeholder sent to a server needing no key is none."""
    if key != NO_KEY:
        remember_secret(key)


class MalformedReply(ValueError):
    """Raised by a reply parser: the reply holds no usable answer (the task fails, not retried)."""


@dataclass(frozen=True)
class LLMSettings:
    """Which model, and how hard to try."""

    model: str
    concurrency: int = 4
    timeout: float = 60.0
    max_retries: int = 5
    backoff: float = 1.0
    temperature: float | None = None

    def check(self) -> None:
        check_count("the concurrency", self.concurrency)
        check_positive("the timeout", self.timeout)
        check_count("max_retries", self.max_retries, least=0)


def retry_delay(headers: Any, attempt: int, backoff: float) -> float:
    """Seconds to wait before retry ``attempt`` (0-based): ``Retry-After`` if given, else exponential.

    ``Retry-After`` may be seconds or an HTTP date; ``retry-after-ms`` (sent by OpenAI) wins.
    """
    seconds: float | None = None
    if headers is not None:
        if headers.get("retry-after-ms"):
            seconds = _number(headers["retry-after-ms"])
            seconds = None if seconds is None else seconds / 1000
        if seconds is None and headers.get("retry-after"):
            value = headers["retry-after"]
            seconds = _number(value)
            if seconds is None:
                try:
                    seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
                except (TypeError, ValueError):
                    seconds = None
    if seconds is None:
        seconds = backoff * 2**attempt
    return min(max(seconds, 0.0), MAX_BACKOFF_SECONDS)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


NO_KEY = "no-key"
"""The placeholder key sent to a local server that needs none."""


def check_base_url(base_url: str) -> None:
    """A ``UsageError`` unless ``base_url`` is an ``http(s)://host[:port]/...`` URL: a malformed one
    (``http://[::1``, a port out of range, a space) is said in one line, before any request."""
    remember_url(base_url)  # its password, if it has one, is never shown again, in any form

    def refuse(reason: str) -> UsageError:
        return UsageError(f"base_url {without_credentials(base_url)!r} is not a URL the client can use: "
                          f"{redact(reason)} (expected e.g. http://localhost:8000/v1)", {"base_url": "base_url"})

    bad = next((ch for ch in base_url if ord(ch) <= 32 or ord(ch) == 127), None)
    if bad is not None:
        raise refuse(f"it holds {'a space' if bad == ' ' else f'the control character {bad!r}'}")
    try:
        parts = urllib.parse.urlsplit(base_url)
        parts.port  # noqa: B018 - parsed here, so a bad port is said now
    except ValueError as err:
        raise refuse(str(err)) from None
    if parts.scheme not in ("http", "https"):
        raise refuse("it does not start with http:// or https://")
    if not parts.hostname:
        raise refuse("it names no host")


def make_client(base_url: str | None, api_key: str | None = None) -> Any:
    """An ``openai.OpenAI`` client with its own retries off; key from OPENAI_API_KEY.

    A local server (any ``base_url``) may need no key: a placeholder is sent then. The key and the
    credentials in ``base_url`` (``http://user:password@host/v1``, sent as HTTP Basic auth) are
    remembered, so that no message or file of this process ever shows them (``redact``).
    """
    if base_url is not None:
        check_base_url(base_url)
    try:
        import openai
    except ImportError:
        raise MissingDependencyError("openai", "llm") from None
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if not key:
        if base_url is None:
            raise UsageError("set OPENAI_API_KEY, or give base_url for a local server that needs no key",
                             {"base_url": "base_url"})
        key = NO_KEY
    bad = next((position for position, ch in enumerate(key) if not 33 <= ord(ch) <= 126), None)
    if bad is not None:  # said without the key itself: only where it goes wrong
        where = "api_key" if api_key else "OPENAI_API_KEY"
        raise UsageError(f"{where} holds a space, a line break or a non-ASCII character (character {bad + 1} of "
                         f"{len(key)}), which cannot be sent in an HTTP header: check how it was set")
    _remember_key(key)
    try:
        return openai.OpenAI(base_url=base_url, api_key=key, max_retries=0)
    except Exception as err:  # the HTTP layer's InvalidURL, whichever package it ships in
        raise UsageError(f"base_url {without_credentials(str(base_url))!r} is not a URL the client can use: "
                         f"{redact(str(err))}",
                         {"base_url": "base_url"}) from None


def redacted_excerpt(text: str, limit: int = 160) -> str:
    """``text`` on one line, without the API key (``redact``, before the cut: half a key is a key
    too), cut at ``limit`` characters."""
    text = redact(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ChatCaller:
    """Sends one prompt, retries as the module docstring says, parses the reply; thread-safe."""

    def __init__(
        self,
        client: Any,
        settings: LLMSettings,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        settings.check()
        self.client = client
        _remember_key(getattr(client, "api_key", None))  # a client made by the caller: its key is kept out too
        remember_url(str(getattr(client, "base_url", "") or ""))  # and the credentials in its URL
        self.settings = settings
        self.sleep = sleep
        self._lock = threading.Lock()
        self.requests = 0
        self.retries = 0
        self.delays: list[float] = []
        self.answered = False   # the server has replied at least once (even with an error status)

    def ask(self, prompt: str, parse: Callable[[str], Any]) -> tuple[Any, int, int]:
        """(parse(reply text), prompt_tokens, completion_tokens); raises LLMFailure.

        ``parse`` raises ``MalformedReply`` when the text holds no usable answer."""
        import openai

        settings = self.settings
        messages = [{"role": "user", "content": prompt}]
        # a server that does not accept the connection within a few seconds is not there: fail fast
        # instead of waiting the whole reply timeout (a blackholed address gave a minute of silence)
        options: dict[str, Any] = {"timeout": openai.Timeout(settings.timeout,
                                                             connect=min(settings.timeout, CONNECT_TIMEOUT))}
        if settings.temperature is not None:
            options["temperature"] = settings.temperature
        for attempt in range(settings.max_retries + 1):
            with self._lock:
                self.requests += 1
            headers = None
            try:
                response = self.client.chat.completions.create(
                    model=settings.model, messages=messages, **options
                )
            except openai.APIStatusError as err:
                self.answered = True
                if err.status_code != 429 and err.status_code < 500:
                    raise LLMFailure(f"HTTP {err.status_code}: {redacted_excerpt(err.message)}",
                                     refused=err.status_code in REFUSED) from None
                reason = f"HTTP {err.status_code}"
                headers = err.response.headers
            except openai.APITimeoutError as err:
                # the HTTP layer's ConnectTimeout (httpx's, whichever package openai ships it in)
                if type(err.__cause__).__name__ == "ConnectTimeout" and not self.answered:
                    raise LLMFailure(f"connection failed (no answer to connect within {CONNECT_TIMEOUT:g} s)",
                                     unreachable=True) from None
                reason = f"no reply within {settings.timeout:g} s"
            except openai.APIConnectionError as err:
                reason = f"connection failed ({redacted_excerpt(str(err))})"
                if not self.answered:
                    # never reached: retrying with backoff only delays the error (a minute of silence)
                    raise LLMFailure(reason, unreachable=True) from None
            except (openai.APIResponseValidationError, ValueError) as err:
                raise LLMFailure(f"malformed reply ({redacted_excerpt(str(err))})") from None
            else:
                self.answered = True
                return _read_reply(response, parse)
            if attempt == settings.max_retries:
                unreachable = reason.startswith("connection failed")
                raise LLMFailure(f"{reason}, gave up after {attempt + 1} attempts", unreachable)
            delay = retry_delay(headers, attempt, settings.backoff)
            with self._lock:
                self.retries += 1
                self.delays.append(delay)
            self.sleep(delay)
        raise AssertionError("unreachable")


def _read_reply(response: Any, parse: Callable[[str], Any]) -> tuple[Any, int, int]:
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError, KeyError, TypeError):
        reason = f"malformed reply: no choices[0].message.content in {redacted_excerpt(repr(response))}"
        raise LLMFailure(reason) from None
    if not isinstance(content, str) or not content.strip():
        raise LLMFailure("malformed reply: empty message content")
    content = redact(content)  # what is kept (questions) or quoted (a malformed reply) never holds the key
    try:
        parsed = parse(content)
    except MalformedReply as err:
        raise LLMFailure(f"malformed reply: {err}") from None
    usage = getattr(response, "usage", None)
    prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    return parsed, prompt_tokens, completion_tokens


# --- resumable runs -------------------------------------------------------------------------------


def progress_path_for(output: str | os.PathLike[str]) -> Path:
    """The sidecar progress file: ``dataset.json`` -> ``dataset.json.progress.jsonl``."""
    output = Path(output)
    return output.with_name(output.name + ".progress.jsonl")


@dataclass(frozen=True)
class Task:
    """One prompt. ``fields`` go into its progress record; ``key`` identifies it across reruns."""

    key: str
    prompt: str
    fields: Mapping[str, Any]


@dataclass
class TaskRun:
    """What ``run_tasks`` did. ``done`` maps every finished task's key (earlier runs included) to
    its progress record; ``failures`` lists (key, reason) for this run."""

    done: dict[str, dict[str, Any]] = field(default_factory=dict)
    resumed: int = 0
    completed: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def read_progress(
    path: Path, identity: Mapping[str, Any], key_of: Callable[[dict[str, Any]], str], value_field: str,
    check: Callable[[Any], str | None] | None = None,
) -> dict[str, dict[str, Any]]:
    """key -> record of the tasks already done. Records must carry ``identity`` (model, language...)
    unchanged, and a value that ``check`` accepts (it returns what is wrong, or None): a grade off
    the scale or a question that is not one is refused with the file and line, never used. Two
    records for one task are one task done twice: the same value is kept once; different values
    are refused, naming both lines (which one is right cannot be known). A torn last line (crash
    mid-write) is ignored: that task is simply done again."""
    done: dict[str, dict[str, Any]] = {}
    where: dict[str, int] = {}
    if not path.exists():
        return done
    lines = read_text(str(path)).splitlines()
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            key = key_of(record)
            value = record[value_field]
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
            if line_no == len(lines):
                break  # torn by an interrupted write: that task is simply done again
            if not done:  # not one record: another file, not a progress file left by this command
                reason = "not a progress record: this is not a progress file of this command; choose another one"
            else:
                reason = "not a progress record: the progress file is damaged"
            raise InputFormatError(str(path), line_no, reason, line) from None
        made_with = {name: record.get(name) for name in identity}
        if all(value is None for value in made_with.values()):
            reason = f"not a progress record (no {', '.join(identity)}): this is not a progress file of this command"
            raise InputFormatError(str(path), line_no, reason + "; choose another one", line)
        if made_with != dict(identity):
            shown = ", ".join(f"{name}={value!r}" for name, value in made_with.items())
            raise UsageError(f"{path} was made with {shown}; use the same settings to resume, "
                             "or delete it to start over")
        problem = check(value) if check is not None else None
        if problem is not None:
            raise InputFormatError(str(path), line_no, f"{value_field}: {problem}", line)
        if key in done and done[key][value_field] != value:
            raise InputFormatError(str(path), line_no,
                                   f"a second record for {redacted_excerpt(key.replace(chr(9), ' '), 80)} "
                                   f"with another {value_field} (line {where[key]}: {done[key][value_field]!r}, "
                                   f"here: {value!r}): which one is right cannot be known", line)
        where.setdefault(key, line_no)
        done[key] = record
    return done


def run_tasks(
    tasks: Sequence[Task],
    caller: ChatCaller,
    parse: Callable[[str], Any],
    progress: Path,
    identity: Mapping[str, Any],
    key_of: Callable[[dict[str, Any]], str],
    value_field: str,
    on_task: Callable[[str, str | None], None] | None = None,
    check: Callable[[Any], str | None] | None = None,
) -> TaskRun:
    """Ask every task not already in ``progress``; append each success to it as it comes.

    ``on_task(key, error_or_None)`` is called in the calling thread as each task ends; ``check``
    validates the values read back from ``progress`` (``read_progress``). Raises
    ``LLMFailure`` at once when the endpoint is unreachable and nothing has succeeded yet."""
    outcome = TaskRun(done=read_progress(progress, identity, key_of, value_field, check))
    todo = [task for task in tasks if task.key not in outcome.done]
    outcome.resumed = len(tasks) - len(todo)
    if todo:
        try:  # the progress file is an output too: a missing folder or a full disk is one clean error
            progress.parent.mkdir(parents=True, exist_ok=True)
            sidecar = open(progress, "a", encoding="utf-8")  # noqa: SIM115  (closed by the with below)
        except OSError as err:
            raise OutputError(str(progress), err.strerror or str(err)) from None
        pool = ThreadPoolExecutor(caller.settings.concurrency)
        with sidecar, pool:
            pending: dict[Future[tuple[Any, int, int]], Task] = {
                pool.submit(caller.ask, task.prompt, parse): task for task in todo
            }
            try:
                while pending:
                    finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        task = pending.pop(future)
                        try:
                            value, prompt_tokens, completion_tokens = future.result()
                        except LLMFailure as err:
                            if err.unreachable and outcome.completed == 0:
                                # nothing has worked yet: stop rather than wait out every task
                                stop = LLMFailure(f"cannot reach the endpoint: {err}; nothing was done "
                                                  "(check base_url; a rerun resumes where it stopped)")
                                stop.parameters = {"base_url": "base_url"}
                                raise stop from None
                            if err.refused and outcome.completed == 0:  # nor ask each task to be refused alike
                                stop = LLMFailure(f"the endpoint refuses every request: {err}; nothing was done "
                                                  "(check the key in OPENAI_API_KEY, the model and base_url; a "
                                                  "rerun resumes where it stopped)")
                                stop.parameters = {"base_url": "base_url", "model": "model"}
                                raise stop from None
                            outcome.failures.append((task.key, str(err)))
                            if on_task:
                                on_task(task.key, str(err))
                            continue
                        outcome.prompt_tokens += prompt_tokens
                        outcome.completion_tokens += completion_tokens
                        outcome.completed += 1
                        record = {**task.fields, value_field: value, **identity,
                                  "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
                        outcome.done[task.key] = record
                        try:
                            sidecar.write(json.dumps(record, ensure_ascii=False) + "\n")
                            sidecar.flush()
                        except OSError as err:
                            raise OutputError(str(progress), err.strerror or str(err)) from None
                        if on_task:
                            on_task(task.key, None)
            except BaseException:
                for future in pending:
                    future.cancel()
                raise
    outcome.requests = caller.requests
    outcome.retries = caller.retries
    return outcome
