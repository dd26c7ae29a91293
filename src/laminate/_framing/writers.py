"""The text framings written: one SSE event, one NDJSON line (the AWS binary event
stream's writer is :func:`~.eventstream.encode_message`). The stream writers of every API
build their bytes with these, so each framing is written in one place, beside its reader.
"""

from __future__ import annotations

__all__ = ["ndjson_line", "sse_data", "sse_event"]


def sse_event(event: str, payload: bytes) -> bytes:
    """One SSE event with an ``event:`` line. ``payload`` is one line of JSON."""
    return b"event: " + event.encode() + b"\ndata: " + payload + b"\n\n"


def sse_data(payload: bytes) -> bytes:
    """One SSE event with only a ``data:`` line."""
    return b"data: " + payload + b"\n\n"


def ndjson_line(payload: bytes) -> bytes:
    """One NDJSON line."""
    return payload + b"\n"
