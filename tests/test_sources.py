"""What the adapters refuse, and how they answer an HTTP error.

- Wrong types are a ``TypeError`` raised when the stream is made, before anything is
  read, naming what is accepted and what was given (never an ``AttributeError`` from
  inside, never "malformed stream"), on the async and the sync side.
- A non-2xx answer is a ``ProviderError`` with ``status_code``: classified from its JSON
  error body in each provider's shape, else ``http_error`` with a snippet of the body.
- A gzip body without ``Content-Encoding`` says so.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

import laminate
from laminate._core.errors import (
    LaminateError,
    MalformedStreamError,
    ProviderError,
    StreamReadError,
    StreamTimeoutError,
)
from laminate._io.sources import ERROR_BODY_CAP, ends_answer, silence_error, status_of

from .support import FIXTURES

OPENAI_TEXT = (FIXTURES / "openai" / "text.sse").read_bytes()


class Chunk:
    """An SDK-like object with model_dump(): one frame, not a stream."""

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return {"object": "chat.completion"}


async def _agen() -> AsyncIterator[bytes]:
    yield OPENAI_TEXT


def _gen() -> Iterator[bytes]:
    yield OPENAI_TEXT


WRONG_BOTH: list[Any] = [None, 42, 2.5, True, object(), {"id": "x"}, {}, Chunk()]


@pytest.mark.parametrize("source", WRONG_BOTH, ids=repr)
def test_wrong_types_sync(source: Any) -> None:
    for call in (laminate.normalize_stream_sync, laminate.collect_sync):
        with pytest.raises(TypeError) as info:
            call(source)
        message = str(info.value)
        assert "bytes" in message
        assert "response" in message
        assert "SDK stream" in message
        assert type(source).__name__ in message


@pytest.mark.anyio
@pytest.mark.parametrize("source", WRONG_BOTH, ids=repr)
async def test_wrong_types_async(source: Any) -> None:
    with pytest.raises(TypeError) as info:
        laminate.normalize_stream(source)
    message = str(info.value)
    assert "bytes" in message
    assert "SDK stream" in message
    assert type(source).__name__ in message
    with pytest.raises(TypeError):
        await laminate.collect(source)


def test_async_things_given_to_the_sync_side() -> None:
    with pytest.raises(TypeError, match="async"):
        laminate.normalize_stream_sync(_agen())


@pytest.mark.anyio
async def test_sync_things_given_to_the_async_side() -> None:
    with pytest.raises(TypeError, match="block the event loop"):
        laminate.normalize_stream(_gen())
    with (
        httpx.Client(transport=_answer(200, OPENAI_TEXT), base_url="http://t") as client,
        client.stream("POST", "/v1/chat/completions") as response,
    ):
        with pytest.raises(TypeError, match="synchronous"):
            laminate.normalize_stream(response)
        assert laminate.collect_sync(response).text()


@pytest.mark.anyio
async def test_async_response_given_to_the_sync_side() -> None:
    async with (
        httpx.AsyncClient(transport=_answer(200, OPENAI_TEXT), base_url="http://t") as client,
        client.stream("POST", "/v1/chat/completions") as response,
    ):
        with pytest.raises(TypeError, match="asynchronous"):
            laminate.normalize_stream_sync(response)
        assert (await laminate.collect(response)).text()


def test_bad_items_are_a_type_error_at_the_first_item() -> None:
    with pytest.raises(TypeError, match="the first item is int"):
        laminate.collect_sync([1, 2, 3])


@pytest.mark.anyio
async def test_whole_bodies_are_one_chunk() -> None:
    want = laminate.collect_sync([OPENAI_TEXT[:100], OPENAI_TEXT[100:]])
    assert laminate.collect_sync(OPENAI_TEXT) == want
    assert laminate.collect_sync(OPENAI_TEXT.decode()) == want
    assert laminate.collect_sync(bytearray(OPENAI_TEXT)) == want
    assert await laminate.collect(OPENAI_TEXT) == want
    assert await laminate.collect(OPENAI_TEXT.decode()) == want
    assert await laminate.collect([OPENAI_TEXT]) == want
    body = (FIXTURES / "anthropic" / "text.body.json").read_bytes()
    assert laminate.collect_sync(body) == laminate.normalize(body)


# -- HTTP status -------------------------------------------------------------------------------


def _answer(
    status: int, body: bytes, content_type: str = "application/json", **headers: str
) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            status, content=body, headers={"content-type": content_type, **headers}
        )

    return httpx.MockTransport(handler)


PATHS = {
    "openai": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "ollama": "/api/chat",
}
# Each provider's error body, as its API documents it.
BODIES: dict[str, Any] = {
    "openai": lambda kind, msg: {"error": {"message": msg, "type": kind, "code": None}},
    "openai-responses": lambda kind, msg: {"error": {"message": msg, "type": kind}},
    "anthropic": lambda kind, msg: {"type": "error", "error": {"type": kind, "message": msg}},
    "ollama": lambda kind, msg: {"error": msg},
}
STATUSES = [
    (401, "authentication_error", "invalid x-api-key", False),
    (429, "rate_limit_error", "slow down", True),
    (500, "api_error", "internal error", True),
]


def _sync_error(path: str, transport: httpx.MockTransport) -> laminate.ProviderError:
    with (
        httpx.Client(transport=transport, base_url="http://t") as client,
        client.stream("POST", path) as response,
        pytest.raises(laminate.ProviderError) as info,
    ):
        laminate.collect_sync(response)
    return info.value


async def _async_error(path: str, transport: httpx.MockTransport) -> laminate.ProviderError:
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://t") as client,
        client.stream("POST", path) as response,
    ):
        with pytest.raises(laminate.ProviderError) as info:
            async for _ in laminate.normalize_stream(response):
                pass
        assert response.is_closed
    return info.value


@pytest.mark.anyio
@pytest.mark.parametrize("provider", list(PATHS))
@pytest.mark.parametrize(("status", "kind", "message", "retryable"), STATUSES)
async def test_json_error_bodies(
    provider: str, status: int, kind: str, message: str, retryable: bool
) -> None:
    body = json.dumps(BODIES[provider](kind, message)).encode()
    for error in (
        _sync_error(PATHS[provider], _answer(status, body)),
        await _async_error(PATHS[provider], _answer(status, body)),
    ):
        assert error.status_code == status
        assert message in error.message
        assert error.retryable is retryable
        if provider != "ollama":  # ollama's error body carries no type
            assert error.error_type == kind
        assert error.partial is not None


@pytest.mark.anyio
@pytest.mark.parametrize("provider", list(PATHS))
async def test_html_502(provider: str) -> None:
    page = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
    for error in (
        _sync_error(PATHS[provider], _answer(502, page, "text/html")),
        await _async_error(PATHS[provider], _answer(502, page, "text/html")),
    ):
        assert error.status_code == 502
        assert error.error_type == "http_error"
        assert error.retryable
        assert "502 Bad Gateway" in error.message


def test_status_classification_without_a_type() -> None:
    quota = json.dumps(
        {"error": {"message": "quota", "type": "insufficient_quota", "code": "insufficient_quota"}}
    ).encode()
    assert not _sync_error("/v1/chat/completions", _answer(429, quota)).retryable
    limited = json.dumps(
        {"error": {"message": "limit", "type": "requests", "code": "rate_limit_exceeded"}}
    ).encode()
    assert _sync_error("/v1/chat/completions", _answer(429, limited)).retryable
    for status, retryable in [(400, False), (404, False), (408, True), (409, True), (503, True)]:
        error = _sync_error("/v1/chat/completions", _answer(status, b"", "text/plain"))
        assert (error.status_code, error.retryable) == (status, retryable)
        assert error.error_type == "http_error"
    bedrock = _sync_error(
        "/model/m/converse-stream",
        _answer(
            429,
            b'{"message":"Too many requests"}',
            **{"x-amzn-errortype": "ThrottlingException:http://x"},
        ),
    )
    assert (bedrock.error_type, bedrock.retryable) == ("ThrottlingException", True)


def test_error_body_is_read_only_up_to_a_cap() -> None:
    sent = 0

    def pieces() -> Iterator[bytes]:
        nonlocal sent
        for _ in range(1000):
            sent += 4096
            yield b"x" * 4096

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, content=pieces(), headers={"content-type": "text/plain"})

    error = _sync_error("/v1/chat/completions", httpx.MockTransport(handler))
    assert sent <= ERROR_BODY_CAP + 4096
    assert len(error.message) < 300


def test_in_stream_errors_have_no_status() -> None:
    with pytest.raises(laminate.ProviderError) as info:
        laminate.collect_sync((FIXTURES / "ollama" / "error.ndjson").read_bytes())
    assert info.value.status_code is None


@pytest.mark.anyio
async def test_gzip_without_content_encoding() -> None:
    compressed = gzip.compress(OPENAI_TEXT)
    with pytest.raises(laminate.MalformedStreamError, match="gzip"):
        laminate.collect_sync(compressed)
    with pytest.raises(laminate.MalformedStreamError, match="Content-Encoding"):
        await laminate.collect(_chunks(compressed))
    transport = _answer(200, compressed, "text/event-stream")
    with (
        httpx.Client(transport=transport, base_url="http://t") as client,
        client.stream("POST", "/v1/chat/completions") as response,
        pytest.raises(laminate.MalformedStreamError, match="gzip"),
    ):
        laminate.collect_sync(response)
    # With the header, httpx decompresses and all is well.
    transport = _answer(200, compressed, "text/event-stream", **{"content-encoding": "gzip"})
    with (
        httpx.Client(transport=transport, base_url="http://t") as client,
        client.stream("POST", "/v1/chat/completions") as response,
    ):
        assert laminate.collect_sync(response) == laminate.collect_sync(OPENAI_TEXT)


async def _chunks(data: bytes) -> AsyncIterator[bytes]:
    yield data[:5]
    yield data[5:]


# -- an error as an HTTP status -----------------------------------------------------------

_RATE = ProviderError("slow down", error_type="rate_limit_error", retryable=True)
_OVERLOADED = ProviderError("busy", error_type="overloaded_error", retryable=True)
_REFUSED = ProviderError("no", error_type="invalid_request_error", retryable=False)
_STATUSED = ProviderError(
    "HTTP 404: gone", error_type="not_found", retryable=False, status_code=404
)


@pytest.mark.parametrize(
    ("error", "own", "as_gateway"),
    [
        (_STATUSED, 404, 404),  # a backend's own status is kept
        (StreamTimeoutError("silent"), 504, 504),
        (_RATE, 500, 429),
        (_OVERLOADED, 500, 502),
        (_REFUSED, 400, 502),
        (MalformedStreamError("garbage", offset=0, snippet=""), 500, 502),
        (StreamReadError("reset"), 500, 502),
    ],
    ids=["status", "timeout", "rate", "retryable", "refused", "malformed", "read"],
)
def test_status_of_an_error(error: LaminateError, own: int, as_gateway: int) -> None:
    """The mock server answers as the provider that had the error; the proxy as a
    gateway, for which a backend's failure is not the client's request's."""
    assert status_of(error) == own
    assert status_of(error, gateway=True) == as_gateway


def test_a_read_failure_ends_only_a_finished_answer() -> None:
    normalizer = laminate.StreamNormalizer("openai")
    normalizer.feed(b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n')
    silence = silence_error(1.5, normalizer)
    assert str(silence) == "no bytes arrived for 1.5 s"
    assert silence.partial is not None
    assert silence.partial.text() == "hi"
    assert not ends_answer(silence, normalizer)
    normalizer.feed(
        b'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    )
    assert normalizer.finished
    assert ends_answer(silence, normalizer)
    assert ends_answer(StreamReadError("reset"), normalizer)
    assert not ends_answer(_OVERLOADED, normalizer)
