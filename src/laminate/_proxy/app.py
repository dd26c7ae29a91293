"""The translating proxy: an ASGI app (Starlette) that serves every API's client endpoints
on one port and answers each request from a configured backend, in the client's API.

One request goes through these steps:

1. The path names the client's API (each API's ``Http.endpoints`` in the registry; no
   API is named here). The client's key is checked in that API's own header, in constant
   time; the body is read up to the size cap; the model is the one the path names, else
   the body's ``model``; streaming is the body's ``stream`` flag, else the endpoint's.
2. The model picks the backend (``ProxyConfig.route``). Same API on both sides: the
   request goes on byte for byte (only the model is rewritten when the route renames it)
   and the answer comes back byte for byte, read alongside for the log. Different APIs:
   the request is translated (§10), and the answer is normalized, given back the
   client's tool names and ids, and written in the client's API as it arrives.
3. Before the first byte of the answer, every failure is an HTTP status with the client
   API's error body: the backend's own status (and ``retry-after``), 502 when the
   backend cannot be reached or sends what cannot be read, 504 on a timeout, 413 for an
   oversized request, 401 without the proxy's key. After it, the failure is written as
   the client API's in-stream error. A client that leaves closes the backend's request.

A chat endpoint is routed to as an ASGI app of its own (:class:`_ChatRoute`) that writes
its answer itself (:class:`_Reply`): once the request's body is read, the backend's
request, the answer as it arrives and a watch on the client run in one task group, and
each piece goes to the client as soon as it is read (translated: in pieces of a read,
not one write per event). The backend's silence is timed by one cancel scope per answer
(:class:`_Idle`), not one per read; a same-API answer is read for the log's tokens only
in the frames that carry them (:class:`UsageScan`), after each chunk went on.

Nothing is kept between requests but the pooled HTTP client (made at startup), so the
app scales with workers. Each request ends with one JSON log line (:class:`Exchange`),
which never holds a prompt, an answer or a key.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hmac
import json
import logging
import math
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote

import anyio
import httpx

from .._core.extras import missing_extra

try:
    from starlette.applications import Starlette
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import BaseRoute, Route
    from starlette.types import Receive, Scope, Send
except ImportError as exc:  # the `proxy` extra is not installed
    raise missing_extra("the proxy", "proxy", exc) from exc

from .._apis.registry import APIS
from .._apis.spec import Endpoint, Http
from .._apis.translate import Translation, translate_request
from .._core.errors import (
    LaminateError,
    ProviderError,
    StreamReadError,
    StreamTimeoutError,
    TranslationError,
)
from .._core.events import Event
from .._core.response import Usage
from .._encode.encoder import encode_response
from .._io.adapters import collect
from .._io.complete import normalize
from .._io.sources import http_error
from .._normalizer import StreamNormalizer
from .backend import (
    backend_headers,
    backend_url,
    forwarded_headers,
    strip_query_key,
    warm_signer,
)
from .config import Backend, ConfigError, ProxyConfig
from .usage import UsageScan
from .writing import asks_array, stream_writer

__all__ = ["Exchange", "app"]

# httpx's AsyncClient method that picks the transport for a URL (private: see _send).
_PICK_TRANSPORT: Final = "_transport_for_url"

log: Final = logging.getLogger("laminate.proxy")

_ERROR_BODY_CAP: Final = 64 * 1024
_PASSED_BACK: Final = ("retry-after", "x-request-id", "request-id")
_NOT_PASSED: Final = frozenset(
    {"content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive"}
)
_ESTIMATE_CHARS_PER_TOKEN: Final = 4
# How long the end of a backend's body is waited for after its answer's terminal event
# (it comes with it, as a rule); the client has its whole answer by then.
_DRAIN_SECONDS: Final = 0.25
# The bytes of a backend's answer read, translated and written on at a time: the first
# piece, then every other one.
_FIRST_PIECE: Final = 1024
_PIECE: Final = 16 * 1024
# The backend URLs kept parsed (one per endpoint and backend, as a rule; a path with a
# model in it, or a query, adds more).
_URLS_KEPT: Final = 256


# -- one request's record --------------------------------------------------------------


class Exchange:
    """What one request did, for its log line: never a prompt, an answer or a key."""

    __slots__ = (
        "backend",
        "client",
        "disconnected",
        "error",
        "first_byte",
        "input_tokens",
        "model",
        "output_tokens",
        "started",
        "status",
        "stream",
    )

    def __init__(self, client: str) -> None:
        self.client = client
        self.backend: str | None = None
        self.model: str | None = None
        self.stream = False
        self.status = 0
        self.started = time.perf_counter()
        self.first_byte: float | None = None
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.error: str | None = None
        self.disconnected = False

    def usage(self, usage: Usage | None) -> None:
        if usage is not None:  # every input token, cached or not, whatever the backend
            self.input_tokens = usage.total_input_tokens
            self.output_tokens = usage.output_tokens

    def line(self) -> str:
        """The log line: one JSON object."""
        now = time.perf_counter()
        ttfb = None if self.first_byte is None else round((self.first_byte - self.started) * 1e3, 2)
        return json.dumps(
            {
                "client": self.client,
                "backend": self.backend,
                "model": self.model,
                "stream": self.stream,
                "status": self.status,
                "ttfb_ms": ttfb,
                "duration_ms": round((now - self.started) * 1e3, 2),
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "error": self.error,
                "disconnected": self.disconnected,
            },
            separators=(",", ":"),
        )


class _Refusal(Exception):
    """A request answered with an error before reaching the backend, or without it."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


class _CountFailed(Exception):
    """The backend's counting endpoint gave no count (the message says why, never what
    the backend answered)."""


@dataclass(frozen=True, slots=True)
class _Call:
    """A request ready for the backend."""

    backend: Backend
    url: str
    body: bytes
    headers: dict[str, str]
    stream: bool
    translation: Translation | None
    array: bool = False
    """The client asked its stream as one JSON array (Gemini without ``alt=sse``)."""


# -- the app -----------------------------------------------------------------------------


class _Proxy:
    def __init__(self, config: ProxyConfig) -> None:
        self.config = config
        self._client: httpx.AsyncClient | None = None
        self._write = config.log or _to_logger
        # What every request to a backend carries from the client, made with it: its
        # default headers (name as sent, name in lower case, value) and its timeouts, as
        # httpcore reads them.
        self._defaults: tuple[tuple[str, str, str], ...] = ()
        self._default_names: frozenset[str] = frozenset()
        self._extensions: dict[str, Any] = {}
        self._urls: dict[str, httpx.URL] = {}  # the backends' URLs, parsed once

    @property
    def client(self) -> httpx.AsyncClient:
        # Made at startup (the lifespan); on first use when the app is served without one.
        if self._client is None:
            t = self.config.timeouts
            self._client = httpx.AsyncClient(
                # The read timeout is applied by hand: `read` until the answer begins,
                # `idle` between its pieces.
                timeout=httpx.Timeout(t.connect, read=None, write=t.idle, pool=t.connect),
                # No cap on connections: each stream holds one for as long as it lasts.
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=200),
                follow_redirects=False,
            )
            self._defaults = tuple(
                (raw.decode("ascii"), raw.decode("ascii").lower(), value.decode("latin-1"))
                for raw, value in self._client.headers.raw
            )
            self._default_names = frozenset(lower for _, lower, _ in self._defaults)
            self._extensions = {"timeout": self._client.timeout.as_dict()}
        return self._client

    async def start(self) -> None:
        """Make, once per worker and before the first request, what the first request
        would otherwise wait for: the HTTP client (its TLS context takes tens of ms), the
        SigV4 signer and its AWS credentials, and the lazily imported parts of anyio."""
        _ = self.client
        with anyio.fail_after(self.config.timeouts.connect):
            pass  # the first cancel scope imports anyio's backend
        for backend in self.config.backends:
            if backend.key is None and _http(backend.api).signing is not None:
                # Finding credentials may ask the instance metadata service: in a thread.
                await anyio.to_thread.run_sync(warm_signer)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # -- the chat endpoints ----------------------------------------------------------

    async def chat(self, request: Request, send: Send, api: str, endpoint: Endpoint) -> None:
        """Answer one chat request. Once its body is read, everything runs beside a watch
        on the client (:func:`_watching`): a client that leaves cancels the backend's
        request at once, before the answer began or while it streams."""
        exchange = Exchange(api)
        reply = _Reply(request, send, exchange, self._write)
        try:
            self._check_key(request, _http(api))
            body = await self._read_body(request)
            await _watching(request, reply, lambda: self._chat(request, reply, endpoint, body))
        except _Refusal as refusal:  # before the answer began
            exchange.error = refusal.message[:200]
            response = error_response(api, refusal.status, refusal.message, refusal.headers)
            await reply.respond(response)
        except ClientDisconnect:  # the client left while sending its request
            exchange.disconnected = True
        except Exception as exc:  # a bug: the server answers 500
            exchange.error = type(exc).__name__
            raise
        finally:
            if not reply.started:  # the client left before the answer began, or a bug
                exchange.status = 499 if exchange.disconnected else 500
            reply.log()

    async def _chat(self, request: Request, reply: _Reply, endpoint: Endpoint, body: bytes) -> None:
        exchange, api = reply.exchange, reply.exchange.client
        data = _json_object(body)
        path_model = request.path_params.get("model")
        model = path_model if isinstance(path_model, str) else data.get("model")
        if not isinstance(model, str) or not model:
            raise _Refusal(400, "the request names no model")
        stream = data.get("stream")
        exchange.stream = stream if isinstance(stream, bool) else endpoint.streams
        backend, backend_model = self.config.route(model)
        exchange.backend, exchange.model = backend.api, backend_model
        call = self._prepare(
            request,
            api,
            endpoint=endpoint,
            body=body,
            data=data,
            backend=backend,
            backend_model=backend_model,
            stream=exchange.stream,
        )
        answer = await self._send(call)
        idle = self.config.timeouts.idle
        try:
            if answer.status_code >= 300:
                await reply.respond(
                    await _backend_error(answer, api, same=call.translation is None)
                )
            elif call.translation is None:
                await _pass_through(answer, reply, call=call, idle=idle)
            else:
                await _translate(answer, reply, call=call, translation=call.translation, idle=idle)
        finally:
            with anyio.CancelScope(shield=True):
                await answer.aclose()

    def _prepare(
        self,
        request: Request,
        api: str,
        *,
        endpoint: Endpoint,
        body: bytes,
        data: dict[str, Any],
        backend: Backend,
        backend_model: str,
        stream: bool,
    ) -> _Call:
        raw_path = request.scope.get("raw_path") or request.url.path.encode()
        path = raw_path.decode("latin-1")
        path_model = request.path_params.get("model")
        if isinstance(path_model, str) and backend_model != path_model:
            path = endpoint.path.replace("{model}", quote(backend_model, safe=""))
        elif not isinstance(path_model, str) and backend_model != data.get("model"):
            data = {**data, "model": backend_model}
            body = json.dumps(data, ensure_ascii=False).encode()
        query = request.url.query
        array = stream and asks_array(api, query)
        query = strip_query_key(query)
        path_and_query = f"{path}?{query}" if query else path
        if backend.api == api:
            url = backend_url(backend, path_and_query)
            headers = _signed(backend, url, body, forwarded_headers(request.headers.items()))
            return _Call(backend, url, body, headers, stream, None, array)
        # A request the backend's API cannot express is this client's request being
        # unsupported on this route: a 400 in the client's shape, which SDKs do not retry
        # (a 5xx such as 501 would be retried, and fail again).
        backend_name = f"the {display_name(backend.api)} backend"
        try:
            translation = translate_request(data, api, backend.api, path=path_and_query)
        except TranslationError as exc:
            if exc.reason == "unsupported":
                raise _Refusal(400, f"{backend_name} cannot take this request: {exc}") from None
            raise _Refusal(
                400, f"the request cannot be translated for {backend_name}: {exc}"
            ) from None
        except LaminateError as exc:
            raise _Refusal(400, f"the request cannot be sent to {backend_name}: {exc}") from None
        content = json.dumps(translation.body, ensure_ascii=False).encode()
        url = backend_url(backend, translation.path)
        headers = _signed(backend, url, content, {})
        return _Call(backend, url, content, headers, stream, translation, array)

    def _check_key(self, request: Request, http: Http) -> None:
        expected = self.config.api_key
        if expected is None:
            return
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
        want = expected.encode()
        # Every presented value is compared in full, so timing tells nothing of the key.
        matched = False
        for value in presented:
            matched |= hmac.compare_digest(value.encode(), want)
        if not matched:
            raise _Refusal(401, "missing or invalid API key for this proxy")

    async def _read_body(self, request: Request) -> bytes:
        cap = self.config.max_request_bytes
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > cap:
            raise _Refusal(413, f"the request is larger than this proxy accepts ({cap} bytes)")
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
                raise _Refusal(413, f"the request is larger than this proxy accepts ({cap} bytes)")
            pieces.append(piece)
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    async def _send(self, call: _Call) -> httpx.Response:
        """The backend's answer to ``call``, its body not read yet.

        The request is the one ``AsyncClient.build_request`` makes (the client's default
        headers under the call's, its timeouts), and goes to the transport that
        ``AsyncClient.send`` would pick for its URL (the pool, or the proxy of the
        environment). What ``send`` adds around that the proxy has no use for, and it
        costs about a fifth of the time to the first byte: no auth, redirect or hook is
        configured, and a backend's cookies are not kept from one request to the next.
        """
        client = self.client
        url = self._url(call.url)
        # The client's defaults first, each replaced by the call's header of that name
        # (whose names are in lower case), then the call's other headers.
        given = call.headers
        headers = [
            (lower, given[lower]) if lower in given else (name, value)
            for name, lower, value in self._defaults
        ]
        defaults = self._default_names
        headers += [(name, value) for name, value in given.items() if name not in defaults]
        if url.username or url.password:  # as httpx does: the URL's user info is the auth
            headers = [(n, v) for n, v in headers if n.lower() != "authorization"]
            headers.append(("Authorization", _basic_auth(url.username, url.password)))
        request = httpx.Request(
            "POST", url, headers=headers, content=call.body, extensions=self._extensions
        )
        # httpx's own choice of transport (a private method): where a later httpx has it
        # no more, the client's send does the same, with its layers.
        pick = getattr(client, _PICK_TRANSPORT, None)
        try:
            with anyio.fail_after(self.config.timeouts.read):
                if pick is None:
                    return await client.send(request, stream=True)
                answer: httpx.Response = await pick(url).handle_async_request(request)
            answer.request = request
            return answer
        except (TimeoutError, httpx.TimeoutException):
            raise _Refusal(
                504, f"the {display_name(call.backend.api)} backend did not answer in time"
            ) from None
        except httpx.HTTPError as exc:
            raise _Refusal(502, f"the backend cannot be reached: {type(exc).__name__}") from None

    def _url(self, text: str) -> httpx.URL:
        url = self._urls.get(text)
        if url is None:
            if len(self._urls) >= _URLS_KEPT:
                self._urls.clear()
            url = self._urls[text] = httpx.URL(text)
        return url

    # -- the other endpoints ----------------------------------------------------------

    async def count_tokens(self, request: Request, api: str) -> Response:
        exchange = Exchange(api)
        try:
            response = await self._count(request, api, exchange)
        except _Refusal as refusal:
            response = error_response(api, refusal.status, refusal.message, refusal.headers)
        exchange.status = response.status_code
        exchange.first_byte = time.perf_counter()
        self._write(exchange.line())
        return response

    async def _count(self, request: Request, api: str, exchange: Exchange) -> Response:
        http = _http(api)
        self._check_key(request, http)
        body = await self._read_body(request)
        data = _json_object(body)
        model = data.get("model")
        if not isinstance(model, str) or not model:
            raise _Refusal(400, "the request names no model")
        backend, backend_model = self.config.route(model)
        exchange.backend, exchange.model = backend.api, backend_model
        try:
            counted = await self._backend_count(
                request, api, body=body, data=data, backend=backend, model=backend_model
            )
        except _CountFailed as failed:
            # Why, never what: a backend's error body may quote the prompt.
            exchange.error = f"the backend's count failed ({failed}); estimated"
            counted = None
        if counted is None:
            exchange.input_tokens = estimate_tokens(data)
            return JSONResponse({"input_tokens": exchange.input_tokens})
        exchange.input_tokens, response = counted
        return response

    async def _backend_count(
        self,
        request: Request,
        api: str,
        *,
        body: bytes,
        data: dict[str, Any],
        backend: Backend,
        model: str,
    ) -> tuple[int, Response] | None:
        """The backend's own count and the client's answer with it; ``None`` when the
        backend's API has no counting endpoint (:class:`_CountFailed` when it has one
        and the count failed)."""
        own = _http(backend.api).count_tokens
        if backend.api == api and own is not None:  # the request as it is, the answer too
            if model != data.get("model"):
                body = json.dumps({**data, "model": model}, ensure_ascii=False).encode()
            forwarded = forwarded_headers(request.headers.items())
            content, headers = await self._ask_count(backend, own, body, forwarded)
            count = _count_in(content, lambda answer: answer.get("input_tokens"))
            return count, Response(content, 200, _back_headers(headers))
        counter = _http(backend.api).counting
        if counter is None:
            return None
        try:
            translation = translate_request({**data, "model": model}, api, backend.api)
        except LaminateError as exc:
            reason = exc.reason if isinstance(exc, TranslationError) else ""
            message = f"the request cannot be written for it: {reason or 'invalid'}"
            raise _CountFailed(message) from None
        content = json.dumps(counter.body(translation.body, model), ensure_ascii=False).encode()
        answer, _ = await self._ask_count(backend, counter.path(model), content, {})
        count = _count_in(answer, counter.count)
        return count, JSONResponse({"input_tokens": count})

    async def _ask_count(
        self, backend: Backend, path: str, content: bytes, headers: Mapping[str, str]
    ) -> tuple[bytes, httpx.Headers]:
        """The backend counting endpoint's answer (a 2xx), and its headers."""
        url = backend_url(backend, path)
        try:
            signed = backend_headers(backend, url, content, headers)
            answer = await self._send(_Call(backend, url, content, signed, False, None))
        except ConfigError:
            raise _CountFailed("the request cannot be signed") from None
        except _Refusal as refusal:
            raise _CountFailed(refusal.message) from None
        try:
            body = await _read_capped(answer, self.config.timeouts.idle)
        finally:
            await answer.aclose()
        if answer.status_code >= 300:
            raise _CountFailed(f"it answered {answer.status_code}")
        return body, answer.headers

    async def models(self, request: Request) -> Response:
        names = self.config.models()
        data = [
            {
                "id": name,
                "object": "model",
                "type": "model",
                "created": 0,
                "created_at": "1970-01-01T00:00:00Z",
                "owned_by": "laminate",
                "display_name": name,
            }
            for name in names
        ]
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "has_more": False,
                "first_id": names[0] if names else None,
                "last_id": names[-1] if names else None,
            }
        )


def _count_in(content: bytes, count: Callable[[Any], object]) -> int:
    try:
        found = count(json.loads(content))
    except (ValueError, RecursionError, AttributeError):
        found = None
    if not isinstance(found, int) or isinstance(found, bool) or found < 0:
        raise _CountFailed("its answer holds no count")
    return found


def estimate_tokens(data: Mapping[str, Any]) -> int:
    """A request's input tokens, estimated: one token per four characters of its JSON
    text (everything but the model and the settings a model does not read)."""
    counted = {k: v for k, v in data.items() if k not in ("model", "max_tokens", "stream")}
    text = json.dumps(counted, ensure_ascii=False, separators=(",", ":"))
    return max(1, math.ceil(len(text) / _ESTIMATE_CHARS_PER_TOKEN))


# -- answers -----------------------------------------------------------------------------


class _Reply:
    """The client's side of one exchange: what is sent to it, and whether anything was
    (a failure before then is still an HTTP status with the client API's error body;
    after it, the API's in-stream error)."""

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
        self, request: Request, send: Send, exchange: Exchange, log: Callable[[str], None]
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
        """Write the exchange's log line, once: as the answer's last bytes go out (so a
        client that has its answer finds its line written), or when it ends otherwise."""
        if not self._logged:
            self._logged = True
            self._log(self.exchange.line())

    async def respond(self, response: Response) -> None:
        """Send a whole response."""
        self.started = self.finished = True
        self.exchange.status = response.status_code
        self.exchange.first_byte = time.perf_counter()
        self.log()
        await response(self._request.scope, self._request.receive, self._send)

    def begin(self, status: int, headers: Mapping[str, str]) -> None:
        """The status and headers of a streamed response, sent with its first bytes."""
        raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
        self._head = (status, raw)

    async def write(self, data: bytes) -> None:
        """The next bytes of a streamed response (the first ones start it)."""
        if not self.started:
            await self._start()
        await self._send({"type": "http.response.body", "body": data, "more_body": True})

    async def end(self) -> None:
        """The end of a streamed response."""
        if not self.started:
            await self._start()
        self.finished = True
        self.log()
        await self._send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _start(self) -> None:
        status, headers = self._head
        self.started = True
        self.exchange.status = status
        self.exchange.first_byte = time.perf_counter()
        await self._send({"type": "http.response.start", "status": status, "headers": headers})


async def _pass_through(answer: httpx.Response, reply: _Reply, *, call: _Call, idle: float) -> None:
    """The backend's answer as it came, a body read whole or a stream chunk by chunk
    as it arrives. Each chunk is looked at for the log's token counts only after it
    went on, and only for the frames that carry usage (:class:`UsageScan`): relaying
    costs little more than the bytes."""
    exchange, api = reply.exchange, reply.exchange.client
    headers = _back_headers(answer.headers)
    if not call.stream:
        content = await _read_all(answer, idle)
        # The client gets the bytes as sent; an unreadable body only leaves the log
        # without its tokens.
        with contextlib.suppress(LaminateError):
            exchange.usage(normalize(content, api).usage)
        await reply.respond(Response(content, answer.status_code, headers))
        return
    if "content-type" not in headers:
        headers["content-type"] = stream_writer(api, array=call.array).media_type
    reply.begin(answer.status_code, headers)
    scan = UsageScan(api, answer.headers.get("content-type"))
    chunks = _chunks(answer)
    timer = _Idle(idle)
    async with contextlib.aclosing(chunks):
        try:
            with timer.scope:
                while (chunk := await timer.read(chunks)) is not None:
                    await reply.write(chunk)
                    scan.feed(chunk)
            timer.check()
        except LaminateError as exc:
            if not reply.started:
                raise _failure(exc) from None
            exchange.error = type(exc).__name__
            await reply.write(stream_writer(api, array=call.array, begun=True).error(exc))
        else:
            exchange.usage(scan.usage())
    await reply.end()


async def _translate(
    answer: httpx.Response, reply: _Reply, *, call: _Call, translation: Translation, idle: float
) -> None:
    """The backend's answer, normalized, restored to the client's names and written in
    the client's API: a whole body, or a stream whose every read from the backend goes
    on at once, in pieces (not one write per event)."""
    exchange, api = reply.exchange, reply.exchange.client
    if not call.stream:
        try:
            response = await collect(answer, call.backend.api, idle_timeout=idle)
        except LaminateError as exc:
            raise _failure(exc) from None
        exchange.usage(response.usage)
        body = encode_response(translation.restore_response(response), api)
        await reply.respond(JSONResponse(body))
        return
    writer = stream_writer(api, array=call.array)
    reply.begin(200, {"content-type": writer.media_type})
    normalizer = StreamNormalizer(
        call.backend.api, url=str(answer.url), content_type=answer.headers.get("content-type")
    )
    restore = translation.restore if translation.names or translation.ids else None

    def written(events: list[Event]) -> bytes:
        if restore is not None:
            events = [restore(event) for event in events]
        return b"".join(map(writer.encode, events))

    chunks = _chunks(answer)
    timer = _Idle(idle)
    async with contextlib.aclosing(chunks):
        try:
            piece = _FIRST_PIECE
            try:
                with timer.scope:
                    while normalizer.response is None:
                        chunk = await timer.read(chunks)
                        if chunk is None:
                            break
                        # A read holds whatever the backend had sent (up to 64 KiB,
                        # hundreds of frames); it is written on in pieces, the first one
                        # small, so that the first bytes do not wait for all of them.
                        at = 0
                        while at < len(chunk) and normalizer.response is None:
                            data = written(normalizer.feed(chunk[at : at + piece]))
                            at += piece
                            if data:
                                await reply.write(data)
                                piece = _PIECE
                    # Complete: nothing after the terminal event is read.
                timer.check()
            except StreamReadError:
                # A silence or a broken connection once the backend has said why it
                # stopped is the end: only its terminal marker was still to come (§5).
                if not normalizer.finished:
                    raise
            events, error = normalizer.close_events()
            if events:
                await reply.write(written(events))
            if error is not None:
                raise error
        except LaminateError as exc:
            if not reply.started:
                raise _failure(exc) from None
            exchange.error = type(exc).__name__
            await reply.write(writer.error(exc))
            await reply.end()
            return
        exchange.usage(normalizer.response.usage if normalizer.response else None)
        tail = writer.close()
        if tail:
            await reply.write(tail)
        await reply.end()
        await _drain(chunks)


async def _drain(chunks: AsyncIterator[bytes]) -> None:
    """Read what the backend sends after its answer's terminal event (the end of its
    chunked body, as a rule) so that its connection goes back to the pool: closing an
    unfinished response closes the connection, and the next request would open one.
    The client has its whole answer by then."""
    size = 0
    with anyio.move_on_after(_DRAIN_SECONDS):
        async for chunk in chunks:
            size += len(chunk)
            if size > _ERROR_BODY_CAP:
                break
    # Anything else (a backend that keeps sending) only costs that connection.


async def _chunks(answer: httpx.Response) -> AsyncGenerator[bytes, None]:
    """The answer's bytes as they are read (a failure to read them is a
    :class:`StreamReadError`)."""
    # The backend is asked for an unencoded body: its bytes are taken as they are read
    # (httpx's decoders and re-chunking are for an encoded one).
    encoded = answer.headers.get("content-encoding", "identity").lower() != "identity"
    chunks = answer.aiter_bytes() if encoded else answer.aiter_raw()
    try:
        async for chunk in chunks:
            yield chunk
    except httpx.HTTPError as exc:
        raise StreamReadError(
            f"reading the backend's answer failed: {type(exc).__name__}"
        ) from None


class _Idle:
    """The backend's silence limit over a loop of reads::

        with timer.scope:
            while (chunk := await timer.read(chunks)) is not None: ...
        timer.check()

    One cancel scope whose deadline each read sets, and lifts once the read is done
    (the time spent writing to the client is not the backend's silence): a scope per
    read would cost about as much as relaying a small chunk."""

    __slots__ = ("scope", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.scope = anyio.CancelScope()

    async def read(self, chunks: AsyncIterator[bytes]) -> bytes | None:
        """The next chunk (``None``: the end)."""
        self.scope.deadline = anyio.current_time() + self.seconds
        try:
            return await anext(chunks, None)
        finally:
            self.scope.deadline = math.inf

    def check(self) -> None:
        """After the scope: a :class:`StreamTimeoutError` if the silence cut the reads."""
        if self.scope.cancelled_caught:
            raise StreamTimeoutError(f"the backend sent nothing for {self.seconds} s")


async def _read_all(answer: httpx.Response, idle: float) -> bytes:
    body = bytearray()
    chunks = _chunks(answer)
    timer = _Idle(idle)
    try:
        async with contextlib.aclosing(chunks):
            with timer.scope:
                while (chunk := await timer.read(chunks)) is not None:
                    body += chunk
            timer.check()
    except StreamTimeoutError:
        raise _Refusal(504, "the backend stopped sending its answer") from None
    except LaminateError as exc:
        raise _Refusal(502, str(exc)) from None
    return bytes(body)


async def _read_capped(answer: httpx.Response, idle: float) -> bytes:
    body = bytearray()
    chunks = _chunks(answer)
    timer = _Idle(idle)
    try:
        async with contextlib.aclosing(chunks):
            with timer.scope:
                while len(body) < _ERROR_BODY_CAP and (chunk := await timer.read(chunks)):
                    body += chunk
    except LaminateError:
        pass  # what arrived is what the error says
    return bytes(body[:_ERROR_BODY_CAP])


async def _backend_error(answer: httpx.Response, api: str, *, same: bool) -> Response:
    """A backend's non-2xx answer: as sent when it speaks the client's API, else in the
    client's error shape with the backend's status kept."""
    try:
        body = await _read_capped(answer, 30.0)
    finally:
        await answer.aclose()
    headers = _back_headers(answer.headers)
    if same:
        return Response(body, answer.status_code, headers)
    error = http_error(answer.status_code, body, answer.headers)
    kept = {k: v for k, v in headers.items() if k in _PASSED_BACK}
    return error_response(api, answer.status_code, error.message, kept)


def _failure(exc: LaminateError) -> _Refusal:
    """A failure before the first byte of the answer, as the status the client gets."""
    if isinstance(exc, StreamTimeoutError):
        return _Refusal(504, f"the backend stopped sending its answer: {exc}")
    if isinstance(exc, ProviderError) and exc.status_code is not None:
        return _Refusal(exc.status_code, exc.message)
    if isinstance(exc, ProviderError):
        return _Refusal(429 if "rate" in exc.error_type.lower() else 502, exc.message)
    return _Refusal(502, f"the backend's answer cannot be read: {exc}")


def error_response(
    api: str, status: int, message: str, headers: Mapping[str, str] | None = None
) -> Response:
    """An HTTP error in the shape ``api``'s clients read (its body, and its error-type
    header where it has one)."""
    record = APIS[api]
    http = _http(api)
    kind = http.error_kind(status)
    out = dict(headers or {})
    if record.error_type_header is not None:
        out[record.error_type_header] = kind
    return JSONResponse(http.error_body(status, kind, message), status, out)


def _back_headers(headers: httpx.Headers) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() not in _NOT_PASSED}


def _basic_auth(username: str, password: str) -> str:
    token = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
    return f"Basic {token}"


def _signed(backend: Backend, url: str, body: bytes, headers: Mapping[str, str]) -> dict[str, str]:
    try:
        return backend_headers(backend, url, body, headers)
    except ConfigError as exc:
        raise _Refusal(502, str(exc)) from None


def display_name(api: str) -> str:
    """An API's name in a message: ``"the Ollama backend"``, not ``"a ollama backend"``."""
    return APIS[api].title if api in APIS else api


def _http(api: str) -> Http:
    http = APIS[api].http
    if http is None:  # routes exist only for APIs with an Http record
        raise ConfigError(f"the proxy does not serve {api!r}")
    return http


def _json_object(body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        raise _Refusal(400, "the request body is not JSON") from None
    if not isinstance(data, dict):
        raise _Refusal(400, "the request body is not a JSON object")
    return data


def _to_logger(line: str) -> None:
    log.info(line)


async def _watching(request: Request, reply: _Reply, work: Callable[[], Awaitable[None]]) -> None:
    """Run ``work()``, cancelled at once if the client leaves first. Called once the
    request's body is read: the next message the client sends can then only be its
    disconnect (which the server also reports once the answer is complete).

    On asyncio the watch is a bare task beside this one, which cancels the work's scope:
    a task group costs about a tenth of the proxy's time to the first byte."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # another event loop (trio)
        await _watching_in_group(request, reply, work)
        return
    scope = anyio.CancelScope()
    watcher = loop.create_task(_watch(request, reply, scope))
    try:
        with scope:
            await work()
    finally:
        watcher.cancel()
    if watcher.done() and not watcher.cancelled() and (failure := watcher.exception()):
        raise failure


async def _watch(request: Request, reply: _Reply, scope: anyio.CancelScope) -> None:
    try:
        while (await request.receive())["type"] != "http.disconnect":
            pass
    except Exception:  # the work stops, and the watch's failure is raised in its place
        scope.cancel()
        raise
    if not reply.finished:
        reply.exchange.disconnected = True
        scope.cancel()


async def _watching_in_group(
    request: Request, reply: _Reply, work: Callable[[], Awaitable[None]]
) -> None:
    failure: Exception | None = None
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_watch, request, reply, tasks.cancel_scope)
        try:  # in this task: a task group would wrap its exception in a group
            await work()
        except Exception as exc:
            failure = exc
        tasks.cancel_scope.cancel()
    if failure is not None:
        raise failure


# -- routes --------------------------------------------------------------------------------


def _routes(proxy: _Proxy) -> list[BaseRoute]:
    exact: list[BaseRoute] = []
    patterned: list[BaseRoute] = []
    for name, record in APIS.items():
        if record.http is None:
            continue
        if record.http.count_tokens is not None:
            exact.append(Route(record.http.count_tokens, _counter(proxy, name), methods=["POST"]))
        for endpoint in record.http.endpoints:
            handler = _ChatRoute(proxy, name, endpoint)
            if "{model}" in endpoint.path:
                path = endpoint.path.replace("{model}", "{model:path}")
                patterned.append(Route(path, handler, methods=["POST"]))
            else:
                exact.append(Route(endpoint.path, handler, methods=["POST"]))
    exact.append(Route("/v1/models", proxy.models, methods=["GET"]))
    return [*exact, *patterned]


class _ChatRoute:
    """The ASGI app of one chat endpoint: it writes its answer itself (streamed as it
    arrives), so it is routed to as an app rather than as a request-to-response
    function."""

    __slots__ = ("_api", "_endpoint", "_proxy")

    def __init__(self, proxy: _Proxy, api: str, endpoint: Endpoint) -> None:
        self._proxy = proxy
        self._api = api
        self._endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._proxy.chat(Request(scope, receive), send, self._api, self._endpoint)


def _counter(proxy: _Proxy, api: str) -> Callable[[Request], Awaitable[Response]]:
    async def count(request: Request) -> Response:
        return await proxy.count_tokens(request, api)

    return count


def app(config: ProxyConfig) -> Starlette:
    """The proxy for ``config``, an ASGI app (serve it with uvicorn or any ASGI server)."""
    if not isinstance(config, ProxyConfig):
        raise TypeError(f"app() takes a ProxyConfig, not {type(config).__name__}")
    proxy = _Proxy(config)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        await proxy.start()
        try:
            yield
        finally:
            await proxy.aclose()

    return Starlette(routes=_routes(proxy), lifespan=lifespan)
