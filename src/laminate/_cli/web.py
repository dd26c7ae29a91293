"""``laminate demo --web``: the demo's tool loops on a web page, live.

One loopback server holds both ends. The mock provider's endpoints answer as before
(``MockProvider``), and beside them the page's own routes::

    GET  /                  the page (index.html, app.js, style.css: plain files shipped in
                            ``_cli/web/``, no build step, nothing fetched from elsewhere)
    GET  /api/demo          the plan: the providers in turn, the prompt, the pace
    POST /api/turn          one turn of one provider's tool loop, as a live stream
    GET  /api/presence      held open by the page; when the last page closes, the demo stops

A turn is what the terminal demo does for one request: POST the provider's endpoint on this
same server through httpx, read the answer through ``normalize_stream``, run the demo's
(simulated) tools. The page reads it as the Vercel AI SDK's UI message stream, written by
``StreamEncoder("ai-sdk")``: text, reasoning and tool calls as ``*-start``, ``*-delta`` and
``*-end`` chunks, then ``tool-output-available`` for each result. That is the stream a
browser chat UI already knows how to read, so the page shows what laminate gives one.

The protocol carries a tool call's arguments as raw JSON text only (``tool-input-delta``):
a UI would have to re-parse the whole prefix on every fragment to show fields, and still
could not tell a finished value from one cut mid-way. laminate knows both already
(``ToolInputDelta.string_deltas`` and ``is_written``), so they travel beside the raw text
as a custom data part, which the protocol allows and which a client that does not ask for
it ignores (``transient``: not kept in the message)::

    {"type": "data-laminate-args", "transient": true,
     "data": {"toolCallId": "...", "strings": [[path, text], ...], "complete": [path, ...]}}

``strings`` holds the characters each string value gained, ``complete`` the values
written to their end by this fragment (``is_written``). Two more data parts frame a
turn: ``data-laminate-turn`` (provider, turn number, endpoint, model) after ``start``,
and ``data-laminate-summary`` (stop reason as sent, usage, and the token for the next
turn when there is one) before ``finish``. The next turn's request stays on the server:
the page only names the token.

A truncated call reaches the page as ``tool-input-error`` (its block ended as an
``InvalidToolUse``), a stream that broke off as an ``error`` chunk: either way the fields
that never finished stay unfinished on the page.

Stopping: Ctrl-C, or the last page closing (its presence stream ends and no page comes
back within a moment, so a reload does not stop it). Either way every open stream is
cancelled from the server's own event loop before uvicorn shuts down, so nothing is left
for it to kill and nothing prints a traceback.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
import threading
import webbrowser
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

import anyio
import httpx

from .._apis.wire import append_turn
from .._core.errors import LaminateError
from .._core.events import BlockStart, ResponseDone, ResponseStart, ToolInputDelta
from .._core.partial_json import JSONPath
from .._core.response import NormalizedResponse, ToolUse
from .._core.serialize import usage_to_dict
from .._encode.encoder import StreamEncoder
from .._framing import MEDIA_TYPES
from .._io.adapters import normalize_stream
from .._tools.registry import ToolRegistry
from .demo import _ENDPOINT, PROMPT, PROVIDERS, demo_tools, first_request, supported
from .server import (
    DEMO_PACE,
    DEMO_STREAMS,
    AsgiMessage,
    MockProvider,
    Receive,
    Scope,
    Send,
    base_url,
    find_recordings,
    listen,
    make_server,
    serving,
)

__all__ = ["CLOSE_GRACE", "STATIC", "TURNS", "WebDemo", "run_web_demo", "web_server"]

STATIC: Final = Path(__file__).resolve().parent / "web"
"""The page's files."""

TURNS: Final = 2
"""Turns per provider, as in the terminal demo: the tool calls, then the answer."""

_FILES: Final = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
}
_TURN_KEYS: Final = ("messages", "input", "contents")  # where each API keeps the conversation
CLOSE_GRACE: Final = 2.0
"""Seconds without a page before the demo stops: a reload comes back sooner."""
_PENDING_MAX: Final = 64  # next-turn requests kept for pages that have not asked yet
_SSE_HEADERS: Final = [(b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no")]
_SSE_TYPE: Final = f"{MEDIA_TYPES['sse']}; charset=utf-8".encode()


def _part(chunk: dict[str, Any]) -> bytes:
    """One UI message stream chunk: an SSE ``data:`` line."""
    return b"data: " + _dumps(chunk) + b"\n\n"


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@dataclass(slots=True)
class _Turn:
    """A turn waiting to be played: which provider, which turn, the request to send."""

    provider: str
    number: int
    request: dict[str, Any]


@dataclass(slots=True)
class _Fields:
    """What the server remembers of one streaming call: its id, and the string values
    seen but not yet finished (checked after each fragment, then dropped)."""

    call_id: str
    open: dict[JSONPath, None] = field(default_factory=dict)

    def marks(self, event: ToolInputDelta) -> bytes:
        strings = []
        for delta in event.string_deltas:
            self.open.setdefault(delta.path, None)
            strings.append([list(delta.path), delta.text])
        done = [path for path in self.open if event.is_written(path)]
        for path in done:
            del self.open[path]
        if not strings and not done:
            return b""
        data = {"toolCallId": self.call_id, "strings": strings, "complete": list(map(list, done))}
        return _part({"type": "data-laminate-args", "transient": True, "data": data})


class WebDemo:
    """The ASGI app: the page, its streams, and the mock provider they call.

    ``directory`` holds the recordings (default: the demo streams); ``pace`` is the
    delay between streamed frames; ``log`` receives a line per turn; ``on_close`` is
    called when the last page has been gone for ``close_grace`` seconds. :meth:`stop`
    ends every open stream.
    """

    def __init__(
        self,
        directory: str | Path | None = None,
        *,
        pace: float = DEMO_PACE,
        providers: list[str] | None = None,
        log: Callable[[str], None] | None = None,
        on_close: Callable[[], None] | None = None,
        close_grace: float = CLOSE_GRACE,
    ) -> None:
        self.mock = MockProvider(directory, pace=pace)
        self.close_grace = close_grace
        self.pace = pace
        wanted = providers if providers is not None else list(PROVIDERS)
        self.providers = [
            p
            for p in wanted
            if p in _ENDPOINT and supported(p) and find_recordings(self.mock.directory, p)
        ]
        self.log = log
        self.on_close = on_close
        self.url = ""  # set once listening: the turns POST to the mock provider here
        self._pending: dict[str, _Turn] = {}
        self._scopes: set[anyio.CancelScope] = set()
        self._pages = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.mock(scope, receive, send)
            return
        self._loop = asyncio.get_running_loop()
        method, path = scope["method"], scope["path"]
        file = _FILES.get(path)
        if method == "GET" and file is not None:
            await _respond(send, 200, file[1], (STATIC / file[0]).read_bytes())
        elif method == "GET" and path == "/api/demo":
            plan = {"providers": self.providers, "prompt": PROMPT, "pace": self.pace}
            await _respond(send, 200, "application/json", _dumps(plan))
        elif path == "/api/turn":
            await self._turn(scope, receive, send)
        elif method == "GET" and path == "/api/presence":
            await self._presence(receive, send)
        elif method == "GET" and path == "/favicon.ico":
            await _respond(send, 204, "image/x-icon", b"")
        else:
            await self.mock(scope, receive, send)

    # -- stopping ------------------------------------------------------------------------

    def stop(self) -> None:
        """End every open stream (from any thread): the page sees each end early."""
        self._stopped = True
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._cancel_all)

    def _cancel_all(self) -> None:
        for scope in self._scopes:
            scope.cancel()

    @contextmanager
    def _cancellable(self) -> Iterator[anyio.CancelScope]:
        with anyio.CancelScope() as scope:
            if self._stopped:
                scope.cancel()
            self._scopes.add(scope)
            try:
                yield scope
            finally:
                self._scopes.discard(scope)

    async def _presence(self, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": _sse_headers()})
        await send({"type": "http.response.body", "body": b": open\n\n", "more_body": True})
        self._pages += 1
        try:
            with self._cancellable():
                while (await receive())["type"] != "http.disconnect":
                    pass
        finally:
            self._pages -= 1
        if self._stopped:
            await send({"type": "http.response.body", "body": b""})
            return
        with self._cancellable():
            await anyio.sleep(self.close_grace)
            if self._pages == 0 and self.on_close is not None:
                self.on_close()

    # -- a turn --------------------------------------------------------------------------

    async def _turn(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            await _respond(send, 405, "text/plain", b"POST a turn")
            return
        turn = self._take(await _read_json(receive))
        if isinstance(turn, str):
            await _respond(send, 400, "text/plain", turn.encode())
            return
        encoder = StreamEncoder("ai-sdk")
        headers = [(k.encode(), v.encode()) for k, v in encoder.headers.items()]
        await send(
            {"type": "http.response.start", "status": 200, "headers": headers + _SSE_HEADERS}
        )

        async def write(data: bytes) -> None:
            if data:
                await send({"type": "http.response.body", "body": data, "more_body": True})

        with self._cancellable() as cancel:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_cancel_on_disconnect, receive, cancel)
                await self._play(turn, encoder, write)
                tasks.cancel_scope.cancel()
        if cancel.cancelled_caught and self._stopped:
            await write(_part({"type": "error", "errorText": "the demo server stopped"}))
        await send({"type": "http.response.body", "body": b""})

    def _take(self, request: Any) -> _Turn | str:
        """The turn a page asks for: ``{"provider": name}`` starts a provider's loop,
        ``{"continue": token}`` plays the turn a previous one left."""
        if not isinstance(request, dict):
            return "the body is not a JSON object"
        token = request.get("continue")
        if token is not None:
            turn = self._pending.pop(str(token), None)
            return turn if turn is not None else f"no turn waits under {token!r}"
        provider = request.get("provider")
        if provider not in self.providers:
            return f"no demo for provider {provider!r}; the demo has {self.providers}"
        registry = demo_tools()
        return _Turn(provider, 1, first_request(provider, registry))

    async def _play(
        self, turn: _Turn, encoder: StreamEncoder, write: Callable[[bytes], Awaitable[None]]
    ) -> None:
        endpoint = _ENDPOINT[turn.provider]
        calls: dict[int, _Fields] = {}
        count = 0
        try:
            async with (
                httpx.AsyncClient(base_url=self.url, timeout=30) as client,
                client.stream("POST", endpoint, json=turn.request) as http,
            ):
                if http.status_code != 200:
                    await http.aread()
                    text = f"the mock provider answered {http.status_code}: {http.text}"
                    await write(_part({"type": "error", "errorText": text}))
                    return
                async with normalize_stream(http) as stream:
                    async for event in stream:
                        count += 1
                        chunk = b""
                        if isinstance(event, ResponseDone):
                            chunk = await self._results(turn, event.response, count)
                        chunk += encoder.encode(event)
                        if isinstance(event, ToolInputDelta) and event.index in calls:
                            chunk += calls[event.index].marks(event)
                        elif isinstance(event, BlockStart) and isinstance(event.block, ToolUse):
                            calls[event.index] = _Fields(event.block.id)
                        elif isinstance(event, ResponseStart):
                            chunk += _part(self._heading(turn, endpoint, event))
                        await write(chunk)
        except LaminateError as exc:
            self._log(f"{turn.provider} · turn {turn.number}: {type(exc).__name__}: {exc}")
            await write(_part({"type": "error", "errorText": f"{type(exc).__name__}: {exc}"}))
        except httpx.HTTPError as exc:
            await write(_part({"type": "error", "errorText": f"the request failed: {exc}"}))

    def _heading(self, turn: _Turn, endpoint: str, event: ResponseStart) -> dict[str, Any]:
        data = {
            "provider": turn.provider,
            "turn": turn.number,
            "endpoint": endpoint,
            "model": event.model,
            "id": event.id,
        }
        return {"type": "data-laminate-turn", "data": data}

    async def _results(self, turn: _Turn, response: NormalizedResponse, count: int) -> bytes:
        """The tool results (``tool-output-*``) and the turn's summary, written before
        the encoder's ``finish``; the next turn is kept here for the page to ask for."""
        out = b""
        registry: ToolRegistry = demo_tools()
        results = await registry.run(response) if response.has_tool_use() else []
        for result in results:
            if result.ok:
                chunk = {"type": "tool-output-available", "output": result.output}
            else:
                chunk = {"type": "tool-output-error", "errorText": result.output}
            out += _part({**chunk, "toolCallId": result.call_id})
        summary: dict[str, Any] = {
            "stopReason": str(response.stop_reason),
            "sentAs": response.stop_reason.raw,
            "usage": usage_to_dict(response.usage),
            "events": count,
        }
        if results and turn.number < TURNS:
            key = next(k for k in _TURN_KEYS if k in turn.request)
            messages = append_turn(list(turn.request[key]), response, results, turn.provider)
            token = secrets.token_urlsafe(12)
            while len(self._pending) >= _PENDING_MAX:
                del self._pending[next(iter(self._pending))]
            self._pending[token] = _Turn(
                turn.provider, turn.number + 1, {**turn.request, key: messages}
            )
            summary["continue"] = token
        calls = ", ".join(c.name for c in response.tool_uses()) or "no tool calls"
        self._log(f"{turn.provider} · turn {turn.number}: {count} events, {calls}")
        return out + _part({"type": "data-laminate-summary", "data": summary})

    def _log(self, line: str) -> None:
        if self.log is not None:
            self.log(line)


# -- small ASGI helpers -----------------------------------------------------------------


def _sse_headers() -> list[tuple[bytes, bytes]]:
    return [(b"content-type", _SSE_TYPE), *_SSE_HEADERS]


async def _respond(send: Send, status: int, content_type: str, body: bytes) -> None:
    headers = [
        (b"content-type", content_type.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _read_json(receive: Receive) -> Any:
    body = bytearray()
    while True:
        message: AsgiMessage = await receive()
        if message["type"] == "http.disconnect":
            return None
        body += message.get("body", b"")
        if not message.get("more_body", False) or len(body) > 1 << 20:
            break
    try:
        return json.loads(body)
    except ValueError:
        return None


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    # A page that goes away mid-turn ends the turn (and with it the request upstream).
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


# -- running it ---------------------------------------------------------------------------


@contextmanager
def web_server(
    directory: str | Path | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    pace: float = DEMO_PACE,
    providers: list[str] | None = None,
    log: Callable[[str], None] | None = None,
    on_close: Callable[[], None] | None = None,
    close_grace: float = CLOSE_GRACE,
) -> Iterator[tuple[str, WebDemo]]:
    """Serve the page and the mock provider in a thread; yields the page's URL and the
    app. On exit, every open stream ends first, then the server stops."""
    app = WebDemo(
        directory,
        pace=pace,
        providers=providers,
        log=log,
        on_close=on_close,
        close_grace=close_grace,
    )
    sock = listen(host, port)
    app.url = base_url(sock)
    server = make_server(app, grace=2)
    with serving(server, sock, "laminate-web-demo", "the demo server"):
        try:
            yield app.url + "/", app
        finally:
            app.stop()  # every open stream ends first, then the server stops


def _open(url: str) -> bool:
    # Without a display, webbrowser falls back to text browsers (lynx, w3m) that would
    # take over this terminal and cannot run the page's script: do not start one.
    graphical = sys.platform in ("darwin", "win32") or any(
        os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY")
    )
    return graphical and webbrowser.open(url)


def run_web_demo(
    providers: list[str] | None = None,
    *,
    port: int = 0,
    pace: float = DEMO_PACE,
    open_browser: bool = True,
    stream: IO[str] | None = None,
) -> int:
    """``laminate demo --web``: serve the page until Ctrl-C or until the last page closes.

    The page's URL is the first line written to ``stream`` (standard output).
    """
    out = stream if stream is not None else sys.stdout
    closed = threading.Event()

    def say(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    with web_server(port=port, pace=pace, providers=providers, log=say, on_close=closed.set) as (
        url,
        app,
    ):
        say(f"the demo page: {url} (Ctrl-C to stop)")
        if not app.providers:
            say(f"no demo recordings found in {DEMO_STREAMS}")
        if open_browser and not _open(url):
            say("(no graphical browser found: open the address above)")
        try:
            while not closed.wait(0.25):
                pass
            say("the page was closed: stopping")
        except KeyboardInterrupt:
            say("stopping")
    return 0
