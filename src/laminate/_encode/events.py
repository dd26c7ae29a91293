"""laminate's own events as JSON lines (``event.to_dict()``, one per line).

The lossless target: ``laminate.event_from_dict`` reads each line back into an equal
event, and the last line holds the whole response (``response.to_dict()``). It is what
``laminate replay`` prints, so a recorded run can be stored and replayed as events.
"""

from __future__ import annotations

from .._core.events import Event
from .._core.serialize import event_to_dict
from .writer import dumps

__all__ = ["EventsWriter"]


class EventsWriter:
    """Writes one JSON line per event. Every event is written as it is."""

    name = "events"

    def event(self, event: Event) -> bytes:
        return dumps(event_to_dict(event)) + b"\n"

    def close(self) -> bytes:
        return b""
