"""The client's side of one exchange: its request read and checked (the keys it presents
in its API's own header; the body up to the size cap; a JSON object), the
reply written to it (:class:`Responder`), and a watch on it leaving (:func:`watching`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import anyio
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Send

from .._apis.spec import Http
from .._core import jsonlib
from .counting import Exchange
from .refusals import Refusal

__all__ = [
    "BACKEND_HEADER",
    "Responder",
    "json_object",
    "path_of",
    "presented_keys",
    "query_of",
    "read_body",
    "watching",
]

BACKEND_HEADER: Final = "x-laminate-backend"
"""The response header that names the backend that answered (or failed last)."""
_BACKEND_HEADER_RAW: Final = BACKEND_HEADER.encode("ascii")


def presented_keys(request: Request, http: Http) -> list[str]:
    """The keys a request presents: in each of its API's key headers (``authorization``
    as ``Bearer <key>``), and in its key query parameter."""
    presented: list[str] = []
    for name in http.key_headers:
        value = request.headers.get(name)
        if value is not None:
            scheme, _, token = value.partition(" ")
            presented.append(
                token if name == "authorization" and scheme.lower() == "bearer" else value
            )
    if http.key_query is not None:
        value = request.query_params.get(http.key_query)
        if value is not None:
            presented.append(value)
    return presented


def path_of(request: Request) -> str:
    """``request.url.path``, read from the request's scope: building the URL costs a
    tenth of the proxy's time to the first byte (only a path holding what the URL
    escapes needs it)."""
    path: str = request.scope["path"]
    if "?" in path or "#" in path or "\\" in path:
        return request.url.path
    return path


def query_of(request: Request) -> str:
    """``request.url.query`` (``""`` without building the URL when there is none)."""
    return request.url.query if request.scope.get("query_string") else ""


async def read_body(request: Request, cap: int) -> bytes:
    """The request's body, refused (413) past ``cap`` bytes."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > cap:
        raise Refusal(413, f"the request is larger than this proxy accepts ({cap} bytes)")
    pieces: list[bytes] = []
    size = 0
    more = True
    while more:  # the ASGI messages themselves: most bodies come in one
        message = await request.receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        if message["type"] != "http.request":
            continue
        piece: bytes = message.get("body", b"")
        more = bool(message.get("more_body", False))
        size += len(piece)
        if size > cap:
            raise Refusal(413, f"the request is larger than this proxy accepts ({cap} bytes)")
        pieces.append(piece)
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def json_object(body: bytes) -> dict[str, Any]:
    """The request's body as a JSON object (else a 400)."""
    try:
        data = jsonlib.loads_exact(body)  # what json.loads gives (with orjson, quicker)
    except (ValueError, RecursionError):
        raise Refusal(400, "the request body is not JSON") from None
    if not isinstance(data, dict):
        raise Refusal(400, "the request body is not a JSON object")
    return data


class Responder:
    """What is sent to the client, and whether anything was (a failure before then is
    still an HTTP status with the client API's error body; after it, the API's
    in-stream error)."""

    __slots__ = (
        "_head",
        "_log",
        "_logged",
        "_request",
        "_send",
        "exchange",
        "finished",
        "started",
    )

    def __init__(
        self, request: Request, send: Send, exchange: Exchange, log: Callable[[Exchange], None]
    ) -> None:
        self._request = request
        self._send = send
        self.exchange = exchange
        self._log = log
        self._logged = False
        self._head: tuple[int, list[tuple[bytes, bytes]]] = (200, [])
        self.started = False
        self.finished = False

    def log(self) -> None:
        """Hand the exchange on (its log line, its metrics), once: right after the
        answer's last bytes went out (in the same step of the event loop unless the
        client's socket is full, so a request the server reads next, such as one for
        the metrics, finds it counted), or when it ends otherwise."""
        if not self._logged:
            self._logged = True
            self._log(self.exchange)

    async def respond(self, response: Response) -> None:
        """Send a whole response."""
        self.started = self.finished = True
        if self.exchange.backend is not None:
            response.headers[BACKEND_HEADER] = self.exchange.backend
        self.exchange.status = response.status_code
        self.exchange.first_byte = time.perf_counter()
        self.log()
        await response(self._request.scope, self._request.receive, self._send)

    def begin(self, status: int, headers: Mapping[str, str]) -> None:
        """The status and headers of a streamed response, sent with its first bytes."""
        raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
        if self.exchange.backend is not None:
            raw = [(k, v) for k, v in raw if k != _BACKEND_HEADER_RAW]
            raw.append((_BACKEND_HEADER_RAW, self.exchange.backend.encode("latin-1")))
        self._head = (status, raw)

    async def write(self, data: bytes) -> None:
        """The next bytes of a streamed response (the first ones start it)."""
        if not self.started:
            await self._start()
        await self._send({"type": "http.response.body", "body": data, "more_body": True})

    async def end(self, data: bytes = b"", *, log: bool = True) -> None:
        """The end of a streamed response, with its last bytes (``data``): one write, so
        the client is woken once for them and the end. The log line follows (``log``;
        else the caller's :meth:`log`, once what it counts is known): the client does
        not wait for it."""
        if not self.started:
            await self._start()
        self.finished = True
        await self._send({"type": "http.response.body", "body": data, "more_body": False})
        if log:
            self.log()

    async def _start(self) -> None:
        status, headers = self._head
        self.started = True
        self.exchange.status = status
        self.exchange.first_byte = time.perf_counter()
        await self._send({"type": "http.response.start", "status": status, "headers": headers})


async def watching(
    request: Request, responder: Responder, work: Callable[[], Awaitable[None]]
) -> None:
    """Run ``work()``, cancelled at once if the client leaves first. Called once the
    request's body is read: the next message the client sends can then only be its
    disconnect (which the server also reports once the answer is complete).

    On asyncio the watch is a bare task beside this one, which cancels the work's scope:
    a task group costs about a tenth of the proxy's time to the first byte."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # another event loop (trio)
        await _watching_in_group(request, responder, work)
        return
    scope = anyio.CancelScope()
    watcher = loop.create_task(_watch(request, responder, scope))
    try:
        with scope:
            await work()
    finally:
        watcher.cancel()
    if watcher.done() and not watcher.cancelled() and (failure := watcher.exception()):
        raise failure


async def _watch(request: Request, responder: Responder, scope: anyio.CancelScope) -> None:
    try:
        while (await request.receive())["type"] != "http.disconnect":
            pass
    except Exception:  # the work stops, and the watch's failure is raised in its place
        scope.cancel()
        raise
    if not responder.finished:
        responder.exchange.disconnected = True
        scope.cancel()


async def _watching_in_group(
    request: Request, responder: Responder, work: Callable[[], Awaitable[None]]
) -> None:
    failure: Exception | None = None
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_watch, request, responder, tasks.cancel_scope)
        try:  # in this task: a task group would wrap its exception in a group
            await work()
        except Exception as exc:
            failure = exc
        tasks.cancel_scope.cancel()
    if failure is not None:
        raise failure
