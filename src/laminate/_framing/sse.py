"""Server-sent events (``text/event-stream``), read exactly as the WHATWG HTML standard's
"event stream interpretation" says, on the line splitter of ``lines.py``.

One deliberate difference at the end of the stream: an event whose blank line never came
is emitted, not discarded (:attr:`SSEDecoder.trailing` tells). Lines that can never matter
(a comment, a line of a field the standard does not know) are dropped as their bytes
arrive, whatever their length.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from operator import itemgetter
from typing import Final, overload

from .._core.errors import MalformedStreamError
from .lines import (
    _BATCH_FRAMES,
    _BATCH_MAX,
    Batch,
    Frame,
    _LineDecoder,
    _new,
    _offset,
    _snippet,
)

__all__ = ["SSEDecoder"]

_COLON = 58  # ord(":")
_BRACE = 123  # ord("{")
# The SSE fields that mean something; a line of any other field is ignored.
_KNOWN_FIELDS: Final = (b"data", b"event", b"id", b"retry")
# What cuts the "data:" or "data: " off a line.
_CUT: Final = {5: itemgetter(slice(5, None)), 6: itemgetter(slice(6, None))}


class SSEDecoder(_LineDecoder):
    """Incremental ``text/event-stream`` decoder (WHATWG HTML, "event stream interpretation").

    Differs from the standard in two places. At the end of the stream: an event whose
    closing blank line never came, or whose last line has no line end, is still emitted by
    :meth:`close`, which then sets :attr:`trailing`. ``trailing`` is also set when the
    stream ends inside a comment line or after field lines that make no event. And a
    line that starts with ``{`` between events (which the standard would read as a field
    of that odd name, and ignore) starts a JSON object written without ``data:``, as
    Google's servers write an error after the events: its lines up to one that starts
    with ``}`` are emitted as one frame, so the error is read, not dropped.
    """

    _drops_comments = True

    def __init__(self, *, max_frame_bytes: int = 16 * 1024 * 1024) -> None:
        super().__init__(max_frame_bytes=max_frame_bytes)
        self.retry: int | None = None
        """The last valid ``retry`` field, in milliseconds."""
        # The data buffer: the first data line, then any further ones.
        self._data: str | None = None
        self._more: list[str] = []
        self._size = 0  # bytes in the data buffer, line ends included
        self._event: str | None = None
        self._id: str | None = None
        self._start = -1  # offset of the current event's first field line, -1 before it
        self._stray: list[bytes] | None = None  # the lines of an object sent without data:
        self._stray_start = -1
        self._stray_size = 0

    def _resume(self, last_id: str | None) -> None:
        self._id = last_id

    def _take_lines(self, lines: list[bytes], pos: int, sep: int, out: list[Frame | Batch]) -> None:
        # One tight loop over local copies of the state: "data:" and blank lines are nearly
        # every line of an LLM stream.
        event = self._event
        last_id = self._id
        start = self._start
        data = self._data
        more = self._more
        size = self._size
        cap = self._max
        stray = self._stray is not None  # inside an object sent without data: (rare)
        here = pos
        line = b""
        try:
            for line in lines:
                here = pos
                pos += len(line) + sep
                if stray:
                    self._take_stray(line, here, out)
                    stray = self._stray is not None
                    continue
                if not line:
                    if data is not None:
                        if more:
                            data = "\n".join([data, *more])
                            more.clear()
                        out.append(_new(Frame, (event, data, start, last_id, None)))
                        data = None
                    event = None
                    start = -1
                    continue
                if line[:6] == b"data: ":
                    raw = line[6:]
                elif line[:7] == b"event: ":  # every Anthropic and Responses event has one
                    if start < 0:
                        start = here
                    event = line[7:].decode() or None
                    continue
                elif line[:5] == b"data:":
                    raw = line[5:]
                elif line[0] == _COLON:
                    continue
                elif line[0] == _BRACE and data is None and start < 0:
                    # No other test above takes a line that starts with "{".
                    self._take_stray(line, here, out)
                    stray = self._stray is not None
                    continue
                else:
                    if start < 0:
                        start = here
                    self._event = event
                    self._id = last_id
                    field_data = self._field(line)
                    event = self._event
                    last_id = self._id
                    if field_data is None:
                        continue
                    raw = field_data
                # The cap counts the event's raw lines, and a further line at least the
                # pointer that holds it, so that many tiny data lines stay within it too.
                if data is None:
                    size = len(line)
                    if start < 0:
                        start = here
                    data = raw.decode()
                else:
                    size += len(line) + 8
                    if size > cap:
                        raise self._data_too_big(start, data)
                    more.append(raw.decode())
        except UnicodeDecodeError:
            raise MalformedStreamError(
                "invalid UTF-8", offset=here, snippet=_snippet(line)
            ) from None
        self._event = event
        self._id = last_id
        self._start = start
        self._data = data
        self._size = size

    def _take_batch(
        self,
        lines: list[bytes],
        taken: int,
        pos: int,
        sep: int,
        out: list[Frame | Batch],
        *,
        alone: bool = False,
    ) -> int:
        if self._start >= 0 or self._stray is not None:
            if alone:
                return taken  # the long line ends an event that began earlier: line by line
            # Inside an event: its lines up to its blank line go one by one first.
            start = taken
            try:
                taken = lines.index(b"", taken) + 1
            except ValueError:
                return start
            self._take_lines(lines[start:taken], _offset(lines, start, pos, sep), sep, out)
            if self._start >= 0 or self._stray is not None:
                return taken
        first = lines[taken] if taken < len(lines) else b""
        period = 3 if first[:7] == b"event: " else 2 if first[:5] == b"data:" else 0
        count = min((len(lines) - taken) // period, 1 if alone else _BATCH_MAX) if period else 0
        if count < (1 if alone else _BATCH_FRAMES):
            return taken
        end = taken + count * period
        # Each event: [an event line,] a data line, a blank line; checked a field at a time
        # over every event, in C (a line never holds a raw LF).
        if any(lines[taken + period - 1 : end : period]):
            return taken
        data = lines[taken + period - 2 : end : period]
        prefix = b"data: " if data[0][:6] == b"data: " else b"data:"
        if not all(map(bytes.startswith, data, repeat(prefix))):
            return taken
        names = None
        if period == 3:
            heads = lines[taken:end:3]
            # A stream names few kinds of event: each kind is checked once.
            for head in set(heads):
                if not head.startswith(b"event: ") or not head.isascii():
                    return taken  # read, and checked, line by line
            names = _EventNames(heads)
        payloads = list(map(_CUT[len(prefix)], data))
        if payloads[-1] == b"[DONE]":  # OpenAI's last event: left to the line-by-line path
            payloads.pop()
            end -= period
        out.append(Batch(names, payloads, self._replayer(lines, taken, end, pos, sep)))
        return end

    def _replay_id(self) -> str | None:
        return self._id

    @staticmethod
    def frame_bytes(
        name: str | None, head: bytes, tail: bytes, line_end: bytes = b"\n"
    ) -> tuple[bytes, bytes]:
        """The bytes around the middle of an event named ``name`` whose data is ``head``,
        a middle without a line end, and ``tail``, written the plainest way (an ``event:``
        line unless ``name`` is ``None``, one ``data: `` line, a blank line, each line
        ending with ``line_end``, LF or CRLF): what the normalizer matches whole runs of
        events against (:meth:`skip`)."""
        event = b"" if name is None else b"event: " + name.encode() + line_end
        return event + b"data: " + head, tail + line_end + line_end

    @property
    def resting(self) -> bool:
        """Whether the bytes so far end with a whole event and nothing is held: the next
        bytes start an event, whatever came before."""
        return (
            self._start < 0
            and self._data is None
            and self._stray is None
            and not self._partial
            and self._head is None
            and not self._after_cr
            and not self._in_comment
            and self._error is None
            and not self._closed
        )

    def skip(self, size: int) -> None:
        """Count ``size`` bytes as read: whole events of :meth:`frame_bytes`, read by the
        caller, at rest (:attr:`resting`) before and after them. Such events change no
        state but the stream's offset (no ``id``, no ``retry``)."""
        self._seen += size

    def _take_stray(self, line: bytes, here: int, out: list[Frame | Batch]) -> None:
        """One line of a JSON object sent outside any event (see the class docstring)."""
        if self._stray is None:
            self._stray, self._stray_start, self._stray_size = [], here, 0
        self._stray.append(line)
        self._stray_size += len(line) + 1
        if self._stray_size > self._max:
            raise self._data_too_big(self._stray_start, self._stray[0].decode("utf-8", "replace"))
        if line[:1] == b"}" or (len(self._stray) == 1 and line.rstrip().endswith(b"}")):
            self._emit_stray(out)  # a pretty-printed object's last line, or a one-line one

    def _emit_stray(self, out: list[Frame | Batch]) -> None:
        lines, self._stray = self._stray or [], None
        raw = b"\n".join(lines)
        try:
            text = raw.decode()
        except UnicodeDecodeError:  # also at close, where no line's reader would catch it
            raise MalformedStreamError(
                "invalid UTF-8", offset=self._stray_start, snippet=_snippet(raw)
            ) from None
        out.append(_new(Frame, (None, text, self._stray_start, None, None)))

    def _field(self, line: bytes) -> bytes | None:
        """Apply a field other than ``data:``; return the data value of a bare ``data`` line."""
        name, _, value = line.decode().partition(":")
        if value[:1] == " ":
            value = value[1:]
        match name:
            case "data":  # "data" without a colon: a data line with an empty value
                return b""
            case "event":
                self._event = value or None
            case "id":
                if "\0" not in value:
                    self._id = value or None
            case "retry":
                digits = value.lstrip("0")
                # A delay of 10**18 ms is already absurd; longer digit strings are ignored
                # rather than converted (int() on huge strings is slow or refused).
                if value.isascii() and value.isdigit() and len(digits) <= 18:
                    self.retry = int(digits or "0")
            case _:
                pass  # unknown fields are ignored
        return None

    def _ignorable(self, line: bytes | bytearray, *, whole: bool = True) -> bool | None:
        # A comment, or a field the standard ignores: a name that is not one it knows.
        # The start of a line without its colon may still become a known name (at most
        # five bytes, so waiting for it stays bounded): ``None`` until it tells.
        if line[:1] == b":":
            return True
        if line[:1] == b"{" or self._stray is not None:
            return False  # part of a JSON object sent without data:
        colon = line.find(b":")
        if colon >= 0 or whole:
            return line[:colon] not in _KNOWN_FIELDS if colon >= 0 else line not in _KNOWN_FIELDS
        if any(name.startswith(line) for name in _KNOWN_FIELDS):
            return None
        return True

    def _data_too_big(self, start: int, first: str) -> MalformedStreamError:
        return MalformedStreamError(
            f"event data longer than max_frame_bytes ({self._max})",
            offset=start,
            snippet=_snippet(first),
        )

    def _line_too_long(self, pos: int, head: bytes) -> MalformedStreamError:
        # Report the event the line belongs to when one has started.
        return super()._line_too_long(pos if self._start < 0 else self._start, head)

    def _finish(self, tail: bytes, pos: int, out: list[Frame | Batch]) -> None:
        self._trailing = (
            bool(tail) or self._in_comment or self._start >= 0 or self._stray is not None
        )
        if self._stray is not None:
            if tail:
                self._take_stray(tail, pos, out)
            if self._stray is not None:
                self._emit_stray(out)  # cut short: the reader says it is not whole JSON
            return
        # The unterminated line counts as a line, then the event is dispatched as if the
        # closing blank line had come.
        lines = [tail, b""] if tail else [b""]
        self._take_lines(lines, pos, 1, out)


class _EventNames(Sequence[str | None]):
    """The event names of a batch's events (ASCII, checked when the batch was cut),
    decoded when asked for: most handlers read the type inside the payload. ``None`` for
    an empty one, as line by line."""

    __slots__ = ("_heads",)

    def __init__(self, heads: list[bytes]) -> None:
        self._heads = heads

    def __len__(self) -> int:
        return len(self._heads)

    @overload
    def __getitem__(self, index: int) -> str | None: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str | None]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str | None] | None:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self._heads[index][7:].decode() or None

    def count(self, value: object) -> int:
        """How many events are named ``value`` (``None``: have no name), counted over
        their lines' bytes, with no name decoded."""
        if value is None:
            return self._heads.count(b"event: ")
        if not isinstance(value, str):
            return super().count(value)
        if not value.isascii():  # every name is ASCII
            return 0
        return self._heads.count(b"event: " + value.encode())
