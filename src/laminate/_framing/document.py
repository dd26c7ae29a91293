"""One JSON document instead of a stream: a complete body, or an error body, sent where
a stream was asked for (or a pretty-printed body whose first line is not JSON).

:class:`BodyBuffer` gathers it up to a cap and parses it once, at the end; a text that
ends too soon is an :class:`IncompleteStreamError` (a retry may succeed), anything else
that is not one JSON object a :class:`MalformedStreamError` at the offset of its first
byte that is not white space.
"""

from __future__ import annotations

import json
from typing import Any

from .._core.errors import IncompleteStreamError, MalformedStreamError
from .._core.partial_json import ArgumentsView

__all__ = ["BodyBuffer", "snippet"]


def snippet(data: str) -> str:
    """A short excerpt for an error message."""
    return data if len(data) <= 80 else data[:77] + "..."


class BodyBuffer:
    """The bytes of one JSON document, up to ``max_bytes``."""

    __slots__ = ("_data", "_max")

    def __init__(self, max_bytes: int, data: bytes | bytearray = b"") -> None:
        self._max = max_bytes
        self._data = bytearray()
        self.add(data)

    def add(self, data: bytes | bytearray) -> None:
        """Take more bytes; past the cap, a :class:`MalformedStreamError`."""
        if len(self._data) + len(data) > self._max:
            # Its first bytes, whether they came in this feed or before: as many as any
            # way of splitting them has brought by now (more than the cap).
            shown = min(80, self._max + 1)
            head = (bytes(self._data[:shown]) + bytes(data[:shown]))[:shown]
            raise MalformedStreamError(
                f"the body is larger than max_frame_size ({self._max} bytes)",
                offset=0,
                snippet=snippet(head.decode("utf-8", "replace")),
            )
        self._data += data

    def fits(self, size: int) -> bool:
        """Whether ``size`` more bytes would still be under the cap."""
        return len(self._data) + size <= self._max

    def parse(self, *, provider_known: bool) -> dict[str, Any]:
        """The document's JSON object."""
        # The white space before it is not part of it: an error is at its first byte.
        raw = bytes(self._data).lstrip(b" \t\r\n")
        at = len(self._data) - len(raw)  # where it starts among the bytes held
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            if _cut_short(raw):
                raise IncompleteStreamError(
                    "the body ended inside its JSON document"
                    + ("" if provider_known else ", before the provider could be told")
                ) from exc
            raise MalformedStreamError(
                f"the body is neither a stream nor one JSON document: {exc}",
                offset=at,
                snippet=snippet(raw[:80].decode("utf-8", "replace")),
            ) from exc
        if not isinstance(data, dict):
            raise MalformedStreamError(
                "the body is JSON but not an object", offset=at, snippet=snippet(str(data))
            )
        return data


def _cut_short(raw: bytes) -> bool:
    """Whether ``raw``, which is not one whole JSON text, is the start of one that ended
    too soon, wherever the cut fell: inside a string, an escape (``\\u00``), a number, a
    literal (``nul``), a character's UTF-8 bytes, or between two tokens.

    Asked only once the parse failed, so the strict incremental scanner that reads tool
    arguments tells it, not the wording of the parser's error."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason != "unexpected end of data":
            return False
        text = raw[: exc.start].decode("utf-8")  # whole characters up to the cut one
    view = ArgumentsView()
    view.append(text)
    return view.error(0) is None and not view.is_complete(0, ())
