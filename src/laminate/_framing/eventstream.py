"""AWS ``application/vnd.amazon.eventstream``: an incremental decoder and a writer.

Bedrock's ConverseStream and InvokeModelWithResponseStream answer in this binary framing
(AWS docs, "Event stream encoding"). Each message is::

    total length (u32 BE) | headers length (u32 BE) | prelude CRC32 (u32 BE)
    headers | payload | message CRC32 (u32 BE, of every byte before it)

and each header is ``name length (u8) | name (UTF-8) | value type (u8) | value``.

Design, and why:

- The same shape as the line decoders (:mod:`.lines`): ``feed(bytes) -> list[Frame]``,
  ``feed_batched`` (event messages in a row as one :class:`~.lines.Batch`), ``close()``,
  byte offsets counted from the first byte, and frames completed before bad bytes
  returned first with the error raised by the next call. It is written here rather
  than taken from botocore, which laminate does not depend on at runtime.
- Linear time: fed bytes are appended to one buffer read from a position, and consumed
  bytes are dropped from its front once per feed (cheap for a ``bytearray``). A message's
  prelude is checked once, when its 12 bytes are there, and its length remembered; the
  rest of the message is only counted until it is complete, then CRC-checked once. The
  message CRC covers the prelude too: a prelude is checked against its own CRC when its
  message must be waited for (at once, before any wait) and when the message CRC fails
  (to say which part is bad); a message that arrived whole is checked by one CRC.
- Memory is bounded before it is spent: a prelude whose CRC fails, or whose lengths are
  impossible or over ``max_frame_bytes``, is an error as soon as its 12 bytes arrive, so
  a corrupt or hostile length (a NUL flood, a 4 GiB claim) never makes the decoder wait
  for, or hold, the body it announces.
- A frame is the existing :class:`~.lines.Frame`: ``event`` is what names the message
  (``:event-type``, ``:exception-type`` or ``:error-code``, by ``:message-type``),
  ``data`` the payload as strict UTF-8 (Bedrock sends JSON), ``headers`` every header.
  Header values are ``bool``, ``int`` (types 2 to 5), ``bytes``, ``str``, an aware UTC
  ``datetime`` (timestamps) and ``uuid.UUID``, so that :func:`encode_message` and the
  decoder round-trip.
- Speed: a stream repeats a handful of header sections byte for byte (one per event
  type), so each distinct section is read once and remembered (up to ``_HEADER_CACHE``
  of them; a stream whose headers vary, a ``:date`` or an id per message, is read anew
  each time past that), and the frames of one section share its headers, read-only.
  The section of the previous message is compared first (a slice, no hash): most
  messages repeat it. Messages are checked and cut through one ``memoryview`` of the
  buffer, without copying each message first. The CRC-32 is zlib's, or ISA-L's where the
  ``fast`` extra installed it and it is the quicker of the two on this machine (see
  :func:`_quicker`); ``LAMINATE_CRC=zlib`` or ``isal`` in the environment forces one.
"""

from __future__ import annotations

import json
import os
import struct
import uuid
import zlib
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from functools import partial
from itertools import repeat
from time import perf_counter_ns
from types import MappingProxyType
from typing import Final, Protocol, cast

from .._core.errors import IncompleteStreamError, LaminateError, MalformedStreamError, ProviderError
from .lines import _BATCH_MAX, Batch, Frame


class _Checksum(Protocol):
    def __call__(self, data: bytes | bytearray | memoryview, value: int = 0, /) -> int: ...


def _quicker(one: _Checksum, other: _Checksum) -> _Checksum:
    """Of two CRC-32 functions (which give the same values), the quicker here on a message
    of Bedrock's usual size, carried on from a start value as the decoder calls it: the
    best of five rounds of 32 calls each, the two in turn. ISA-L's is about three times
    as quick as zlib's on some CPUs, and slower below about 500 bytes on others (where
    zlib's uses the CPU's own CRC instructions); either way, about 0.1 ms here."""
    sample = bytes(range(200))
    best = [1 << 62, 1 << 62]
    for _ in range(5):
        for at, function in enumerate((one, other)):
            start = perf_counter_ns()
            for _ in range(32):
                function(sample, 12345)
            best[at] = min(best[at], perf_counter_ns() - start)
    return one if best[0] <= best[1] else other


_isal_crc32: _Checksum | None
try:
    # The `fast` extra: ISA-L's CRC-32, the same function as zlib's.
    from isal.isal_zlib import crc32 as _isal_crc32
except ImportError:
    _isal_crc32 = None

_FORCED = os.environ.get("LAMINATE_CRC", "").lower()
crc32: _Checksum = (
    zlib.crc32
    if _isal_crc32 is None or _FORCED == "zlib"
    else _isal_crc32
    if _FORCED == "isal"
    else _quicker(_isal_crc32, zlib.crc32)
)
"""The CRC-32 the decoder and the writer use (see the module)."""

_new = tuple.__new__  # builds a Frame without its keyword-handling constructor

__all__ = [
    "PRELUDE_SIZE",
    "EventStreamDecoder",
    "crc32",
    "encode_message",
    "error_from_frame",
    "exception_error",
    "is_exception_name",
    "is_prelude",
]

_PRELUDE: Final = struct.Struct(">III")  # total length, headers length, prelude CRC
_U32: Final = struct.Struct(">I")
# A message's CRC and the next message's total length, which follows it.
_CRC_AND_NEXT: Final = struct.Struct(">II")
_U16: Final = struct.Struct(">H")
_OVERHEAD: Final = 16  # prelude (12) + message CRC (4): the smallest possible message
PRELUDE_SIZE: Final = _PRELUDE.size
# Fixed-size header values: type -> layout. 8 is a timestamp in ms since the epoch.
_FIXED: Final = {
    2: struct.Struct(">b"),
    3: struct.Struct(">h"),
    4: struct.Struct(">i"),
    5: struct.Struct(">q"),
    8: struct.Struct(">q"),
}
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_HEADER_CACHE: Final = 64  # distinct header sections remembered per decoder
_BEGINNINGS: Final = 4096  # message lengths whose beginning's CRC a decoder remembers
# A batch ends once its messages hold this many bytes (or _BATCH_MAX messages): what is
# parsed and not yet handed over stays small whatever one feed holds.
_BATCH_BYTES: Final = 64 * 1024
_MS: Final = timedelta(milliseconds=1)
# The header that names a message, by its ``:message-type``.
_NAME_HEADER: Final = {
    "event": ":event-type",
    "exception": ":exception-type",
    "error": ":error-code",
}
# Bedrock's exceptions that a retry of the same request may get past (overload, throttling,
# a transient server or model fault); validation and access errors are not among them.
_RETRYABLE: Final = frozenset(
    {
        "throttlingException",
        "serviceUnavailableException",
        "modelStreamErrorException",
        "internalServerException",
        "modelNotReadyException",
    }
)


_Section = tuple[str | None, Mapping[str, object]]  # a header section as frames carry it
_NO_HEADERS: Final[Mapping[str, object]] = MappingProxyType({})


def _hex(data: bytes | bytearray) -> str:
    """A short excerpt of binary bytes for error messages: hex reads better than mojibake."""
    return data[:24].hex(" ")


class EventStreamDecoder:
    """Incremental decoder of AWS event stream messages: one :class:`Frame` per message."""

    __slots__ = (
        "_base",
        "_batching",
        "_begun",
        "_begun_headers",
        "_buf",
        "_closed",
        "_error",
        "_known",
        "_last",
        "_lent",
        "_max",
        "_need",
        "_pos",
        "_seen",
        "_trailing",
    )

    def __init__(self, *, max_frame_bytes: int = 16 * 1024 * 1024) -> None:
        if max_frame_bytes < _OVERHEAD:
            raise ValueError(f"max_frame_bytes must be at least {_OVERHEAD}")
        self._batching = False  # for the feed being read: see feed_batched()
        self._max = max_frame_bytes
        self._buf = bytearray()
        self._lent = False  # whether a batch was read from _buf (which then stays as it is)
        self._pos = 0  # where the next message starts in _buf
        self._base = 0  # stream offset of _buf[0]
        self._need = 0  # total length of the message at _pos once its prelude is checked
        self._seen = 0
        self._trailing = False
        self._closed = False
        self._error: LaminateError | None = None
        # Header sections already read: raw bytes -> (the frame's event name, headers).
        self._known: dict[bytes, _Section] = {}
        self._last: tuple[bytes, _Section] = (b"", (None, _NO_HEADERS))
        # The runs' message beginnings by length (see _run), for one header section.
        self._begun_headers = b""
        self._begun: dict[int, tuple[bytes, int]] = {}

    @property
    def bytes_seen(self) -> int:
        """How many bytes were fed so far."""
        return self._seen

    @property
    def buffered(self) -> int:
        """How many bytes of an unfinished message are held."""
        return len(self._buf) - self._pos

    @property
    def trailing(self) -> bool:
        """After :meth:`close`: whether the stream ended inside a message."""
        return self._trailing

    def feed(self, data: bytes) -> list[Frame]:
        """Take the next bytes of the stream and return the frames of the messages they end.

        Frames completed before bad bytes in ``data`` are returned, and the
        :class:`MalformedStreamError` is raised by the next call.
        """
        return cast("list[Frame]", self._feed_items(data, batching=False))

    def feed_batched(self, data: bytes) -> list[Frame | Batch]:
        """:meth:`feed`, but event messages in a row come as one :class:`Batch` each."""
        return self._feed_items(data, batching=True)

    def _feed_items(self, data: bytes, *, batching: bool) -> list[Frame | Batch]:
        self._batching = batching
        if self._error is not None:
            raise self._error
        if self._closed:
            raise RuntimeError("feed() called after close()")
        out: list[Frame | Batch] = []
        if not data:
            return out
        self._seen += len(data)
        self._buf += data
        try:
            self._parse(out)
        except MalformedStreamError as exc:
            self._error = exc  # every later call raises it again
            self._buf = bytearray()
            self._lent = False
            self._pos = 0
            if not out:
                raise
            return out
        # Drop what was consumed, so the buffer never holds more than one unfinished message.
        # A buffer that a batch was read from is left as it is (the batch's frames are read
        # again from it if asked for: see _flush); the rest, at most this feed's bytes, is
        # copied to a new one.
        if self._lent:
            self._lent = False
            self._buf = self._buf[self._pos :]
        else:
            del self._buf[: self._pos]
        self._base += self._pos
        self._pos = 0
        return out

    def close(self) -> list[Frame]:
        """Signal the end of the stream; raise :class:`IncompleteStreamError` inside a message.

        Every complete message was already returned by :meth:`feed`, so this returns ``[]``.
        """
        if self._error is not None:
            raise self._error
        if self._closed:
            return []
        self._closed = True
        held = self.buffered
        if held:
            self._trailing = True
            start = self._base + self._pos
            size = f"{held} of its {self._need} bytes" if self._need else f"{held} bytes"
            self._error = IncompleteStreamError(
                f"the stream ended inside a binary frame ({size}, at byte {start})"
            )
            self._buf = bytearray()
            self._pos = 0
            raise self._error
        return []

    def _parse(self, out: list[Frame | Batch]) -> None:
        # While batching, the payloads of event messages in a row make one Batch; those
        # read before an error are delivered before it.
        run = _Run(self._pos)
        with memoryview(self._buf) as view:  # released before feed() trims the buffer
            try:
                self._walk(view, out, run)
            except MalformedStreamError:
                self._flush(run, out)
                raise
            self._flush(run, out)

    def _walk(self, view: memoryview, out: list[Frame | Batch], run: _Run) -> None:
        buf = self._buf
        end = len(buf)
        pos = self._pos
        need = self._need
        base = self._base
        known = self._known
        last_raw, last = self._last
        last_size = len(last_raw)
        prelude_size = _PRELUDE.size
        limit = self._max
        unpack = _PRELUDE.unpack_from
        crc_of = _U32.unpack_from
        checksum = crc32
        append = out.append
        size = 0  # the headers length of the message at pos
        batching = self._batching
        is_event = last[1].get(":message-type", "event") == "event"
        try:
            while True:
                if not need:
                    if end - pos < prelude_size:
                        break
                    need, size, crc = unpack(buf, pos)
                    if need < _OVERHEAD or need > limit or size > need - _OVERHEAD:
                        self._check_prelude(buf, pos)  # raises, saying which
                    if checksum(view[pos : pos + 8]) != crc:
                        # Checked as soon as the prelude is here, so that a corrupt length
                        # never makes the decoder wait, and a bad prelude is an error
                        # however the bytes were split (whole, the message CRC may match).
                        self._check_prelude(buf, pos)
                elif end - pos >= need:
                    size = unpack(buf, pos)[1]  # its prelude came in an earlier feed
                if end - pos < need:
                    break
                crc_at = pos + need - 4
                if checksum(view[pos:crc_at]) != crc_of(buf, crc_at)[0]:
                    raise MalformedStreamError(
                        "message CRC mismatch",
                        offset=base + pos,
                        snippet=_hex(buf[pos : pos + min(need, 24)]),  # this message's only
                    )
                headers_at = pos + prelude_size
                payload_at = headers_at + size
                try:
                    if size != last_size or buf[headers_at:payload_at] != last_raw:
                        last_raw = bytes(view[headers_at:payload_at])
                        last_size = size
                        seen = known.get(last_raw)
                        last = self._headers(last_raw) if seen is None else seen
                        is_event = last[1].get(":message-type", "event") == "event"
                    raw = buf[payload_at:crc_at]
                    # A batch's payloads stay bytes: its reader checks their UTF-8.
                    to_batch = batching and is_event
                    data = "" if to_batch else raw.decode()
                except (ValueError, OverflowError) as exc:  # UnicodeDecodeError is a ValueError
                    raise MalformedStreamError(
                        f"bad event stream message: {exc}",
                        offset=base + pos,
                        snippet=_hex(buf[pos : pos + min(need, 24)]),
                    ) from None
                if not to_batch:
                    self._flush(run, out, pos)
                    append(_new(Frame, (last[0], data, base + pos, None, last[1])))
                    pos += need
                    need = 0
                    run.start = pos
                    continue
                pos += need
                need = 0
                pos = self._run(view, run, name=last[0], raw=raw, pos=pos, headers=last_raw)
                if len(run.payloads) == _BATCH_MAX or pos - run.start >= _BATCH_BYTES:
                    self._flush(run, out, pos)
        finally:
            self._pos = pos
            self._need = need
            self._last = last_raw, last

    def _run(
        self,
        view: memoryview,
        run: _Run,
        *,
        name: str | None,
        raw: bytearray,
        pos: int,
        headers: bytes,
    ) -> int:
        """The usual run: whole messages with the same headers as the one just read
        (whose payload is ``raw``), each checked by its CRC and cut, nothing else; where
        the first one left starts. Anything else (a message not all here, other headers,
        a bad CRC, a full batch) is left to the general loop, which says what is wrong;
        a payload that is not UTF-8 is the batch reader's to find (see :class:`Batch`).

        Messages of one length with the same headers begin with the same bytes (prelude
        and headers): that beginning is checked once per length (its prelude CRC, its
        headers) and kept with its CRC, so that each later message of that length is
        checked by one comparison of its beginning and its CRC carried on over its
        payload alone (CRC-32 continues over joined bytes)."""
        buf = self._buf
        end = min(len(buf), run.start + _BATCH_BYTES)  # a batch's messages: their bytes too
        limit = self._max
        unpack = _PRELUDE.unpack_from
        crc_of = _U32.unpack_from
        checksum = crc32
        payloads = run.payloads
        add = payloads.append
        add(raw)
        count = len(payloads)
        header_size = len(headers)
        after = _PRELUDE.size + header_size  # from a message's start to its payload
        smallest = _OVERHEAD + header_size
        last = end - smallest  # where the last message that can be here whole starts
        over = end - 3  # a message whose CRC starts here or after is not all here
        if self._begun_headers != headers or len(self._begun) > _BEGINNINGS:
            self._begun_headers = headers
            self._begun = {}
        begun = self._begun  # total length -> (its beginning's bytes, their CRC)
        beginning_of = begun.get
        crc_and_next = _CRC_AND_NEXT.unpack_from
        # The total length (the prelude's first field) of the message at pos: read with
        # the CRC of the one before it, in one call, from the second message on.
        need = crc_of(buf, pos)[0] if pos <= last else 0
        for _ in range(_BATCH_MAX - count):
            crc_at = pos + need - 4
            if crc_at >= over:
                break  # not all here (a length already met is at least ``smallest``)
            known = beginning_of(need)
            if known is None:
                if pos > last:
                    break  # no prelude here to read (the buffer's end: a length of 0)
                # A new length: its prelude and headers checked, and kept if right.
                need, size, prelude_crc = unpack(buf, pos)
                if size != header_size or not smallest <= need <= limit:
                    break
                if buf[pos + 12 : pos + after] != headers:  # a copy, yet quicker than startswith
                    break
                if checksum(view[pos : pos + 8]) != prelude_crc:
                    break
                beginning = bytes(view[pos : pos + after])
                known = begun[need] = beginning, checksum(beginning)
            elif buf[pos : pos + after] != known[0]:
                break
            payload = buf[pos + after : crc_at]
            try:
                sent, need = crc_and_next(buf, crc_at)
            except struct.error:  # the buffer ends with this message
                sent, need = crc_of(buf, crc_at)[0], 0
            if checksum(payload, known[1]) != sent:
                break
            add(payload)
            pos = crc_at + 4
        run.names.extend(repeat(name, len(payloads) - count + 1))
        return pos

    def _flush(self, run: _Run, out: list[Frame | Batch], start: int = -1) -> None:
        """The messages of the run so far, as one Batch (its frames, if asked for, come
        from their bytes read again: see :class:`~.lines.Batch`); the next run
        starts at ``start`` (default: where the buffer is read)."""
        stop = self._pos if start < 0 else start
        if run.payloads:
            at = run.start
            replay = partial(_replay, self._buf, at, stop, self._base + at, self._max)
            out.append(Batch(run.names, run.payloads, replay))
            self._lent = True
            run.names, run.payloads = [], []
        run.start = stop

    def _headers(self, raw: bytes) -> _Section:
        """Read one header section, and remember it while there are few distinct ones."""
        headers = _read_headers(raw, 0, len(raw))
        # AWS always sends ``:message-type``; a message without one is read as an event.
        kind = headers.get(":message-type", "event")
        name = headers.get(_NAME_HEADER[kind]) if kind in _NAME_HEADER else None
        seen = (name if isinstance(name, str) else None), MappingProxyType(headers)
        if len(self._known) < _HEADER_CACHE:
            self._known[raw] = seen
        return seen

    def _check_prelude(self, buf: bytearray, pos: int) -> int:
        """Validate the prelude at ``pos`` and return the message's total length."""
        total, headers, crc = _PRELUDE.unpack_from(buf, pos)
        if crc32(buf[pos : pos + 8]) != crc:
            problem = "prelude CRC mismatch (not an AWS event stream, or corrupted)"
        elif total < _OVERHEAD:
            problem = f"message length {total} is shorter than the {_OVERHEAD}-byte minimum"
        elif total > self._max:
            problem = f"message length {total} is over max_frame_bytes ({self._max})"
        elif headers > total - _OVERHEAD:
            problem = f"headers length {headers} does not fit in a {total}-byte message"
        else:
            return int(total)
        # The prelude alone: what follows it depends on how the bytes were split.
        raise MalformedStreamError(
            problem, offset=self._base + pos, snippet=_hex(buf[pos : pos + _PRELUDE.size])
        )


class _Run:
    """The event messages read in a row and not yet handed out as a Batch."""

    __slots__ = ("names", "payloads", "start")

    def __init__(self, start: int) -> None:
        self.start = start  # where the first of them starts in the buffer
        self.names: list[str | None] = []
        self.payloads: list[bytearray] = []


def _replay(
    buf: bytearray, start: int, stop: int, offset: int, max_frame_bytes: int
) -> tuple[list[Frame], LaminateError | None]:
    """A batch's messages (``buf[start:stop]``, at ``offset`` in the stream; the decoder
    never changes a buffer a batch was read from) as frames, one by one, and the error
    their bytes hold, if any."""
    decoder = EventStreamDecoder(max_frame_bytes=max_frame_bytes)
    decoder._base = decoder._seen = offset
    try:
        frames = decoder.feed(bytes(buf[start:stop]))
    except LaminateError as exc:
        return [], exc
    return frames, decoder._error


def _read_headers(msg: bytes, pos: int, end: int) -> dict[str, object]:
    """Read the headers in ``msg[pos:end]``; raise ``ValueError`` on anything malformed."""
    headers: dict[str, object] = {}
    while pos < end:
        # Every read is checked against ``end``: slicing past it would silently take
        # payload bytes instead.
        name_end = pos + 1 + msg[pos]
        if name_end >= end:
            raise ValueError("a header runs past the headers section")
        name = msg[pos + 1 : name_end].decode()
        kind = msg[name_end]
        pos = name_end + 1
        value: object
        if kind <= 1:
            value = kind == 0
        elif layout := _FIXED.get(kind):
            if pos + layout.size > end:
                raise ValueError(f"header {name!r} runs past the headers section")
            (number,) = layout.unpack_from(msg, pos)
            pos += layout.size
            value = _EPOCH + number * _MS if kind == 8 else number
        elif kind in (6, 7):
            size = _U16.unpack_from(msg, pos)[0] if pos + 2 <= end else end
            if pos + 2 + size > end:
                raise ValueError(f"header {name!r} runs past the headers section")
            raw = bytes(msg[pos + 2 : pos + 2 + size])
            pos += 2 + size
            value = raw.decode() if kind == 7 else raw
        elif kind == 9:
            if pos + 16 > end:
                raise ValueError(f"header {name!r} runs past the headers section")
            value = uuid.UUID(bytes=bytes(msg[pos : pos + 16]))
            pos += 16
        else:
            raise ValueError(f"header {name!r} has unknown value type {kind}")
        # The format allows each header once; a second one would make the frame ambiguous.
        if name in headers:
            raise ValueError(f"header {name!r} appears twice")
        headers[name] = value
    return headers


def is_prelude(head: bytes) -> bool:
    """Whether ``head`` is a whole, consistent message prelude (its CRC matches)."""
    if len(head) < _PRELUDE.size:
        return False
    total, headers, crc = _PRELUDE.unpack_from(head, 0)
    return bool(crc32(head[:8]) == crc and total >= _OVERHEAD + headers)


def error_from_frame(frame: Frame) -> ProviderError | None:
    """The :class:`ProviderError` an ``exception`` or ``error`` message carries, else ``None``.

    ``raw`` is the parsed JSON payload (its text when it is not JSON; the headers when it
    is empty, as for ``error`` messages, which say everything in headers).
    """
    headers = frame.headers
    kind = headers.get(":message-type") if headers is not None else None
    if headers is None or kind not in ("exception", "error"):
        return None
    error_type = headers.get(_NAME_HEADER[str(kind)])
    if not isinstance(error_type, str) or not error_type:
        error_type = str(kind)
    raw: object = dict(headers)
    if frame.data:
        try:
            raw = json.loads(frame.data)
        except ValueError:
            raw = frame.data
    return exception_error(error_type, raw, message=headers.get(":error-message"))


def is_exception_name(name: object) -> bool:
    """Whether an event name is one of the stream's exceptions (``throttlingException``,
    ``modelStreamErrorException``, ...): AWS names every one of them so."""
    return isinstance(name, str) and name.endswith("Exception")


def exception_error(name: str, payload: object, *, message: object = None) -> ProviderError:
    """The :class:`ProviderError` for the exception ``name`` and its parsed ``payload``.

    One classification for every path an exception takes: an exception message read from
    the bytes (:func:`error_from_frame`), the ``{name: payload}`` event boto3 hands over,
    and botocore's own exceptions. The error's message is the payload's ``message`` (or
    ``Message``), else ``message`` (what a header said), else a text payload, else the
    name; ``retryable`` is true for throttling, unavailability and transient server or
    model faults; ``raw`` is the payload.
    """
    text = payload.get("message", payload.get("Message")) if isinstance(payload, Mapping) else None
    if not isinstance(text, str):
        text = message
    if not isinstance(text, str):
        text = payload if isinstance(payload, str) and payload else name
    # AWS spells these in lower camel case; accept a capitalized first letter too.
    retryable = name[:1].lower() + name[1:] in _RETRYABLE
    return ProviderError(text, error_type=name, retryable=retryable, raw=payload)


def encode_message(headers: Mapping[str, object], payload: bytes) -> bytes:
    """One event stream message: ``str`` headers as type 7, ``bool`` 0/1, ``int`` 4 (5 when
    it needs 64 bits), ``bytes`` 6, ``uuid.UUID`` 9, an aware ``datetime`` 8."""
    head = b"".join(_encode_header(name, value) for name, value in headers.items())
    total = _OVERHEAD + len(head) + len(payload)
    if total > 0xFFFFFFFF:
        raise ValueError("an event stream message is limited to 4 GiB")
    prelude = struct.pack(">II", total, len(head))
    body = b"".join((prelude, _U32.pack(crc32(prelude)), head, payload))
    return body + _U32.pack(crc32(body))


def _encode_header(name: str, value: object) -> bytes:
    raw_name = name.encode()
    if len(raw_name) > 0xFF:
        raise ValueError(f"header name {name!r} is longer than 255 bytes")
    start = bytes((len(raw_name),)) + raw_name
    match value:
        case bool():  # before int: a bool is an int
            return start + (b"\x00" if value else b"\x01")
        case int() if -(2**31) <= value < 2**31:
            return start + b"\x04" + _FIXED[4].pack(value)
        case int():
            return start + b"\x05" + _FIXED[5].pack(value)  # struct refuses over 64 bits
        case str() | bytes() | bytearray():
            data = value.encode() if isinstance(value, str) else bytes(value)
            if len(data) > 0xFFFF:
                raise ValueError(f"header {name!r} is longer than 65535 bytes")
            kind = b"\x07" if isinstance(value, str) else b"\x06"
            return start + kind + _U16.pack(len(data)) + data
        case uuid.UUID():
            return start + b"\x09" + value.bytes
        case datetime():
            # A naive datetime would be read in the local time zone: refuse the guess.
            if value.utcoffset() is None:
                raise ValueError(f"header {name!r}: a timestamp needs an aware datetime")
            return start + b"\x08" + _FIXED[8].pack((value - _EPOCH) // _MS)
        case _:
            raise TypeError(f"header {name!r}: cannot encode a {type(value).__name__}")
