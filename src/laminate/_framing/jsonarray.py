"""A JSON array written element by element: ``[{...},\\r\\n{...}]``.

Gemini's ``streamGenerateContent`` without ``alt=sse`` streams its chunks this way,
pretty-printed or compact. Each element is handed on as soon as its closing brace
arrives, never by waiting for the closing ``]``.

Design, and why:

- Only the structure is scanned, not parsed: one regular expression with possessive
  quantifiers skips, in C, everything that is not a bracket (whole strings included, so
  a ``}`` inside a string is not structure); Python sees only brackets. An element is
  parsed once, later, by whoever reads the frame.
- Scanning resumes where it stopped, also inside a string cut between two feeds, so no
  byte is scanned twice and a long string fed a byte at a time stays linear.
- Between elements only white space and one comma are allowed, and nothing but white
  space after the closing ``]``: anything else is a :class:`MalformedStreamError` with
  its byte offset, not something skipped.
- An element longer than ``max_frame_bytes`` is an error as soon as the limit is
  passed. Bytes that end inside an element are an :class:`IncompleteStreamError` at
  :meth:`close`; an array whose ``]`` never came, after whole elements, only sets
  :attr:`trailing` (the reader decides whether the answer was complete).
"""

from __future__ import annotations

import re
from typing import Final, cast

from .._core.errors import IncompleteStreamError, MalformedStreamError
from .lines import Batch, Frame

__all__ = ["JSONArrayDecoder"]

# Everything up to the next bracket or the next unfinished string, strings skipped whole.
_SKIP: Final = re.compile(rb'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+")*+', re.S)
# The rest of a string already opened: up to and including its closing quote, if here.
_IN_STRING: Final = re.compile(rb'(?:[^"\\]++|\\.)*+', re.S)
_BLANK: Final = b" \t\r\n"
_OPEN: Final = frozenset(b"[{")
_BOM: Final = b"\xef\xbb\xbf"


class JSONArrayDecoder:
    """Incremental decoder: ``feed(bytes) -> list[Frame]``, one frame per element.

    ``Frame.data`` is the element's JSON text; ``event`` and ``id`` are ``None``;
    ``offset`` is the byte offset of the element's first byte.
    """

    def __init__(self, *, max_frame_bytes: int = 16 * 1024 * 1024) -> None:
        self._max = max_frame_bytes
        self._buf = bytearray()
        self._base = 0  # stream offset of self._buf[0]
        self._pos = 0  # where scanning resumes in self._buf
        self._depth = 0
        self._in_string = False
        self._start = -1  # where the current element starts in self._buf, -1 between
        self._gap_from = 0  # where the bytes between elements start
        self._opened = False  # the array's `[` was seen
        self._ended = False  # the array's `]` was seen
        self._count = 0
        self._seen = 0
        self._trailing = False
        self._closed = False
        self._error: MalformedStreamError | None = None

    @property
    def bytes_seen(self) -> int:
        """How many bytes were fed so far."""
        return self._seen

    @property
    def trailing(self) -> bool:
        """After :meth:`close`: whether the array's closing ``]`` never came."""
        return self._trailing

    @property
    def buffered(self) -> int:
        """How many bytes of an unfinished element are held."""
        return len(self._buf)

    def feed(self, data: bytes) -> list[Frame]:
        """Take the next bytes and return the elements they complete.

        Elements completed before bad bytes are returned; the error is raised by the
        next call.
        """
        if self._error is not None:
            raise self._error
        if self._closed:
            raise RuntimeError("feed() called after close()")
        out: list[Frame] = []
        if not data:
            return out
        if not self._seen and data.startswith(_BOM):
            data = data[len(_BOM) :]
            self._base = len(_BOM)
        self._seen += len(data)
        self._buf += data
        try:
            self._scan(out)
        except MalformedStreamError as exc:
            self._error = exc
            if not out:
                raise
        return out

    def feed_batched(self, data: bytes) -> list[Frame | Batch]:
        """:meth:`feed`: a streamed array's elements always come one by one."""
        return cast("list[Frame | Batch]", self.feed(data))  # the same list, not a copy

    def close(self) -> list[Frame]:
        """The bytes ended: raise if they ended inside an element."""
        if self._error is not None:
            raise self._error
        if self._closed:
            return []
        self._closed = True
        if self._start >= 0 or self._in_string:
            raise IncompleteStreamError("the stream ended inside an element of the JSON array")
        if self._opened and not self._ended:
            tail = bytes(self._buf[self._gap_from :]).strip(_BLANK)
            if tail not in (b"", b","):
                raise self._bad(self._gap_from, "bytes between array elements")
            self._trailing = True
        return []

    # -- scanning -------------------------------------------------------------------------

    def _scan(self, out: list[Frame]) -> None:
        buf = self._buf
        pos = self._pos
        end = len(buf)
        while pos < end and not self._ended:
            if self._in_string:
                pos = _end_of(_IN_STRING, buf, pos)
                if pos >= end or buf[pos] == 92:  # 92: a backslash whose escaped byte is next
                    break
                self._in_string = False
                pos += 1  # the closing quote
                continue
            pos = _end_of(_SKIP, buf, pos)
            if pos >= end:
                break
            byte = buf[pos]
            if byte == 34:  # an opening quote whose string is not all here yet
                self._in_string = True
                pos += 1
                continue
            pos = self._bracket(buf, pos, byte, out) + 1
        self._pos = pos
        self._check_size()
        self._drop_consumed()

    def _bracket(self, buf: bytearray, pos: int, byte: int, out: list[Frame]) -> int:
        if byte in _OPEN:
            if self._depth == 0:
                self._open_array(buf, pos, byte)
            elif self._depth == 1:
                self._start_element(buf, pos, byte)
            self._depth += 1
            return pos
        self._depth -= 1
        if self._depth == 1:
            if byte != 125:  # `}`: the elements are objects
                raise self._bad(self._start, "an array element is not an object", pos + 1)
            self._end_element(buf, pos, out)
        elif self._depth == 0:
            self._end_array(buf, pos, byte)
        elif self._depth < 0:
            raise self._bad(pos, "a closing bracket outside the array", pos + 1)
        return pos

    def _open_array(self, buf: bytearray, pos: int, byte: int) -> None:
        if self._opened or byte != 91 or buf[:pos].strip(_BLANK):  # 91: `[`
            raise self._bad(pos, "not a JSON array of objects", pos + 1)
        self._opened = True
        self._gap_from = pos + 1

    def _start_element(self, buf: bytearray, pos: int, byte: int) -> None:
        if byte != 123:  # `{`
            raise self._bad(pos, "an array element is not an object", pos + 1)
        gap = bytes(buf[self._gap_from : pos]).strip(_BLANK)
        if gap != (b"," if self._count else b""):
            raise self._bad(self._gap_from, "bytes between array elements", pos + 1)
        self._start = pos

    def _end_element(self, buf: bytearray, pos: int, out: list[Frame]) -> None:
        start = self._start
        if pos + 1 - start > self._max:  # whole in one feed: the same limit as in pieces
            raise self._too_long()
        try:
            text = bytes(buf[start : pos + 1]).decode("utf-8")
        except UnicodeDecodeError:
            raise self._bad(start, "invalid UTF-8 in an array element", pos + 1) from None
        out.append(Frame(None, text, self._base + start, None))
        self._count += 1
        self._start = -1
        self._gap_from = pos + 1

    def _end_array(self, buf: bytearray, pos: int, byte: int) -> None:
        gap = bytes(buf[self._gap_from : pos]).strip(_BLANK)
        if byte != 93 or gap not in (b"", b","):  # 93: `]`
            raise self._bad(self._gap_from, "bytes between array elements", pos + 1)
        self._ended = True
        self._gap_from = pos + 1  # from here on only white space may follow

    def _check_size(self) -> None:
        if self._start >= 0 and self._pos - self._start > self._max:
            raise self._too_long()
        if self._ended and _strip(self._buf, self._gap_from):
            # Up to the first byte that is not white space: all a byte-at-a-time feed may
            # have given yet.
            first = len(self._buf) - len(self._buf[self._gap_from :].lstrip(_BLANK))
            raise self._bad(self._gap_from, "bytes after the end of the JSON array", first + 1)

    def _too_long(self) -> MalformedStreamError:
        message = f"an element longer than max_frame_bytes ({self._max})"
        return self._bad(self._start, message, self._start + self._max + 1)

    def _drop_consumed(self) -> None:
        keep = self._start if self._start >= 0 else self._gap_from
        if keep > 64 * 1024 or (keep and keep == len(self._buf)):
            del self._buf[:keep]
            self._base += keep
            self._pos -= keep
            self._gap_from -= keep
            if self._start >= 0:
                self._start -= keep

    def _bad(self, pos: int, what: str, seen: int | None = None) -> MalformedStreamError:
        """The error at ``pos``; its snippet ends at ``seen``, the byte that told (the
        bytes after it depend on how the stream was split), or at the end at close."""
        start = max(pos, 0)
        end = start + 60 if seen is None else min(start + 60, seen)
        snippet = bytes(self._buf[start:end]).decode("utf-8", "replace")
        return MalformedStreamError(what, offset=self._base + start, snippet=snippet)


def _strip(buf: bytearray, start: int) -> bytes:
    """The bytes of ``buf`` from ``start`` without white space (empty when all blank)."""
    return bytes(buf[start:]).strip(_BLANK)


def _end_of(pattern: re.Pattern[bytes], buf: bytearray, pos: int) -> int:
    """Where ``pattern`` (which also matches nothing) stops matching from ``pos``."""
    match = pattern.match(buf, pos)
    return match.end() if match is not None else pos
