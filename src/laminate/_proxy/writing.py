"""The stream writer for a client's request: its API's :class:`StreamEncoder`, or, when
the request asks its stream as one JSON array, that encoder's frames as the array's
elements.

Gemini streams ``:streamGenerateContent`` as SSE only when asked with ``alt=sse`` (as
google-genai does); without it the answer is one JSON array whose elements arrive one by
one (``[{...}``, ``,\\r\\n{...}``, ``]``), as the mock server answers too. The registry
names that query (``Http.sse_query``); an API without one always streams in its own
framing.
"""

from __future__ import annotations

from typing import Final, Protocol

from .._apis.registry import APIS
from .._core.errors import LaminateError
from .._core.events import Event
from .._encode.encoder import StreamEncoder

__all__ = ["StreamWriter", "stream_writer"]

_ARRAY_TYPE: Final = "application/json; charset=UTF-8"  # what Gemini sends


class StreamWriter(Protocol):
    """What the proxy needs of a stream writer (:class:`StreamEncoder`'s methods)."""

    @property
    def media_type(self) -> str: ...
    def encode(self, event: Event) -> bytes: ...
    def close(self) -> bytes: ...
    def error(self, error: LaminateError) -> bytes: ...


def asks_array(api: str, query: str) -> bool:
    """Whether a stream request of ``api`` with this query string gets a JSON array."""
    http = APIS[api].http
    sse_query = http.sse_query if http is not None else None
    return sse_query is not None and sse_query not in query.split("&")


def stream_writer(api: str, *, array: bool = False, begun: bool = False) -> StreamWriter:
    """The writer of ``api``'s stream; ``array``: as one JSON array (``begun``: whose
    first element was already sent, by the backend's own bytes)."""
    encoder = StreamEncoder(api)
    return _ArrayWriter(encoder, begun=begun) if array else encoder


class _ArrayWriter:
    """An SSE writer's frames as the elements of one streamed JSON array."""

    __slots__ = ("_begun", "_encoder")

    media_type = _ARRAY_TYPE

    def __init__(self, encoder: StreamEncoder, *, begun: bool) -> None:
        self._encoder = encoder
        self._begun = begun

    def encode(self, event: Event) -> bytes:
        return self._elements(self._encoder.encode(event))

    def close(self) -> bytes:
        return self._elements(self._encoder.close()) + self._end()

    def error(self, error: LaminateError) -> bytes:
        return self._elements(self._encoder.error(error)) + self._end()

    def _elements(self, sse: bytes) -> bytes:
        pieces = []
        # The writer's `data:` lines hold compact JSON: one element each. (bytes split
        # lines on CR and LF only, never inside a JSON string, where they are escaped.)
        for line in sse.splitlines():
            if line.startswith(b"data:"):
                pieces.append((b",\r\n" if self._begun else b"[") + line[5:].strip())
                self._begun = True
        return b"".join(pieces)

    def _end(self) -> bytes:
        return b"]" if self._begun else b"[]"
