"""Relaying a backend's answer to the client, as it arrives.

Every answer is read one way, by :class:`Reads`: the bytes as they are read, with the
backend's silence timed by one cancel scope over the whole loop of reads (not one per
read), and a broken connection a :class:`StreamReadError`. Over it:

- same API on both sides (:func:`relay`, no translation): the backend's bytes go on as
  they came, a body read whole or a stream chunk by chunk; each chunk is looked at for
  the log's token counts only after it went on, and only in the frames that carry them
  (:class:`UsageScan`);
- different APIs: the answer goes through a normalizer (:func:`_normalized`), is given
  back the client's tool names and ids, and is written in the client's API: a stream
  whose every read from the backend goes on at once, in pieces (not one write per
  event), or a whole body. The end of the answer is the library's rule
  (:func:`~laminate._io.sources.ends_answer`): a silence or a broken connection once the
  backend has said why it stopped ends it;
- a backend's non-2xx answer: as sent when it speaks the client's API, else in the
  client's error shape with the backend's status kept.

Before the first byte a failure is raised as a :class:`Refusal` (an HTTP status); after
it, it is written as the client API's in-stream error. A keep-alive written to the
client while the backend is silent would go in :meth:`Reads.next`, which times that
silence.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Final

import anyio
import httpx
from starlette.responses import JSONResponse, Response

from .._apis.translate import Translation
from .._core.errors import LaminateError, StreamReadError, StreamTimeoutError
from .._core.events import Event
from .._encode.encoder import encode_response
from .._io.complete import normalize
from .._io.sources import ERROR_BODY_CAP, ends_answer, http_error, silence_error
from .._normalizer import StreamNormalizer
from .calls import Call
from .client import Responder
from .refusals import Refusal, error_response, failure
from .usage import UsageScan
from .writing import client_writer

__all__ = ["Reads", "back_headers", "read_capped", "relay"]

_PASSED_BACK: Final = ("retry-after", "x-request-id", "request-id")
_NOT_PASSED: Final = frozenset(
    {"content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive"}
)
# How long the end of a backend's body is waited for after its answer's terminal event
# (it comes with it, as a rule); the client has its whole answer by then.
_DRAIN_SECONDS: Final = 0.25
# The bytes of a backend's answer read, translated and written on at a time: the first
# piece, then every other one.
_FIRST_PIECE: Final = 1024
_PIECE: Final = 16 * 1024
# How long a backend's error body is waited for.
_ERROR_BODY_SECONDS: Final = 30.0


class Reads:
    """A backend's answer's bytes, read one way by every path::

        async with contextlib.aclosing(Reads(answer, idle)) as reads:
            with reads.scope:
                while (chunk := await reads.next()) is not None: ...
            reads.check()

    One cancel scope whose deadline each read sets, and lifts once the read is done
    (the time spent writing to the client is not the backend's silence): a scope per
    read would cost about as much as relaying a small chunk."""

    __slots__ = ("_chunks", "scope", "seconds")

    def __init__(self, answer: httpx.Response, seconds: float) -> None:
        self._chunks = _chunks(answer)
        self.seconds = seconds
        self.scope = anyio.CancelScope()

    async def next(self) -> bytes | None:
        """The next chunk (``None``: the end)."""
        self.scope.deadline = anyio.current_time() + self.seconds
        try:
            return await anext(self._chunks, None)
        finally:
            self.scope.deadline = math.inf

    def check(self, normalizer: StreamNormalizer | None = None) -> None:
        """After the scope: a :class:`StreamTimeoutError` if the silence cut the reads
        (with what ``normalizer`` read of the answer)."""
        if self.scope.cancelled_caught:
            raise silence_error(self.seconds, normalizer)

    async def drain(self, seconds: float, cap: int) -> None:
        """Read what the backend sends after its answer's terminal event (the end of its
        chunked body, as a rule; up to ``cap`` bytes, for ``seconds`` at most) so that its
        connection goes back to the pool: closing an unfinished response closes the
        connection, and the next request would open one. The client has its whole
        answer by then."""
        size = 0
        with anyio.move_on_after(seconds):
            async for chunk in self._chunks:
                size += len(chunk)
                if size > cap:
                    break
        # Anything else (a backend that keeps sending) only costs that connection.

    async def aclose(self) -> None:
        await self._chunks.aclose()


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


async def relay(answer: httpx.Response, responder: Responder, call: Call, idle: float) -> None:
    """The backend's ``answer`` to ``call``, to the client (``idle``: the longest silence
    of the backend, in seconds). The answer is closed on every way out."""
    api = responder.exchange.client
    try:
        if answer.status_code >= 300:
            same = call.translation is None
            await responder.respond(await _backend_error(answer, api, same=same))
        elif call.translation is None:
            await _pass_through(answer, responder, call, idle)
        else:
            await _translate(answer, responder, call, call.translation, idle)
    finally:
        with anyio.CancelScope(shield=True):
            await answer.aclose()


async def _pass_through(
    answer: httpx.Response, responder: Responder, call: Call, idle: float
) -> None:
    """The backend's answer as it came, a body read whole or a stream chunk by chunk
    as it arrives. Each chunk is looked at for the log's token counts only after it
    went on, and only for the frames that carry usage (:class:`UsageScan`): relaying
    costs little more than the bytes."""
    exchange, api = responder.exchange, responder.exchange.client
    headers = back_headers(answer.headers)
    if not call.stream:
        content = await _read_all(answer, idle)
        # The client gets the bytes as sent; an unreadable body only leaves the log
        # without its tokens.
        with contextlib.suppress(LaminateError):
            exchange.usage(normalize(content, api).usage)
        await responder.respond(Response(content, answer.status_code, headers))
        return
    if "content-type" not in headers:
        headers["content-type"] = client_writer(api, array=call.array).media_type
    responder.begin(answer.status_code, headers)
    scan = UsageScan(api, answer.headers.get("content-type"))
    async with contextlib.aclosing(Reads(answer, idle)) as reads:
        try:
            with reads.scope:
                while (chunk := await reads.next()) is not None:
                    await responder.write(chunk)
                    scan.feed(chunk)
            reads.check()
        except LaminateError as exc:
            if not responder.started:
                raise failure(exc) from None
            exchange.error = type(exc).__name__
            await responder.write(client_writer(api, array=call.array, begun=True).error(exc))
        else:
            exchange.usage(scan.usage())
    await responder.end()


async def _translate(
    answer: httpx.Response,
    responder: Responder,
    call: Call,
    translation: Translation,
    idle: float,
) -> None:
    """The backend's answer, normalized, restored to the client's names and written in
    the client's API: a whole body, or a stream whose every read from the backend goes
    on at once, in pieces (not one write per event)."""
    exchange, api = responder.exchange, responder.exchange.client
    normalizer = StreamNormalizer(
        call.backend.api, url=str(answer.url), content_type=answer.headers.get("content-type")
    )
    if not call.stream:
        async with contextlib.aclosing(Reads(answer, idle)) as reads:
            try:
                _, error = await _normalized(reads, normalizer)
                if error is not None:
                    raise error
            except LaminateError as exc:
                raise failure(exc) from None
        response = normalizer.response
        if response is None:  # close() either completes the response or fails
            raise failure(LaminateError("the stream ended without a response"))
        exchange.usage(response.usage)
        body = encode_response(translation.restore_response(response), api)
        await responder.respond(JSONResponse(body))
        return
    writer = client_writer(api, array=call.array)
    responder.begin(200, {"content-type": writer.media_type})
    restore = translation.restore if translation.names or translation.ids else None

    def written(events: list[Event]) -> bytes:
        if restore is not None:
            events = [restore(event) for event in events]
        return writer.encode_all(events)

    async def deliver(events: list[Event]) -> bool:
        data = written(events)
        if data:
            await responder.write(data)
        return bool(data)

    async with contextlib.aclosing(Reads(answer, idle)) as reads:
        try:
            events, error = await _normalized(reads, normalizer, deliver)
            if events:
                await responder.write(written(events))
            if error is not None:
                raise error
        except LaminateError as exc:
            if not responder.started:
                raise failure(exc) from None
            exchange.error = type(exc).__name__
            await responder.write(writer.error(exc))
            await responder.end()
            return
        exchange.usage(normalizer.response.usage if normalizer.response else None)
        tail = writer.close()
        if tail:
            await responder.write(tail)
        await responder.end()
        await reads.drain(_DRAIN_SECONDS, ERROR_BODY_CAP)


async def _normalized(
    reads: Reads,
    normalizer: StreamNormalizer,
    deliver: Callable[[list[Event]], Awaitable[bool]] | None = None,
) -> tuple[list[Event], LaminateError | None]:
    """Feed the answer to ``normalizer`` up to its terminal event (nothing after it is
    read), then close it: the events of its end, and the error it ended with.

    ``deliver`` gets the events as they come and says whether it wrote anything: a read
    holds whatever the backend had sent (up to 64 KiB, hundreds of frames), fed on in
    pieces, the first one small, so that the first bytes do not wait for all of them.
    A failed read is raised, unless it ends the answer (the library's rule)."""
    piece = _FIRST_PIECE
    try:
        with reads.scope:
            while normalizer.response is None:
                chunk = await reads.next()
                if chunk is None:
                    break
                if deliver is None:
                    normalizer.feed(chunk)
                    continue
                at = 0
                while at < len(chunk) and normalizer.response is None:
                    events = normalizer.feed(chunk[at : at + piece])
                    at += piece
                    if events and await deliver(events):
                        piece = _PIECE
        reads.check(normalizer)
    except StreamReadError as exc:
        if not ends_answer(exc, normalizer):
            raise
    return normalizer.close_events()


async def _read_all(answer: httpx.Response, idle: float) -> bytes:
    body = bytearray()
    try:
        async with contextlib.aclosing(Reads(answer, idle)) as reads:
            with reads.scope:
                while (chunk := await reads.next()) is not None:
                    body += chunk
            reads.check()
    except StreamTimeoutError:
        raise Refusal(504, "the backend stopped sending its answer") from None
    except LaminateError as exc:
        raise Refusal(502, str(exc)) from None
    return bytes(body)


async def read_capped(answer: httpx.Response, idle: float) -> bytes:
    """The start of an answer's body (up to the error body cap): what arrived before a
    silence or a failure."""
    body = bytearray()
    try:
        async with contextlib.aclosing(Reads(answer, idle)) as reads:
            with reads.scope:
                while len(body) < ERROR_BODY_CAP and (chunk := await reads.next()):
                    body += chunk
    except LaminateError:
        pass  # what arrived is what the error says
    return bytes(body[:ERROR_BODY_CAP])


async def _backend_error(answer: httpx.Response, api: str, *, same: bool) -> Response:
    """A backend's non-2xx answer: as sent when it speaks the client's API, else in the
    client's error shape with the backend's status kept."""
    try:
        body = await read_capped(answer, _ERROR_BODY_SECONDS)
    finally:
        await answer.aclose()
    headers = back_headers(answer.headers)
    if same:
        return Response(body, answer.status_code, headers)
    error = http_error(answer.status_code, body, answer.headers)
    kept = {k: v for k, v in headers.items() if k in _PASSED_BACK}
    return error_response(api, answer.status_code, error.message, kept)


def back_headers(headers: httpx.Headers) -> dict[str, str]:
    """A backend's response headers that go back to the client."""
    return {k: v for k, v in headers.items() if k.lower() not in _NOT_PASSED}
