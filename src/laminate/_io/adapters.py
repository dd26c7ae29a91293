"""Thin async and sync shells around :class:`StreamNormalizer`.

They read bytes, feed them, hand out the events, and close the source whatever
happens: the end of the stream, ``break``, an exception, or cancellation.
"""

from __future__ import annotations

from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Generator,
    Iterable,
    Iterator,
)
from types import TracebackType
from typing import Any, Protocol, runtime_checkable

import anyio

from .._core.errors import LaminateError, StreamReadError, StreamTimeoutError
from .._core.events import Event
from .._core.normalizer import StreamNormalizer
from .._core.response import NormalizedResponse

__all__ = [
    "NormalizedStream",
    "NormalizedStreamSync",
    "collect",
    "collect_sync",
    "normalize_stream",
    "normalize_stream_sync",
]


@runtime_checkable
class AsyncResponse(Protocol):
    """What laminate needs of an httpx (or httpx2) streaming response."""

    def aiter_bytes(self) -> AsyncIterator[bytes]: ...
    async def aclose(self) -> None: ...


@runtime_checkable
class SyncResponse(Protocol):
    def iter_bytes(self) -> Iterator[bytes]: ...
    def close(self) -> None: ...


def _hints(source: object, options: dict[str, Any]) -> dict[str, Any]:
    """URL and content type of a response, as detection hints."""
    if "url" not in options:
        url = getattr(source, "url", None)
        if url is not None:
            options["url"] = str(url)
    if "content_type" not in options:
        headers = getattr(source, "headers", None)
        if headers is not None:
            options["content_type"] = headers.get("content-type")
    return options


class NormalizedStream:
    """The async iterator :func:`normalize_stream` returns; also an async context manager.

    After the last event, :attr:`response` is the final :class:`NormalizedResponse`.
    """

    def __init__(
        self,
        source: AsyncResponse | AsyncIterable[bytes | str],
        provider: str | None,
        options: dict[str, Any],
    ) -> None:
        self._idle_timeout: float | None = options.pop("idle_timeout", None)
        if isinstance(source, AsyncResponse):
            options = _hints(source, options)
        self._source = source
        self.normalizer = StreamNormalizer(provider, **options)
        # The generator must not refer back to this object: without a reference cycle,
        # dropping the stream (a `break` out of `async for`) finalizes it at once.
        self._events = _run_async(self.normalizer, source, self._idle_timeout)

    @property
    def response(self) -> NormalizedResponse | None:
        """The final response, once the stream is complete."""
        return self.normalizer.response

    def __aiter__(self) -> NormalizedStream:
        return self

    async def __anext__(self) -> Event:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        """Stop reading and close the response (safe to call more than once)."""
        await self._events.aclose()
        await _close_async(self._source, None)

    async def __aenter__(self) -> NormalizedStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class NormalizedStreamSync:
    """The iterator :func:`normalize_stream_sync` returns; also a context manager."""

    def __init__(
        self,
        source: SyncResponse | Iterable[bytes | str],
        provider: str | None,
        options: dict[str, Any],
    ) -> None:
        if "idle_timeout" in options:
            raise TypeError(
                "idle_timeout is for the async adapters; give the sync client a read timeout"
                " (httpx.Client(timeout=...)) instead"
            )
        if isinstance(source, SyncResponse):
            options = _hints(source, options)
        self._source = source
        self.normalizer = StreamNormalizer(provider, **options)
        self._events = _run_sync(self.normalizer, source)

    @property
    def response(self) -> NormalizedResponse | None:
        return self.normalizer.response

    def __iter__(self) -> NormalizedStreamSync:
        return self

    def __next__(self) -> Event:
        return next(self._events)

    def close(self) -> None:
        self._events.close()
        _close_sync(self._source)

    def __enter__(self) -> NormalizedStreamSync:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


async def _run_async(
    normalizer: StreamNormalizer,
    source: AsyncResponse | AsyncIterable[bytes | str],
    idle_timeout: float | None,
) -> AsyncGenerator[Event, None]:
    chunks = source.aiter_bytes() if isinstance(source, AsyncResponse) else source.__aiter__()
    try:
        while True:
            try:
                chunk = await _next_chunk(normalizer, chunks, idle_timeout)
            except StopAsyncIteration:
                break
            for event in normalizer.feed(chunk):
                yield event
            if normalizer.response is not None:
                break  # complete: nothing after the terminal event is read
        events, error = normalizer.close_events()
        for event in events:
            yield event
        if error is not None:
            raise error
    finally:
        await _close_async(source, chunks)


async def _next_chunk(
    normalizer: StreamNormalizer, chunks: AsyncIterator[bytes | str], idle_timeout: float | None
) -> bytes | str:
    try:
        if idle_timeout is None:
            return await chunks.__anext__()
        with anyio.fail_after(idle_timeout):
            return await chunks.__anext__()
    except (StopAsyncIteration, LaminateError):
        raise
    except TimeoutError as exc:
        raise StreamTimeoutError(
            f"no bytes arrived for {idle_timeout} s", partial=normalizer.snapshot()
        ) from exc
    except Exception as exc:
        raise StreamReadError(
            f"reading the stream failed: {type(exc).__name__}: {exc}",
            partial=normalizer.snapshot(),
        ) from exc


async def _close_async(source: object, chunks: AsyncIterator[bytes | str] | None) -> None:
    # Shielded: closing must finish even when the consumer is being cancelled.
    with anyio.CancelScope(shield=True):
        close_chunks = getattr(chunks, "aclose", None)
        if close_chunks is not None:
            await close_chunks()
        close_source = getattr(source, "aclose", None)
        if close_source is not None:
            await close_source()


def _run_sync(
    normalizer: StreamNormalizer, source: SyncResponse | Iterable[bytes | str]
) -> Generator[Event, None, None]:
    chunks = iter(source.iter_bytes() if isinstance(source, SyncResponse) else source)
    try:
        while True:
            try:
                chunk = next(chunks)
            except StopIteration:
                break
            except LaminateError:
                raise
            except Exception as exc:
                raise StreamReadError(
                    f"reading the stream failed: {type(exc).__name__}: {exc}",
                    partial=normalizer.snapshot(),
                ) from exc
            yield from normalizer.feed(chunk)
            if normalizer.response is not None:
                break  # complete: nothing after the terminal event is read
        events, error = normalizer.close_events()
        yield from events
        if error is not None:
            raise error
    finally:
        close_chunks = getattr(chunks, "close", None)
        if close_chunks is not None:
            close_chunks()
        _close_sync(source)


def _close_sync(source: object) -> None:
    close = getattr(source, "close", None)
    if close is not None:
        close()


def normalize_stream(
    source: AsyncResponse | AsyncIterable[bytes | str], provider: str | None = None, **options: Any
) -> NormalizedStream:
    """Normalize a streaming response (httpx or httpx2) or any async iterable of bytes.

    Options are those of :class:`StreamNormalizer`, plus ``idle_timeout`` (seconds
    without a byte before :class:`StreamTimeoutError`; off by default).
    """
    return NormalizedStream(source, provider, options)


def normalize_stream_sync(
    source: SyncResponse | Iterable[bytes | str], provider: str | None = None, **options: Any
) -> NormalizedStreamSync:
    """The same as :func:`normalize_stream` for a sync response or iterable."""
    return NormalizedStreamSync(source, provider, options)


async def collect(
    source: AsyncResponse | AsyncIterable[bytes | str], provider: str | None = None, **options: Any
) -> NormalizedResponse:
    """Consume a stream and return the final response."""
    async with normalize_stream(source, provider, **options) as stream:
        async for _ in stream:
            pass
    return _final(stream.response)


def collect_sync(
    source: SyncResponse | Iterable[bytes | str], provider: str | None = None, **options: Any
) -> NormalizedResponse:
    with normalize_stream_sync(source, provider, **options) as stream:
        for _ in stream:
            pass
    return _final(stream.response)


def _final(response: NormalizedResponse | None) -> NormalizedResponse:
    if response is None:  # close() either completes the response or raises
        raise LaminateError("the stream ended without a response")
    return response
