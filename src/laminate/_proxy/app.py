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

Nothing is kept between requests but the pooled HTTP client, so the app scales with
workers. Each request ends with one JSON log line (:class:`Exchange`), which never holds
a prompt, an answer or a key.
"""

from __future__ import annotations

import contextlib
import dataclasses
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

try:
    from starlette.applications import Starlette
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import BaseRoute, Route
except ImportError as exc:  # pragma: no cover - the extra is installed in the tests
    raise ImportError("the proxy needs its extra: pip install 'laminate-llm[proxy]'") from exc

from .._apis.registry import APIS
from .._apis.spec import Endpoint, Http
from .._apis.translate import Translation, translate_request
from .._core.errors import LaminateError, ProviderError, StreamTimeoutError, TranslationError
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
from .counting import COUNTERS
from .usage import UsageScan
from .writing import StreamWriter, asks_array, stream_writer

__all__ = ["Exchange", "app"]

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
        if usage is not None:
            self.input_tokens = usage.input_tokens
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

    async def chat(self, request: Request, api: str, endpoint: Endpoint) -> Response:
        exchange = Exchange(api)
        try:
            self._check_key(request, _http(api))
            body = await self._read_body(request)
            response = await _until_disconnect(
                request, lambda: self._chat(request, api, endpoint, body, exchange)
            )
        except ClientDisconnect:  # the client left while sending its request
            response = None
        except _Refusal as refusal:
            exchange.error = refusal.message[:200]
            response = error_response(api, refusal.status, refusal.message, refusal.headers)
        if response is None:  # the client left before the answer began
            exchange.disconnected = True
            exchange.status = 499
            self._write(exchange.line())
            return Response(status_code=499)
        exchange.status = response.status_code
        if not isinstance(response, StreamingResponse):
            exchange.first_byte = time.perf_counter()
            self._write(exchange.line())
        return response

    async def _chat(
        self, request: Request, api: str, endpoint: Endpoint, body: bytes, exchange: Exchange
    ) -> Response:
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
        )
        call = dataclasses.replace(
            call,
            stream=exchange.stream,
            array=exchange.stream and asks_array(api, request.url.query),
        )
        answer = await self._send(call)
        if answer.status_code >= 300:
            return await _backend_error(answer, api, same=call.translation is None)
        if call.translation is None:
            return await _passed_through(answer, api, call, exchange, self)
        return await _translated(answer, api, call, exchange, self)

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
    ) -> _Call:
        raw_path = request.scope.get("raw_path") or request.url.path.encode()
        path = raw_path.decode("latin-1")
        path_model = request.path_params.get("model")
        if isinstance(path_model, str) and backend_model != path_model:
            path = endpoint.path.replace("{model}", quote(backend_model, safe=""))
        elif not isinstance(path_model, str) and backend_model != data.get("model"):
            data = {**data, "model": backend_model}
            body = json.dumps(data, ensure_ascii=False).encode()
        query = strip_query_key(request.url.query)
        path_and_query = f"{path}?{query}" if query else path
        if backend.api == api:
            url = backend_url(backend, path_and_query)
            headers = forwarded_headers(request.headers.items())
            return _Call(backend, url, body, _signed(backend, url, body, headers), False, None)
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
        return _Call(backend, url, content, _signed(backend, url, content, {}), False, translation)

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
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > cap:
                raise _Refusal(413, f"the request is larger than this proxy accepts ({cap} bytes)")
        return bytes(body)

    async def _send(self, call: _Call) -> httpx.Response:
        request = self.client.build_request(
            "POST", call.url, content=call.body, headers=call.headers
        )
        try:
            with anyio.fail_after(self.config.timeouts.read):
                return await self.client.send(request, stream=True)
        except (TimeoutError, httpx.TimeoutException):
            raise _Refusal(
                504, f"the {display_name(call.backend.api)} backend did not answer in time"
            ) from None
        except httpx.HTTPError as exc:
            raise _Refusal(502, f"the backend cannot be reached: {type(exc).__name__}") from None

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
        counter = COUNTERS.get(backend.api)
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


async def _passed_through(
    answer: httpx.Response, api: str, call: _Call, exchange: Exchange, proxy: _Proxy
) -> Response:
    headers = _back_headers(answer.headers)
    idle = proxy.config.timeouts.idle
    if not call.stream:
        try:
            content = await _read_all(answer, idle)
        finally:
            await answer.aclose()
        # The client gets the bytes as sent; an unreadable body only leaves the log
        # without its tokens.
        with contextlib.suppress(LaminateError):
            exchange.usage(normalize(content, api).usage)
        return Response(content, answer.status_code, headers)
    chunks = _relay(answer, api, exchange, proxy, idle, array=call.array)
    media_type = stream_writer(api, array=call.array).media_type
    return await _streaming(chunks, media_type, answer.status_code, headers, exchange)


async def _relay(
    answer: httpx.Response,
    api: str,
    exchange: Exchange,
    proxy: _Proxy,
    idle: float,
    *,
    array: bool,
) -> AsyncIterator[bytes]:
    """The backend's bytes as they arrive. Each chunk is looked at for the log's token
    counts only after it went on, and only for the frames that carry usage
    (:class:`UsageScan`): relaying costs no more than the bytes."""
    scan = UsageScan(api, answer.headers.get("content-type"))
    chunks = _timed(answer, idle)
    sent = False
    try:
        async with contextlib.aclosing(chunks):
            async for chunk in chunks:
                sent = True
                yield chunk
                scan.feed(chunk)
        exchange.usage(scan.usage())
    except LaminateError as exc:
        exchange.error = type(exc).__name__
        if not sent:
            raise
        yield stream_writer(api, array=array, begun=True).error(exc)
    except anyio.get_cancelled_exc_class():
        exchange.disconnected = True
        raise
    finally:
        with anyio.CancelScope(shield=True):
            await answer.aclose()
            proxy._write(exchange.line())


async def _translated(
    answer: httpx.Response, api: str, call: _Call, exchange: Exchange, proxy: _Proxy
) -> Response:
    translation = call.translation
    if translation is None:  # pragma: no cover - the caller checked
        raise TypeError("a translated answer needs its translation")
    idle = proxy.config.timeouts.idle
    if not call.stream:
        try:
            response = await collect(answer, call.backend.api, idle_timeout=idle)
        except LaminateError as exc:
            raise _failure(exc) from None
        finally:
            await answer.aclose()
        exchange.usage(response.usage)
        body = encode_response(translation.restore_response(response), api)
        return JSONResponse(body)
    writer = stream_writer(api, array=call.array)
    chunks = _rewrite(
        answer, writer, call=call, translation=translation, exchange=exchange, proxy=proxy
    )
    return await _streaming(chunks, writer.media_type, 200, {}, exchange)


async def _rewrite(
    answer: httpx.Response,
    encoder: StreamWriter,
    *,
    call: _Call,
    translation: Translation,
    exchange: Exchange,
    proxy: _Proxy,
) -> AsyncIterator[bytes]:
    """The backend's answer, normalized, restored to the client's names and written in
    the client's API: what each chunk from the backend completes goes on at once, as
    one piece (one write to the client per chunk read, not one per event)."""
    normalizer = StreamNormalizer(
        call.backend.api, url=str(answer.url), content_type=answer.headers.get("content-type")
    )
    restore = translation.restore if translation.names or translation.ids else None

    def written(events: list[Event]) -> bytes:
        if restore is not None:
            events = [restore(event) for event in events]
        return b"".join([encoder.encode(event) for event in events])

    chunks = _until_finished(answer, normalizer, proxy.config.timeouts.idle)
    sent = False
    try:
        async with contextlib.aclosing(chunks):
            try:
                data = b""
                piece = _FIRST_PIECE
                async for chunk in chunks:
                    # A read holds whatever the backend had sent (up to 64 KiB, hundreds
                    # of frames); it is written on in pieces, the first one small, so
                    # that the first bytes do not wait for the whole read to be written.
                    at = 0
                    while at < len(chunk):
                        data = written(normalizer.feed(chunk[at : at + piece]))
                        at += piece
                        if normalizer.response is not None:
                            break  # complete: nothing after the terminal event is read
                        if data:
                            sent = True
                            piece = _PIECE
                            yield data
                        data = b""
                    if normalizer.response is not None:
                        break
                events, error = normalizer.close_events()
                data += written(events)
                if error is not None:
                    if data:
                        sent = True
                        yield data
                    raise error
            except LaminateError as exc:
                exchange.error = type(exc).__name__
                if not sent:
                    raise
                yield encoder.error(exc)
                return
            exchange.usage(normalizer.response.usage if normalizer.response else None)
            data += encoder.close()
            if data:
                yield data
            await _drain(chunks)
    except anyio.get_cancelled_exc_class():
        exchange.disconnected = True
        raise
    finally:
        with anyio.CancelScope(shield=True):
            await answer.aclose()
            proxy._write(exchange.line())


async def _drain(chunks: AsyncIterator[bytes]) -> None:
    """Read what the backend sends after its answer's terminal event (the end of its
    chunked body, as a rule) so that its connection goes back to the pool: closing an
    unfinished response closes the connection, and the next request would open one."""
    size = 0
    with anyio.move_on_after(_DRAIN_SECONDS):
        async for chunk in chunks:
            size += len(chunk)
            if size > _ERROR_BODY_CAP:
                break
    # Anything else (a backend that keeps sending) only costs that connection.


async def _until_finished(
    answer: httpx.Response, normalizer: StreamNormalizer, idle: float
) -> AsyncGenerator[bytes, None]:
    """The answer's bytes (:func:`_timed`); a silence or a broken connection once the
    backend has said why it stopped is the end (only its terminal marker was still to
    come, contract §5)."""
    chunks = _timed(answer, idle)
    try:
        async with contextlib.aclosing(chunks):
            async for chunk in chunks:
                yield chunk
    except LaminateError:
        if not normalizer.finished:
            raise


async def _streaming(
    chunks: AsyncIterator[bytes],
    media_type: str,
    status: int,
    headers: Mapping[str, str],
    exchange: Exchange,
) -> Response:
    """A streaming response that starts with the first chunk: a failure before it is
    still an HTTP status with the client API's error body."""
    try:
        first = await chunks.__anext__()
    except StopAsyncIteration:
        first = b""
    except LaminateError as exc:
        raise _failure(exc) from None
    exchange.first_byte = time.perf_counter()
    out = dict(headers)
    # As given: Starlette would add a charset to a text type named by `media_type`.
    out.setdefault("content-type", media_type)
    return StreamingResponse(_prepend(first, chunks), status, out)


async def _prepend(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    if first:
        yield first
    async for chunk in rest:
        yield chunk


async def _timed(answer: httpx.Response, idle: float) -> AsyncGenerator[bytes, None]:
    """The answer's bytes; a silence longer than ``idle`` is a :class:`StreamTimeoutError`."""
    # The backend is asked for an unencoded body: its bytes are taken as they are read
    # (httpx's decoders and re-chunking are for an encoded one).
    encoded = answer.headers.get("content-encoding", "identity").lower() != "identity"
    chunks = answer.aiter_bytes() if encoded else answer.aiter_raw()
    while True:
        try:
            with anyio.fail_after(idle):
                chunk = await chunks.__anext__()
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise StreamTimeoutError(f"the backend sent nothing for {idle} s") from None
        except httpx.HTTPError as exc:
            raise LaminateError(
                f"reading the backend's answer failed: {type(exc).__name__}"
            ) from None
        yield chunk


async def _read_all(answer: httpx.Response, idle: float) -> bytes:
    try:
        return b"".join([chunk async for chunk in _timed(answer, idle)])
    except StreamTimeoutError:
        raise _Refusal(504, "the backend stopped sending its answer") from None
    except LaminateError as exc:
        raise _Refusal(502, str(exc)) from None


async def _read_capped(answer: httpx.Response, idle: float) -> bytes:
    body = bytearray()
    try:
        async for chunk in _timed(answer, idle):
            body += chunk
            if len(body) >= _ERROR_BODY_CAP:
                break
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


def _signed(backend: Backend, url: str, body: bytes, headers: Mapping[str, str]) -> dict[str, str]:
    try:
        return backend_headers(backend, url, body, headers)
    except ConfigError as exc:
        raise _Refusal(502, str(exc)) from None


# How the messages name each API (the registry knows them by their provider names).
_DISPLAY_NAMES: Final = {
    "openai": "Chat Completions",
    "openai-responses": "OpenAI Responses",
    "anthropic": "Anthropic Messages",
    "gemini": "Gemini",
    "bedrock": "Bedrock Converse",
    "ollama": "Ollama",
    "cohere": "Cohere",
}


def display_name(api: str) -> str:
    """An API's name in a message: ``"the Ollama backend"``, not ``"a ollama backend"``."""
    return _DISPLAY_NAMES.get(api, api)


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


async def _until_disconnect(
    request: Request, work: Callable[[], Awaitable[Response]]
) -> Response | None:
    """``work()``'s response, or ``None`` when the client leaves first (the work, the
    backend's request with it, is then cancelled at once). Called once the request's
    body is read: the next message the client sends can then only be its disconnect."""
    result: Response | None = None
    failure: Exception | None = None
    async with anyio.create_task_group() as tasks:

        async def watch() -> None:
            while (await request.receive())["type"] != "http.disconnect":
                pass
            tasks.cancel_scope.cancel()

        tasks.start_soon(watch)
        try:  # in this task: a task group would wrap its exception in a group
            result = await work()
        except Exception as exc:
            failure = exc
        tasks.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return result


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
            handler = _chatter(proxy, name, endpoint)
            if "{model}" in endpoint.path:
                path = endpoint.path.replace("{model}", "{model:path}")
                patterned.append(Route(path, handler, methods=["POST"]))
            else:
                exact.append(Route(endpoint.path, handler, methods=["POST"]))
    exact.append(Route("/v1/models", proxy.models, methods=["GET"]))
    return [*exact, *patterned]


def _chatter(
    proxy: _Proxy, api: str, endpoint: Endpoint
) -> Callable[[Request], Awaitable[Response]]:
    async def chat(request: Request) -> Response:
        return await proxy.chat(request, api, endpoint)

    return chat


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
