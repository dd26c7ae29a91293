"""What the adapters were handed: recognised once, before anything is read.

``sync_source`` and ``async_source`` turn whatever the user passed into a
:class:`SyncSource` / :class:`AsyncSource`: how to open it (an iterator of items), how
to close it, and the detection hints its HTTP response gave. Anything not recognised
is a :class:`TypeError` raised right there, naming what is accepted and what was given:
never an ``AttributeError`` from deep inside, never a "malformed stream".

What an item is (a byte chunk, or a frame an SDK already parsed) is told by the first
one, by :func:`first_reader`, which returns the one function the loop calls per item:
the loops themselves decide nothing.

HTTP status: a response whose status is not 2xx is answered, as soon as the status is
seen, with a :class:`ProviderError` carrying ``status_code``, classified from its JSON
error body (read only up to :data:`ERROR_BODY_CAP`) when it has one. The other way, an
error becomes the HTTP status a server answers with by :func:`status_of` (the proxy's
and the mock server's one table).

The end of an answer: a read that fails or falls silent once the provider has said why
it stopped ends the answer instead of failing it (:func:`ends_answer`, contract §5); the
adapters' loops and the proxy's ask it alike.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
)
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final

from .._apis.base import aws_error, error_from_payload, is_retryable, plain_error
from .._apis.registry import APIS
from .._apis.spec import SdkEvents
from .._core.errors import (
    LaminateError,
    MalformedStreamError,
    ProviderError,
    StreamReadError,
    StreamTimeoutError,
)
from .._core.events import Event
from .._normalizer import StreamNormalizer
from .sdk import (
    ACCEPTED,
    error_payload,
    event_stream,
    events_in,
    held_response,
    is_stream_manager,
    looks_like_response,
    module_of,
    provider_of,
    sdk_error,
)

__all__ = [
    "ERROR_BODY_CAP",
    "AsyncSource",
    "Classified",
    "Run",
    "SourceKind",
    "SyncSource",
    "async_source",
    "classify",
    "ends_answer",
    "first_reader",
    "http_error",
    "is_empty",
    "read_error",
    "silence_error",
    "status_of",
    "sync_source",
]

ERROR_BODY_CAP: Final = 64 * 1024
"""How much of a non-2xx answer's body is read to classify the error."""
_SNIPPET: Final = 200
_RETRYABLE_STATUS: Final = frozenset({408, 409, 429})
# Error types that no retry gets past even when the status (429) says "later".
_NOT_RETRYABLE: Final = frozenset(
    {"insufficient_quota", "billing_hard_limit_reached", "billing_not_active"}
)
_GZIP_MAGIC: Final = b"\x1f\x8b"
_WHOLE: Final = (bytes, bytearray, memoryview, str)

_ACCEPTED_SYNC: Final = (
    f"bytes or str (a whole body), an httpx or httpx2 streaming response, an SDK stream "
    f"({ACCEPTED}), or an iterable of bytes / str chunks or of parsed frames (dicts, "
    "objects with model_dump() or to_dict())"
)
_ACCEPTED_ASYNC: Final = (
    f"bytes or str (a whole body), an httpx or httpx2 streaming response, an SDK stream "
    f"({ACCEPTED}), or an async iterable of bytes / str chunks or of parsed frames (dicts, "
    "objects with model_dump() or to_dict())"
)
# Response headers that name an error's type when its body does not.
_ERROR_TYPE_HEADERS: Final = tuple(
    dict.fromkeys(r.error_type_header for r in APIS.values() if r.error_type_header)
)


def _nothing() -> None:
    return None


async def _nothing_async() -> None:
    return None


@dataclass(slots=True, kw_only=True)
class SyncSource:
    """A recognised sync source: ``open()`` once, iterate, ``close()`` whatever happens."""

    open: Callable[[], Iterator[Any]]
    close: Callable[[], None] = _nothing
    hints: dict[str, Any] = field(default_factory=dict)
    events: SdkEvents | None = None
    """Items are events an SDK decoded, read through this (``None``: chunks or frames)."""


@dataclass(slots=True, kw_only=True)
class AsyncSource:
    """A recognised async source: ``await open()`` once, iterate, ``await close()``."""

    open: Callable[[], Awaitable[AsyncIterator[Any]]]
    close: Callable[[], Awaitable[None]] = _nothing_async
    hints: dict[str, Any] = field(default_factory=dict)
    events: SdkEvents | None = None


class Run:
    """The normalizer of one adapter run, shared by the stream object and its loop.

    It exists so that the loop never refers back to the stream object (which lets a
    dropped stream be finalized at once), and so that a stream of parsed frames whose
    type names the provider gets a normalizer for that provider at the first frame.
    """

    __slots__ = ("normalizer", "options", "provider")

    def __init__(self, provider: str | None, options: dict[str, Any]) -> None:
        self.provider = provider
        self.options = options
        # Built now, so that bad options or an unknown provider fail before any reading.
        self.normalizer = StreamNormalizer(provider, **options)

    def start(self, provider: str | None) -> StreamNormalizer:
        """The normalizer for frames whose type names ``provider`` (nothing fed yet)."""
        if self.provider is None and provider is not None:
            self.provider = provider
            self.normalizer = StreamNormalizer(provider, **self.options)
        return self.normalizer


# -- recognising the source ------------------------------------------------------------


class SourceKind(Enum):
    """What a source is, as :func:`classify` tells it (the value says it in words)."""

    WHOLE = "a whole body"
    RESPONSE = "an HTTP response, or an SDK object holding one"
    STREAM_MANAGER = "an SDK stream manager not entered yet"
    MAPPING = "a dict: an SDK's response dict, or a complete body"
    SDK_EVENTS = "an SDK's iterator of events it decoded itself"
    MODEL = "one parsed object (a complete body or a single frame)"
    ITERABLE = "chunks or frames"
    OTHER = "nothing laminate reads"


@dataclass(frozen=True, slots=True)
class Classified:
    """A source's kind, with what its kind found in it."""

    kind: SourceKind
    response: Any = None
    """``RESPONSE``: the HTTP response to read."""
    items: Any = None
    """``MAPPING``: the iterator of events the SDK's response dict holds (``None``: none)."""
    events: SdkEvents | None = None
    """``MAPPING``, ``SDK_EVENTS``: how the SDK's events are read."""


def classify(obj: object) -> Classified:
    """What ``obj`` is: the one ordered table both colours (:func:`sync_source`,
    :func:`async_source`) read, so they ask the same questions in the same order. Each
    colour then accepts a kind or refuses it with its own note."""
    if isinstance(obj, _WHOLE):
        return Classified(SourceKind.WHOLE)
    response = _response_of(obj)
    if response is not None:
        return Classified(SourceKind.RESPONSE, response=response)
    if is_stream_manager(obj):
        return Classified(SourceKind.STREAM_MANAGER)
    if isinstance(obj, Mapping):
        found = events_in(obj)
        if found is None:
            return Classified(SourceKind.MAPPING)
        return Classified(SourceKind.MAPPING, items=found[0], events=found[1])
    events = event_stream(obj)
    if events is not None:
        return Classified(SourceKind.SDK_EVENTS, events=events)
    if _is_model(obj):
        return Classified(SourceKind.MODEL)
    if isinstance(obj, Iterable | AsyncIterable):
        return Classified(SourceKind.ITERABLE)
    return Classified(SourceKind.OTHER)


def sync_source(obj: object, caller: str) -> SyncSource:
    """What ``normalize_stream_sync`` / ``collect_sync`` can read of ``obj``."""
    found = classify(obj)
    match found.kind:
        case SourceKind.WHOLE if isinstance(obj, _WHOLE):
            whole = _whole(obj)
            return SyncSource(open=lambda: iter((whole,)))
        case SourceKind.RESPONSE:
            response = found.response
            _check_mode(obj, response, caller, want_async=False)
            _check_unread(obj, response)
            return SyncSource(
                open=lambda: _open_response_sync(response),
                close=lambda: _close_owner_sync(obj),
                hints=_hints(response),
            )
        case SourceKind.MAPPING if found.events is not None and isinstance(found.items, Iterable):
            return _iterable_sync(found.items, events=found.events)
        case SourceKind.SDK_EVENTS | SourceKind.ITERABLE if isinstance(obj, Iterable):
            return _iterable_sync(obj, events=found.events)
    note = _NOTES.get(found.kind)
    if note is None:
        note = "; it is async: use normalize_stream() or collect()" if _is_async(obj) else ""
    raise _wrong_type(caller, obj, _ACCEPTED_SYNC, note)


def async_source(obj: object, caller: str) -> AsyncSource:
    """What ``normalize_stream`` / ``collect`` can read of ``obj``."""
    found = classify(obj)
    match found.kind:
        case SourceKind.WHOLE if isinstance(obj, _WHOLE):
            whole = _whole(obj)
            return AsyncSource(open=lambda: _opened(_AsyncItems(iter((whole,)))))
        case SourceKind.RESPONSE:
            response = found.response
            _check_mode(obj, response, caller, want_async=True)
            _check_unread(obj, response)
            return AsyncSource(
                open=lambda: _open_response_async(response),
                close=lambda: _close_owner_async(obj),
                hints=_hints(response),
            )
        case SourceKind.MAPPING if found.events is not None and isinstance(
            found.items, AsyncIterable
        ):
            return _iterable_async(found.items, events=found.events)
        case SourceKind.SDK_EVENTS | SourceKind.ITERABLE if isinstance(obj, AsyncIterable):
            return _iterable_async(obj, events=found.events)
        case SourceKind.ITERABLE if isinstance(obj, list | tuple):
            # Already in memory: iterating it cannot block the event loop.
            items = obj
            return AsyncSource(open=lambda: _opened(_AsyncItems(iter(items))))
    if found.events is not None:  # a sync iterator of an SDK's events
        note = found.events.sync_note
    elif found.kind is SourceKind.ITERABLE:
        note = _SYNC_ITERABLE_NOTE
    else:
        note = _NOTES.get(found.kind, "")
    raise _wrong_type(caller, obj, _ACCEPTED_ASYNC, note)


_MANAGER_NOTE: Final = (
    "; enter it first (`with client.messages.stream(...) as stream:`) and pass the stream"
)
_MAPPING_NOTE: Final = (
    "; a dict is one complete body: use laminate.normalize() (a stream of parsed frames "
    "is an iterable of dicts)"
)
_MODEL_NOTE: Final = (
    "; one parsed object is a complete body or a single frame: use laminate.normalize() "
    "for a complete body, or pass the whole stream"
)
_SYNC_ITERABLE_NOTE: Final = (
    "; it is a sync iterable, which would block the event loop: use normalize_stream_sync() "
    "or collect_sync(), or the SDK's async client"
)
# Why a kind is refused, in either colour.
_NOTES: Final = {
    SourceKind.STREAM_MANAGER: _MANAGER_NOTE,
    SourceKind.MAPPING: _MAPPING_NOTE,
    SourceKind.MODEL: _MODEL_NOTE,
}


def _wrong_type(caller: str, obj: object, accepted: str, note: str) -> TypeError:
    return TypeError(f"{caller}() takes {accepted}; got {_describe(obj)}{note}")


def _describe(obj: object) -> str:
    kind = type(obj)
    module = module_of(obj)
    name = kind.__qualname__ if module in ("builtins", "") else f"{module}.{kind.__qualname__}"
    if obj is None or isinstance(obj, int | float | bool):
        return f"{name} ({obj!r})"
    if isinstance(obj, Mapping):
        keys = ", ".join(map(repr, list(obj)[:5]))
        return f"{name} with keys {keys}" if keys else f"empty {name}"
    return name


def _response_of(obj: object) -> Any | None:
    """The HTTP response to read: the one an SDK object wraps (its own ``iter_bytes`` may
    be async, as ``AsyncAPIResponse``'s is), else ``obj`` itself if it is one."""
    held = held_response(obj)
    if held is not None:
        return held
    return obj if looks_like_response(obj) else None


def _is_model(obj: object) -> bool:
    return callable(getattr(obj, "model_dump", None)) or callable(getattr(obj, "to_dict", None))


def _is_async(obj: object) -> bool:
    return isinstance(obj, AsyncIterable) or hasattr(obj, "aiter_bytes")


def _whole(obj: bytes | bytearray | memoryview | str) -> bytes | str:
    return obj if isinstance(obj, bytes | str) else bytes(obj)


def _hints(response: Any) -> dict[str, Any]:
    """URL and content type of a response, as detection hints."""
    hints: dict[str, Any] = {}
    url = getattr(response, "url", None)
    if url is not None:
        hints["url"] = str(url)
    headers = getattr(response, "headers", None)
    if headers is not None:
        hints["content_type"] = headers.get("content-type")
    return hints


def _check_mode(obj: object, response: Any, caller: str, *, want_async: bool) -> None:
    """A sync response given to the async adapters (or the reverse) is a wrong type."""
    stream = getattr(response, "stream", None)
    if stream is not None:
        can = hasattr(stream, "__aiter__") if want_async else hasattr(stream, "__iter__")
    else:
        can = hasattr(response, "aiter_bytes" if want_async else "iter_bytes")
    if can:
        return
    if want_async:
        note = "; it is synchronous: use normalize_stream_sync() or collect_sync()"
        raise _wrong_type(caller, obj, _ACCEPTED_ASYNC, note)
    note = "; it is asynchronous: use normalize_stream() or collect()"
    raise _wrong_type(caller, obj, _ACCEPTED_SYNC, note)


def _check_unread(obj: object, response: Any) -> None:
    # httpx keeps a body that was loaded whole (`_content`) and serves it again; a body
    # that was iterated is gone.
    if getattr(response, "is_stream_consumed", False) and not hasattr(response, "_content"):
        raise ValueError(
            f"the response behind {_describe(obj)} has already been read (iterated): "
            "hand the stream to laminate before reading from it"
        )


# -- responses ---------------------------------------------------------------------------


def _open_response_sync(response: Any) -> Iterator[Any]:
    chunks: Iterator[bytes] = response.iter_bytes()
    status = _error_status(response)
    if status is None:
        return chunks
    body = bytearray()
    for chunk in chunks:
        body += chunk
        if len(body) >= ERROR_BODY_CAP:
            break
    raise http_error(status, bytes(body[:ERROR_BODY_CAP]), getattr(response, "headers", None))


async def _open_response_async(response: Any) -> AsyncIterator[Any]:
    chunks: AsyncIterator[bytes] = response.aiter_bytes()
    status = _error_status(response)
    if status is None:
        return chunks
    body = bytearray()
    try:
        async for chunk in chunks:
            body += chunk
            if len(body) >= ERROR_BODY_CAP:
                break
    finally:
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()
    raise http_error(status, bytes(body[:ERROR_BODY_CAP]), getattr(response, "headers", None))


def _close_owner_sync(owner: Any) -> None:
    close = getattr(owner, "close", None)
    if close is not None:
        close()


async def _close_owner_async(owner: Any) -> None:
    close = getattr(owner, "aclose", None)
    if close is None:
        close = getattr(owner, "close", None)  # AsyncStream and AsyncAPIResponse: async close()
    if close is not None:
        result = close()
        if inspect.isawaitable(result):
            await result


def _error_status(response: Any) -> int | None:
    """The response's status when it is not 2xx (``None`` for 2xx, or no status)."""
    status = getattr(response, "status_code", None)
    if isinstance(status, int) and not isinstance(status, bool) and not 200 <= status <= 299:
        return status
    return None


def http_error(status: int, body: bytes, headers: Any = None) -> ProviderError:
    """The :class:`ProviderError` for a non-2xx answer with this (start of a) body."""
    text = body.decode("utf-8", "replace")
    snippet = text.strip()[:_SNIPPET]
    try:
        payload = json.loads(body) if body else None
    except (ValueError, RecursionError):
        payload = None
    error: ProviderError | None = None
    if isinstance(payload, Mapping) and (payload.get("error") or payload.get("type") == "error"):
        error = error_from_payload(payload)
    elif (aws := aws_error(payload, _error_type(headers))) is not None:
        error = aws  # an AWS error body: its type in `__type` or in a header
    elif (plain := plain_error(payload)) is not None:
        error = plain  # `{"detail": ...}`, Cohere's `{"id", "message"}`
    elif isinstance(payload, Mapping) and isinstance(payload.get("message"), str):
        # `{"message": ...}`: the type in a header when there is one.
        kind = _error_type(headers)
        error = ProviderError(
            payload["message"],
            error_type=kind or "http_error",
            retryable=is_retryable(kind, status) if kind else False,
            raw=payload,
        )
    if error is None:
        described = repr(snippet) if snippet else "an empty body"
        return ProviderError(
            f"HTTP {status}: {described}",
            error_type="http_error",
            retryable=_retryable_status(status),
            raw=text[:ERROR_BODY_CAP],
            status_code=status,
        )
    error.message = f"HTTP {status}: {error.message}"
    error.status_code = status
    if not error.retryable and error.error_type not in _NOT_RETRYABLE:
        code = payload.get("error") if isinstance(payload, Mapping) else None
        quota = isinstance(code, Mapping) and code.get("code") in _NOT_RETRYABLE
        error.retryable = _retryable_status(status) and not quota
    return error


# What an error is, and the HTTP status for it: answered by the server that had it (the
# mock server, playing a provider's answer), and by a gateway in front of that server
# (the proxy: a backend's failure is not the client's request's). The first row that
# matches; an error that carries its own status (a backend's non-2xx) keeps it, above.
_STATUSES: Final[tuple[tuple[Callable[[LaminateError], bool], int, int], ...]] = (
    (lambda e: isinstance(e, StreamTimeoutError), 504, 504),
    (lambda e: isinstance(e, ProviderError) and "rate" in e.error_type.lower(), 500, 429),
    (lambda e: isinstance(e, ProviderError) and e.retryable, 500, 502),
    (lambda e: isinstance(e, ProviderError), 400, 502),
    (lambda e: True, 500, 502),
)


def status_of(error: LaminateError, *, gateway: bool = False) -> int:
    """The HTTP status a server answers ``error`` with, before the first byte of its
    answer (``gateway``: a proxy, whose backend had the error)."""
    if isinstance(error, ProviderError) and error.status_code is not None:
        return error.status_code
    for matches, own, as_gateway in _STATUSES:
        if matches(error):
            return as_gateway if gateway else own
    raise AssertionError("the last row matches every error")  # pragma: no cover


def _retryable_status(status: int) -> bool:
    return status in _RETRYABLE_STATUS or 500 <= status <= 599


def _error_type(headers: Any) -> str:
    for name in _ERROR_TYPE_HEADERS if headers is not None else ():
        value = headers.get(name)
        if isinstance(value, str) and value:
            return value.split(":", 1)[0]
    return ""


# -- iterables --------------------------------------------------------------------------


def _iterable_sync(obj: Iterable[Any], *, events: SdkEvents | None) -> SyncSource:
    return SyncSource(open=lambda: iter(obj), close=lambda: _close_owner_sync(obj), events=events)


def _iterable_async(obj: AsyncIterable[Any], *, events: SdkEvents | None) -> AsyncSource:
    return AsyncSource(
        open=lambda: _opened(obj.__aiter__()),
        close=lambda: _close_owner_async(obj),
        events=events,
    )


async def _opened(items: AsyncIterator[Any]) -> AsyncIterator[Any]:
    return items


class _AsyncItems:
    """Items already in memory, handed out as an async iterator."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterator[Any]) -> None:
        self._items = items

    def __aiter__(self) -> _AsyncItems:
        return self

    async def __anext__(self) -> Any:
        try:
            return next(self._items)
        except StopIteration:
            raise StopAsyncIteration from None


# -- reading -----------------------------------------------------------------------------


def first_reader(first: Any, run: Run, *, events: SdkEvents | None) -> Callable[[Any], list[Event]]:
    """The function that turns each item into events, chosen by the first item."""
    if events is not None:
        frame = events.frame
        normalizer = run.start(frame(first)[2])

        def read_event(item: Any) -> list[Event]:
            payload, event, _ = frame(item)
            return normalizer.feed_payload(payload, event=event)

        return read_event
    if isinstance(first, _WHOLE):
        if not isinstance(first, str) and bytes(first[:2]) == _GZIP_MAGIC:
            raise MalformedStreamError(
                "the body is gzip-compressed but the response did not say so (no "
                "Content-Encoding: gzip header), so it was not decompressed: decompress it "
                "(gzip.decompress) or fix the server's headers",
                offset=0,
                snippet=repr(bytes(first[:8])),
                partial=run.normalizer.snapshot(),
            )
        return run.normalizer.feed
    if not isinstance(first, Mapping) and not _is_model(first):
        raise TypeError(
            "a stream's items must be bytes or str chunks, or parsed frames (dicts, objects "
            f"with model_dump() or to_dict()); the first item is {_describe(first)}"
        )
    return run.start(provider_of(first)).feed_payload


def read_error(exc: Exception, normalizer: StreamNormalizer) -> LaminateError:
    """What an exception raised by the source while it was read becomes.

    An SDK that raised for an error frame (ollama's ``ResponseError``, google-genai's
    ``APIError``) gets that frame handed to the normalizer, so the error is the one the
    same bytes give; for a non-2xx answer it is the error :func:`http_error` gives.
    """
    if isinstance(exc, LaminateError):
        return exc
    error: LaminateError | None = sdk_error(exc)
    found = error_payload(exc) if error is None else None
    if found is not None:
        payload, status = found
        if status is not None:
            error = http_error(status, json.dumps(payload).encode())
        else:
            try:
                normalizer.feed_payload(payload)
            except LaminateError as from_frame:
                return from_frame
    if error is None and _is_timeout(exc):
        error = StreamTimeoutError(f"reading the stream timed out: {type(exc).__name__}: {exc}")
    if error is None:
        error = StreamReadError(f"reading the stream failed: {type(exc).__name__}: {exc}")
    if error.partial is None:
        error.partial = normalizer.snapshot()
    return error


def ends_answer(error: LaminateError, normalizer: StreamNormalizer) -> bool:
    """Whether a failed read (``error``) ends the answer rather than failing it: the
    transport broke or fell silent after the provider had said why it stopped, so only
    its terminal marker was still to come (contract §5)."""
    return type(error) in (StreamReadError, StreamTimeoutError) and normalizer.finished


def silence_error(seconds: float | None, normalizer: StreamNormalizer | None) -> StreamTimeoutError:
    """The error for an answer that sent nothing for ``seconds`` (with what
    ``normalizer`` read of it so far, when there is one)."""
    partial = normalizer.snapshot() if normalizer is not None else None
    return StreamTimeoutError(f"no bytes arrived for {seconds} s", partial=partial)


def _is_timeout(exc: Exception) -> bool:
    """A read that timed out: ``TimeoutError``, or a transport's own timeout (httpx and
    httpx2 raise ``ReadTimeout``, a ``TimeoutException``), told by duck typing."""
    if isinstance(exc, TimeoutError):
        return True
    return any(
        kind.__name__ in ("TimeoutException", "ReadTimeout", "ReadTimeoutError")
        for kind in type(exc).__mro__
    )


def is_empty(item: Any) -> bool:
    """An empty chunk carries nothing (and cannot tell what the items are)."""
    return isinstance(item, _WHOLE) and len(item) == 0
