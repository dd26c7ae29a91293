"""The text framings written: one SSE event, one NDJSON line (the AWS binary event
stream's writer is :func:`~.eventstream.encode_message`). The stream writers of every API
build their bytes with these, so each framing is written in one place, beside its reader.

:class:`JSONArrayWriter` writes SSE events again as the elements of one streamed JSON
array: Gemini streams ``:streamGenerateContent`` as SSE only when asked with ``alt=sse``
(as google-genai does); without it, the same chunks come as one array whose elements
arrive one by one (``[{...}``, ``,\r\n{...}``, ``]``). The proxy writes its Gemini
stream so, and the mock server its SSE recordings.

:class:`ChunkWriter` writes SSE events again as AWS event stream ``chunk`` messages, each
payload ``{"bytes": "<base64 of the event's data>"}``: how an API's stream travels inside
AWS's binary framing (Anthropic's on Bedrock's InvokeModelWithResponseStream). The proxy
writes such a stream from the API's own.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Final

from .._core.errors import LaminateError
from .eventstream import encode_message
from .lines import Frame
from .sse import SSEDecoder

__all__ = ["ChunkWriter", "JSONArrayWriter", "ndjson_line", "sse_data", "sse_event"]

_CHUNK: Final = {
    ":event-type": "chunk",
    ":content-type": "application/json",
    ":message-type": "event",
}


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


StreamError = Callable[[str | None, str], tuple[str, str] | None]
"""For an SSE event (its name and its data), ``(exception name, message)`` when the event
is the stream's error, else ``None``."""


class ChunkWriter:
    """SSE events as AWS event stream messages: each event a ``chunk`` message whose JSON
    payload holds the event's data in base64 (``{"bytes": ...}``), an event that
    ``error`` names an ``exception`` message (``:exception-type``, ``{"message": ...}``),
    after which nothing more is written. :meth:`feed` takes the SSE stream in pieces split
    anywhere; bytes that are not SSE end the stream with a ``failure`` exception.
    Comments (an SSE keep-alive) write nothing."""

    __slots__ = ("_decoder", "_ended", "_error", "_failure")

    def __init__(self, error: StreamError, failure: str) -> None:
        self._decoder = SSEDecoder()
        self._error = error
        self._failure = failure
        self._ended = False

    def feed(self, sse: bytes) -> bytes:
        """The messages for the events these bytes complete."""
        if self._ended:
            return b""
        try:
            frames = self._decoder.feed(sse)
        except LaminateError as exc:
            return self._exception(self._failure, f"the stream cannot be read: {exc}")
        return self._messages(frames)

    def close(self) -> bytes:
        """The messages for an event the stream's end completes."""
        if self._ended:
            return b""
        try:
            frames = self._decoder.close()
        except LaminateError as exc:
            return self._exception(self._failure, f"the stream cannot be read: {exc}")
        return self._messages(frames)

    def _messages(self, frames: list[Frame]) -> bytes:
        out = []
        for frame in frames:
            failed = self._error(frame.event, frame.data)
            if failed is not None:
                out.append(self._exception(*failed))
                break
            data = base64.b64encode(frame.data.encode())
            out.append(encode_message(_CHUNK, b'{"bytes":"' + data + b'"}'))
        return b"".join(out)

    def _exception(self, name: str, message: str) -> bytes:
        self._ended = True
        headers = {
            ":exception-type": name,
            ":content-type": "application/json",
            ":message-type": "exception",
        }
        return encode_message(headers, json.dumps({"message": message}).encode())
