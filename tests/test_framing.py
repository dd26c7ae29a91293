"""Tests for the framing layer: line splitting, SSE interpretation, NDJSON, size caps."""

from __future__ import annotations

import itertools
import json
import re
import tracemalloc
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from laminate._core.errors import IncompleteStreamError, MalformedStreamError
from laminate._framing import Frame, NDJSONDecoder, SSEDecoder

REAL_STREAMS = Path(__file__).resolve().parents[1] / ".." / "shared" / "real-streams"
BOM = b"\xef\xbb\xbf"

Decoder = SSEDecoder | NDJSONDecoder
# What a decoder made of a whole stream: its frames, then either
# ("ok", trailing, retry) or ("error", message, offset, snippet).
Outcome = tuple[list[Frame], tuple[object, ...]]


def run(decoder: Decoder, chunks: Iterable[bytes]) -> Outcome:
    frames: list[Frame] = []
    try:
        for chunk in chunks:
            frames += decoder.feed(chunk)
        frames += decoder.close()
    except MalformedStreamError as exc:
        return frames, ("error", exc.message, exc.offset, exc.snippet)
    except IncompleteStreamError as exc:  # the bytes ended inside a character
        return frames, ("incomplete", exc.message)
    retry = decoder.retry if isinstance(decoder, SSEDecoder) else None
    return frames, ("ok", decoder.trailing, retry)


def sse(*chunks: bytes, max_frame_bytes: int = 16 * 1024 * 1024) -> list[Frame]:
    decoder = SSEDecoder(max_frame_bytes=max_frame_bytes)
    frames: list[Frame] = []
    for chunk in chunks:
        frames += decoder.feed(chunk)
    return frames + decoder.close()


def ndjson(*chunks: bytes) -> list[Frame]:
    decoder = NDJSONDecoder()
    frames: list[Frame] = []
    for chunk in chunks:
        frames += decoder.feed(chunk)
    return frames + decoder.close()


def data(frames: Sequence[Frame]) -> list[str]:
    return [frame.data for frame in frames]


def bytewise(body: bytes) -> list[bytes]:
    return [body[i : i + 1] for i in range(len(body))]


def split_at(body: bytes, cuts: Iterable[int]) -> list[bytes]:
    points = sorted({0, len(body), *(c % (len(body) + 1) for c in cuts)})
    return [body[a:b] for a, b in itertools.pairwise(points)]


# A plain implementation of the standard, for comparison: decode first, then split.

_LINE = re.compile(r"([^\r\n]*)(\r\n|\r|\n)")


class _ReferenceSSE:
    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self.data: str | None = None
        self.event: str | None = None
        self.id: str | None = None
        self.retry: int | None = None
        self.start = -1

    def line(self, line: str, offset: int) -> None:
        if not line:
            if self.data is not None:
                self.frames.append(Frame(self.event, self.data, self.start, self.id))
            self.data = self.event = None
            self.start = -1
            return
        if line.startswith(":"):
            return
        if self.start == -1:
            self.start = offset
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self.data = value if self.data is None else f"{self.data}\n{value}"
        elif name == "event":
            self.event = value or None
        elif name == "id" and "\0" not in value:
            self.id = value or None
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry = int(value)


def reference_sse(body: bytes) -> Outcome:
    offset = 3 if body.startswith(BOM) else 0
    text = body[offset:].decode()
    ref = _ReferenceSSE()
    end = 0
    for match in _LINE.finditer(text):
        ref.line(match[1], offset)
        offset += len(match[0].encode())
        end = match.end()
    tail = text[end:]
    trailing = bool(tail) or ref.start != -1
    ref.line(tail, offset)
    ref.line("", offset)
    return ref.frames, ("ok", trailing, ref.retry)


def reference_ndjson(body: bytes) -> Outcome:
    pos = 3 if body.startswith(BOM) else 0
    frames = []
    for match in re.finditer(rb"([^\r\n]*)(\r\n|\r|\n|$)", body[pos:]):
        value = match[1].strip(b" \t")
        if value:
            frames.append(Frame(None, value.decode(), pos + match.start(), None))
    return frames, ("ok", False, None)


# Line ends.


@pytest.mark.parametrize("end", [b"\n", b"\r", b"\r\n"])
def test_every_line_end(end: bytes) -> None:
    body = b"data: a" + end + b"data: b" + end + end + b"data: c" + end + end
    frames = sse(body)
    assert data(frames) == ["a\nb", "c"]
    assert [frame.offset for frame in frames] == [0, 2 * (7 + len(end)) + len(end)]


def test_mixed_line_ends() -> None:
    assert data(sse(b"data: a\rdata: b\r\ndata: c\n\r\ndata: d\r\r")) == ["a\nb\nc", "d"]


def test_crlf_split_across_feeds_is_one_line_end() -> None:
    frames = sse(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n")
    assert data(frames) == ["a\nb"]


def test_crlf_split_with_empty_feed_between() -> None:
    assert data(sse(b"data: a\r", b"", b"\n", b"\r\n")) == ["a"]


def test_cr_at_end_of_feed_then_other_byte() -> None:
    # The CR ended the line; "d" starts the next one.
    assert data(sse(b"data: a\r", b"data: b\r", b"\r")) == ["a\nb"]


def test_cr_at_end_of_feed_then_cr() -> None:
    # CR, CR: a line end then a blank line.
    assert data(sse(b"data: a\r", b"\rdata: b\n\n")) == ["a", "b"]


def test_unicode_line_separators_are_not_line_ends() -> None:
    value = "x\u2028y\u2029z\x85w\x0bv\x0cu\x1cend"
    body = f"data: {value}\n\n".encode()
    assert data(sse(body)) == [value]
    assert data(ndjson(json.dumps({"v": value}, ensure_ascii=False).encode())) == [
        json.dumps({"v": value}, ensure_ascii=False)
    ]


@pytest.mark.parametrize("cut", range(1, len("data: \u00e9\u20ac\U0001f600\n\n".encode())))
def test_multibyte_character_split_at_every_byte(cut: int) -> None:
    body = "data: \u00e9\u20ac\U0001f600\n\n".encode()
    assert data(sse(body[:cut], body[cut:])) == ["\u00e9\u20ac\U0001f600"]


# The BOM.


def test_bom_stripped_and_counted_in_offsets() -> None:
    frames = sse(BOM + b"data: a\n\n")
    assert frames == [Frame(None, "a", 3, None)]


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_bom_split_across_feeds(cut: int) -> None:
    body = BOM + b"data: a\n\n"
    assert sse(body[:cut], body[cut:]) == [Frame(None, "a", 3, None)]
    assert sse(*bytewise(body)) == [Frame(None, "a", 3, None)]


def test_bom_then_comment_split() -> None:
    assert sse(BOM[:2], BOM[2:] + b":", b" hi\ndata: x\n\n") == [Frame(None, "x", 8, None)]


def test_bom_only_at_stream_start() -> None:
    # Later, the BOM is part of the field name: "\ufeffdata" is an unknown field.
    assert sse(b"data: a\n\n" + BOM + b"data: b\n\n") == [Frame(None, "a", 0, None)]
    assert sse(BOM + BOM + b"data: b\n\n") == []


def test_incomplete_bom_is_invalid_utf8() -> None:
    # Bytes that end inside the BOM's character were cut short; followed by more, invalid.
    with pytest.raises(IncompleteStreamError, match="inside a character"):
        sse(BOM[:2])
    with pytest.raises(MalformedStreamError) as info:
        sse(BOM[:2] + b"data: a\n\n")
    assert info.value.offset == 0


def test_bom_in_ndjson() -> None:
    assert ndjson(BOM[:1], BOM[1:] + b"{}\n") == [Frame(None, "{}", 3, None)]


# Fields.


def test_comments_are_ignored() -> None:
    body = b": ping\ndata: a\n:data: no\ndata: b\n\n:\n\n"
    assert sse(body) == [Frame(None, "a\nb", 7, None)]


def test_event_and_data() -> None:
    body = b"event: message_start\ndata: {}\n\nevent: ping\ndata: {}\n\n"
    frames = sse(body)
    assert [(frame.event, frame.data, frame.offset) for frame in frames] == [
        ("message_start", "{}", 0),
        ("ping", "{}", 31),
    ]


def test_event_type_resets_after_each_event() -> None:
    assert sse(b"event: a\ndata: 1\n\ndata: 2\n\n") == [
        Frame("a", "1", 0, None),
        Frame(None, "2", 18, None),
    ]


def test_empty_data_buffer_dispatches_nothing_and_resets_event_type() -> None:
    assert sse(b"event: lost\n\ndata: x\n\n") == [Frame(None, "x", 13, None)]


def test_id_only_block_sets_the_last_event_id() -> None:
    assert sse(b"id: 7\n\ndata: x\n\ndata: y\n\n") == [
        Frame(None, "x", 7, "7"),
        Frame(None, "y", 16, "7"),
    ]


def test_id_with_nul_is_ignored_and_empty_id_clears() -> None:
    frames = sse(b"id: 1\ndata: a\n\nid: 2\x00\ndata: b\n\nid\ndata: c\n\n")
    assert [frame.id for frame in frames] == ["1", "1", None]


def test_retry() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"retry: 1500\n\n")
    assert decoder.retry == 1500
    decoder.feed(b"retry: 15x\nretry:  20\nretry:\nretry: \xd9\xa3\nretry: -1\n\n")
    assert decoder.retry == 1500
    decoder.feed(b"retry:250\n\n")
    assert decoder.retry == 250
    decoder.feed(b"retry: " + b"9" * 5000 + b"\n\n")  # absurd: ignored, not converted
    assert decoder.retry == 250
    assert decoder.close() == []


def test_no_space_after_colon_and_only_one_space_stripped() -> None:
    assert data(sse(b"data:x\n\ndata:  y\n\ndata:\tz\n\n")) == ["x", " y", "\tz"]


def test_field_without_colon_has_empty_value() -> None:
    assert data(sse(b"data\n\n")) == [""]
    assert data(sse(b"data\ndata\n\n")) == ["\n"]
    assert sse(b"event\ndata: x\n\n") == [Frame(None, "x", 0, None)]


def test_empty_data_line_dispatches_an_empty_event() -> None:
    assert data(sse(b"data:\n\n")) == [""]
    assert data(sse(b"data:\ndata: a\n\n")) == ["\na"]


def test_unknown_fields_are_ignored() -> None:
    assert sse(b"foo: bar\nDATA: no\ndata : no\n data: no\ndata: yes\n\n") == [
        Frame(None, "yes", 0, None)
    ]


def test_frame_offset_skips_comments() -> None:
    assert sse(b": keep-alive\nevent: e\ndata: d\n\n") == [Frame("e", "d", 13, None)]


def test_colons_in_value_are_kept() -> None:
    assert data(sse(b'data: {"a": "b:c"}\n\n')) == ['{"a": "b:c"}']


# End of stream.


def test_clean_end_is_not_trailing() -> None:
    decoder = SSEDecoder()
    assert data(decoder.feed(b"data: a\n\n: bye\n\n")) == ["a"]
    assert decoder.close() == []
    assert not decoder.trailing


def test_final_event_without_blank_line_is_emitted_and_trailing() -> None:
    decoder = SSEDecoder()
    assert data(decoder.feed(b"data: a\n\nevent: e\ndata: b\n")) == ["a"]
    assert decoder.close() == [Frame("e", "b", 9, None)]
    assert decoder.trailing


def test_final_partial_line_is_a_line_and_trailing() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\ndata: b") == []
    assert decoder.close() == [Frame(None, "a\nb", 0, None)]
    assert decoder.trailing


def test_final_field_lines_without_data_are_trailing() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a\n\nevent: e\n")
    assert decoder.close() == []
    assert decoder.trailing


def test_final_partial_comment_is_trailing() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a\n\n: unfinished")
    assert decoder.close() == []
    assert decoder.trailing


def test_empty_stream() -> None:
    decoder = SSEDecoder()
    assert decoder.close() == []
    assert not decoder.trailing
    assert decoder.bytes_seen == 0


def test_close_is_idempotent_and_feed_after_close_is_refused() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a")
    assert len(decoder.close()) == 1
    assert decoder.close() == []
    with pytest.raises(RuntimeError):
        decoder.feed(b"data: b\n\n")


def test_bytes_seen_counts_every_byte() -> None:
    decoder = SSEDecoder()
    decoder.feed(BOM)
    decoder.feed(b": comment\r")
    decoder.feed(b"\ndata: x")
    assert decoder.bytes_seen == 3 + 10 + 8


# Errors.


def test_invalid_utf8_in_data_reports_the_line() -> None:
    with pytest.raises(MalformedStreamError) as info:
        sse(b"data: ok\n\ndata: bad \xff here\n\n")
    assert info.value.offset == 10
    assert info.value.snippet == "data: bad \ufffd here"
    assert "invalid UTF-8" in str(info.value)


@pytest.mark.parametrize(
    "line", [b"event: \xc3", b"id: \xff", b"\xfffoo: x", b"data\xff", b"data:\xed\xa0\x80"]
)
def test_invalid_utf8_in_any_field_line(line: bytes) -> None:
    with pytest.raises(MalformedStreamError) as info:
        sse(b"data: a\n\n", line + b"\n\n")
    assert info.value.offset == 9


def test_invalid_utf8_in_ndjson() -> None:
    with pytest.raises(MalformedStreamError) as info:
        ndjson(b'{"a": 1}\r\n{"b": "\xc3"}\n')
    assert info.value.offset == 10


def test_frames_before_an_error_are_delivered_first() -> None:
    decoder = SSEDecoder()
    assert data(decoder.feed(b"data: a\n\ndata: \xff\n\n")) == ["a"]
    for _ in range(2):  # the error sticks
        with pytest.raises(MalformedStreamError) as info:
            decoder.close()
        assert info.value.offset == 9
    with pytest.raises(MalformedStreamError):
        decoder.feed(b"data: b\n\n")


def test_error_without_frames_is_raised_at_once() -> None:
    decoder = NDJSONDecoder()
    with pytest.raises(MalformedStreamError):
        decoder.feed(b"\xff\n")
    with pytest.raises(MalformedStreamError):
        decoder.feed(b"{}\n")


def test_snippet_is_short_and_printable() -> None:
    with pytest.raises(MalformedStreamError) as info:
        sse(b"data: \x00\x01\x1b[31m" + b"\xe9" * 500 + b"\n\n")
    snippet = info.value.snippet
    assert len(snippet) <= 80
    assert snippet.isprintable()


# The size cap.


def test_line_exactly_at_the_cap_is_fine() -> None:
    line = b"data: " + b"x" * 94
    assert data(sse(line + b"\n\n", max_frame_bytes=100)) == ["x" * 94]
    assert data(sse(*bytewise(line + b"\n\n"), max_frame_bytes=100)) == ["x" * 94]


def test_line_over_the_cap_raises_before_its_end() -> None:
    decoder = SSEDecoder(max_frame_bytes=100)
    assert data(decoder.feed(b"data: a\n\n")) == ["a"]
    decoder.feed(b"data: " + b"x" * 90)
    with pytest.raises(MalformedStreamError) as info:
        decoder.feed(b"x" * 10)  # 106 bytes and no line end yet
    assert info.value.offset == 9
    assert info.value.snippet.startswith("data: xxx")
    assert "max_frame_bytes" in info.value.message


def test_line_over_the_cap_in_one_feed() -> None:
    body = b"data: a\n\nevent: e\ndata: " + b"y" * 200 + b"\n\n"
    frames, outcome = run(SSEDecoder(max_frame_bytes=100), [body])
    assert data(frames) == ["a"]
    assert outcome[0] == "error"
    assert outcome[2] == 9  # the start of the event


def test_line_cap_in_ndjson() -> None:
    decoder = NDJSONDecoder(max_frame_bytes=10)
    assert data(decoder.feed(b"{}\n" + b"1" * 11)) == ["{}"]
    with pytest.raises(MalformedStreamError) as info:
        decoder.close()
    assert info.value.offset == 3


def test_frame_cap_counts_the_events_raw_lines() -> None:
    decoder = SSEDecoder(max_frame_bytes=38)
    decoder.feed(b": c\nid: 1\ndata: 0123456789\n")
    with pytest.raises(MalformedStreamError) as info:
        decoder.feed(b"data: 0123456789\n")  # 16 + 8 + 16 bytes
    assert info.value.offset == 4
    assert "event data" in info.value.message
    assert data(sse(b"data: 012345678\ndata: 0123456789\n\n", max_frame_bytes=39)) == [
        "012345678\n0123456789"
    ]
    with pytest.raises(MalformedStreamError):
        sse(b"data: 012345678\ndata: 0123456789\n\n", max_frame_bytes=38)


def test_empty_data_lines_count_towards_the_cap() -> None:
    with pytest.raises(MalformedStreamError):
        sse(b"data: x\n" + b"data:\n" * 100 + b"\n", max_frame_bytes=500)


def test_huge_comments_are_not_buffered() -> None:
    decoder = SSEDecoder(max_frame_bytes=1024)
    chunk = b"c" * 65536
    tracemalloc.start()
    try:
        assert decoder.feed(b"data: a\n\n:") == [Frame(None, "a", 0, None)]
        for _ in range(50 * 16):  # 50 MiB of one comment line
            assert decoder.feed(chunk) == []
            assert decoder.buffered == 0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024
    assert decoder.feed(b"\r") == []
    assert decoder.feed(b"\ndata: b\r\n\r\n") == [Frame(None, "b", 9 + 50 * 2**20 + 3, None)]
    assert decoder.close() == []
    assert not decoder.trailing


def test_comment_over_the_cap_in_one_feed_is_legal() -> None:
    body = b":" + b"c" * 500 + b"\r\ndata: a\r\n\r\n"
    assert data(sse(body, max_frame_bytes=10)) == ["a"]
    assert data(sse(b"x\n" + body, max_frame_bytes=10)) == ["a"]


def test_unknown_field_over_the_cap_is_skipped_unbuffered() -> None:
    # The standard ignores a field it does not know, whatever its value: a line of one
    # longer than the cap is dropped as it arrives, in one feed or in many.
    body = b"x-trace: " + b"t" * 500 + b"\r\ndata: a\r\n\r\n"
    assert data(sse(body, max_frame_bytes=10)) == ["a"]
    assert data(sse(b"padding" * 100 + b"\ndata: a\n\n", max_frame_bytes=10)) == ["a"]
    decoder = SSEDecoder(max_frame_bytes=1024)
    assert decoder.feed(b"data: a\n\nx-trace:") == [Frame(None, "a", 0, None)]
    for _ in range(64):
        assert decoder.feed(b"t" * 65536) == []
        assert decoder.buffered == 0
    assert decoder.feed(b"\ndata: b\n\n") == [Frame(None, "b", 9 + 8 + 64 * 65536 + 1, None)]


def test_known_fields_over_the_cap_still_fail() -> None:
    for line in (b"data: ", b"event: ", b"id: ", b"retry:", b"{"):
        body = line + b"x" * 50 + b"\n\n"
        with pytest.raises(MalformedStreamError, match="max_frame_bytes"):
            sse(body, max_frame_bytes=10)
        with pytest.raises(MalformedStreamError, match="max_frame_bytes"):
            sse(*(bytes([byte]) for byte in body), max_frame_bytes=10)


def test_partial_line_held_across_feeds() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: hel") == []
    assert decoder.buffered == 9
    assert decoder.feed(b"lo\n\ndata") == [Frame(None, "hello", 0, None)]
    assert decoder.buffered == 4


# NDJSON.


def test_ndjson_lines() -> None:
    assert ndjson(b'{"a":1}\n{"b":2}\n') == [
        Frame(None, '{"a":1}', 0, None),
        Frame(None, '{"b":2}', 8, None),
    ]


def test_ndjson_without_final_newline() -> None:
    decoder = NDJSONDecoder()
    assert decoder.feed(b'{"a":1}\n{"b":') == [Frame(None, '{"a":1}', 0, None)]
    assert decoder.close() == [Frame(None, '{"b":', 8, None)]
    assert not decoder.trailing


def test_ndjson_blank_lines_and_whitespace() -> None:
    body = b'\n  \n\t{"a": 1} \r\n\r\n \n{"b":2}'
    assert ndjson(body) == [Frame(None, '{"a": 1}', 4, None), Frame(None, '{"b":2}', 20, None)]


def test_ndjson_crlf_split() -> None:
    assert data(ndjson(b"1\r", b"\n2\r", b"3\n")) == ["1", "2", "3"]


# Real recordings.


def _recordings(suffix: str) -> list[Path]:
    if not REAL_STREAMS.is_dir():
        return []
    return sorted(REAL_STREAMS.glob(f"*/*{suffix}"))


@pytest.mark.skipif(not REAL_STREAMS.is_dir(), reason="../shared/real-streams is absent")
@pytest.mark.parametrize("path", _recordings(".sse"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_real_sse_recordings(path: Path) -> None:
    body = path.read_bytes()
    expected = reference_sse(body)
    assert expected[0]
    assert run(SSEDecoder(), [body]) == expected
    assert run(SSEDecoder(), bytewise(body)) == expected
    assert run(SSEDecoder(), split_at(body, range(7, len(body), 97))) == expected


@pytest.mark.skipif(not REAL_STREAMS.is_dir(), reason="../shared/real-streams is absent")
@pytest.mark.parametrize("path", _recordings(".ndjson"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_real_ndjson_recordings(path: Path) -> None:
    body = path.read_bytes()
    expected = reference_ndjson(body)
    assert expected[0]
    assert run(NDJSONDecoder(), [body]) == expected
    assert run(NDJSONDecoder(), bytewise(body)) == expected
    for frame in expected[0]:
        json.loads(frame.data)


# Properties.

_value = st.text(
    st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n"), max_size=12
) | st.sampled_from(["", " ", ":", " x", "\u2028", "\x00", "12", "007", "[DONE]", "{}"])
_name = st.sampled_from(["data", "event", "id", "retry", "foo", "", "dat", "data "])
_line = st.one_of(
    st.builds(lambda v: "data: " + v, _value),
    st.builds(lambda n, sp, v: n + ":" + sp + v, _name, st.sampled_from(["", " ", "  "]), _value),
    st.builds(lambda n: n, _name),
    st.builds(lambda v: ":" + v, _value),
    st.just(""),
)
_end = st.sampled_from(["\n", "\r", "\r\n"])


@st.composite
def sse_streams(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.tuples(_line, _end), max_size=25))
    body = "".join(line + end for line, end in lines)
    if draw(st.booleans()):
        body += draw(_line)  # no final line end
    prefix = BOM if draw(st.booleans()) else b""
    return prefix + body.encode()


@st.composite
def ndjson_streams(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.tuples(_value, st.sampled_from(["", " ", "\t"]), _end), max_size=25))
    body = "".join(pad + value + pad + end for value, pad, end in lines)
    if draw(st.booleans()):
        body += draw(_value)
    return (BOM if draw(st.booleans()) else b"") + body.encode()


_cuts = st.lists(st.integers(min_value=0, max_value=10_000), max_size=12)
_fast = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_fast
@given(body=sse_streams(), cuts=_cuts)
def test_sse_any_split_gives_the_same_frames(body: bytes, cuts: list[int]) -> None:
    expected = reference_sse(body)
    assert run(SSEDecoder(), [body]) == expected
    assert run(SSEDecoder(), bytewise(body)) == expected
    assert run(SSEDecoder(), split_at(body, cuts)) == expected


@_fast
@given(body=sse_streams(), cuts=_cuts, cap=st.integers(min_value=1, max_value=40))
def test_sse_any_split_gives_the_same_outcome_under_a_small_cap(
    body: bytes, cuts: list[int], cap: int
) -> None:
    # Frames before the cap is passed, and the error itself, do not depend on the split.
    whole = run(SSEDecoder(max_frame_bytes=cap), [body])
    assert run(SSEDecoder(max_frame_bytes=cap), bytewise(body)) == whole
    assert run(SSEDecoder(max_frame_bytes=cap), split_at(body, cuts)) == whole


@_fast
@given(body=ndjson_streams(), cuts=_cuts)
def test_ndjson_any_split_gives_the_same_frames(body: bytes, cuts: list[int]) -> None:
    expected = reference_ndjson(body)
    assert run(NDJSONDecoder(), [body]) == expected
    assert run(NDJSONDecoder(), bytewise(body)) == expected
    assert run(NDJSONDecoder(), split_at(body, cuts)) == expected


_noise = st.lists(
    st.sampled_from(
        [
            *(b"data:", b" ", b"x", b"\r", b"\n", b":", b"event", b"id", b"retry", b"7", b"\0"),
            *(b"{", b"}"),
            *(BOM, BOM[:1], b"\xe2\x80\xa8", b"\xe2", b"\xff", b"\xc3\xa9"),
        ]
    ),
    max_size=60,
).map(b"".join)
_bytes = st.binary(max_size=200) | _noise


@settings(max_examples=300, deadline=None)
@given(
    body=_bytes,
    cuts=_cuts,
    cap=st.integers(min_value=1, max_value=64) | st.just(16 * 1024 * 1024),
    kind=st.sampled_from([SSEDecoder, NDJSONDecoder]),
)
# A JSON line outside any event, not UTF-8, cut short by the end of the stream.
@example(body=b"{\x80\r", cuts=[], cap=3, kind=SSEDecoder)
def test_any_bytes_raise_only_malformed_or_incomplete_and_split_the_same(
    body: bytes, cuts: list[int], cap: int, kind: type[Decoder]
) -> None:
    # run() lets any other exception escape and fail the test.
    whole = run(kind(max_frame_bytes=cap), [body])
    assert run(kind(max_frame_bytes=cap), bytewise(body)) == whole
    assert run(kind(max_frame_bytes=cap), split_at(body, cuts)) == whole
