"""The async and sync shells: httpx responses and plain iterables, closing on every
way out (end, break, exception, cancellation), transport errors and idle timeouts."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import anyio
import httpx
import pytest

import laminate
from laminate import (
    IncompleteStreamError,
    ResponseDone,
    StreamReadError,
    StreamTimeoutError,
    TextDelta,
)

from .support import FIXTURES

OPENAI_TEXT = (FIXTURES / "openai" / "text.sse").read_bytes()
ANTHROPIC_TOOL = (FIXTURES / "anthropic" / "tool-call.sse").read_bytes()
OLLAMA_TEXT = (FIXTURES / "ollama" / "text.ndjson").read_bytes()


class TrackedStream(httpx.AsyncByteStream, httpx.SyncByteStream):
    """A response body served in small chunks that records whether it was closed."""

    def __init__(self, data: bytes, chunk: int = 7, fail_at: int | None = None) -> None:
        self.data = data
        self.chunk = chunk
        self.fail_at = fail_at
        self.closed = False
        self.sent = 0

    def _chunks(self) -> Iterator[bytes]:
        for start in range(0, len(self.data), self.chunk):
            if self.fail_at is not None and start >= self.fail_at:
                raise httpx.ReadError("connection reset by peer")
            self.sent += 1
            yield self.data[start : start + self.chunk]

    def __aiter__(self) -> AsyncIterator[bytes]:
        # A plain iterator, not an async generator: laminate stops reading at the
        # terminal event, and trio warns about async generators left unfinished.
        return _Pieces(self._chunks())

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks()

    async def aclose(self) -> None:
        self.closed = True

    def close(self) -> None:
        self.closed = True


class _Pieces:
    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks

    def __aiter__(self) -> _Pieces:
        return self

    async def __anext__(self) -> bytes:
        await anyio.sleep(0)
        try:
            return next(self._chunks)
        except StopIteration:
            raise StopAsyncIteration from None


def _transport(body: TrackedStream, content_type: str = "text/event-stream") -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": content_type}, stream=body)

    return httpx.MockTransport(handler)


async def _events_over_httpx(
    body: TrackedStream, path: str, content_type: str
) -> list[laminate.Event]:
    async with (
        httpx.AsyncClient(
            transport=_transport(body, content_type), base_url="http://test"
        ) as client,
        client.stream("POST", path, json={}) as response,
    ):
        return [event async for event in laminate.normalize_stream(response)]


@pytest.mark.anyio
async def test_httpx_response_detects_provider_from_url() -> None:
    body = TrackedStream(ANTHROPIC_TOOL)
    events = await _events_over_httpx(body, "/v1/messages", "text/event-stream")
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert done.response.provider == "anthropic"
    assert done.response.has_tool_use()
    assert body.closed


@pytest.mark.anyio
async def test_httpx_ndjson_response() -> None:
    body = TrackedStream(OLLAMA_TEXT, chunk=5)
    events = await _events_over_httpx(body, "/api/chat", "application/x-ndjson")
    assert isinstance(events[-1], ResponseDone)
    assert events[-1].response.provider == "ollama"
    assert events[-1].response.text()


@pytest.mark.anyio
async def test_stream_response_attribute_and_collect() -> None:
    body = TrackedStream(OPENAI_TEXT)
    async with (
        httpx.AsyncClient(transport=_transport(body), base_url="http://test") as client,
        client.stream("POST", "/v1/chat/completions", json={}) as response,
    ):
        stream = laminate.normalize_stream(response)
        before = stream.response
        events = [event async for event in stream]
        done = events[-1]
        assert before is None
        assert isinstance(done, ResponseDone)
        assert stream.response == done.response
    collected = await laminate.collect(_aiter([OPENAI_TEXT]))
    assert collected == stream.response


@pytest.mark.anyio
async def test_break_closes_the_response() -> None:
    body = TrackedStream(OPENAI_TEXT, chunk=3)
    async with httpx.AsyncClient(transport=_transport(body), base_url="http://test") as client:
        response = await client.send(
            client.build_request("POST", "/v1/chat/completions"), stream=True
        )
        async with laminate.normalize_stream(response) as stream:
            async for event in stream:
                if isinstance(event, TextDelta):
                    break
        assert body.closed
        assert response.is_closed
        assert body.sent < len(OPENAI_TEXT) // 3


@pytest.mark.anyio
# trio finalizes an abandoned async generator too, and warns that `async with` should
# have closed it; that warning is what this test provokes.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_break_without_context_manager_closes_the_response() -> None:
    body = TrackedStream(OPENAI_TEXT, chunk=3)
    async with httpx.AsyncClient(transport=_transport(body), base_url="http://test") as client:
        response = await client.send(
            client.build_request("POST", "/v1/chat/completions"), stream=True
        )
        async for event in laminate.normalize_stream(response):
            if isinstance(event, TextDelta):
                break
        # The abandoned stream is finalized by the event loop's async-generator hooks.
        for _ in range(20):
            if body.closed:
                break
            await anyio.sleep(0.001)
        assert body.closed


@pytest.mark.anyio
async def test_exception_in_loop_body_closes_the_response() -> None:
    body = TrackedStream(OPENAI_TEXT, chunk=3)
    async with httpx.AsyncClient(transport=_transport(body), base_url="http://test") as client:
        response = await client.send(
            client.build_request("POST", "/v1/chat/completions"), stream=True
        )

        async def consume() -> None:
            async with laminate.normalize_stream(response) as stream:
                async for event in stream:
                    if isinstance(event, TextDelta):
                        raise KeyError("consumer failed")

        with pytest.raises(KeyError):
            await consume()
        assert body.closed


@pytest.mark.anyio
async def test_cancellation_closes_the_response() -> None:
    closed = anyio.Event()
    started = anyio.Event()

    class Source:
        async def aiter_bytes(self) -> AsyncIterator[bytes]:
            yield OPENAI_TEXT[:40]
            started.set()
            await anyio.sleep_forever()
            yield b""  # pragma: no cover

        async def aclose(self) -> None:
            await anyio.sleep(0)  # closing is shielded: a checkpoint here must not be cancelled
            closed.set()

    async def consume() -> None:
        async with laminate.normalize_stream(Source(), provider="openai") as stream:
            async for _ in stream:
                pass

    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        await started.wait()
        tg.cancel_scope.cancel()
    assert closed.is_set()


@pytest.mark.anyio
async def test_transport_error_surfaces_with_partial_and_cause() -> None:
    body = TrackedStream(ANTHROPIC_TOOL, chunk=50, fail_at=len(ANTHROPIC_TOOL) // 2)
    with pytest.raises(StreamReadError) as info:
        await _events_over_httpx(body, "/v1/messages", "text/event-stream")
    assert isinstance(info.value.__cause__, httpx.ReadError)
    assert info.value.partial is not None
    assert info.value.partial.provider == "anthropic"
    assert body.closed


@pytest.mark.anyio
async def test_idle_timeout() -> None:
    async def stalls() -> AsyncIterator[bytes]:
        yield OPENAI_TEXT[: OPENAI_TEXT.index(b"\n\n", 400) + 2]
        await anyio.sleep_forever()
        yield b""  # pragma: no cover

    with pytest.raises(StreamTimeoutError) as info:
        await laminate.collect(stalls(), provider="openai", idle_timeout=0.05)
    assert info.value.partial is not None
    assert info.value.partial.id


@pytest.mark.anyio
async def test_plain_async_iterable_of_str_and_bytes() -> None:
    text = OPENAI_TEXT.decode("utf-8")
    half = len(text) // 2
    response = await laminate.collect(_aiter([text[:half], text[half:].encode("utf-8")]))
    assert response.provider == "openai"
    assert response == await laminate.collect(_aiter([OPENAI_TEXT]))


@pytest.mark.anyio
async def test_incomplete_stream_raises_with_partial() -> None:
    with pytest.raises(IncompleteStreamError) as info:
        await laminate.collect(_aiter([ANTHROPIC_TOOL[: len(ANTHROPIC_TOOL) // 2]]))
    assert info.value.partial is not None
    assert info.value.partial.provider == "anthropic"


def test_sync_httpx_response_and_break_closes() -> None:
    body = TrackedStream(OPENAI_TEXT, chunk=3)
    with (
        httpx.Client(transport=_transport(body), base_url="http://test") as client,
        client.stream("POST", "/v1/chat/completions") as response,
    ):
        for event in laminate.normalize_stream_sync(response):
            if isinstance(event, TextDelta):
                break
        assert body.closed
    body = TrackedStream(OPENAI_TEXT, chunk=11)
    with (
        httpx.Client(transport=_transport(body), base_url="http://test") as client,
        client.stream("POST", "/v1/chat/completions") as response,
    ):
        final = laminate.collect_sync(response)
    assert final == laminate.collect_sync([OPENAI_TEXT])
    assert body.closed


def test_sync_transport_error() -> None:
    body = TrackedStream(OPENAI_TEXT, chunk=20, fail_at=100)
    with (
        httpx.Client(transport=_transport(body), base_url="http://test") as client,
        client.stream("POST", "/v1/chat/completions") as response,
        pytest.raises(StreamReadError) as info,
    ):
        laminate.collect_sync(response)
    assert isinstance(info.value.__cause__, httpx.ReadError)


def test_sync_generator_closed_on_break() -> None:
    closed = []

    def source() -> Iterator[bytes]:
        try:
            yield from (OPENAI_TEXT[i : i + 5] for i in range(0, len(OPENAI_TEXT), 5))
        finally:
            closed.append(True)

    stream = laminate.normalize_stream_sync(source())
    for event in stream:
        if isinstance(event, TextDelta):
            break
    stream.close()
    assert closed == [True]


class DuckResponse:
    """An httpx2-like response: only the duck-typed surface laminate uses."""

    def __init__(self, data: bytes, url: str, content_type: str) -> None:
        self.data = data
        self.url = url
        self.headers = {"content-type": content_type}
        self.closed = False

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        for i in range(0, len(self.data), 9):
            yield self.data[i : i + 9]

    async def aclose(self) -> None:
        self.closed = True


@pytest.mark.anyio
async def test_duck_typed_response() -> None:
    response = DuckResponse(OLLAMA_TEXT, "http://localhost:11434/api/chat", "application/x-ndjson")
    final = await laminate.collect(response)
    assert final.provider == "ollama"
    assert response.closed


async def _aiter(chunks: list[bytes | str]) -> AsyncIterator[bytes | str]:
    for chunk in chunks:
        await anyio.sleep(0)
        yield chunk
