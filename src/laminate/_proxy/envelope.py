"""A cloud's endpoints of an API (an :class:`~laminate._apis.spec.CloudEnvelope`: Anthropic
Messages on Bedrock's InvokeModel and on Vertex's rawPredict), served by the app of the
API's own endpoint.

:class:`EnvelopeRoute` is an ASGI app around that app. Before it, the request is
unwrapped: the body read (up to the size cap), made the API's own request by the
envelope (the model the path names, the path's ``stream``, the cloud's fields dropped
or moved to headers), and handed on as a request to the API's own path. After it, the
answer is wrapped again on its way to the client: a stream framed anew where the cloud
frames it otherwise (AWS's event stream ``chunk`` messages, its error an ``exception``
message), an error status's body rewritten in the cloud's error shape where it has one.
Everything between (the key, the backend, the translation, the relay, the log) is the
API's own endpoint's, unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Final

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .._apis.spec import CloudEnvelope, Http
from .._framing import MEDIA_TYPES, framing_of
from .._framing.writers import ChunkWriter
from .._io.sources import http_error
from .refusals import Refusal

__all__ = ["EnvelopeRoute"]

# Response headers not carried over to a rewritten error.
_REWRITTEN: Final = frozenset({b"content-length", b"content-type"})


class EnvelopeRoute:
    """The ASGI app of a cloud's endpoint: ``inner`` (the app of the API's own endpoint,
    a chat or a count) behind the unwrapping of the request and the wrapping of the
    answer. ``streams``: whether the path asks a stream; ``counts``: a counting endpoint
    (its body names the model); ``identify``: the proxy's check of a request's key
    (raising a 401 :class:`~laminate._proxy.refusals.Refusal`); ``cap``: the largest
    body it reads (asked per request: a reload may change it)."""

    __slots__ = (
        "_cap",
        "_counts",
        "_envelope",
        "_http",
        "_identify",
        "_inner",
        "_path",
        "_streams",
    )

    def __init__(
        self,
        inner: ASGIApp,
        envelope: CloudEnvelope,
        http: Http,
        *,
        path: str,
        streams: bool,
        counts: bool,
        identify: Callable[[Request, Http], object],
        cap: Callable[[], int],
    ) -> None:
        self._inner = inner
        self._envelope = envelope
        self._http = http
        self._path = path
        self._streams = streams
        self._counts = counts
        self._identify = identify
        self._cap = cap

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        reply = _Reply(send, self._envelope)
        try:
            # A client without the key is refused as the API's own endpoint refuses it,
            # before its body is read.
            self._identify(Request(scope), self._http)
        except Refusal:
            await self._inner(scope, receive, reply)
            return
        read, whole = await _read(receive, self._cap())
        body = b"".join(m.get("body", b"") for m in read)
        unwrapped = self._unwrap(scope, body) if whole else None
        if unwrapped is None:
            # Too large, or not a JSON object: handed on as it came, for the API's own
            # endpoint to refuse in its words (a 413, a 400).
            await self._inner(scope, _replay(read, receive), reply)
            return
        content, headers = unwrapped
        raw = [(k, v) for k, v in scope["headers"] if k not in (b"content-length",)]
        raw = [(k, v) for k, v in raw if k.decode("latin-1") not in headers]
        raw += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
        raw.append((b"content-length", str(len(content)).encode()))
        inner_scope = {
            **scope,
            "path": self._path,
            "raw_path": self._path.encode(),
            "path_params": {},
            "headers": raw,
        }
        message: Message = {"type": "http.request", "body": content, "more_body": False}
        await self._inner(inner_scope, _replay([message], receive), reply)

    def _unwrap(self, scope: Scope, body: bytes) -> tuple[bytes, dict[str, str]] | None:
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            return None
        if not isinstance(data, dict):
            return None
        model = None
        if not self._counts:
            named = scope.get("path_params", {}).get("model")
            if not isinstance(named, str) or not named:
                return None
            model = named
        request, headers = self._envelope.unwrap(data, model, self._streams)
        return json.dumps(request, ensure_ascii=False).encode(), headers


async def _read(receive: Receive, cap: int) -> tuple[list[Message], bool]:
    """The request's body messages, up to ``cap`` bytes; whether that was all of it (a
    client that leaves meanwhile: its disconnect, last)."""
    read: list[Message] = []
    size = 0
    while True:
        message = await receive()
        read.append(message)
        if message["type"] != "http.request":
            return read, False
        size += len(message.get("body", b""))
        if size > cap:
            return read, False
        if not message.get("more_body", False):
            return read, True


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """``receive`` that gives ``messages`` first."""
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


class _Reply:
    """The ``send`` of the API's own endpoint, wrapped: a stream framed as the cloud
    frames it, an error's body in the cloud's shape."""

    __slots__ = ("_envelope", "_error", "_framer", "_send")

    def __init__(self, send: Send, envelope: CloudEnvelope) -> None:
        self._send = send
        self._envelope = envelope
        self._framer: ChunkWriter | None = None
        # An error status's head and body so far, held to be written in the cloud's shape.
        self._error: tuple[int, list[tuple[bytes, bytes]], bytearray] | None = None

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            await self._start(message)
        elif message["type"] == "http.response.body" and self._error is not None:
            self._error[2].extend(message.get("body", b""))
            if not message.get("more_body", False):
                await self._send_error(*self._error)
        elif message["type"] == "http.response.body" and self._framer is not None:
            data = self._framer.feed(message.get("body", b""))
            more = bool(message.get("more_body", False))
            if not more:
                data += self._framer.close()
            if data or not more:
                await self._send({"type": "http.response.body", "body": data, "more_body": more})
        else:
            await self._send(message)

    async def _start(self, message: Message) -> None:
        status: int = message["status"]
        headers: list[tuple[bytes, bytes]] = list(message.get("headers", []))
        envelope = self._envelope
        if status >= 300 and envelope.error_body is not None:
            self._error = (status, headers, bytearray())  # written by `_send_error`
            return
        kind = Headers(raw=headers).get("content-type")
        chunks = envelope.chunks
        if chunks is not None and status < 300 and framing_of(kind) == "sse":
            self._framer = ChunkWriter(chunks.error, chunks.failure)
            headers = [(k, v) for k, v in headers if k not in _REWRITTEN]
            headers.append((b"content-type", MEDIA_TYPES["eventstream"].encode()))
            message = {**message, "headers": headers}
        await self._send(message)

    async def _send_error(
        self, status: int, headers: list[tuple[bytes, bytes]], body: bytearray
    ) -> None:
        envelope = self._envelope
        error = http_error(status, bytes(body), Headers(raw=headers))
        kind = envelope.error_kind(status)
        shape = envelope.error_body or (lambda _status, _kind, message: {"message": message})
        content = json.dumps(shape(status, kind, error.message)).encode()
        kept = [(k, v) for k, v in headers if k not in _REWRITTEN]
        if envelope.error_type_header is not None:
            name = envelope.error_type_header.encode("latin-1")
            kept = [(k, v) for k, v in kept if k != name] + [(name, kind.encode("latin-1"))]
        kept += [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(content)).encode()),
        ]
        await self._send({"type": "http.response.start", "status": status, "headers": kept})
        await self._send({"type": "http.response.body", "body": content, "more_body": False})
