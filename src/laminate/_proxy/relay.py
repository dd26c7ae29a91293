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
it, it is written as the client API's in-stream error.

While the backend is silent in a streamed answer whose head it sent (a 200: the status
is known), the client API's keep-alive (``Http.keepalive``) is written at least every
``keepalive`` seconds (:meth:`Reads.keeping_alive`), between two of the answer's events
only. It commits the answer's 200: a failure after it is an in-stream error. Nothing is
written before the backend's head arrived, so that its status (a 429, a 5xx) still
reaches the client as a status.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Final, cast

import anyio
import httpx
from starlette.responses import JSONResponse, Response

from .._apis.translate import Translation
from .._core.errors import LaminateError, StreamReadError, StreamTimeoutError
from .._core.events import Event, ResponseDone
from .._core.response import Usage
from .._encode.encoder import encode_response
from .._io.complete import normalize
from .._io.sources import ERROR_BODY_CAP, ends_answer, http_error, silence_error
from .._normalizer import StreamNormalizer, merging
from .backend import http_of
from .calls import Call
from .client import Responder
from .counting import ERROR_TEXT_CAP, Exchange
from .refusals import Refusal, backend_refusal, error_response, failure, refuses_credentials
from .transport import AnswerBody
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
# piece, then every other one (a read of the proxy's own transport, up to 256 KiB or so,
# in two pieces: each goes to the client while the next is translated, for one write
# more).
_FIRST_PIECE: Final = 1024
_PIECE: Final = 128 * 1024
# How long a backend's error body is waited for.
_ERROR_BODY_SECONDS: Final = 30.0
# Where a stream passing through may take a keep-alive: after a blank line (the end of
# an SSE event).
_EVENT_ENDS: Final = (b"\n\n", b"\r\n\r\n", b"\r\r")
# How often a keep-alive that is due but cannot be written yet (the client is being
# written to, or the backend stopped inside an event) is tried again, in keep-alive
# periods.
_RETRY_SHARE: Final = 0.125


class Reads:
    """A backend's answer's bytes, read one way by every path::

        async with contextlib.aclosing(Reads(answer, idle)) as reads:
            with reads.scope:
                while (chunk := await reads.next()) is not None: ...
            reads.check()

    One cancel scope, cancelled when a read has waited ``seconds`` (the time spent
    writing to the client is not the backend's silence): a scope per read would cost
    about as much as relaying a small chunk. Through httpx, each read sets the scope's
    deadline and lifts it once done; from the proxy's own transport (asyncio), one timer
    per answer looks at the read then waiting when it fires, and is set again for that
    read's end of silence (a timer per read costs a third of relaying a chunk). A read
    also notes when the silence began, for the keep-alive (:meth:`keeping_alive`)."""

    __slots__ = (
        "_body",
        "_chunks",
        "_last",
        "_loop",
        "_pinging",
        "_since",
        "_waiting",
        "_watch",
        "scope",
        "seconds",
    )

    def __init__(self, answer: httpx.Response, seconds: float) -> None:
        # The proxy's own transport's body is read straight from its connection (no
        # generator between, and a piece already read is taken without a deadline);
        # any other through httpx's.
        stream = answer.stream
        self._body = stream if isinstance(stream, AnswerBody) and not _encoded(answer) else None
        self._chunks = None if self._body is not None else _chunks(answer)
        self.seconds = seconds
        self.scope = anyio.CancelScope()
        self._since = 0.0  # when the current read began
        self._waiting = False  # a read is waiting for the backend
        self._last = b""  # the last chunk read
        self._pinging: anyio.Event | None = None  # set while a keep-alive is written
        # The own transport's silence timer (see the class), where the silence is bounded.
        timed = self._body is not None and math.isfinite(seconds)
        self._loop = asyncio.get_running_loop() if timed else None
        self._watch: asyncio.TimerHandle | None = None

    async def next(self) -> bytes | None:
        """The next chunk (``None``: the end)."""
        body = self._body
        if body is not None and self._pinging is None:
            chunk = body.take()
            if chunk is not None:
                self._last = chunk
                return chunk
        loop = self._loop
        if loop is None:
            now = anyio.current_time()
            self.scope.deadline = now + self.seconds
        else:
            now = loop.time()
            if self._watch is None:
                self._watch = loop.call_at(now + self.seconds, self._silence)
        self._since = now
        self._waiting = True
        try:
            chunk = await self._read()
        finally:
            if loop is None:
                self.scope.deadline = math.inf
            self._waiting = False
            if self._pinging is not None:  # a keep-alive goes out whole first
                await self._pinging.wait()
        if chunk is not None:
            self._last = chunk
        return chunk

    def read_out(self) -> bool:
        """Whether the answer's end was read with the chunks taken so far (the next
        :meth:`next` is ``None``); ``False`` where that is not known before asking
        (an answer read through httpx)."""
        return self._body is not None and self._pinging is None and self._body.read_out()

    def _silence(self) -> None:
        """The own transport's silence timer: the read waiting since ``seconds`` ago is
        cancelled; one waiting less long is looked at again when its silence ends."""
        self._watch = None
        loop = self._loop
        if not self._waiting or loop is None:
            return  # the next read that waits sets the timer again
        due = self._since + self.seconds
        if loop.time() >= due:
            self.scope.cancel()
        else:
            self._watch = loop.call_at(due, self._silence)

    async def _read(self) -> bytes | None:
        if self._chunks is not None:
            return await anext(self._chunks, None)
        body = cast("AnswerBody", self._body)
        try:
            return await body.read()
        except httpx.HTTPError as exc:
            raise _read_error(exc) from None

    @contextlib.asynccontextmanager
    async def keeping_alive(
        self,
        write: Callable[[bytes], Awaitable[None]],
        data: bytes | None,
        seconds: float,
        *,
        framed: bool,
    ) -> AsyncIterator[None]:
        """While inside, ``data`` (a client API's keep-alive) is written with ``write``
        whenever a read has waited ``seconds`` (``None`` or ``0``: never). ``framed``:
        the chunks read are written as they are, so a keep-alive goes only after one
        that ends an SSE event; else what is written between reads always ends one.

        On asyncio, a timer (:class:`_Pings`), which looks at the reads once per
        ``seconds`` at most while the backend is chatty, and a task only to write a
        keep-alive that is due: an answer that never waits that long costs one timer.
        On another loop, a task beside the reads that does the same."""
        if data is None or seconds <= 0:
            yield
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # another event loop (trio)
            loop = None
        if loop is not None:
            pings = _Pings(self, loop, write, data, seconds, framed=framed)
            try:
                yield
            finally:
                pings.stop()
            return
        failure: Exception | None = None
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._ping, write, data, seconds, framed)
            try:  # in this task: a task group would wrap its exception in a group
                yield
            except Exception as exc:
                failure = exc
            tasks.cancel_scope.cancel()
        if failure is not None:
            raise failure

    def ping_wait(self, seconds: float, now: float, *, framed: bool) -> float | None:
        """When a keep-alive every ``seconds`` is to be looked at again (a time of the
        event loop's clock), or ``None``: one is due now (a read has waited ``seconds``,
        and, ``framed``, the last chunk ended an event)."""
        due = self._since + seconds
        if now < due:
            return due
        if not self._waiting or (framed and self._last and not self._last.endswith(_EVENT_ENDS)):
            return now + seconds * _RETRY_SHARE
        return None

    async def ping(self, write: Callable[[bytes], Awaitable[None]], data: bytes) -> None:
        """Write a keep-alive (a read that returns meanwhile waits for it to be whole)."""
        done = self._pinging = anyio.Event()
        try:
            await write(data)
        finally:
            self._pinging = None
            done.set()
        self._since = anyio.current_time()

    async def _ping(
        self, write: Callable[[bytes], Awaitable[None]], data: bytes, seconds: float, framed: bool
    ) -> None:
        try:
            while True:
                now = anyio.current_time()
                later = self.ping_wait(seconds, now, framed=framed)
                if later is None:
                    await self.ping(write, data)
                else:
                    await anyio.sleep(later - now)
        except Exception:  # the client is gone: the reads' own writes say so
            return

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
            while (chunk := await self._read()) is not None:
                size += len(chunk)
                if size > cap:
                    break
        # Anything else (a backend that keeps sending) only costs that connection.

    async def aclose(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        if self._chunks is not None:
            await self._chunks.aclose()


class _Pings:
    """The keep-alive of :meth:`Reads.keeping_alive` on asyncio: a timer that asks the
    reads when a keep-alive is due (:meth:`Reads.ping_wait`), and a task only to write
    one. Writing stops at the first failure (the client is gone: the reads' own writes
    say so)."""

    __slots__ = ("_data", "_framed", "_handle", "_loop", "_reads", "_seconds", "_task", "_write")

    def __init__(
        self,
        reads: Reads,
        loop: asyncio.AbstractEventLoop,
        write: Callable[[bytes], Awaitable[None]],
        data: bytes,
        seconds: float,
        *,
        framed: bool,
    ) -> None:
        self._reads = reads
        self._loop = loop
        self._write = write
        self._data = data
        self._seconds = seconds
        self._framed = framed
        self._task: asyncio.Task[None] | None = None
        self._handle: asyncio.TimerHandle | None = loop.call_at(
            loop.time() + seconds * _RETRY_SHARE, self._look
        )

    def _look(self) -> None:
        now = self._loop.time()
        later = self._reads.ping_wait(self._seconds, now, framed=self._framed)
        if later is not None:
            self._handle = self._loop.call_at(later, self._look)
        else:
            self._handle = None
            self._task = self._loop.create_task(self._ping())

    async def _ping(self) -> None:
        try:
            await self._reads.ping(self._write, self._data)
        except Exception:
            return
        self._task = None
        self._look()

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._task is not None:
            self._task.cancel()
            self._task = None


async def _chunks(answer: httpx.Response) -> AsyncGenerator[bytes, None]:
    """The answer's bytes as they are read (a failure to read them is a
    :class:`StreamReadError`)."""
    # The backend is asked for an unencoded body: its bytes are taken as they are read
    # (httpx's decoders and re-chunking are for an encoded one).
    chunks = answer.aiter_bytes() if _encoded(answer) else answer.aiter_raw()
    try:
        async for chunk in chunks:
            yield chunk
    except httpx.HTTPError as exc:
        raise _read_error(exc) from None


def _encoded(answer: httpx.Response) -> bool:
    encoding: str = answer.headers.get("content-encoding", "identity")
    return encoding.lower() != "identity"


def _read_error(exc: httpx.HTTPError) -> StreamReadError:
    return StreamReadError(f"reading the backend's answer failed: {type(exc).__name__}")


async def relay(
    answer: httpx.Response, responder: Responder, call: Call, idle: float, keepalive: float = 0.0
) -> None:
    """The backend's ``answer`` to ``call``, to the client (``idle``: the longest silence
    of the backend, in seconds; ``keepalive``: how often the client API's keep-alive is
    written while it is silent in a stream, ``0``: never). The answer is closed on every
    way out."""
    try:
        if answer.status_code >= 300:
            same = call.translation is None
            await responder.respond(await _backend_error(answer, responder.exchange, same=same))
        elif call.translation is None:
            await _pass_through(answer, responder, call, idle, keepalive)
        else:
            await _translate(answer, responder, call, call.translation, idle, keepalive=keepalive)
    finally:
        with anyio.CancelScope(shield=True):
            await answer.aclose()


async def _pass_through(
    answer: httpx.Response, responder: Responder, call: Call, idle: float, keepalive: float
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
    ping = None if call.array else http_of(api).keepalive
    last = b""  # the answer's last chunk, when it is known to be the last
    async with contextlib.aclosing(Reads(answer, idle)) as reads:
        try:
            async with reads.keeping_alive(responder.write, ping, keepalive, framed=True):
                with reads.scope:
                    # Each piece goes on at once; the one the answer's end came with goes
                    # with the client's end, and the usage and the log line are made once
                    # the client has its answer.
                    while (chunk := await reads.next()) is not None:
                        if reads.read_out():
                            last = chunk
                            break
                        await responder.write(chunk)
                        scan.feed(chunk)
            reads.check()
        except LaminateError as exc:
            if not responder.started:
                raise failure(exc) from None
            exchange.error = type(exc).__name__
            await responder.write(client_writer(api, array=call.array, begun=True).error(exc))
            await responder.end()
            return
    await responder.end(last, log=False)
    scan.feed(last)
    exchange.usage(scan.usage())
    responder.log()


async def _translate(
    answer: httpx.Response,
    responder: Responder,
    call: Call,
    translation: Translation,
    idle: float,
    *,
    keepalive: float,
) -> None:
    """The backend's answer, normalized, restored to the client's names and written in
    the client's API: a whole body, or a stream whose every read from the backend goes
    on at once, in pieces (not one write per event)."""
    exchange, api = responder.exchange, responder.exchange.client
    normalizer = StreamNormalizer(
        call.backend.api, url=call.url, content_type=answer.headers.get("content-type")
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
    # Each read's pieces of one block in a row go on as one delta: what the client's
    # reader needs, at a fraction of the writing and reading.
    merging(normalizer)
    writer = client_writer(api, array=call.array)
    responder.begin(200, {"content-type": writer.media_type})
    restore = translation.restore if translation.names or translation.ids else None

    def written(events: list[Event]) -> bytes:
        if restore is not None:
            events = [restore(event) for event in events]
        if not call.usage:  # the client did not ask for usage in its stream
            events = [_without_usage(event) for event in events]
        return writer.encode_all(events)

    async def deliver(events: list[Event]) -> bool:
        data = written(events)
        if data:
            await responder.write(data)
        return bool(data)

    ping = None if call.array else http_of(api).keepalive
    async with contextlib.aclosing(Reads(answer, idle)) as reads:
        last = b""  # the answer's last events: they go with its end
        try:
            async with reads.keeping_alive(responder.write, ping, keepalive, framed=False):
                events, error = await _normalized(reads, normalizer, deliver)
            if events:
                last = written(events)
            if error is not None:
                if last:  # what was read goes first, then the error
                    await responder.write(last)
                raise error
        except LaminateError as exc:
            if not responder.started:
                raise failure(exc) from None
            exchange.error = type(exc).__name__
            await responder.write(writer.error(exc))
            await responder.end()
            return
        exchange.usage(normalizer.response.usage if normalizer.response else None)
        await responder.end(last + writer.close())
        await reads.drain(_DRAIN_SECONDS, ERROR_BODY_CAP)


def _without_usage(event: Event) -> Event:
    if isinstance(event, ResponseDone):
        return ResponseDone(replace(event.response, usage=Usage()))
    return event


async def _normalized(
    reads: Reads,
    normalizer: StreamNormalizer,
    deliver: Callable[[list[Event]], Awaitable[bool]] | None = None,
) -> tuple[list[Event], LaminateError | None]:
    """Feed the answer to ``normalizer`` up to its terminal event (nothing after it is
    read), then close it: the events of its end, and the error it ended with.

    ``deliver`` gets the events as they come and says whether it wrote anything: a read
    holds whatever the backend had sent (hundreds of frames, thousands where it was
    quick), fed on in pieces, the first one small, so that the first bytes do not wait
    for all of them. The events of the piece that completes the answer are not
    delivered but returned with those of its end, so that they go with the client's end
    in one write. A failed read is raised, unless it ends the answer (the library's
    rule)."""
    piece = _FIRST_PIECE
    last: list[Event] = []
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
                while at < len(chunk):
                    events = normalizer.feed(chunk[at : at + piece])
                    at += piece
                    if _answered(normalizer):
                        last = events
                        break
                    if events and await deliver(events):
                        piece = _PIECE
        reads.check(normalizer)
    except StreamReadError as exc:
        if not ends_answer(exc, normalizer):
            raise
    events, error = normalizer.close_events()
    return last + events, error


def _answered(normalizer: StreamNormalizer) -> bool:
    """Whether ``normalizer`` has its answer (asked after a feed, which may complete it)."""
    return normalizer.response is not None


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


async def _backend_error(answer: httpx.Response, exchange: Exchange, *, same: bool) -> Response:
    """A backend's non-2xx answer: as sent when it speaks the client's API, else in the
    client's error shape with the backend's status kept (a context overflow as the
    client API's own, and a refusal of the proxy's credentials as a 502, either way:
    :func:`~.refusals.backend_refusal`). The log gets the error's message, capped (the
    error's text, not its body)."""
    api = exchange.client
    try:
        body = await read_capped(answer, _ERROR_BODY_SECONDS)
    finally:
        await answer.aclose()
    headers = back_headers(answer.headers)
    error = http_error(answer.status_code, body, answer.headers)
    exchange.error = error.message[:ERROR_TEXT_CAP]
    if same and not refuses_credentials(answer.status_code):
        return Response(body, answer.status_code, headers)
    kept = {k: v for k, v in headers.items() if k in _PASSED_BACK}
    refusal = backend_refusal(error, kept)
    return error_response(
        api, refusal.status, refusal.message, refusal.headers, overflow=refusal.overflow
    )


def back_headers(headers: httpx.Headers) -> dict[str, str]:
    """A backend's response headers that go back to the client."""
    return {k: v for k, v in headers.items() if k.lower() not in _NOT_PASSED}
