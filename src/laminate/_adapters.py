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

from ._errors import LaminateError, StreamReadError, StreamTimeoutError
from ._events import Event
from ._normalizer import StreamNormalizer
from ._response import NormalizedResponse

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
        self._events = self._run()

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
        await self._close_source()

    async def __aenter__(self) -> NormalizedStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _run(self) -> AsyncGenerator[Event, None]:
        normalizer = self.normalizer
        chunks = self._chunks()
        try:
            while True:
                try:
                    chunk = await self._next_chunk(chunks)
                except StopAsyncIteration:
                    break
                for event in normalizer.feed(chunk):
                    yield event
            for event in normalizer.close():
                yield event
        finally:
            await self._close_source(chunks)

    async def _next_chunk(self, chunks: AsyncIterator[bytes | str]) -> bytes | str:
        try:
            if self._idle_timeout is None:
                return await chunks.__anext__()
            with anyio.fail_after(self._idle_timeout):
                return await chunks.__anext__()
        except (StopAsyncIteration, LaminateError):
            raise
        except TimeoutError as exc:
            raise StreamTimeoutError(
                f"no bytes arrived for {self._idle_timeout} s", partial=self.normalizer.snapshot()
            ) from exc
        except Exception as exc:
            raise StreamReadError(
                f"reading the stream failed: {type(exc).__name__}: {exc}",
                partial=self.normalizer.snapshot(),
            ) from exc

    def _chunks(self) -> AsyncIterator[bytes | str]:
        source = self._source
        if isinstance(source, AsyncResponse):
            return source.aiter_bytes()
        return source.__aiter__()

    async def _close_source(self, chunks: AsyncIterator[bytes | str] | None = None) -> None:
        with anyio.CancelScope(shield=True):
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()
            source_close = getattr(self._source, "aclose", None)
            if source_close is not None:
                await source_close()


class NormalizedStreamSync:
    """The iterator :func:`normalize_stream_sync` returns; also a context manager."""

    def __init__(
        self,
        source: SyncResponse | Iterable[bytes | str],
        provider: str | None,
        options: dict[str, Any],
    ) -> None:
        if isinstance(source, SyncResponse):
            options = _hints(source, options)
        self._source = source
        self.normalizer = StreamNormalizer(provider, **options)
        self._events = self._run()

    @property
    def response(self) -> NormalizedResponse | None:
        return self.normalizer.response

    def __iter__(self) -> NormalizedStreamSync:
        return self

    def __next__(self) -> Event:
        return next(self._events)

    def close(self) -> None:
        self._events.close()
        self._close_source()

    def __enter__(self) -> NormalizedStreamSync:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self) -> Generator[Event, None, None]:
        normalizer = self.normalizer
        source = self._source
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
            yield from normalizer.close()
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
            self._close_source()

    def _close_source(self) -> None:
        close = getattr(self._source, "close", None)
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
