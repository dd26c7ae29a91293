"""Telling the framing from the first bytes, before any decoder exists.

The first non-blank byte tells nearly everything (``{``, ``[``, a field name, a zero
byte); a binary prelude needs its first twelve bytes. Until then the bytes are held here:
whole blank lines are dropped as they come (and counted, so offsets stay true), so a flood
of them costs neither memory nor rescanning. Only new bytes are looked at.
"""

from __future__ import annotations

from typing import Final

from .._core.errors import IncompleteStreamError, MalformedStreamError
from . import FramingKind, choose_framing
from .eventstream import PRELUDE_SIZE

__all__ = ["Sniffer", "Tail"]

_BLANK: Final = b"\xef\xbb\xbf \t\r\n"  # a byte order mark counts as blank here
_TAIL: Final = 16
_SSE_FIELDS: Final = (b"data:", b"event:", b"id:", b"retry:", b":")


def _short_binary_head(head: bytes) -> bool:
    """Whether ``head`` may be the start of a binary prelude not yet all here."""
    return head[:1] == b"\x00" and len(head) < PRELUDE_SIZE


class Sniffer:
    """Holds the first bytes until :meth:`take` can name the framing."""

    __slots__ = ("_content_type", "_held", "_max", "offset_base")

    def __init__(self, *, max_frame_bytes: int, content_type: str) -> None:
        self._max = max_frame_bytes
        self._content_type = content_type
        self._held = bytearray()
        self.offset_base = 0
        """How many blank bytes were dropped before the first frame."""

    def take(
        self, data: bytes, declared: str | None, *, final: bool
    ) -> tuple[FramingKind, bytes] | None:
        """The framing and the bytes to hand its decoder, once they are known; ``None``
        while more bytes are needed. ``final``: no more bytes will come."""
        head = data.lstrip(_BLANK)
        held = self._held
        # A binary prelude is possible whatever the provider: the bytes tell the framing
        # (choose_framing), so its first twelve bytes are awaited in every case.
        if head and not held and not _short_binary_head(head):
            # The usual case: nothing held, no copy.
            return self._chosen(choose_framing(head, declared, self._content_type), data)
        held += data
        if not final and _short_binary_head(bytes(held).lstrip(_BLANK)):
            return None  # a binary prelude is told by its first 12 bytes: wait for them
        if not head and not final:
            # Whole blank lines carry nothing in any framing: dropped, and counted.
            cut = max(held.rfind(b"\n"), held.rfind(b"\r")) + 1
            if cut and not held[:cut].translate(None, b" \t\r\n"):
                self._refuse_long_blank_line(held[:cut])
                self.offset_base += cut
                del held[:cut]
            self._refuse_long_blank_line(held)  # the line not yet ended
            return None
        data, self._held = bytes(held), bytearray()
        head = data.lstrip(_BLANK)
        if final and _short_binary_head(head):
            raise IncompleteStreamError("the stream ended inside the prelude of its first frame")
        return self._chosen(choose_framing(head, declared, self._content_type), data)

    def _chosen(self, kind: FramingKind, data: bytes) -> tuple[FramingKind, bytes]:
        """``kind`` and the bytes for its decoder, without the blank lines before the
        first frame: they are dropped and counted, as they are when they come alone, so
        that the decoder reads the same bytes however they were split (a byte order mark
        after them is the decoder's first bytes either way)."""
        if data[:1] not in (b" ", b"\t", b"\r", b"\n"):
            return kind, data
        blank = len(data) - len(data.lstrip(b" \t\r\n"))
        self._refuse_long_blank_line(data[:blank])
        cut = max(data.rfind(b"\n", 0, blank), data.rfind(b"\r", 0, blank)) + 1
        self.offset_base += cut
        return kind, data[cut:]

    def _refuse_long_blank_line(self, blank: bytes | bytearray) -> None:
        """Refuse a line of white space longer than the cap before the first frame, ended
        or not, alone or before the frame's own line: held, it would grow without bound,
        so it is refused wherever it comes, and the same way however the bytes came."""
        if len(blank) <= self._max:
            return
        at = 0
        for line in blank.splitlines(keepends=True):
            if len(line.rstrip(b"\r\n")) > self._max:
                raise MalformedStreamError(
                    f"a blank line longer than max_frame_bytes ({self._max}) before the first"
                    " frame",
                    offset=at,
                    snippet="",
                )
            at += len(line)


class Tail:
    """The start of the last line that is not blank, and how many bytes came in all: at
    the end, whether bytes that gave no frame were cut inside a first one depends on it.
    Each feed is searched from its end, so this costs little."""

    __slots__ = ("_line_ended", "fed", "start")

    def __init__(self) -> None:
        self.start = b""
        """The first bytes of the last line that is not blank, finished or not."""
        self.fed = 0
        self._line_ended = True

    def note(self, data: bytes) -> None:
        """Take the next bytes."""
        if not data:
            return
        self.fed += len(data)
        body = data.rstrip(b"\r\n")
        if body:
            cut = max(body.rfind(b"\n"), body.rfind(b"\r"))
            if cut >= 0 or self._line_ended:
                self.start = body[cut + 1 : cut + 1 + _TAIL]
            elif len(self.start) < _TAIL:
                self.start += body[: _TAIL - len(self.start)]
        self._line_ended = data[-1] in b"\r\n"

    def blank(self) -> bool:
        """Whether every byte so far was white space (``False`` before any byte)."""
        return self.fed > 0 and not self.start.strip(b" \t")

    def cut_in_first_frame(self) -> bool:
        """Whether the last line may begin a stream whose first frame never finished: an
        SSE field (an event's ``event:`` line waits for its ``data:``), a JSON line, or a
        binary prelude."""
        start = self.start.lstrip(b"\xef\xbb\xbf \t")
        if not start:
            return False
        if start[:1] in (b"{", b"["):
            return True
        if start[:1] == b"\x00":
            return self.fed < PRELUDE_SIZE
        return any(start.startswith(f) or f.startswith(start) for f in _SSE_FIELDS)
