"""The public surface of writing streams: ``StreamEncoder``, ``encode_stream[_sync]``,
``encode_response`` and ``media_type``.

``StreamEncoder`` is sans-IO, like ``StreamNormalizer`` in the other direction: events in,
bytes out, no I/O. It looks the target up once: a provider name finds its API record's
``encoder`` (each ``_apis/<name>/write_stream.py`` holds one writer), ``"ai-sdk"`` and
``"events"`` live here because they are not provider APIs. The async and sync shells are
thin loops over it, and close the event source when they stop early.
"""

from __future__ import annotations

import logging
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    Callable,
    Generator,
    Iterable,
    Mapping,
    Sequence,
)
from dataclasses import replace
from typing import Any, Final, Literal

from .._apis.registry import APIS, api
from .._apis.writer import Writer
from .._core.errors import LaminateError, UnknownProviderError
from .._core.events import Event
from .._core.response import ContentBlock, NormalizedResponse, Reasoning, Text, ToolUse, Unknown
from .._core.serialize import block_to_dict, response_to_dict
from .._framing import MEDIA_TYPES
from .ai_sdk import HEADERS as AI_SDK_HEADERS
from .ai_sdk import AISDKWriter
from .events import EventsWriter

__all__ = [
    "StreamEncoder",
    "encode_response",
    "encode_stream",
    "encode_stream_sync",
    "media_type",
    "targets",
]

# Targets that are not provider APIs: (writer factory, media type, extra headers).
_OWN: Final[Mapping[str, tuple[Callable[[], Writer], str, Mapping[str, str]]]] = {
    "ai-sdk": (AISDKWriter, MEDIA_TYPES["sse"], AI_SDK_HEADERS),
    "events": (EventsWriter, MEDIA_TYPES["ndjson"], {}),
}
log = logging.getLogger("laminate")

ErrorPolicy = Literal["raise", "write"]
"""What :func:`encode_stream` does when the events fail with a :class:`LaminateError`."""


def targets() -> tuple[str, ...]:
    """Every name :class:`StreamEncoder` accepts: the APIs with a stream writer, then
    ``"ai-sdk"`` and ``"events"``."""
    return (*(name for name, record in APIS.items() if record.encoder is not None), *_OWN)


def _unknown(target: str) -> UnknownProviderError:
    known = ", ".join(map(repr, targets()))
    return UnknownProviderError(
        f"no stream writer for {target!r}; targets are {known}", seen=str(target)
    )


def media_type(target: str) -> str:
    """The ``Content-Type`` of a ``target`` stream (``"text/event-stream"``,
    ``"application/x-ndjson"``, ...)."""
    own = _OWN.get(target)
    if own is not None:
        return own[1]
    record = APIS.get(target)
    if record is None or record.encoder is None:
        raise _unknown(target)
    return record.media_type or MEDIA_TYPES[record.framing]


class StreamEncoder:
    """Events in, one target's stream bytes out: ``encode(event)`` for each event,
    ``close()`` at the end. No I/O.

    ``target`` is a provider name (``"openai"``, ``"openai-responses"``, ``"anthropic"``,
    ``"ollama"``, and every other API with a writer), ``"ai-sdk"`` (the Vercel AI SDK's
    UI message stream) or ``"events"`` (laminate's events as JSON lines). Each delta
    event becomes bytes at once.
    """

    __slots__ = ("_writer", "headers", "media_type", "target")

    def __init__(self, target: str) -> None:
        own = _OWN.get(target)
        if own is not None:
            factory, kind, extra = own
        else:
            record = APIS.get(target)
            if record is None or record.encoder is None:
                raise _unknown(target)
            factory, extra = record.encoder, {}
            kind = record.media_type or MEDIA_TYPES[record.framing]
        self.target = target
        """The target's name."""
        self.media_type: str = kind
        """The stream's ``Content-Type``."""
        self.headers: dict[str, str] = {"content-type": kind, **extra}
        """The response headers a server sends with the stream (the content type, and
        ``x-vercel-ai-ui-message-stream: v1`` for ``"ai-sdk"``)."""
        self._writer: Writer = factory()

    def encode(self, event: Event) -> bytes:
        """The bytes for one event (empty when the target has nothing to say yet)."""
        return self._writer.event(event)

    def encode_all(self, events: Sequence[Event]) -> bytes:
        """The bytes for several events in order: what ``b"".join(map(encode, events))``
        gives, with less work per event (a run of text deltas is written at once)."""
        return self._writer.events(events)

    def close(self) -> bytes:
        """The bytes that end the stream. Events that stopped before ``ResponseDone``
        end with nothing more, so a reader sees the stream cut short, as it was."""
        return self._writer.close()

    def error(self, error: LaminateError) -> bytes:
        """The bytes that end the stream with ``error``, written as the target's own
        in-stream error, so a client of that API raises its usual error (the provider's
        message, and its type and retry advice where the target can carry them; see
        "Errors" in the writing-streams guide). Nothing is written after it."""
        return self._writer.error(error)


async def encode_stream(
    events: AsyncIterable[Event], target: str, *, errors: ErrorPolicy = "raise"
) -> AsyncGenerator[bytes, None]:
    """Encode an async stream of events (``normalize_stream(...)``, for one) as
    ``target``'s bytes, chunk by chunk. The source is closed when this generator is.

    ``errors`` says what happens when the events fail with a :class:`LaminateError` (a
    provider's error mid-stream, a connection that broke): ``"raise"`` (the default)
    raises it, and the bytes written so far end there; ``"write"`` writes it as the
    target's in-stream error (:meth:`StreamEncoder.error`), logs it on the ``laminate``
    logger and ends the stream, as a gateway wants its clients to see the failure.
    """
    encoder = _encoder_for(target, errors)
    try:
        try:
            async for event in events:
                data = encoder.encode(event)
                if data:
                    yield data
        except LaminateError as exc:
            yield _failed(encoder, exc, errors)  # raises it unless errors == "write"
            return
        tail = encoder.close()
        if tail:
            yield tail
    finally:
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()


def encode_stream_sync(
    events: Iterable[Event], target: str, *, errors: ErrorPolicy = "raise"
) -> Generator[bytes, None, None]:
    """The sync twin of :func:`encode_stream`."""
    encoder = _encoder_for(target, errors)
    try:
        try:
            yield from filter(None, map(encoder.encode, events))  # each event's bytes, if any
        except LaminateError as exc:
            yield _failed(encoder, exc, errors)  # raises it unless errors == "write"
            return
        tail = encoder.close()
        if tail:
            yield tail
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()


def _encoder_for(target: str, errors: str) -> StreamEncoder:
    if errors not in ("raise", "write"):
        raise ValueError(f'errors must be "raise" or "write", not {errors!r}')
    return StreamEncoder(target)


def _failed(encoder: StreamEncoder, error: LaminateError, errors: str) -> bytes:
    """The error raised again (``errors="raise"``), or written to the stream and logged,
    so that the source's failure is not lost."""
    if errors == "raise":
        raise error
    log.warning(
        "laminate: the answer failed (%s: %s); written to the %s stream",
        type(error).__name__,
        error,
        encoder.target,
    )
    return encoder.error(error)


def encode_response(response: NormalizedResponse, target: str) -> dict[str, Any]:
    """A complete (non-streaming) body of ``target`` for ``response``.

    A provider name gives that API's body (written by its record's ``write_body``);
    ``"events"`` gives ``response.to_dict()``; ``"ai-sdk"`` the finished UI message
    (``{"id", "role": "assistant", "parts": [...]}``). Opaque tokens go only to the
    provider the response came from.
    """
    if target == "events":
        return response_to_dict(response)
    if target == "ai-sdk":
        return _ui_message(for_target(response, target))
    record = api(target, wanted="body writer")
    return record.write_body(for_target(response, target))


def for_target(response: NormalizedResponse, target: str) -> NormalizedResponse:
    """``response`` without what must not leave its own provider: signatures, redacted
    reasoning and unknown blocks, when ``target`` is another API."""
    if target == response.provider:
        return response
    content = [b for b in map(_foreign, response.content) if b is not None]
    return replace(response, content=content)


def _foreign(block: ContentBlock) -> ContentBlock | None:
    match block:
        case Reasoning(redacted=True) | Unknown():
            return None
        case Reasoning(signature=str()) | Text(signature=str()) | ToolUse(signature=str()):
            return replace(block, signature=None)
    return block


def _ui_message(response: NormalizedResponse) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for block in response.content:
        data = block_to_dict(block)
        match data["type"]:
            case "text" | "reasoning" if data["text"]:
                parts.append({"type": data["type"], "text": data["text"], "state": "done"})
            case "tool_use":
                parts.append(
                    {
                        "type": f"tool-{data['name']}",
                        "toolCallId": data["id"],
                        "state": "input-available",
                        "input": data["input"],
                    }
                )
            case "invalid_tool_use":
                parts.append(
                    {
                        "type": f"tool-{data['name']}",
                        "toolCallId": data["id"],
                        "state": "output-error",
                        "input": data["raw_input"],
                        "errorText": data["reason"],
                    }
                )
    return {"id": response.id, "role": "assistant", "parts": parts}
