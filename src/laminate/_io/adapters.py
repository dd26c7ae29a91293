"""Thin async and sync shells around :class:`StreamNormalizer`.

They read, feed, hand out the events, and close the source whatever happens: the end
of the stream, ``break``, an exception, or cancellation. What the source is (bytes, an
httpx / httpx2 response, an SDK stream, an iterable of chunks or of parsed frames) is
recognised once, before anything is read, by :mod:`.sources`; the first item picks the
one function each item goes through. The loops below decide nothing.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterator
from types import TracebackType
from typing import Any, Final, Protocol, runtime_checkable

import anyio

from .._core.errors import LaminateError
from .._core.events import Event
from .._core.response import NormalizedResponse
from .._normalizer import StreamNormalizer
from .sources import (
    AsyncSource,
    Run,
    SyncSource,
    async_source,
    ends_answer,
    first_reader,
    is_empty,
    read_error,
    silence_error,
    sync_source,
)

__all__ = [
    "NormalizedStream",
    "NormalizedStreamSync",
    "collect",
    "collect_sync",
    "normalize_stream",
    "normalize_stream_sync",
]

_END: Final[Any] = object()


@runtime_checkable
class AsyncResponse(Protocol):
    """What laminate needs of an httpx (or httpx2) streaming response."""

    def aiter_bytes(self) -> AsyncIterator[bytes]: ...
    async def aclose(self) -> None: ...


@runtime_checkable
class SyncResponse(Protocol):
    """What laminate needs of a sync httpx (or httpx2) streaming response."""

    def iter_bytes(self) -> Iterator[bytes]: ...
    def close(self) -> None: ...


class NormalizedStream:
    """The async iterator :func:`normalize_stream` returns; also an async context manager.

    After the last event, :attr:`response` is the final :class:`NormalizedResponse`.
    Leaving it early (``break``, an exception, cancellation) closes the source.
    """

    def __init__(
        self,
        source: object,
        provider: str | None,
        options: dict[str, Any],
        caller: str = "normalize_stream",
    ) -> None:
        idle_timeout: float | None = options.pop("idle_timeout", None)
        recognised = async_source(source, caller)
        self._source = recognised
        self._run = Run(provider, {**recognised.hints, **options})
        # The generator must not refer back to this object: without a reference cycle,
        # dropping the stream (a `break` out of `async for`) finalizes it at once.
        self._events = _run_async(self._run, recognised, idle_timeout)

    @property
    def normalizer(self) -> StreamNormalizer:
        """The :class:`StreamNormalizer` this stream feeds."""
        return self._run.normalizer

    @property
    def response(self) -> NormalizedResponse | None:
        """The final response, once the stream is complete."""
        return self._run.normalizer.response

    def __aiter__(self) -> NormalizedStream:
        return self

    async def __anext__(self) -> Event:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        """Stop reading and close the source (safe to call more than once)."""
        await self._events.aclose()
        with anyio.CancelScope(shield=True):
            await self._source.close()

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
    """The iterator :func:`normalize_stream_sync` returns; also a context manager.

    After the last event, :attr:`response` is the final :class:`NormalizedResponse`.
    Leaving it early (``break``, an exception) closes the source.
    """

    def __init__(
        self,
        source: object,
        provider: str | None,
        options: dict[str, Any],
        caller: str = "normalize_stream_sync",
    ) -> None:
        if "idle_timeout" in options:
            raise TypeError(
                "idle_timeout is for the async adapters; give the sync client a read timeout"
                " (httpx.Client(timeout=...)) instead"
            )
        recognised = sync_source(source, caller)
        self._source = recognised
        self._run = Run(provider, {**recognised.hints, **options})
        self._events = _run_sync(self._run, recognised)

    @property
    def normalizer(self) -> StreamNormalizer:
        """The :class:`StreamNormalizer` this stream feeds."""
        return self._run.normalizer

    @property
    def response(self) -> NormalizedResponse | None:
        """The final response, once the stream is complete."""
        return self._run.normalizer.response

    def __iter__(self) -> NormalizedStreamSync:
        return self

    def __next__(self) -> Event:
        return next(self._events)

    def close(self) -> None:
        """Stop reading and close the source (safe to call more than once)."""
        self._events.close()
        self._source.close()

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
    run: Run, source: AsyncSource, idle_timeout: float | None
) -> AsyncGenerator[Event, None]:
    items: AsyncIterator[Any] | None = None
    try:
        try:
            items = await source.open()
        except LaminateError as exc:  # a non-2xx status
            if exc.partial is None:
                exc.partial = run.normalizer.snapshot()
            raise
        item = await _next_item(run.normalizer, items, idle_timeout)
        while is_empty(item):
            item = await _next_item(run.normalizer, items, idle_timeout)
        if item is not _END:
            read = first_reader(item, run, events=source.events)
            normalizer = run.normalizer
            while item is not _END:
                for event in read(item):
                    yield event
                if normalizer.response is not None:
                    break  # complete: nothing after the terminal event is read
                item = await _next_item(normalizer, items, idle_timeout)
        events, error = run.normalizer.close_events()
        for event in events:
            yield event
        if error is not None:
            raise error
    finally:
        # Shielded: closing must finish even when the consumer is being cancelled.
        with anyio.CancelScope(shield=True):
            close_items = getattr(items, "aclose", None)
            if close_items is not None:
                await close_items()
            await source.close()


async def _next_item(
    normalizer: StreamNormalizer, items: AsyncIterator[Any], idle_timeout: float | None
) -> Any:
    try:
        if idle_timeout is None:
            return await items.__anext__()
        with anyio.fail_after(idle_timeout):
            return await items.__anext__()
    except StopAsyncIteration:
        return _END
    except TimeoutError as exc:
        error = silence_error(idle_timeout, normalizer)
        if ends_answer(error, normalizer):
            return _END
        raise error from exc
    except Exception as exc:
        return _after_read_error(exc, normalizer)


def _run_sync(run: Run, source: SyncSource) -> Generator[Event, None, None]:
    items: Iterator[Any] | None = None
    try:
        try:
            items = source.open()
        except LaminateError as exc:  # a non-2xx status
            if exc.partial is None:
                exc.partial = run.normalizer.snapshot()
            raise
        item = _next_sync(run.normalizer, items)
        while is_empty(item):
            item = _next_sync(run.normalizer, items)
        if item is not _END:
            read: Callable[[Any], list[Event]] = first_reader(item, run, events=source.events)
            normalizer = run.normalizer
            while item is not _END:
                yield from read(item)
                if normalizer.response is not None:
                    break  # complete: nothing after the terminal event is read
                item = _next_sync(normalizer, items)
        events, error = run.normalizer.close_events()
        yield from events
        if error is not None:
            raise error
    finally:
        close_items = getattr(items, "close", None)
        if close_items is not None:
            close_items()
        source.close()


def _next_sync(normalizer: StreamNormalizer, items: Iterator[Any]) -> Any:
    try:
        return next(items, _END)
    except Exception as exc:
        return _after_read_error(exc, normalizer)


def _after_read_error(exc: Exception, normalizer: StreamNormalizer) -> Any:
    """The end of the items when the failure ends the answer (:func:`ends_answer`); else
    the error."""
    error = read_error(exc, normalizer)
    if ends_answer(error, normalizer):
        return _END
    raise error from exc


_SOURCES_DOC: Final = """
    ``source`` is any of:

    - ``bytes`` or ``str``: a whole body, read as one chunk;
    - a streaming response from httpx or httpx2 (its URL and content type help detect
      the provider); a status that is not 2xx raises :class:`ProviderError` with
      ``status_code`` before the body is read as a stream;
    - what the official SDKs return: openai / anthropic streams (``create(stream=True)``,
      ``with_streaming_response``, ``messages.stream()`` once entered, the Responses API's
      streams), google-genai's chunks, boto3's ``converse_stream()`` and
      ``invoke_model_with_response_stream()``, ollama-python's and litellm's chunks;
    - an iterable of ``bytes`` / ``str`` chunks, or of frames something already parsed
      (dicts, or objects with ``model_dump()`` / ``to_dict()``).

    Anything else is a :class:`TypeError`, raised before anything is read.
"""


def normalize_stream(
    source: object, provider: str | None = None, **options: Any
) -> NormalizedStream:
    """Normalize a streamed answer, asynchronously: ``async for event in ...``.
    {sources}
    ``provider`` is ``None`` to detect it, or one of ``"openai"``, ``"openai-responses"``,
    ``"anthropic"``, ``"ollama"``, ... Options are those of :class:`StreamNormalizer`
    (``keep_raw``, ``choice``, ``think_tags``, ...), plus ``idle_timeout``: seconds
    without a byte before :class:`StreamTimeoutError` (off by default).

    The result is an async iterator of events and an async context manager; leaving it
    early (``break``, an exception, cancellation) closes the source. After the last
    event, its ``response`` is the final :class:`NormalizedResponse`.
    """
    return NormalizedStream(source, provider, options)


def normalize_stream_sync(
    source: object, provider: str | None = None, **options: Any
) -> NormalizedStreamSync:
    """Normalize a streamed answer: ``for event in ...``; the sync twin of
    :func:`normalize_stream`, for sync clients.
    {sources}
    ``provider`` and options are those of :func:`normalize_stream` (no ``idle_timeout``:
    give the sync client a read timeout). Leaving the loop early closes the source.
    """
    return NormalizedStreamSync(source, provider, options)


async def collect(
    source: object, provider: str | None = None, **options: Any
) -> NormalizedResponse:
    """Read a whole streamed answer and return the final :class:`NormalizedResponse`.

    ``response = await laminate.collect(source)``: the same sources, ``provider`` and
    options as :func:`normalize_stream`. A failure raises the stream's error, whose
    ``.partial`` holds everything received before it.
    """
    async with NormalizedStream(source, provider, options, "collect") as stream:
        async for _ in stream:
            pass
    return _final(stream.response)


def collect_sync(source: object, provider: str | None = None, **options: Any) -> NormalizedResponse:
    """Read a whole streamed answer and return the final :class:`NormalizedResponse`.

    ``response = laminate.collect_sync(source)``: the sync twin of :func:`collect`, with
    the sources, ``provider`` and options of :func:`normalize_stream_sync` (bytes, a sync
    httpx / httpx2 response, an SDK stream, boto3's ``converse_stream()``, an iterable of
    chunks or parsed frames). A failure raises the stream's error, whose ``.partial``
    holds everything received before it.
    """
    with NormalizedStreamSync(source, provider, options, "collect_sync") as stream:
        for _ in stream:
            pass
    return _final(stream.response)


normalize_stream.__doc__ = (normalize_stream.__doc__ or "").replace("{sources}", _SOURCES_DOC)
normalize_stream_sync.__doc__ = (normalize_stream_sync.__doc__ or "").replace(
    "{sources}", _SOURCES_DOC
)


def _final(response: NormalizedResponse | None) -> NormalizedResponse:
    if response is None:  # close() either completes the response or raises
        raise LaminateError("the stream ended without a response")
    return response
