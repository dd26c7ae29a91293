"""The AWS event stream decoder and writer (``laminate._framing.eventstream``).

Binary fixtures are built with :func:`encode_message`, or, for what it refuses to write
(int8 and int16 headers, broken lengths), by :func:`_message` from raw header bytes. The
real Bedrock recordings are read in place from the shared folder and compared with
botocore's own reader.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import uuid
import zlib
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from laminate._core.errors import IncompleteStreamError, MalformedStreamError
from laminate._framing import eventstream
from laminate._framing.eventstream import EventStreamDecoder, encode_message, error_from_frame
from laminate._framing.lines import Frame

# Every test here runs with each CRC-32 the decoder may use (see conftest.py).
pytestmark = pytest.mark.usefixtures("eventstream_crc")

_SHARED = Path(__file__).resolve().parents[1].parent / "shared"
_RECORDINGS = sorted(
    [
        *(_SHARED / "real-streams" / "bedrock-converse").glob("*.eventstream"),
        *(_SHARED / "real-streams-2" / "bedrock-converse").glob("*.eventstream"),
    ]
)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EVENT = {":message-type": "event", ":content-type": "application/json"}


def _event(event_type: str, payload: bytes) -> bytes:
    return encode_message({**_EVENT, ":event-type": event_type}, payload)


def _message(raw_headers: bytes, payload: bytes, *, total: int | None = None) -> bytes:
    """A message from raw header bytes, with correct CRCs (and ``total`` if told to lie)."""
    size = 16 + len(raw_headers) + len(payload) if total is None else total
    prelude = struct.pack(">II", size, len(raw_headers))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + raw_headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


def _header(name: str, kind: int, value: bytes) -> bytes:
    return bytes([len(name)]) + name.encode() + bytes([kind]) + value


def _decode(*chunks: bytes) -> list[Frame]:
    decoder = EventStreamDecoder()
    frames = [frame for chunk in chunks for frame in decoder.feed(chunk)]
    return frames + decoder.close()


_STREAM = b"".join(
    [
        _event("messageStart", b'{"role":"assistant"}'),
        _event("contentBlockDelta", '{"delta":{"text":"héllo ☃"}}'.encode()),
        encode_message({}, b""),
        _event("messageStop", b'{"stopReason":"end_turn"}'),
    ]
)


# Round trips.


def test_round_trip_every_header_type() -> None:
    headers: dict[str, object] = {
        "true": True,
        "false": False,
        "int32": -(2**31),
        "int64": 2**40,
        "bytes": b"\x00\xff",
        "string": "héllo",
        "timestamp": datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC),
        "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "empty": "",
    }
    (frame,) = _decode(encode_message(headers, b"payload"))
    assert frame == Frame(event=None, data="payload", offset=0, id=None, headers=headers)


def test_int8_and_int16_headers_are_read() -> None:
    raw = _header("byte", 2, b"\xff") + _header("short", 3, struct.pack(">h", -300))
    (frame,) = _decode(_message(raw, b""))
    assert frame.headers == {"byte": -1, "short": -300}


def test_timestamps_keep_milliseconds_and_any_time_zone() -> None:
    when = datetime(1969, 12, 31, 23, 0, 0, 1000, tzinfo=timezone(timedelta(hours=-5)))
    (frame,) = _decode(encode_message({"t": when}, b""))
    assert frame.headers == {"t": when}
    decoded = frame.headers["t"]
    assert isinstance(decoded, datetime)
    assert decoded.tzinfo is UTC


def test_frame_names_follow_the_message_type() -> None:
    stream = b"".join(
        [
            _event("contentBlockDelta", b"{}"),
            encode_message({":message-type": "exception", ":exception-type": "oops"}, b"{}"),
            encode_message({":message-type": "error", ":error-code": "Bad"}, b""),
            encode_message({":event-type": "noMessageType"}, b""),
            encode_message({":message-type": "other", ":event-type": "x"}, b""),
            encode_message({":message-type": "event", ":event-type": 5}, b""),
        ]
    )
    assert [frame.event for frame in _decode(stream)] == [
        "contentBlockDelta",
        "oops",
        "Bad",
        "noMessageType",
        None,
        None,
    ]


def test_offsets_and_counters() -> None:
    decoder = EventStreamDecoder()
    frames = decoder.feed(_STREAM[:-3])
    last = _event("messageStop", b'{"stopReason":"end_turn"}')
    assert decoder.buffered == len(last) - 3
    frames += decoder.feed(_STREAM[-3:]) + decoder.close()
    starts = [0]
    for frame in frames[:-1]:
        starts.append(starts[-1] + struct.unpack_from(">I", _STREAM, starts[-1])[0])
        assert frame.id is None
    assert [frame.offset for frame in frames] == starts
    assert decoder.bytes_seen == len(_STREAM)
    assert decoder.buffered == 0
    assert not decoder.trailing
    assert [frame.data for frame in frames][1] == '{"delta":{"text":"héllo ☃"}}'


def test_split_at_every_position_gives_the_same_frames() -> None:
    whole = _decode(_STREAM)
    assert len(whole) == 4
    for cut in range(len(_STREAM) + 1):
        assert _decode(_STREAM[:cut], _STREAM[cut:]) == whole, cut
    for first in range(0, len(_STREAM), 7):
        for second in range(first, len(_STREAM), 11):
            parts = _STREAM[:first], _STREAM[first:second], _STREAM[second:]
            assert _decode(*parts) == whole, (first, second)
    assert _decode(*(_STREAM[i : i + 1] for i in range(len(_STREAM)))) == whole


def test_only_an_unfinished_message_is_buffered() -> None:
    decoder = EventStreamDecoder()
    first = _event("a", b"x" * 100)
    assert decoder.feed(first + first[:50]) != []
    assert decoder.buffered == 50
    assert decoder.feed(first[50:]) != []
    assert decoder.buffered == 0


def test_encoding_refuses_what_it_cannot_write() -> None:
    with pytest.raises(ValueError, match="aware"):
        encode_message({"t": datetime(2024, 1, 1)}, b"")  # naive: the point of the test
    with pytest.raises(ValueError, match="65535"):
        encode_message({"s": "x" * 65536}, b"")
    with pytest.raises(ValueError, match="255"):
        encode_message({"n" * 256: 1}, b"")
    with pytest.raises(TypeError, match="float"):
        encode_message({"f": 1.5}, b"")
    with pytest.raises(struct.error):
        encode_message({"i": 2**63}, b"")


# Damage.


def test_prelude_crc_mismatch_keeps_the_frames_before_it() -> None:
    good = _event("messageStart", b"{}")
    bad = bytearray(_event("messageStop", b"{}"))
    bad[9] ^= 0x01
    decoder = EventStreamDecoder()
    assert [frame.event for frame in decoder.feed(good + bad)] == ["messageStart"]
    with pytest.raises(MalformedStreamError, match="prelude CRC") as caught:
        decoder.feed(b"more")
    assert caught.value.offset == len(good)
    assert caught.value.snippet.startswith(bytes(bad[:4]).hex(" "))
    with pytest.raises(MalformedStreamError) as again:
        decoder.close()
    assert again.value is caught.value


def test_message_crc_mismatch() -> None:
    good = _event("messageStart", b"{}")
    for where in (12, 30, -5, -1):  # headers, payload and the CRC itself
        bad = bytearray(good)
        bad[where] ^= 0x40
        decoder = EventStreamDecoder()
        assert decoder.feed(good) != []
        with pytest.raises(MalformedStreamError, match="message CRC") as caught:
            decoder.feed(bytes(bad))
        assert caught.value.offset == len(good)


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        (_message(b"", b"", total=15), "shorter than the 16-byte minimum"),
        (_message(b"", b"", total=0), "shorter than the 16-byte minimum"),
        (_message(b"\x00" * 8, b"", total=20), "does not fit"),
        (_message(b"", b"x" * 100, total=17 * 1024 * 1024), "over max_frame_bytes"),
    ],
    ids=["15", "0", "headers-longer-than-message", "over-cap"],
)
def test_lying_lengths_fail_at_the_prelude(message: bytes, problem: str) -> None:
    decoder = EventStreamDecoder()
    with pytest.raises(MalformedStreamError, match=problem) as caught:
        decoder.feed(message[:12])
    assert caught.value.offset == 0


def test_a_4_gib_length_fails_before_its_body_is_buffered() -> None:
    prelude = struct.pack(">II", 2**32 - 1, 0)
    prelude += struct.pack(">I", zlib.crc32(prelude))
    decoder = EventStreamDecoder()
    assert decoder.feed(_STREAM) != []
    with pytest.raises(MalformedStreamError, match="4294967295 is over max_frame_bytes") as caught:
        decoder.feed(prelude + b"\x00" * 1000)
    assert caught.value.offset == len(_STREAM)
    assert decoder.buffered == 0
    small = EventStreamDecoder(max_frame_bytes=64)
    with pytest.raises(MalformedStreamError, match=r"over max_frame_bytes \(64\)"):
        small.feed(_event("e", b"x" * 64))
    with pytest.raises(ValueError, match="at least 16"):
        EventStreamDecoder(max_frame_bytes=15)


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (_header("t", 10, b""), "unknown value type 10"),
        (_header("t", 255, b"\x00" * 16), "unknown value type 255"),
        (b"\x09abc", "runs past"),  # the name is longer than the headers section
        (_header("s", 7, b"\x00\x09abc"), "runs past"),  # string length
        (_header("i", 4, b"\x00\x00"), "runs past"),  # int32 cut short
        (_header("u", 9, b"\x00" * 15), "runs past"),  # uuid cut short
        (b"\x01a", "runs past"),  # no value type
        (_header("s", 7, b"\x00\x01\xff"), "can't decode"),  # a string that is not UTF-8
        (b"\x01\xff\x00", "can't decode"),  # a name that is not UTF-8
        (_header("d", 0, b"") * 2, "appears twice"),
        (_header("t", 8, struct.pack(">q", 2**62)), "out of range|overflow|too large"),
    ],
    ids=[
        "type-10",
        "type-255",
        "name",
        "string",
        "int32",
        "uuid",
        "no-type",
        "string-utf8",
        "name-utf8",
        "duplicate",
        "timestamp-range",
    ],
)
def test_bad_headers(raw: bytes, problem: str) -> None:
    good = _event("e", b"{}")
    # The payload follows, so a header that overruns its section would find bytes to read.
    bad = _message(raw, b"\x00" * 40)
    decoder = EventStreamDecoder()
    assert decoder.feed(good) != []
    with pytest.raises(MalformedStreamError, match=problem) as caught:
        decoder.feed(bad)
    assert caught.value.offset == len(good)


def test_a_payload_that_is_not_utf8() -> None:
    with pytest.raises(MalformedStreamError, match="can't decode") as caught:
        _decode(_event("e", b'{"x":"\xc3"}'))
    assert caught.value.offset == 0


@pytest.mark.parametrize("cut", [1, 11, 12, 40, -1])
def test_a_stream_ending_inside_a_message(cut: int) -> None:
    message = _event("messageStop", b"{}")
    decoder = EventStreamDecoder()
    assert decoder.feed(_STREAM + message[:cut]) != []
    with pytest.raises(IncompleteStreamError, match="ended inside a binary frame") as caught:
        decoder.close()
    assert f"at byte {len(_STREAM)}" in str(caught.value)
    assert decoder.trailing
    with pytest.raises(IncompleteStreamError):
        decoder.close()


def test_a_nul_flood_fails_fast_at_its_first_prelude() -> None:
    flood = bytes(1024 * 1024)
    decoder = EventStreamDecoder()
    with pytest.raises(MalformedStreamError, match="not an AWS event stream") as caught:
        decoder.feed(flood)
    assert caught.value.offset == 0
    assert caught.value.snippet == " ".join(["00"] * 12)  # the prelude, however it was fed
    assert decoder.buffered == 0
    # Its first twelve bytes are enough to tell: nothing waits for the length they claim.
    with pytest.raises(MalformedStreamError, match="not an AWS event stream") as again:
        EventStreamDecoder().feed(flood[:12])
    assert again.value.snippet == caught.value.snippet


def test_usage_after_close() -> None:
    decoder = EventStreamDecoder()
    assert decoder.feed(b"") == []
    assert decoder.close() == []
    assert decoder.close() == []
    with pytest.raises(RuntimeError, match="after close"):
        decoder.feed(b"x")


# Errors carried in the stream.


def _exception(kind: str, payload: bytes) -> Frame:
    message = encode_message(
        {":message-type": "exception", ":exception-type": kind, ":content-type": "json"},
        payload,
    )
    (frame,) = _decode(message)
    return frame


@pytest.mark.parametrize(
    ("kind", "retryable"),
    [
        ("throttlingException", True),
        ("serviceUnavailableException", True),
        ("modelStreamErrorException", True),
        ("internalServerException", True),
        ("modelNotReadyException", True),
        ("ThrottlingException", True),
        ("validationException", False),
        ("accessDeniedException", False),
    ],
)
def test_exception_messages_become_provider_errors(kind: str, retryable: bool) -> None:
    error = error_from_frame(_exception(kind, b'{"message":"Too many requests"}'))
    assert error is not None
    assert (error.error_type, error.message, error.retryable) == (
        kind,
        "Too many requests",
        retryable,
    )
    assert error.raw == {"message": "Too many requests"}


def test_provider_error_messages_from_every_place() -> None:
    capital = error_from_frame(_exception("validationException", b'{"Message":"bad"}'))
    assert capital is not None
    assert capital.message == "bad"
    text = error_from_frame(_exception("validationException", b"not json"))
    assert text is not None
    assert (text.message, text.raw) == ("not json", "not json")
    bare = error_from_frame(_exception("validationException", b"{}"))
    assert bare is not None
    assert bare.message == "validationException"
    headers = {":message-type": "error", ":error-code": "InternalFailure", ":error-message": "x"}
    (frame,) = _decode(encode_message(headers, b""))
    error = error_from_frame(frame)
    assert error is not None
    assert (error.error_type, error.message, error.retryable) == ("InternalFailure", "x", False)
    assert error.raw == headers


def test_ordinary_frames_carry_no_error() -> None:
    assert all(error_from_frame(frame) is None for frame in _decode(_STREAM))
    assert error_from_frame(Frame("message_stop", "{}", 0, None)) is None


# botocore's reader as the reference.


def _as_botocore(headers: Mapping[str, object]) -> dict[str, object]:
    """Header values as botocore reports them: timestamps in ms, UUIDs as 16 bytes."""
    converted = dict(headers)
    for name, value in headers.items():
        if isinstance(value, datetime):
            converted[name] = (value - _EPOCH) // timedelta(milliseconds=1)
        elif isinstance(value, uuid.UUID):
            converted[name] = value.bytes
    return converted


def _botocore_messages(data: bytes) -> list[Any]:
    eventstream = pytest.importorskip("botocore.eventstream")
    buffer = eventstream.EventStreamBuffer()
    buffer.add_data(data)
    return list(buffer)


def _assert_same_as_botocore(data: bytes) -> None:
    frames = _decode(data)
    reference = _botocore_messages(data)
    assert len(frames) == len(reference)
    for frame, message in zip(frames, reference, strict=True):
        assert frame.headers is not None
        assert _as_botocore(frame.headers) == message.headers
        assert frame.data.encode() == message.payload


def test_botocore_reads_what_encode_message_writes() -> None:
    headers: dict[str, object] = {
        "b": True,
        "f": False,
        "i": 7,
        "l": -(2**50),
        "y": b"\x01",
        "s": "☃",
        "t": datetime(2020, 2, 2, tzinfo=UTC),
        "u": uuid.uuid4(),
    }
    raw = _header("byte", 2, b"\x80") + _header("short", 3, b"\x7f\xff")
    _assert_same_as_botocore(_STREAM + encode_message(headers, b"{}") + _message(raw, b"p"))


@pytest.mark.parametrize(
    "path",
    [pytest.param(path, id=f"{path.parent.parent.name}/{path.name}") for path in _RECORDINGS]
    or [pytest.param(None, id="none")],
)
def test_real_recordings_match_botocore(path: Path | None) -> None:
    if path is None:
        pytest.skip(f"no *.eventstream recordings under {_SHARED}/real-streams*/bedrock-converse")
    data = path.read_bytes()
    _assert_same_as_botocore(data)
    frames = _decode(data)
    assert all(frame.event for frame in frames)
    assert _decode(*(data[i : i + 97] for i in range(0, len(data), 97))) == frames


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=2048), start=st.integers(0, 2**32 - 1))
def test_the_fast_crc_is_zlibs(data: bytes, start: int) -> None:
    """ISA-L's CRC-32 (the `fast` extra) is zlib's function, carried on from any value."""
    isal_zlib = pytest.importorskip("isal.isal_zlib", reason="the `fast` extra is not installed")
    assert isal_zlib.crc32(data, start) == zlib.crc32(data, start)
    assert isal_zlib.crc32(bytearray(data), start) == zlib.crc32(data, start)


def test_the_quicker_crc_of_two_is_chosen() -> None:
    # Two functions that give the same values: the one that takes less time is kept,
    # whichever is given first.
    def slow(data: bytes | bytearray | memoryview, value: int = 0, /) -> int:
        for _ in range(50):
            zlib.crc32(data, value)
        return zlib.crc32(data, value)

    assert eventstream._quicker(slow, zlib.crc32) is zlib.crc32
    assert eventstream._quicker(zlib.crc32, slow) is zlib.crc32


@pytest.mark.parametrize("forced", ["zlib", "isal"])
def test_the_environment_forces_a_crc(forced: str) -> None:
    if forced == "isal":
        pytest.importorskip("isal.isal_zlib", reason="the `fast` extra is not installed")
    code = "from laminate._framing import eventstream; print(eventstream.crc32.__module__)"
    env = {**os.environ, "LAMINATE_CRC": forced}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ("zlib" if forced == "zlib" else "isal.isal_zlib")
