"""The stream writer for a client's request: its API's :class:`StreamEncoder`, or, when
the request asks its stream as one JSON array (``Http.streams_array``: Gemini without
``alt=sse``), that encoder's SSE events as the array's elements
(:class:`~laminate._framing.JSONArrayWriter`, as the mock server writes them too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .._core.errors import LaminateError
from .._core.events import Event
from .._encode.encoder import StreamEncoder
from .._framing import MEDIA_TYPES, JSONArrayWriter

__all__ = ["ClientWriter", "client_writer"]


class ClientWriter(Protocol):
    """What the proxy needs of the writer of a client's stream (:class:`StreamEncoder`'s
    methods)."""

    @property
    def media_type(self) -> str: ...
    def encode(self, event: Event) -> bytes: ...
    def encode_all(self, events: Sequence[Event]) -> bytes: ...
    def close(self) -> bytes: ...
    def error(self, error: LaminateError) -> bytes: ...


def client_writer(api: str, *, array: bool = False, begun: bool = False) -> ClientWriter:
    """The writer of ``api``'s stream; ``array``: as one JSON array (``begun``: whose
    first element was already sent, by the backend's own bytes)."""
    encoder = StreamEncoder(api)
    return _ArrayWriter(encoder, begun=begun) if array else encoder


class _ArrayWriter:
    """A stream encoder's SSE events as the elements of one streamed JSON array."""

    __slots__ = ("_array", "_encoder")

    media_type = MEDIA_TYPES["json-array"]

    def __init__(self, encoder: StreamEncoder, *, begun: bool) -> None:
        self._encoder = encoder
        self._array = JSONArrayWriter(begun=begun)

    def encode(self, event: Event) -> bytes:
        return b"".join(self._array.elements(self._encoder.encode(event)))

    def encode_all(self, events: Sequence[Event]) -> bytes:
        return b"".join(self._array.elements(self._encoder.encode_all(events)))

    def close(self) -> bytes:
        return b"".join(self._array.elements(self._encoder.close())) + self._array.end()

    def error(self, error: LaminateError) -> bytes:
        return b"".join(self._array.elements(self._encoder.error(error))) + self._array.end()
