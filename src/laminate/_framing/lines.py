"""Framing: bytes in, frames out, with no knowledge of what the frames carry.

Two incremental decoders share one line splitter:

- :class:`SSEDecoder` interprets ``text/event-stream`` exactly as the WHATWG HTML
  standard's "event stream interpretation" says, with one deliberate difference at the
  end of the stream (an event whose blank line never came is emitted, not discarded;
  :attr:`~SSEDecoder.trailing` tells).
- :class:`NDJSONDecoder` emits one frame per non-blank line.

Lines end at CR, LF or CRLF (a CRLF split across two feeds is one line end). Bytes are
split into lines *before* decoding, so a multi-byte character split across feeds is
harmless and U+2028, U+2029 and U+0085 inside a JSON string are not line breaks (which is
why neither ``str.splitlines`` nor httpx's ``aiter_lines`` can be used). Each line is
decoded as strict UTF-8.

A line, or an event's accumulated data, longer than ``max_frame_bytes`` is an error as
soon as the limit is passed, so a line that never ends cannot grow memory without bound.
SSE lines that can never matter are exempt: a comment line, and a line over the cap whose
field is none the standard knows (an unknown field is ignored whatever its value), are
dropped as their bytes arrive, as the standard's own parsers do.

``feed_batched`` is ``feed`` for a reader that takes many frames at once: a run of events
(or lines) of the one regular shape LLM streams use comes out as one :class:`Batch`,
cut from the feed's lines in whole-list steps rather than line by line; anything else
comes out as frames, exactly as ``feed`` gives them.

Every error is a :class:`MalformedStreamError` carrying the byte offset (counted from the
very first byte, a byte order mark included) of the offending line or event. When a feed
yields frames before it meets bad bytes, those frames are returned and the error is
raised by the next call, so no frame that precedes the damage is lost.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from itertools import repeat
from operator import itemgetter
from typing import ClassVar, Final, NamedTuple, cast, overload

from .._core.errors import IncompleteStreamError, LaminateError, MalformedStreamError

__all__ = ["Batch", "Frame", "NDJSONDecoder", "SSEDecoder"]

_BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(rb"(\r\n|\r|\n)")
_COLON = 58  # ord(":")
_BRACE = 123  # ord("{")
_LF = 10
_CR = 13
_LINE_END_BYTES: Final = (_LF, _CR)
# The SSE fields that mean something; a line of any other field is ignored.
_KNOWN_FIELDS: Final = (b"data", b"event", b"id", b"retry")
# Building the tuple directly skips NamedTuple's Python-level __new__: the hot path
# creates one Frame per event.
_new = tuple.__new__


_SLICE: Final = 64 * 1024
# A feed's complete lines are cut into a Batch when they hold at least this many frames.
_BATCH_FRAMES: Final = 4
# ... and at most this many: the parsed frames of one batch are alive at once.
_BATCH_MAX: Final = 256
# What cuts the "data:" or "data: " off a line.
_CUT: Final = {5: itemgetter(slice(5, None)), 6: itemgetter(slice(6, None))}


class Frame(NamedTuple):
    """One SSE event or one NDJSON line."""

    event: str | None
    """The SSE ``event`` field; ``None`` when absent or empty, always ``None`` for NDJSON."""
    data: str
    """SSE: the ``data`` lines joined with ``"\\n"``; NDJSON: the line, stripped of blanks."""
    offset: int
    """Byte offset in the stream of the frame's first line (SSE: comments not counted)."""
    id: str | None
    """SSE: the last event id when the event was dispatched (``None`` if empty or never set)."""
    headers: Mapping[str, object] | None = None
    """A binary frame's headers (AWS eventstream); ``None`` for text framings."""


class Batch:
    """Many frames of the one regular shape nearly every LLM stream has, cut out of a
    feed in a few whole-buffer steps instead of line by line.

    The shape: SSE events of one ``data:`` line, each after one ``event:`` line or
    none, ended by a blank line; NDJSON lines holding one object each, with no blank
    around it; AWS event messages in a row with the same headers. ``payloads`` are the
    frames' data, as bytes, ``names`` each frame's event name (``None`` when the events
    have none). The decoder checks the shape of every line (or the CRC of every
    message), so a payload is never split or joined wrongly; whether each is UTF-8 and
    JSON is the reader's question. A reader that finds any payload it does not take
    (not UTF-8 or not JSON, a keep-alive, ``[DONE]``) asks :meth:`frames` for the same
    frames as :class:`Frame` objects, with the error that follows them if the bytes were
    bad, exactly as the line-by-line path gives them: results never depend on which path
    read the bytes.
    """

    __slots__ = ("_replay", "names", "payloads")

    def __init__(
        self,
        names: Sequence[str | None] | None,
        payloads: Sequence[bytes | bytearray],
        replay: Callable[[], tuple[list[Frame], LaminateError | None]],
    ) -> None:
        self.names = names
        self.payloads = payloads
        self._replay = replay

    def frames(self) -> tuple[list[Frame], LaminateError | None]:
        """The same frames, one by one, and the error the bytes hold after them, if any."""
        return self._replay()


def _snippet(text: bytes | str) -> str:
    """A short, printable excerpt for error messages."""
    if isinstance(text, bytes):
        text = text[:60].decode("utf-8", "replace")
    return repr(text[:60])[1:-1][:80]


def _check_whole_characters(tail: bytes) -> None:
    """Bytes that end inside a UTF-8 character were cut short, not malformed."""
    try:
        tail.decode()
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data":
            raise IncompleteStreamError("the stream ended inside a character") from None


class _LineDecoder:
    """Splits fed bytes into complete lines and hands them to ``_take``, in order.

    The partial line at the end of a feed is held until its end arrives; only the new
    bytes of each feed are searched, never the held ones.
    """

    # SSE drops lines that can never matter (comments, unknown fields) while they arrive.
    _drops_comments: ClassVar[bool] = False

    def __init__(self, *, max_frame_bytes: int = 16 * 1024 * 1024) -> None:
        self._batching = False  # for the feed being read: see feed_batched()
        self._max = max_frame_bytes
        # Within the cap even when every line of a slice is empty (a list entry each).
        self._slice = max(4096, min(_SLICE, max_frame_bytes // 16))
        self._seen = 0
        # Bytes held at the stream start until a BOM is ruled in or out; None once decided.
        self._head: bytes | None = b""
        self._partial = bytearray()
        # The last feed ended with CR: an LF opening the next feed completes that CRLF.
        self._after_cr = False
        # Inside a line that can never matter (a comment, an unknown field over the cap)
        # whose end has not arrived: its bytes are dropped.
        self._in_comment = False
        self._trailing = False
        self._closed = False
        self._error: MalformedStreamError | None = None

    @property
    def bytes_seen(self) -> int:
        """How many bytes were fed so far."""
        return self._seen

    @property
    def trailing(self) -> bool:
        """After :meth:`close`: whether the stream ended in an unterminated line or event."""
        return self._trailing

    @property
    def buffered(self) -> int:
        """How many bytes of an unfinished line are held (comment bytes are never held)."""
        return len(self._partial) + len(self._head or b"")

    def feed(self, data: bytes) -> list[Frame]:
        """Take the next bytes of the stream and return the frames they complete.

        Frames completed before bad bytes in ``data`` are returned, and the
        :class:`MalformedStreamError` is raised by the next call.
        """
        return cast("list[Frame]", self._feed_items(data, batching=False))

    def feed_batched(self, data: bytes) -> list[Frame | Batch]:
        """:meth:`feed`, but runs of frames of the regular shape come as one :class:`Batch`
        each (what the normalizer asks for once the provider is known)."""
        return self._feed_items(data, batching=True)

    def _feed_items(self, data: bytes, *, batching: bool) -> list[Frame | Batch]:
        self._batching = batching
        if self._error is not None or self._closed:
            self._check_usable()
            raise RuntimeError("feed() called after close()")
        out: list[Frame | Batch] = []
        if data:
            try:
                # A large feed is split in slices: splitting it into lines at once would
                # hold a list entry per line, many times the feed's size for blank lines.
                step = self._slice
                for start in range(0, len(data), step):
                    self._feed(data[start : start + step] if len(data) > step else data, out)
            except MalformedStreamError as exc:
                # Every later call raises it again.
                self._error = exc
                if not out:
                    raise
                # The frames before the bad bytes are delivered first; the error follows.
        return out

    def close(self) -> list[Frame]:
        """Signal the end of the stream and return the frames it completes."""
        self._check_usable()
        if self._closed:
            return []
        self._closed = True
        tail = bytes(self._partial) or self._head or b""
        self._head = None
        self._partial = bytearray()
        out: list[Frame | Batch] = []
        try:
            if len(tail) > self._max and not self._ignorable(tail):
                raise self._line_too_long(self._seen - len(tail), tail)
            _check_whole_characters(tail)
            # The tail is one line, processed before any frame is built, so an error here
            # never follows a frame of this call.
            self._finish(tail, self._seen - len(tail), out)
        except MalformedStreamError as exc:
            self._error = exc
            raise
        return only_frames(out)  # the last line, one by one

    def _check_usable(self) -> None:
        if self._error is not None:
            raise self._error

    def _take(
        self, lines: list[bytes], pos: int, sep: int, out: list[Frame | Batch], end: int = -1
    ) -> None:
        """Process complete lines; the first starts at ``pos``, each ends with ``sep`` bytes
        (``end``, if known, is where the last one ends)."""
        taken = 0
        if self._batching:
            while len(lines) - taken >= 2 * _BATCH_FRAMES:
                start = taken
                taken = self._take_batch(lines, taken, pos, sep, out)
                if taken == start:
                    break
            if taken:
                rest = lines[taken:]
                # Where the lines left start: counted back from the end when it is known
                # (over the few lines left, not the many taken).
                if end >= 0:
                    pos = end - sum(map(len, rest)) - len(rest) * sep
                else:
                    pos = _offset(lines, taken, pos, sep)
                lines = rest
        if lines:
            self._take_lines(lines, pos, sep, out)

    def _replayer(
        self, lines: list[bytes], start: int, stop: int, pos: int, sep: int
    ) -> Callable[[], tuple[list[Frame], LaminateError | None]]:
        """What gives a batch's frames one by one: ``lines[start:stop]`` (``lines[0]``
        at offset ``pos``) through ``_take_lines`` of a new decoder of this kind (a batch
        starts and ends between frames)."""
        where = (lines, start, stop, pos)
        return partial(_replay, type(self), self._max, self._replay_id(), where, sep=sep)

    def _replay_id(self) -> str | None:
        return None

    # Subclass hooks.

    def _take_lines(self, lines: list[bytes], pos: int, sep: int, out: list[Frame | Batch]) -> None:
        """Process complete lines one by one."""
        raise NotImplementedError

    def _take_batch(
        self, lines: list[bytes], taken: int, pos: int, sep: int, out: list[Frame | Batch]
    ) -> int:
        """Cut a :class:`Batch` from the lines from ``taken`` on (``lines[0]`` is at offset
        ``pos``), if they have its shape: the index of the first line left."""
        return taken

    def _finish(self, tail: bytes, pos: int, out: list[Frame | Batch]) -> None:
        """Process the unterminated last line (may be empty) at the end of the stream."""
        raise NotImplementedError

    def _line_too_long(self, pos: int, head: bytes) -> MalformedStreamError:
        # However the line was fed, cap + 1 of its bytes were seen: the snippet uses no more.
        return MalformedStreamError(
            f"line longer than max_frame_bytes ({self._max})",
            offset=pos,
            snippet=_snippet(head[: self._max + 1]),
        )

    # Splitting.

    def _feed(self, data: bytes, out: list[Frame | Batch]) -> None:
        pos = self._seen  # stream offset of data[0]
        self._seen = pos + len(data)
        if self._head is not None or self._after_cr or self._in_comment:
            data, pos = self._prelude(data, pos)
            if not data:
                return
        if b"\r" in data or len(data) + len(self._partial) > self._max:
            self._feed_slow(data, pos, out)
            return
        # The common case: LF line ends, and no line can be over the cap.
        lines = data.split(b"\n")
        tail = lines.pop()
        if lines:
            if self._partial:
                pos = self._join_held(lines, pos)
            self._take(lines, pos, 1, out, self._seen - len(tail))
        if tail:
            self._hold(tail)

    def _feed_slow(self, data: bytes, pos: int, out: list[Frame | Batch]) -> None:
        """Process a feed holding a CR, or long enough to hold a line over the cap."""
        take = self._take_capped if len(data) + len(self._partial) > self._max else self._take
        sep: int | list[int]
        if b"\r" in data:
            lines, sep, tail = self._split_cr(data)
        else:
            lines = data.split(b"\n")
            sep = 1
            tail = lines.pop()
        pos = self._join_held(lines, pos)
        if isinstance(sep, list):
            for line, width in zip(lines, sep, strict=True):
                take([line], pos, width, out)
                pos += len(line) + width
        else:
            take(lines, pos, sep, out)
        if tail:
            self._hold(tail)

    def _join_held(self, lines: list[bytes], pos: int) -> int:
        """Complete the held start of a line with the first new line; return its offset."""
        held = self._partial
        if held and lines:
            # The held bytes are copied only now, once.
            lines[0] = b"".join((held, lines[0]))
            self._partial = bytearray()
            return pos - len(held)
        return pos

    def _prelude(self, data: bytes, pos: int) -> tuple[bytes, int]:
        """Settle what the previous feed left open: a BOM, a CRLF, a comment line."""
        if self._head is not None:
            data, pos = self._strip_bom(data, pos)
        if self._after_cr and data:
            self._after_cr = False
            if data[0] == _LF:
                data = data[1:]
                pos += 1
        if self._in_comment and data:
            data, pos = self._skip_comment(data, pos)
        return data, pos

    def _strip_bom(self, data: bytes, pos: int) -> tuple[bytes, int]:
        """Remove a UTF-8 BOM at the stream start, even when it arrives in pieces."""
        held = self._head or b""
        if held:
            data = held + data
            pos -= len(held)
        if len(data) < len(_BOM) and _BOM.startswith(data):
            self._head = data
            return b"", pos
        self._head = None
        if data.startswith(_BOM):
            return data[len(_BOM) :], pos + len(_BOM)
        return data, pos

    def _skip_comment(self, data: bytes, pos: int) -> tuple[bytes, int]:
        """Drop the rest of a comment line; return what follows its line end."""
        lf = data.find(b"\n")
        cr = data.find(b"\r")
        if lf < 0 and cr < 0:
            return b"", pos
        self._in_comment = False
        if cr < 0 or 0 <= lf < cr:
            end = lf + 1
        elif cr + 1 == len(data):
            self._after_cr = True
            end = cr + 1
        else:
            end = cr + 2 if data[cr + 1] == _LF else cr + 1
        return data[end:], pos + end

    def _split_cr(self, data: bytes) -> tuple[list[bytes], int | list[int], bytes]:
        """Split a feed holding a CR: complete lines, their line end widths, the tail.

        CRLF everywhere (Gemini, sse-starlette) keeps a constant width; mixed line ends
        get one width per line.
        """
        ends_cr = data[-1] == _CR
        self._after_cr = ends_cr
        body = data[:-1] if ends_cr else data
        # Split at every line end at once (bytes.splitlines knows only CR, LF and CRLF:
        # quicker than a search for the two bytes), with the piece after the last one.
        lines = body.splitlines()
        if not body or body[-1] in _LINE_END_BYTES:
            lines.append(b"")
        sep: int | list[int]
        if len(body) - sum(map(len, lines)) == 2 * (len(lines) - 1):
            sep = 2  # every line end two bytes wide: CRLF
        else:
            pieces = _LINE_END.split(body)
            lines = pieces[::2]
            sep = [len(end) for end in pieces[1::2]]
            if ends_cr:
                sep.append(1)
        # A final CR ends the last line (the next feed may bring its LF).
        tail = b"" if ends_cr else lines.pop()
        return lines, sep, tail

    def _take_capped(
        self, lines: list[bytes], pos: int, sep: int, out: list[Frame | Batch]
    ) -> None:
        """``_take`` the lines, but raise at the first one over the cap, in stream order;
        one over the cap that can never matter is skipped."""
        cap = self._max
        first = 0
        for k, line in enumerate(lines):
            if len(line) <= cap:
                continue
            at = pos + sum(map(len, lines[first:k])) + (k - first) * sep
            self._take(lines[first:k], pos, sep, out)
            if not self._ignorable(line):
                raise self._line_too_long(at, line)
            first = k + 1
            pos = at + len(line) + sep
        self._take(lines[first:], pos, sep, out)

    def _is_comment(self, line: bytes | bytearray) -> bool:
        return self._drops_comments and line[:1] == b":"

    def _ignorable(self, line: bytes | bytearray, *, whole: bool = True) -> bool | None:
        """Whether a line over the cap (``whole``, or the start of one, held) can never
        matter; ``None`` while its start cannot tell yet."""
        return self._is_comment(line)

    def _hold(self, tail: bytes) -> None:
        """Keep the unterminated end of a feed until its line end arrives."""
        if not self._partial and self._is_comment(tail):
            self._in_comment = True
            return
        self._partial += tail
        if len(self._partial) > self._max:
            ignorable = self._ignorable(self._partial, whole=False)
            if ignorable is None:
                return
            if ignorable:
                self._partial = bytearray()
                self._in_comment = True
                return
            raise self._line_too_long(self._seen - len(self._partial), bytes(self._partial[:60]))


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
        self, lines: list[bytes], taken: int, pos: int, sep: int, out: list[Frame | Batch]
    ) -> int:
        if self._start >= 0 or self._stray is not None:
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
        count = min((len(lines) - taken) // period, _BATCH_MAX) if period else 0
        if count < _BATCH_FRAMES:
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


class NDJSONDecoder(_LineDecoder):
    """Incremental newline-delimited JSON splitter: one frame per non-blank line.

    The JSON is not parsed here. A final line without a line end is an ordinary last line
    (so :attr:`trailing` is always false). A leading UTF-8 BOM is dropped, as in SSE.
    """

    def _take_batch(
        self, lines: list[bytes], taken: int, pos: int, sep: int, out: list[Frame | Batch]
    ) -> int:
        # Every line one object: it starts with "{" and ends with "}", no blanks around.
        batch = lines[taken : taken + _BATCH_MAX]
        if not all(map(bytes.startswith, batch, repeat(b"{"))) or not all(
            map(bytes.endswith, batch, repeat(b"}"))
        ):
            return taken
        end = taken + len(batch)
        out.append(Batch(None, batch, self._replayer(lines, taken, end, pos, sep)))
        return end

    def _take_lines(self, lines: list[bytes], pos: int, sep: int, out: list[Frame | Batch]) -> None:
        here = pos
        line = b""
        try:
            for line in lines:
                here = pos
                pos += len(line) + sep
                text = line.strip(b" \t")
                if text:
                    out.append(_new(Frame, (None, text.decode(), here, None, None)))
        except UnicodeDecodeError:
            raise MalformedStreamError(
                "invalid UTF-8", offset=here, snippet=_snippet(line)
            ) from None

    def _finish(self, tail: bytes, pos: int, out: list[Frame | Batch]) -> None:
        if tail:
            self._take_lines([tail], pos, 0, out)


def _offset(lines: list[bytes], index: int, pos: int, sep: int) -> int:
    """The offset of ``lines[index]``, ``lines[0]`` being at ``pos``."""
    return pos + sum(map(len, lines[:index])) + index * sep


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


def _replay(
    kind: type[_LineDecoder],
    max_frame_bytes: int,
    last_id: str | None,
    where: tuple[list[bytes], int, int, int],
    *,
    sep: int,
) -> tuple[list[Frame], LaminateError | None]:
    lines, start, stop, pos = where
    decoder = kind(max_frame_bytes=max_frame_bytes)
    decoder._head = None  # past the stream's start: no byte order mark
    if isinstance(decoder, SSEDecoder):
        decoder._id = last_id
    out: list[Frame | Batch] = []
    error = None
    try:
        decoder._take_lines(lines[start:stop], _offset(lines, start, pos, sep), sep, out)
    except MalformedStreamError as exc:
        error = exc
    return only_frames(out), error


def only_frames(items: list[Frame | Batch]) -> list[Frame]:
    """What a decoder's feed() returns: frames only (it never batches)."""
    return [item for item in items if isinstance(item, Frame)]
