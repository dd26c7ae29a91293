"""Framing: bytes in, frames out, with no knowledge of what the frames carry.

Every decoder has the same small interface: ``feed(bytes) -> list[Frame]``,
``feed_batched(bytes)`` (the same, with runs of regular frames as one :class:`Batch`),
``close() -> list[Frame]`` and ``bytes_seen``. :func:`choose_framing` picks one from the
first bytes, the content type and the framing the API declares; :func:`make_decoder`
builds it.
"""

from __future__ import annotations

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

__all__ = [
    "PRELUDE_SIZE",
    "Batch",
    "Decoder",
    "EventStreamDecoder",
    "Frame",
    "FramingKind",
    "JSONArrayDecoder",
    "NDJSONDecoder",
    "SSEDecoder",
    "choose_framing",
    "encode_message",
    "error_from_frame",
    "make_decoder",
]

FramingKind = Literal["sse", "ndjson", "json-array", "eventstream", "document"]

NDJSON_TYPES: Final = (
    "application/x-ndjson",
    "application/ndjson",
    "application/jsonl",
    "application/stream+json",
)
EVENTSTREAM_TYPE: Final = "application/vnd.amazon.eventstream"


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
    if content_type == EVENTSTREAM_TYPE or is_prelude(head[:PRELUDE_SIZE]):
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
        if content_type == "text/event-stream":
            return "sse"
        if content_type in NDJSON_TYPES:
            return "ndjson"
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
