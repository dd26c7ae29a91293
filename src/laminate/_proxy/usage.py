"""The token counts of an answer that passes through, found without reading all of it.

When the client and the backend speak the same API the proxy sends the backend's bytes
on as they are; it reads them only for the log line's token counts. Running the whole
normalizer over every frame for that costs more than relaying the bytes (about 5 µs a
frame), so :class:`UsageScan` looks for the few frames that carry usage instead:

- it holds the whole lines of an SSE or NDJSON answer as they came (views of its chunks,
  no copy; up to twice ``_TAIL`` bytes, past which all but the last ``_TAIL`` are looked
  at, once; an unfinished line up to the normalizer's frame cap) and, when
  the answer ends, searches them for the API's usage key (``"usage"``,
  ``"usageMetadata"``, ...) with ``bytes.rfind`` from the end, in C: the last frame that
  holds one is a few frames from the end, so a short answer costs one copy and a short
  search, not a search of every byte (which, for a key that starts with a quote, runs at
  under 2 GB/s);
- it keeps that last frame, and the first one for an API whose counts are split between
  the two (``Http.usage_split``: Anthropic's ``message_start`` and ``message_delta``;
  the other APIs' counts are final or cumulative in their last);
- an eventstream's messages are walked by their lengths as they arrive, each searched;
- at the end it reads the frames it kept with a normalizer of the API, so each API's
  usage is read by its own reader, as everywhere else.

A key inside a JSON string is written ``\\"usage\\"``, so text that mentions the word is
never taken for a usage frame. Frames are found by the stream's framing: lines for SSE
and NDJSON (an SSE event is fed on as its ``data:`` line), the length prefix of each
AWS eventstream message. A stream in any other framing (a streamed JSON array), or of
an API without a usage key here, is read whole, as before. The counts are for the log
only: a frame that cannot be read leaves them ``None``; the bytes the client gets never
depend on this.
"""

from __future__ import annotations

from typing import Final

from .._apis.registry import APIS
from .._core.errors import LaminateError
from .._core.response import Usage
from .._framing import framing_of
from .._normalizer import StreamNormalizer

__all__ = ["UsageScan"]

# The framings split here, named by the content type: the API's own framing only
# (Anthropic on Bedrock's invoke API wraps its frames in eventstream, base64).
_SPLIT: Final = frozenset({"sse", "ndjson", "eventstream"})
# The end of a passing SSE or NDJSON answer held as it came, looked at once it ends (up
# to twice as much is held before the older part is looked at).
_TAIL: Final = 256 * 1024
# The largest frame kept while it arrives (the normalizer's own cap): past it, no counts.
_MAX_FRAME: Final = 16 * 1024 * 1024
_PRELUDE: Final = 12  # an eventstream message's total length, headers length, CRC


class UsageScan:
    """Feed it an answer's chunks as they pass; :meth:`usage` is the usage it reports."""

    __slots__ = (
        "_api",
        "_buffer",
        "_failed",
        "_first",
        "_full",
        "_held",
        "_held_size",
        "_keys",
        "_last",
        "_mode",
        "_partial",
        "_partial_size",
        "_seen",
        "_split",
    )

    def __init__(self, api: str, content_type: str | None = None) -> None:
        self._api = api
        http = APIS[api].http
        keys = http.usage_keys if http is not None else ()
        self._keys: tuple[bytes, ...] = keys or ()
        self._split = http is not None and http.usage_split
        framing = framing_of(content_type)
        own = framing is not None and framing in _SPLIT and framing == APIS[api].framing
        self._mode: str = framing if own and keys and framing is not None else "full"
        # The whole normalizer, for a framing this scan does not split.
        self._full: StreamNormalizer | None = (
            StreamNormalizer(api, content_type=content_type) if self._mode == "full" else None
        )
        self._buffer = bytearray()  # an unfinished message (eventstream)
        # SSE and NDJSON: the whole lines not looked at yet, and the unfinished line.
        self._held: list[bytes | memoryview] = []
        self._held_size = 0
        self._partial: list[bytes | memoryview] = []
        self._partial_size = 0
        self._seen = 0  # bytes dropped from the buffer so far: frames' offsets
        self._first: tuple[int, bytes] | None = None
        self._last: tuple[int, bytes] | None = None
        self._failed: Usage | None = None  # what a failed read had found

    def feed(self, chunk: bytes) -> None:
        """Look at the next chunk of the answer."""
        if self._mode in ("sse", "ndjson"):
            self._lines(chunk)
        elif self._mode == "eventstream":
            self._messages(chunk)
        elif self._full is not None:
            try:
                self._full.feed(chunk)
            except LaminateError as exc:
                self._stop(exc)

    def usage(self) -> Usage | None:
        """The usage the answer reported (``None``: none that could be read)."""
        if self._mode == "off":
            return self._failed
        if self._full is not None:
            try:
                self._full.close()
            except LaminateError as exc:
                return _usage_of(exc)
            return self._full.snapshot().usage
        if self._mode in ("sse", "ndjson"):
            # The last line may end with the stream.
            self._held += [*self._partial, b"\n"]
            self._partial = []
            self._scan_held(keep=0)
        frames = [f for f in (self._first, self._last) if f is not None]
        if not frames:
            return None
        if len(frames) == 2 and frames[1][0] == frames[0][0]:
            frames.pop()
        reader = StreamNormalizer(self._api)
        try:
            for _, frame in frames:
                if self._mode == "eventstream":
                    reader.feed(frame)
                elif (payload := self._payload(frame)) is not None:
                    # The frame's JSON straight to the API's reader: no framing to find.
                    reader.feed_payload(payload)
        except LaminateError as exc:  # an error frame may follow the usage
            return _usage_of(exc)
        return reader.snapshot().usage

    def _payload(self, line: bytes) -> bytes | None:
        """A kept line's JSON: an NDJSON line, an SSE ``data:`` line's value (``None``:
        another SSE line, which holds no frame's data)."""
        if self._mode == "ndjson":
            return line
        if not line.startswith(b"data:"):
            return None
        return line[6:] if line[5:6] == b" " else line[5:]

    # -- framings ---------------------------------------------------------------------

    def _line(self, buffer: bytes | bytearray, at: int) -> tuple[int, bytes]:
        """The line that holds ``buffer[at]`` (a whole line), with its offset."""
        start = _line_start(buffer, at)
        ends = [e for e in (buffer.find(b"\n", at), buffer.find(b"\r", at)) if e != -1]
        return self._seen + start, bytes(buffer[start : min(ends)])

    def _stop(self, error: LaminateError | None = None) -> None:
        self._mode = "off"
        self._failed = _usage_of(error) if error is not None else None
        self._full = None
        self._first = self._last = None
        self._buffer = bytearray()
        self._held, self._held_size = [], 0
        self._partial, self._partial_size = [], 0

    def _lines(self, chunk: bytes) -> None:
        # The whole lines are kept as they came (views of the chunks, no copy) until more
        # than twice the tail is held: then all but the tail is looked at, once. A short
        # answer is looked at once it ends, from its end. Lines end in LF, CRLF or CR (SSE
        # allows each); a key split between two chunks is found once its line has ended.
        end = max(chunk.rfind(b"\n"), chunk.rfind(b"\r")) + 1
        if not end:  # inside a line: held until it ends, up to the cap
            self._partial.append(chunk)
            self._partial_size += len(chunk)
            if self._partial_size > _MAX_FRAME:
                self._stop()
            return
        view = memoryview(chunk)
        self._held += self._partial
        self._held.append(view[:end])
        self._held_size += self._partial_size + end
        self._partial = [view[end:]] if end < len(chunk) else []
        self._partial_size = len(chunk) - end
        if self._held_size > 2 * _TAIL:
            self._scan_held(keep=_TAIL)

    def _scan_held(self, keep: int) -> None:
        """Look at the held lines up to the first that ends in the last ``keep`` bytes
        (every held line ends, so one does)."""
        data = b"".join(self._held)
        start = max(len(data) - keep - 1, 0)
        end = min(e for e in (data.find(b"\n", start), data.find(b"\r", start)) if e >= 0) + 1
        if self._first is None and self._split:
            found = [at for key in self._keys if (at := _first_key(data, key, end)) != -1]
            if found:
                self._first = self._line(data, min(found))
        found = [at for key in self._keys if (at := _last_key(data, key, end)) != -1]
        if found:
            self._last = self._line(data, max(found))
        rest = data[end:]
        self._held = [rest] if rest else []
        self._held_size = len(rest)
        self._seen += end

    def _messages(self, chunk: bytes) -> None:
        buffer = self._buffer
        buffer += chunk
        size = len(buffer)
        at = 0
        # Each message starts with its total length (big-endian, 4 bytes): walking the
        # lengths finds the messages without reading them.
        while size - at >= _PRELUDE:
            total = int.from_bytes(buffer[at : at + 4], "big")
            if total < _PRELUDE + 4 or total > _MAX_FRAME:
                self._stop()  # not an eventstream after all: no counts
                return
            end = at + total
            if end > size:
                break
            for key in self._keys:
                found = buffer.find(key, at, end)
                if found != -1 and not _is_null(buffer, found + len(key)):
                    message = (self._seen + at, bytes(buffer[at:end]))
                    if self._first is None:
                        self._first = message
                    self._last = message
                    break
            at = end
        del buffer[:at]
        self._seen += at


def _first_key(buffer: bytes | bytearray, key: bytes, end: int) -> int:
    """Where ``key`` first holds a value in ``buffer[:end]`` (-1: nowhere)."""
    at = buffer.find(key, 0, end)
    while at != -1 and _is_null(buffer, at + len(key)):
        at = buffer.find(key, at + 1, end)
    return at


def _last_key(buffer: bytes | bytearray, key: bytes, end: int) -> int:
    """Where ``key`` last holds a value in ``buffer[:end]`` (-1: nowhere)."""
    at = buffer.rfind(key, 0, end)
    while at != -1 and _is_null(buffer, at + len(key)):
        at = buffer.rfind(key, 0, at)
    return at


def _is_null(buffer: bytes | bytearray, at: int) -> bool:
    """Whether the value after a key (at ``at``, before its colon) is ``null``: some
    servers send ``"usage": null`` in every chunk before the one that counts."""
    return buffer[at : at + 12].lstrip(b" \t:").startswith(b"null")


def _line_start(buffer: bytes | bytearray, at: int) -> int:
    return max(buffer.rfind(b"\n", 0, at), buffer.rfind(b"\r", 0, at)) + 1


def _usage_of(error: LaminateError) -> Usage | None:
    return error.partial.usage if error.partial is not None else None
