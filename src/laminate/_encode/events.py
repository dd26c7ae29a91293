"""laminate's own events as JSON lines (``event.to_dict()``, one per line).

The lossless target: ``laminate.event_from_dict`` reads each line back into an equal
event, and the last line holds the whole response (``response.to_dict()``), or, when the
answer failed, the error (``{"error": {"class", "message", ...}}``). It is what
``laminate replay`` prints, so a recorded run can be stored and replayed as events.

The three delta events, nearly every line of a long answer, are written from templates
(the same JSON ``event_to_dict`` gives, without building the dict); the rest through it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._apis.writer import dumps, json_bytes
from .._core.errors import LaminateError, ProviderError
from .._core.events import Event, ReasoningDelta, TextDelta, ToolInputDelta, WholeInputDelta
from .._core.serialize import event_to_dict

__all__ = ["EventsWriter"]


class EventsWriter:
    """Writes one JSON line per event. Every event is written as it is."""

    name = "events"

    def event(self, event: Event) -> bytes:
        """One JSON line."""
        cls = event.__class__
        if cls is TextDelta:
            head = b'{"event":"text_delta","index":%d,"text":' % event.index  # type: ignore[union-attr]
            return head + json_bytes(event.text) + b"}\n"  # type: ignore[union-attr]
        if cls is ToolInputDelta or cls is WholeInputDelta:
            head = b'{"event":"tool_input_delta","index":%d,"fragment":' % event.index  # type: ignore[union-attr]
            return head + json_bytes(event.fragment) + b"}\n"  # type: ignore[union-attr]
        if cls is ReasoningDelta:
            head = b'{"event":"reasoning_delta","index":%d,"text":' % event.index  # type: ignore[union-attr]
            return head + json_bytes(event.text) + b"}\n"  # type: ignore[union-attr]
        return dumps(event_to_dict(event)) + b"\n"

    def events(self, events: Sequence[Event]) -> bytes:
        """One JSON line per event, joined."""
        return b"".join(map(self.event, events))

    def close(self) -> bytes:
        """Nothing: the ``response_done`` line ends the stream."""
        return b""

    def error(self, error: LaminateError) -> bytes:
        """A last line ``{"error": {...}}`` (not an event: ``event_from_dict`` refuses it):
        the error's class, message and, for a :class:`ProviderError`, its type and retry
        advice."""
        if not isinstance(error, LaminateError):
            raise TypeError(f"error() takes a LaminateError, not {type(error).__name__}")
        fields: dict[str, object] = {"class": type(error).__name__, "message": str(error)}
        if isinstance(error, ProviderError):
            fields["error_type"] = error.error_type
            fields["retryable"] = error.retryable
        return dumps({"error": fields}) + b"\n"
