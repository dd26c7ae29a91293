"""The text framings written: one SSE event, one NDJSON line (the AWS binary event
stream's writer is :func:`~.eventstream.encode_message`). The stream writers of every API
build their bytes with these, so each framing is written in one place, beside its reader.

:class:`JSONArrayWriter` writes SSE events again as the elements of one streamed JSON
array: Gemini streams ``:streamGenerateContent`` as SSE only when asked with ``alt=sse``
(as google-genai does); without it, the same chunks come as one array whose elements
arrive one by one (``[{...}``, ``,\r\n{...}``, ``]``). The proxy writes its Gemini
stream so, and the mock server its SSE recordings.
"""

from __future__ import annotations

__all__ = ["JSONArrayWriter", "ndjson_line", "sse_data", "sse_event"]


def sse_event(event: str, payload: bytes) -> bytes:
    """One SSE event with an ``event:`` line. ``payload`` is one line of JSON."""
    return b"event: " + event.encode() + b"\ndata: " + payload + b"\n\n"


def sse_data(payload: bytes) -> bytes:
    """One SSE event with only a ``data:`` line."""
    return b"data: " + payload + b"\n\n"


def ndjson_line(payload: bytes) -> bytes:
    """One NDJSON line."""
    return payload + b"\n"


class JSONArrayWriter:
    """SSE events' ``data`` as the elements of one streamed JSON array: :meth:`elements`
    for each piece of the SSE stream, :meth:`end` once.

    Each ``data:`` line must hold one whole JSON value on one line, as the stream writers
    write them (bytes split lines on CR and LF only, never inside a JSON string, where
    they are escaped). ``begun``: the array's first element was already sent."""

    __slots__ = ("_begun",)

    def __init__(self, *, begun: bool = False) -> None:
        self._begun = begun

    def elements(self, sse: bytes) -> list[bytes]:
        """The array's next elements, one piece each (the first one opens the array)."""
        pieces = []
        for line in sse.splitlines():
            if line.startswith(b"data:"):
                pieces.append((b",\r\n" if self._begun else b"[") + line[5:].strip())
                self._begun = True
        return pieces

    def end(self) -> bytes:
        """The array's end (an empty array when no element was written)."""
        return b"]" if self._begun else b"[]"
