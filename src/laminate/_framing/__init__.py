"""Framing: bytes in, frames out, with no knowledge of what the frames carry.

Every decoder has the same small interface: ``feed(bytes) -> list[Frame]``,
``feed_batched(bytes)`` (the same, with runs of regular frames as one :class:`Batch`),
``close() -> list[Frame]`` and ``bytes_seen``. :func:`choose_framing` picks one from the
first bytes, the content type and the framing the API declares; :func:`make_decoder`
builds it.

Each framing's media type is named here once (:data:`MEDIA_TYPES`, the type a stream is
written with; :func:`framing_of`, the framing a received type names), for the readers,
the stream writers, the proxy and the mock server alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, Protocol

from .eventstream import (
    PRELUDE_SIZE,
    EventStreamDecoder,
    encode_message,
    error_from_frame,
    is_prelude,
)
from .jsonarray import JSONArrayDecoder
from .lines import Batch, Frame
from .ndjson import NDJSONDecoder
from .sse import SSEDecoder
from .writers import JSONArrayWriter

__all__ = [
    "MEDIA_TYPES",
    "PRELUDE_SIZE",
    "Batch",
    "Decoder",
    "EventStreamDecoder",
    "Frame",
    "Framing",
    "FramingKind",
    "JSONArrayDecoder",
    "JSONArrayWriter",
    "NDJSONDecoder",
    "SSEDecoder",
    "choose_framing",
    "encode_message",
    "error_from_frame",
    "framing_of",
    "make_decoder",
]

Framing = Literal["sse", "ndjson", "json-array", "eventstream"]
"""How a stream is framed (an API's own framing, in the registry)."""
FramingKind = Literal[Framing, "document"]
"""How a body is read: a stream's framing, or ``"document"``, one complete JSON body."""

MEDIA_TYPES: Final[Mapping[Framing, str]] = {
    "sse": "text/event-stream",
    "ndjson": "application/x-ndjson",
    # What Gemini sends its streamed array with.
    "json-array": "application/json; charset=UTF-8",
    "eventstream": "application/vnd.amazon.eventstream",
}
"""The ``Content-Type`` a stream of each framing is written with."""
# The media types that name a stream's framing when one is received, without their
# parameters: each framing's own (but the array's, which is any JSON body's), and the
# other names NDJSON goes by.
_FRAMING_OF: Final[Mapping[str, Framing]] = {
    **{kind: framing for framing, kind in MEDIA_TYPES.items() if framing != "json-array"},
    "application/ndjson": "ndjson",
    "application/jsonl": "ndjson",
    "application/stream+json": "ndjson",
}


def framing_of(content_type: str | None) -> Framing | None:
    """The stream framing a received ``Content-Type`` names (``None``: none)."""
    if not content_type:
        return None
    return _FRAMING_OF.get(content_type.partition(";")[0].strip().lower())


class Decoder(Protocol):
    """What the normalizer needs of a decoder."""

    @property
    def bytes_seen(self) -> int:
        """How many bytes were fed so far."""

    def feed(self, data: bytes) -> list[Frame]:
        """The frames the new bytes complete."""

    def feed_batched(self, data: bytes) -> list[Frame | Batch]:
        """The same, with runs of regular frames as one :class:`Batch` each."""

    def close(self) -> list[Frame]:
        """The frames the end of the bytes completes."""


def choose_framing(head: bytes, declared: str | None, content_type: str) -> FramingKind:
    """How a body is framed, from its first non-blank bytes (``head``), the framing the
    API declares (``None`` when the provider is not known) and the content type.

    ``"document"`` is one complete JSON body (or an error body) instead of a stream.
    """
    named = _FRAMING_OF.get(content_type)
    if named == "eventstream" or is_prelude(head[:PRELUDE_SIZE]):
        # An event stream message starts with its length (a zero byte for any frame under
        # 16 MiB) and a CRC of it: twelve bytes no text framing starts with.
        return "eventstream"
    first = head[:1]
    if first == b"[":
        return "json-array"  # no API streams or answers with a top-level array otherwise
    if first == b"{" and declared in ("sse", "json-array", "eventstream"):
        return "document"  # no such stream starts with a brace: a complete or error body
    if declared == "eventstream":
        return "eventstream"
    if declared is None:
        if named is not None:
            return named  # SSE or NDJSON: the event stream was taken above
        return "ndjson" if first == b"{" else "sse"
    return "ndjson" if declared == "ndjson" else "sse"


def make_decoder(kind: FramingKind, max_frame_bytes: int) -> Decoder:
    """A new decoder of ``kind`` (any but ``"document"``)."""
    match kind:
        case "sse":
            return SSEDecoder(max_frame_bytes=max_frame_bytes)
        case "ndjson":
            return NDJSONDecoder(max_frame_bytes=max_frame_bytes)
        case "json-array":
            return JSONArrayDecoder(max_frame_bytes=max_frame_bytes)
        case "eventstream":
            return EventStreamDecoder(max_frame_bytes=max_frame_bytes)
    raise ValueError(f"no stream decoder for {kind!r}")
