"""The proxy's own HTTP/1.1 transport (``_proxy/transport.py``) against backends that
write exact bytes: what it sends, how it reads each way a body can end, when it keeps a
connection, and httpx's exceptions for what fails. It runs on asyncio only (on another
loop the proxy uses httpx's transport), so these tests run their own asyncio loop."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from laminate._proxy.calls import BackendClient
from laminate._proxy.config import Backend, ProxyConfig
from laminate._proxy.transport import AnswerBody, Http1Pool

from .test_proxy import once

Answer = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[bool]]


class _Server:
    """A backend on loopback: ``answer(reader, writer, n)`` answers the n-th request of
    a connection and says whether to keep the connection."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.connections = 0
        self.requests: list[bytes] = []
        self.port = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        n = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.lower() == b"content-length":
                        length = int(value)
                self.requests.append(head + await reader.readexactly(length))
                if not await self.answer(reader, writer, n):
                    break
                n += 1
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def __aenter__(self) -> _Server:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_: Any) -> None:
        self._server.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/x?a=1"


def _replying(*parts: bytes, keep: bool = True) -> Answer:
    async def answer(_: asyncio.StreamReader, writer: asyncio.StreamWriter, __: int) -> bool:
        for part in parts:
            writer.write(part)
            await writer.drain()
            await asyncio.sleep(0.01)
        return keep

    return answer


def _request(url: str, body: bytes = b'{"a": 1}') -> httpx.Request:
    return httpx.Request("POST", url, headers={"content-type": "application/json"}, content=body)


async def _ask(pool: Http1Pool, url: str) -> tuple[httpx.Response, list[bytes]]:
    answer = await pool.send(_request(url))
    chunks = [chunk async for chunk in answer.aiter_raw()]
    return answer, chunks


def _run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 20))


OK = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 10\r\n\r\n"


def test_the_request_goes_as_httpx_builds_it_and_the_connection_is_kept(
    json_backend: str,
) -> None:
    once(json_backend)

    async def test() -> None:
        async with _Server(_replying(OK + b"data: 1\n\n", b"\n")) as server:
            pool = Http1Pool(connect=5, write=5)
            for _ in range(3):
                answer, chunks = await _ask(pool, server.url)
                assert (answer.status_code, b"".join(chunks)) == (200, b"data: 1\n\n\n")
                assert answer.headers["content-type"] == "text/event-stream"
                assert answer.extensions["reason_phrase"] == b"OK"
            await pool.aclose()
            # httpx's own transport sends the same bytes.
            async with httpx.AsyncHTTPTransport() as transport:
                answer = await transport.handle_async_request(_request(server.url))
                await answer.aread()
        assert server.connections == 2
        assert server.requests[0] == server.requests[-1]
        assert server.requests[0].startswith(b"POST /v1/x?a=1 HTTP/1.1\r\nHost: 127.0.0.1:")
        assert server.requests[0].endswith(b'\r\n\r\n{"a": 1}')

    _run(test)


@pytest.mark.parametrize(
    "headers",
    [
        [("content-type", "application/json"), ("x-api-key", "k")],
        [("Host", "backend.example"), ("accept", "*/*")],
        [("content-length", "8"), ("User-Agent", "u")],
    ],
    ids=["plain", "own-host", "own-length"],
)
def test_a_post_without_a_request_object_sends_what_httpx_would(
    headers: list[tuple[str, str]], json_backend: str
) -> None:
    once(json_backend)

    async def test() -> None:
        async with _Server(_replying(OK + b"data: 1\n\n", b"\n")) as server:
            url = httpx.URL(server.url)
            pool = Http1Pool(connect=5, write=5)
            answer = await pool.post(url, headers, b'{"a": 1}')
            assert b"".join([chunk async for chunk in answer.aiter_raw()]) == b"data: 1\n\n\n"
            await pool.aclose()
            request = httpx.Request("POST", url, headers=headers, content=b'{"a": 1}')
            answer = await Http1Pool(connect=5, write=5).send(request)
            await answer.aread()
            assert answer.request is request
        assert server.requests[0] == server.requests[1]
        assert server.requests[0].endswith(b'\r\n\r\n{"a": 1}')

    _run(test)


def test_an_answer_that_does_not_begin_in_time_is_a_read_timeout(json_backend: str) -> None:
    once(json_backend)

    async def late(_: asyncio.StreamReader, writer: asyncio.StreamWriter, __: int) -> bool:
        await asyncio.sleep(0.5)
        writer.write(OK + b"data: 1\n\n\n")
        return True

    async def test() -> None:
        async with _Server(late) as server:
            pool = Http1Pool(connect=5, write=5)
            url = httpx.URL(server.url)
            with pytest.raises(httpx.ReadTimeout):
                await pool.post(url, [], b"{}", timeout=0.05)
            answer = await pool.post(url, [], b"{}", timeout=5)  # on a new connection
            assert await answer.aread() == b"data: 1\n\n\n"
            await pool.aclose()
        assert server.connections == 2

    _run(test)


@pytest.mark.parametrize(
    ("parts", "keep"),
    [
        # chunked, in pieces that cut a size line and a chunk
        (
            (
                b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r",
                b"\nhel",
                b"lo\r\n6\r\n world\r\n0\r\n\r\n",
            ),
            True,
        ),
        # a 100 Continue before the answer
        (
            (
                b"HTTP/1.1 100 Continue\r\n\r\n",
                b"HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\nhello world",
            ),
            True,
        ),
        # the backend closes the connection after this answer
        (
            (b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 11\r\n\r\nhello world",),
            False,
        ),
        # no length: the body ends with the connection
        ((b"HTTP/1.0 200 OK\r\n\r\nhello", b" world"), False),
    ],
    ids=["chunked", "continue", "connection-close", "until-close"],
)
def test_every_way_a_body_ends_gives_it_whole(
    parts: tuple[bytes, ...], keep: bool, json_backend: str
) -> None:
    once(json_backend)

    async def test() -> None:
        async with _Server(_replying(*parts, keep=keep)) as server:
            pool = Http1Pool(connect=5, write=5)
            for _ in range(2):
                answer, chunks = await _ask(pool, server.url)
                assert (answer.status_code, b"".join(chunks)) == (200, b"hello world")
            await pool.aclose()
        # A connection the backend keeps is reused; one it closes is not.
        assert server.connections == (1 if keep else 2)

    _run(test)


def test_the_chunks_of_one_read_are_handed_on_as_one_piece(json_backend: str) -> None:
    once(json_backend)
    # A streaming backend writes a chunk per event: the chunks that arrived together are
    # one piece for the relay (one step per read of the socket, not per chunk), and the
    # pieces keep the bytes in order.
    events = [b'data: {"n": %d}\n\n' % n for n in range(200)]
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in events)
    head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    cut = len(chunked) // 2
    parts = (head + chunked[:cut], chunked[cut:] + b"0\r\n\r\n")

    async def test() -> None:
        async with _Server(_replying(*parts)) as server:
            pool = Http1Pool(connect=5, write=5)
            answer, pieces = await _ask(pool, server.url)
            await pool.aclose()
        assert (answer.status_code, b"".join(pieces)) == (200, b"".join(events))
        # Each of the two writes (10 ms apart) is a piece, or two where the socket's reads
        # cut it: not one per chunk.
        assert 2 <= len(pieces) <= 4, [len(p) for p in pieces]

    _run(test)


def test_a_head_is_handed_on_with_its_bodys_first_bytes_or_soon_without(
    json_backend: str,
) -> None:
    once(json_backend)
    # A head whose body follows at once is handed on with it; one whose body is late is
    # handed on a moment later (2 ms, not the body's 300), and the body arrives whole.
    head = b"HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\n"

    def answer(pause: float) -> Answer:
        async def write(_: asyncio.StreamReader, writer: asyncio.StreamWriter, __: int) -> bool:
            writer.write(head)
            await writer.drain()
            await asyncio.sleep(pause)
            writer.write(b"hello world")
            await writer.drain()
            return True

        return write

    async def test() -> None:
        for pause in (0.0, 0.3):
            async with _Server(answer(pause)) as server:
                pool = Http1Pool(connect=5, write=5)
                started = asyncio.get_running_loop().time()
                response = await pool.send(_request(server.url))
                took = asyncio.get_running_loop().time() - started
                body = response.stream
                assert isinstance(body, AnswerBody)
                held = bool(body._connection.chunks)
                assert response.status_code == 200
                assert b"".join([c async for c in response.aiter_raw()]) == b"hello world"
                await pool.aclose()
            if pause:
                assert took < 0.1, took  # the head did not wait for the body
            else:
                assert held  # the body's first bytes came with the head

    _run(test)


def test_a_body_read_to_its_end_reads_nothing_more_once_its_connection_is_reused(
    json_backend: str,
) -> None:
    once(json_backend)

    async def test() -> None:
        async with _Server(_replying(OK + b"data: 1\n\n", b"\n")) as server:
            pool = Http1Pool(connect=5, write=5)
            first = await pool.send(_request(server.url))
            body = first.stream
            assert isinstance(body, AnswerBody)
            pieces = []
            while (piece := await body.read()) is not None:
                pieces.append(piece)
            assert b"".join(pieces) == b"data: 1\n\n\n"
            second = await pool.send(_request(server.url))  # on the same connection
            assert server.connections == 1
            # The first body is over: it neither waits nor takes the second's bytes.
            assert body.take() is None
            assert await asyncio.wait_for(body.read(), 1) is None
            assert b"".join([c async for c in second.aiter_raw()]) == b"data: 1\n\n\n"
            await pool.aclose()

    _run(test)


def test_a_connection_the_backend_closed_while_kept_is_not_reused(json_backend: str) -> None:
    once(json_backend)

    async def test() -> None:
        # The backend keeps no connection, but says nothing of it.
        async with _Server(_replying(OK + b"data: 1\n\n\n", keep=False)) as server:
            pool = Http1Pool(connect=5, write=5)
            for _ in range(2):
                _, chunks = await _ask(pool, server.url)
                assert b"".join(chunks) == b"data: 1\n\n\n"
                await asyncio.sleep(0.05)  # the close arrives while the connection is kept
            await pool.aclose()
        assert server.connections == 2

    _run(test)


def test_a_body_closed_before_its_end_closes_its_connection(json_backend: str) -> None:
    once(json_backend)

    async def test() -> None:
        head = b"HTTP/1.1 200 OK\r\ncontent-length: 20\r\n\r\n"
        async with _Server(_replying(head + b"0123456789", b"0123456789")) as server:
            pool = Http1Pool(connect=5, write=5)
            answer = await pool.send(_request(server.url))
            async for chunk in answer.aiter_raw():
                assert chunk == b"0123456789"
                break
            await answer.aclose()
            answer, chunks = await _ask(pool, server.url)
            assert b"".join(chunks) == b"0123456789" * 2
            await pool.aclose()
        assert server.connections == 2

    _run(test)


def test_a_connection_in_use_when_the_pool_closes_is_closed_after_its_answer(
    json_backend: str,
) -> None:
    once(json_backend)

    async def test() -> None:
        async with _Server(_replying(OK, b"data: 1\n\n\n")) as server:
            pool = Http1Pool(connect=5, write=5)
            answer = await pool.send(_request(server.url))
            await pool.aclose()
            assert b"".join([chunk async for chunk in answer.aiter_raw()]) == b"data: 1\n\n\n"
            connection = answer.stream._connection  # type: ignore[union-attr]
            assert connection.transport is None  # closed, not kept

    _run(test)


@pytest.mark.parametrize(
    ("parts", "error"),
    [
        ((), httpx.RemoteProtocolError),  # closed without an answer
        ((b"SSH-2.0-OpenSSH_9.6\r\n",), httpx.RemoteProtocolError),  # not HTTP
        ((b"HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\nshort",), httpx.RemoteProtocolError),
    ],
    ids=["no-answer", "not-http", "cut-body"],
)
def test_a_broken_answer_is_httpx_s_error(
    parts: tuple[bytes, ...], error: type[Exception], json_backend: str
) -> None:
    once(json_backend)

    async def test() -> None:
        async with _Server(_replying(*parts, keep=False)) as server:
            pool = Http1Pool(connect=5, write=5)
            with pytest.raises(error):
                await _ask(pool, server.url)
            await pool.aclose()

    _run(test)


def test_an_unreachable_backend_and_a_broken_header_are_httpx_s_errors(
    json_backend: str,
) -> None:
    once(json_backend)

    async def test() -> None:
        pool = Http1Pool(connect=5, write=5)
        async with _Server(_replying(OK)) as server:
            url = server.url
        with pytest.raises(httpx.ConnectError):
            await pool.send(_request(url))
        request = _request(url)
        request.headers["x-smuggled"] = "a\r\nhost: elsewhere"
        with pytest.raises(httpx.LocalProtocolError):
            await pool.send(request)
        with pytest.raises(httpx.UnsupportedProtocol):
            await pool.send(_request("ftp://127.0.0.1/x"))

    _run(test)


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "ALL_PROXY", None])
def test_a_proxy_of_the_environment_is_left_to_httpx(
    variable: str | None, monkeypatch: pytest.MonkeyPatch, json_backend: str
) -> None:
    once(json_backend)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    if variable is not None:
        monkeypatch.setenv(variable, "http://127.0.0.1:9")
    config = ProxyConfig(backends=(Backend("openai", "http://backend.test/v1"),))
    client = BackendClient(config)
    _, direct, _ = client._url("http://backend.test/v1/chat/completions")
    assert direct is (variable is None)
