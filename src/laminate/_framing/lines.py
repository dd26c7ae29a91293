"""The line splitter that SSE (``sse.py``) and NDJSON (``ndjson.py``) are built on: bytes in,
lines out, with no knowledge of what the lines carry; and :class:`Frame` and
:class:`Batch`, what every decoder hands on.

Lines end at CR, LF or CRLF (a CRLF split across two feeds is one line end). Bytes are
split into lines *before* decoding, so a multi-byte character split across feeds is
harmless and U+2028, U+2029 and U+0085 inside a JSON string are not line breaks (which is
why neither ``str.splitlines`` nor httpx's ``aiter_lines`` can be used). Each line is
decoded as strict UTF-8.

A line, or an event's accumulated data, longer than ``max_frame_bytes`` is an error as
soon as the limit is passed, so a line that never ends cannot grow memory without bound
(a decoder may drop lines that can never matter instead: SSE's comments).

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
from typing import ClassVar, Final, NamedTuple, cast

from .._core.errors import IncompleteStreamError, LaminateError, MalformedStreamError

__all__ = ["Batch", "Frame", "only_frames"]

_BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(rb"(\r\n|\r|\n)")
_LF = 10
_CR = 13
_LINE_END_BYTES: Final = (_LF, _CR)
# Building the tuple directly skips NamedTuple's Python-level __new__: the hot path
# creates one Frame per event.
_new = tuple.__new__


_SLICE: Final = 64 * 1024
# A feed's complete lines are cut into a Batch when they hold at least this many frames.
_BATCH_FRAMES: Final = 4
# ... and at most this many: the parsed frames of one batch are alive at once.
_BATCH_MAX: Final = 256
# A line this long that a feed completes is a batch by itself when it has the shape of
# one: its payload stays bytes, for a reader that takes them (a whole tool call's
# hundreds of KB need no decoding to text first).
_LONG_LINE: Final = 8 * 1024


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

    A batch of one frame is a long line (``_LONG_LINE``) that a feed completed, cut out
    by itself so that its payload reaches the reader as bytes.
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
        # The unterminated line's pieces, one per feed, joined once when its end arrives
        # (growing one buffer instead copies it again and again), and their size.
        self._partial: list[bytes] = []
        self._held = 0
        # The last feed ended with CR: an LF opening the next feed completes that CRLF.
        self._after_cr = False
        # Inside a line that can never matter (a comment, an unknown field over the cap)
        # whose end has not arrived: its bytes are dropped.
        self._in_comment = False
        self._trailing = False
        self._closed = False
        self._error: MalformedStreamError | None = None

    def _resume(self, last_id: str | None) -> None:
        """Carry on after the lines before a replayed run: the last event id so far
        (only SSE keeps one)."""

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
        return self._held + len(self._head or b"")

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
        tail = b"".join(self._partial) or self._head or b""
        self._head = None
        self._partial, self._held = [], 0
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
            if lines and len(lines[0]) >= _LONG_LINE:
                taken = self._take_batch(lines, 0, pos, sep, out, alone=True)
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
        self,
        lines: list[bytes],
        taken: int,
        pos: int,
        sep: int,
        out: list[Frame | Batch],
        *,
        alone: bool = False,
    ) -> int:
        """Cut a :class:`Batch` from the lines from ``taken`` on (``lines[0]`` is at offset
        ``pos``), if they have its shape: the index of the first line left. ``alone``: a
        batch of the first frame only (a long line)."""
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
        if b"\r" in data or len(data) + self._held > self._max:
            self._feed_slow(data, pos, out)
            return
        # The common case: LF line ends, and no line can be over the cap.
        if b"\n" not in data:  # inside a long line (a search in C, quicker than a split)
            self._hold(data)
            return
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
        take = self._take_capped if len(data) + self._held > self._max else self._take
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
            held.append(lines[0])
            lines[0] = b"".join(held)
            size, self._partial, self._held = self._held, [], 0
            return pos - size
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
        self._partial.append(tail)
        self._held += len(tail)
        if self._held > self._max:
            start = self._start_of_held()
            ignorable = self._ignorable(start, whole=False)
            if ignorable is None:
                return
            if ignorable:
                self._partial, self._held = [], 0
                self._in_comment = True
                return
            raise self._line_too_long(self._seen - self._held, start[:60])

    def _start_of_held(self) -> bytes:
        """The first bytes held (at least 4 KiB of them, where there are): enough to tell
        what the line is."""
        size = 0
        for count, piece in enumerate(self._partial, 1):
            size += len(piece)
            if size >= 4096:
                return b"".join(self._partial[:count])
        return b"".join(self._partial)


def _offset(lines: list[bytes], index: int, pos: int, sep: int) -> int:
    """The offset of ``lines[index]``, ``lines[0]`` being at ``pos``."""
    return pos + sum(map(len, lines[:index])) + index * sep


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
    decoder._resume(last_id)
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
