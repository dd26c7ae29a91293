"""The proxy's own HTTP/1.1 transport to its backends, on asyncio: one write per request,
the answer's head and body parsed by httptools (C) as the bytes arrive, the connections
kept in a pool.

httpx's transport (httpcore and h11, in Python) costs about two thirds of the proxy's
time to the first byte: the pool's bookkeeping and locks, h11 checking each header as it
writes the head, the head and the body sent in two writes (each of which wakes the
backend), the answer's head and body read through h11's state machine. This one does
what the proxy needs of it and nothing else: a request is an :class:`httpx.Request`
(built by :class:`~.calls.BackendClient` as httpx builds it, so the backend gets the same
head), written in one piece; the answer is an :class:`httpx.Response` whose body is read
as it comes, so everything after the seam reads it as before.

An answer's head is handed on with the first bytes of its body, not alone (unless they
take longer than 2 ms): a backend writes its head, then its body, and the proxy woken by
the head alone does its work on it (the relay's start) at once, often on the core the
backend is about to write its body from, which then waits: about half a millisecond of
the time to the first byte on a machine with few cores. Woken once for both, it does the
same work with the body in hand; a backend slow to its first token costs the 2 ms, which
the client never sees (nothing goes to it before the body's first bytes).

What httpx's transport does and this one keeps: TLS (httpx's own default context: its
certificate bundle, ``SSL_CERT_FILE`` and ``SSL_CERT_DIR``), the connect and write
timeouts, kept connections (up to 200 idle, each for 5 seconds, as httpcore keeps them),
a connection the backend closed or answered ``Connection: close`` on never reused, and
httpx's exceptions (:class:`httpx.ConnectError`, :class:`httpx.ConnectTimeout`,
:class:`httpx.WriteTimeout`, :class:`httpx.ReadError`,
:class:`httpx.RemoteProtocolError`). A proxy from the environment, or an event loop other
than asyncio's, is left to httpx (:class:`~.calls.BackendClient` decides).
"""

from __future__ import annotations

import asyncio
import collections
import ssl
import time
from collections.abc import AsyncIterator, Sequence
from typing import Final, cast

import httptools
import httpx

__all__ = ["AnswerBody", "Http1Pool"]

# Bytes of an answer held unread before the socket stops being read (and read again once
# under the low mark): a client slower than its backend holds the backend back.
_HIGH: Final = 256 * 1024
_LOW: Final = 64 * 1024
_DEFAULT_PORTS: Final = {b"http": 80, b"https": 443}
# How long an answer's head waits for the first bytes of its body before it is handed on.
_BODY_WAIT: Final = 0.002


class Http1Pool:
    """Kept HTTP/1.1 connections to the backends, by scheme, host and port."""

    __slots__ = ("_closed", "_connect", "_expiry", "_idle", "_keep", "_ssl", "_write")

    def __init__(
        self,
        *,
        connect: float | None,
        write: float | None,
        keep: int = 200,
        expiry: float = 5.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._connect = connect
        self._write = write
        self._keep = keep
        self._expiry = expiry
        self._ssl = ssl_context
        self._idle: dict[tuple[bytes, str, int], collections.deque[_Connection]] = {}
        self._closed = False

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context(trust_env=True)
        return self._ssl

    def warm(self) -> None:
        """Make the TLS context now (it takes tens of milliseconds)."""
        self._context()

    async def send(self, request: httpx.Request, timeout: float | None = None) -> httpx.Response:
        """The answer to ``request``, its body not read yet (``timeout``: how long its
        head may take once the request is written, ``None``: no limit)."""
        answer = await self._ask(request.url, _head(request), request.content, timeout)
        answer.request = request
        return answer

    async def post(
        self,
        url: httpx.URL,
        headers: Sequence[tuple[str, str]],
        body: bytes,
        timeout: float | None = None,
    ) -> httpx.Response:
        """The answer to a POST of ``body`` to ``url`` with ``headers``, its body not read
        yet: the request :meth:`send` would make of ``httpx.Request("POST", url,
        headers=headers, content=body)``, byte for byte (a ``Host`` header first and a
        ``Content-Length`` last unless given), with no request object built. The answer
        has no ``request``: its caller knows what it asked."""
        names = {name.lower() for name, _ in headers}
        pairs = [(name.encode("ascii"), value.encode("ascii")) for name, value in headers]
        if "host" not in names and url.host:
            pairs.insert(0, (b"Host", url.netloc))
        if "content-length" not in names and "transfer-encoding" not in names:
            pairs.append((b"Content-Length", b"%d" % len(body)))
        return await self._ask(url, _head_of(b"POST", url, pairs), body, timeout)

    async def _ask(
        self, url: httpx.URL, head: bytes, body: bytes, timeout: float | None
    ) -> httpx.Response:
        scheme = url.raw_scheme
        if scheme not in _DEFAULT_PORTS:
            raise httpx.UnsupportedProtocol(f"the URL's scheme {scheme!r} is not http(s)")
        key = (scheme, url.host, url.port or _DEFAULT_PORTS[scheme])
        connection = self._kept(key)
        if connection is None:
            connection = await self._open(key)
        try:
            await connection.send(head + body, self._write)
            await connection.head(timeout)
        except BaseException:
            connection.close()
            raise
        return httpx.Response(
            connection.status,
            headers=connection.headers,
            stream=AnswerBody(connection),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": connection.reason},
        )

    def _kept(self, key: tuple[bytes, str, int]) -> _Connection | None:
        idle = self._idle.get(key)
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if connection.alive() and now - connection.idle_since < self._expiry:
                return connection
            connection.close()
        return None

    def release(self, connection: _Connection) -> None:
        """Take ``connection`` back once its answer was read to the end (closed, if the
        backend said it closes it, or enough are kept)."""
        idle = self._idle.setdefault(connection.key, collections.deque())
        if self._closed or len(idle) >= self._keep or not connection.reusable():
            connection.close()
            return
        connection.reset()
        connection.idle_since = time.monotonic()
        idle.append(connection)

    async def _open(self, key: tuple[bytes, str, int]) -> _Connection:
        scheme, host, port = key
        loop = asyncio.get_running_loop()
        tls = self._context() if scheme == b"https" else None
        connection = _Connection(self, key)
        try:
            async with asyncio.timeout(self._connect):
                await loop.create_connection(
                    lambda: connection,
                    host,
                    port,
                    ssl=tls,
                    server_hostname=host if tls is not None else None,
                )
        except TimeoutError:
            raise httpx.ConnectTimeout("connecting to the backend timed out") from None
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from None
        return connection

    async def aclose(self) -> None:
        """Close every kept connection, and each one in use once its answer ends."""
        self._closed = True
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()


def _head(request: httpx.Request) -> bytes:
    """The request's line and headers as they go on the wire (the headers as httpx made
    them)."""
    return _head_of(request.method.encode("ascii"), request.url, request.headers.raw)


def _head_of(method: bytes, url: httpx.URL, headers: Sequence[tuple[bytes, bytes]]) -> bytes:
    """A request's line and headers as they go on the wire (a line break or a NUL in a
    header would end it early, and is refused)."""
    lines = b"".join([b"%s: %s\r\n" % (name, value) for name, value in headers])
    if (
        lines.count(b"\r\n") != len(headers)
        or b"\n" in lines.replace(b"\r\n", b"")
        or b"\0" in lines
    ):
        raise httpx.LocalProtocolError("a header of the request holds a line break")
    return b"%s %s HTTP/1.1\r\n%s\r\n" % (method, url.raw_path, lines)


class _Connection(asyncio.Protocol):
    """One connection and the answer being read on it (httptools calls the ``on_``
    methods as it parses)."""

    def __init__(self, pool: Http1Pool, key: tuple[bytes, str, int]) -> None:
        self.pool = pool
        self.key = key
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.status = 0
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.chunks: collections.deque[bytes] = collections.deque()
        self.buffered = 0
        self.begun = False  # the answer's head was read
        self.complete = False  # its whole body was read
        self.informational = False  # a 1xx head, which the final answer follows
        self.keep_alive = False  # the backend keeps the connection after this answer
        self.error: httpx.TransportError | None = None
        self.lost = False
        self.paused = False  # reading paused: too much unread
        self.writing_paused = False
        self.waiter: asyncio.Future[None] | None = None
        self.timer: asyncio.TimerHandle | None = None  # the wait for a head's body
        self.drained: asyncio.Future[None] | None = None
        self.idle_since = 0.0

    # -- asyncio's calls -----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # a stream's, as asked

    def data_received(self, data: bytes) -> None:
        if self.complete or not self.transport:  # bytes past an answer: not reusable
            self.error = self.error or httpx.RemoteProtocolError("the backend sent extra bytes")
            self.close()
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(httpx.RemoteProtocolError("the backend switched protocols"))
        except httptools.HttpParserError as exc:
            self._fail(httpx.RemoteProtocolError(f"the backend's answer is not HTTP: {exc}"))
        if self.buffered > _HIGH and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()

    def eof_received(self) -> bool:
        return False  # close the transport: connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.transport = None
        if not self.complete and self.error is None:
            if self.begun and not self._length_known():
                self.complete = True  # a body that ends with the connection
            else:
                self.error = (
                    httpx.ReadError(str(exc))
                    if exc is not None
                    else httpx.RemoteProtocolError("the backend closed the connection")
                )
        self._wake()
        drained = self.drained
        if drained is not None and not drained.done():
            drained.set_result(None)

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        drained = self.drained
        if drained is not None and not drained.done():
            drained.set_result(None)

    # -- httptools' calls ------------------------------------------------------------------

    def on_status(self, reason: bytes) -> None:
        self.reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if 100 <= status < 200:
            self.informational = True
            self.headers = []
            self.reason = b""
            return
        self.status = status
        self.begun = True
        # The waiter wakes with the body's first bytes, or the answer's end, or a moment
        # later (see the module): not on the head alone.
        self.timer = asyncio.get_running_loop().call_later(_BODY_WAIT, self._wake)

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)
        self.buffered += len(body)
        self._wake()

    def on_message_complete(self) -> None:
        if self.informational:
            self.informational = False
            return
        self.complete = True
        # Asked now: the parser forgets once the message is done.
        self.keep_alive = self.parser.should_keep_alive()
        self._wake()

    # -- the proxy's calls -------------------------------------------------------------------

    async def send(self, data: bytes, timeout: float | None) -> None:
        transport = self.transport
        if transport is None:
            raise self.error or httpx.WriteError("the connection to the backend is closed")
        transport.write(data)
        if self.writing_paused:
            self.drained = asyncio.get_running_loop().create_future()
            try:
                async with asyncio.timeout(timeout):
                    await self.drained
            except TimeoutError:
                raise httpx.WriteTimeout("writing to the backend timed out") from None
            finally:
                self.drained = None
            if self.lost and not self.begun:
                raise self.error or httpx.WriteError("the backend closed the connection")

    async def head(self, timeout: float | None = None) -> None:
        """Wait for the answer's head (up to ``timeout`` seconds: then an
        :class:`httpx.ReadTimeout`), and for the first bytes of its body up to
        ``_BODY_WAIT`` seconds more (see the module)."""
        deadline = None
        if timeout is not None and not self.begun:
            deadline = asyncio.get_running_loop().call_later(timeout, self._too_late)
        try:
            while not self.begun:
                if self.error is not None:
                    raise self.error
                await self._wait()
        finally:
            if deadline is not None:
                deadline.cancel()

    def _too_late(self) -> None:
        if not self.begun and self.error is None:
            self._fail(httpx.ReadTimeout("the backend's answer did not begin in time"))

    def take(self) -> bytes | None:
        """What of the body was read and not taken yet, in one piece, without waiting
        (``None``: nothing is). A body in chunked encoding comes a chunk at a time from
        the parser, and a streaming backend writes a chunk per event or two: handed on
        together, they cost the relay one step per read of the socket, not one per
        chunk."""
        chunks = self.chunks
        if not chunks:
            return None
        if len(chunks) == 1:
            data = chunks.popleft()
        else:
            data = b"".join(chunks)
            chunks.clear()
        self.buffered -= len(data)
        if self.paused and self.buffered < _LOW and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return data

    async def chunk(self) -> bytes | None:
        """The next piece of the body (``None``: its end)."""
        while True:
            data = self.take()
            if data is not None:
                return data
            if self.complete:
                return None
            if self.error is not None:
                raise self.error
            await self._wait()

    def reusable(self) -> bool:
        """Whether the next request may go on this connection: its answer was read to
        the end, and the backend keeps the connection."""
        return self.complete and not self.chunks and self.keep_alive and self.alive()

    def alive(self) -> bool:
        """Whether the connection is open (the backend did not close it while kept)."""
        return (
            not self.lost
            and self.error is None
            and self.transport is not None
            and not self.transport.is_closing()
        )

    def reset(self) -> None:
        """Ready for the next request (a reused connection)."""
        self.parser = httptools.HttpResponseParser(self)
        self.status = 0
        self.reason = b""
        self.headers = []
        self.begun = self.complete = self.keep_alive = False
        self.buffered = 0
        self._stop_timer()

    def close(self) -> None:
        self._stop_timer()
        transport = self.transport
        self.transport = None
        if transport is not None:
            transport.close()

    # -- inside ------------------------------------------------------------------------

    def _length_known(self) -> bool:
        for name, value in self.headers:
            lower = name.lower()
            if lower == b"content-length" or (
                lower == b"transfer-encoding" and b"chunked" in value.lower()
            ):
                return True
        return False

    def _fail(self, error: httpx.TransportError) -> None:
        self.error = error
        self.close()
        self._wake()

    def _stop_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _wake(self) -> None:
        self._stop_timer()
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _wait(self) -> None:
        waiter = self.waiter = asyncio.get_running_loop().create_future()
        try:
            await waiter
        finally:
            self.waiter = None


class AnswerBody(httpx.AsyncByteStream):
    """An answer's body, read as it arrives; its connection goes back to the pool once
    the body was read to its end, and is closed if the body is closed before."""

    __slots__ = ("_connection", "_done")

    def __init__(self, connection: _Connection) -> None:
        self._connection = connection
        self._done = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while (data := await self.read()) is not None:
            yield data

    def take(self) -> bytes | None:
        """What of the body was read and not taken yet, in one piece, without waiting
        (``None``: nothing is)."""
        return None if self._done else self._connection.take()

    def read_out(self) -> bool:
        """Whether the body's end was read and every piece of it taken: the next read
        is its end."""
        connection = self._connection
        return self._done or (connection.complete and not connection.chunks)

    async def read(self) -> bytes | None:
        """The next piece of the body (``None``: its end, and ever after: the connection
        may be another answer's by then), as ``__aiter__`` gives them, with no generator
        between."""
        if self._done:
            return None
        data = await self._connection.chunk()
        if data is None:
            self._finish()
        return data

    def _finish(self) -> None:
        if not self._done:
            self._done = True
            self._connection.pool.release(self._connection)

    async def aclose(self) -> None:
        if not self._done:
            connection = self._connection
            if connection.complete and not connection.chunks:
                self._finish()
            else:
                self._done = True
                connection.close()
