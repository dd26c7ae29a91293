"""The streamed JSON array decoder (``_framing/jsonarray.py``): Gemini's and Vertex's
``streamGenerateContent`` without ``alt=sse``."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from laminate import (
    IncompleteStreamError,
    MalformedStreamError,
)
from laminate._apis.registry import APIS
from laminate._framing import (
    MEDIA_TYPES,
    JSONArrayDecoder,
    JSONArrayWriter,
    framing_of,
)

from .support import split_at

ELEMENTS: list[dict[str, object]] = [
    {"text": 'a } ] " { [ , \\ \u2028 \U0001f600'},
    {"nested": {"list": [1, 2, {"deep": [[], {}]}], "empty": ""}},
    {"n": -1.5e3, "t": True, "f": False, "z": None},
]


def array_bytes(elements: list[dict[str, object]], *, pretty: bool) -> bytes:
    if pretty:
        body = "[" + "\r\n,".join(json.dumps(e, indent=2) for e in elements) + "]"
    else:
        body = "[" + ",".join(json.dumps(e, separators=(",", ":")) for e in elements) + "]"
    return body.encode()


def decode(*chunks: bytes) -> list[object]:
    decoder = JSONArrayDecoder()
    frames = [f for c in chunks for f in decoder.feed(c)] + decoder.close()
    return [json.loads(f.data) for f in frames]


@pytest.mark.parametrize("pretty", [True, False])
def test_elements_come_out_whole_whatever_the_split(pretty: bool) -> None:
    data = array_bytes(ELEMENTS, pretty=pretty)
    assert decode(data) == ELEMENTS
    assert decode(*(data[i : i + 1] for i in range(len(data)))) == ELEMENTS


@given(st.lists(st.integers(0, 400), max_size=20), st.booleans())
def test_elements_in_any_split(cuts: list[int], pretty: bool) -> None:
    data = array_bytes(ELEMENTS, pretty=pretty)
    assert decode(*split_at(data, cuts)) == ELEMENTS


def test_an_element_is_handed_on_before_the_array_ends() -> None:
    decoder = JSONArrayDecoder()
    frames = decoder.feed(b'[{"a": 1}\r\n,{"b": "x')
    assert [f.data for f in frames] == ['{"a": 1}']
    assert frames[0].offset == 1
    assert [f.data for f in decoder.feed(b'"}')] == ['{"b": "x"}']


def test_an_array_without_its_closing_bracket_is_trailing() -> None:
    decoder = JSONArrayDecoder()
    assert len(decoder.feed(b'[{"a": 1},\n')) == 1
    assert decoder.close() == []
    assert decoder.trailing


@pytest.mark.parametrize(
    ("data", "offset"),
    [
        (b'[{"a": 1} {"b": 2}]', 9),
        (b'[{"a": 1}] tail', 10),
        (b'[{"a": 1},, {"b": 2}]', 9),
        (b"[1, 2]", 1),
        (b'[{"a": 1}]]', 10),
    ],
)
def test_bytes_that_are_not_an_array_of_objects(data: bytes, offset: int) -> None:
    decoder = JSONArrayDecoder()

    def run() -> None:
        decoder.feed(data)
        decoder.feed(b"")
        decoder.close()

    with pytest.raises(MalformedStreamError) as caught:
        run()
    assert caught.value.offset == offset


def test_the_end_inside_an_element_is_incomplete() -> None:
    decoder = JSONArrayDecoder()
    decoder.feed(b'[{"a": "unfinished')
    with pytest.raises(IncompleteStreamError):
        decoder.close()


def test_an_element_over_the_cap_fails_as_soon_as_it_passes_it() -> None:
    decoder = JSONArrayDecoder(max_frame_bytes=1000)
    decoder.feed(b'[{"a": "')
    for _ in range(9):
        decoder.feed(b"x" * 100)
    with pytest.raises(MalformedStreamError, match="max_frame_bytes"):
        decoder.feed(b"x" * 100)
    assert decoder.buffered < 2500


def test_a_long_string_fed_byte_by_byte_is_scanned_once() -> None:
    decoder = JSONArrayDecoder()
    decoder.feed(b'[{"a": "')
    for _ in range(50_000):
        decoder.feed(b"\\")
        decoder.feed(b"n")
    assert [f.data for f in decoder.feed(b'"}]')] == ['{"a": "' + "\\n" * 50_000 + '"}']


# -- writing: SSE events as a streamed array -------------------------------------------------


def test_sse_events_are_written_as_the_arrays_elements() -> None:
    writer = JSONArrayWriter()
    sse = b'data: {"a":1}\r\n\r\nevent: x\ndata: {"b":"c\\nd"}\n\n: comment\n\n'
    pieces = writer.elements(sse[:14]) + writer.elements(sse[14:])
    assert pieces == [b'[{"a":1}', b',\r\n{"b":"c\\nd"}']
    body = b"".join(pieces) + writer.end()
    assert json.loads(body) == [{"a": 1}, {"b": "c\nd"}]
    frames = JSONArrayDecoder().feed(body)
    assert [frame.data for frame in frames] == ['{"a":1}', '{"b":"c\\nd"}']
    assert JSONArrayWriter().end() == b"[]"
    begun = JSONArrayWriter(begun=True)
    assert begun.elements(b"data: 2\n\n") == [b",\r\n2"]
    assert begun.end() == b"]"


def test_a_stream_request_gets_an_array_only_without_its_sse_query() -> None:
    arrays = {name for name, r in APIS.items() if r.http and r.http.sse_query}
    assert arrays  # Gemini's alt=sse
    for name, record in APIS.items():
        if record.http is None:
            continue
        streams_array = record.http.streams_array
        assert streams_array("") is (name in arrays)
        assert streams_array("a=1&b=2") is (name in arrays)
        if record.http.sse_query is not None:
            query = record.http.sse_query
            assert not streams_array(query)
            assert not streams_array(f"key=k&{query}")
            assert streams_array(f"x{query}")  # another parameter, not this one


def test_one_media_type_per_framing_both_ways() -> None:
    assert MEDIA_TYPES["json-array"].startswith("application/json")
    for framing, kind in MEDIA_TYPES.items():
        expected = None if framing == "json-array" else framing
        assert framing_of(kind) == expected
        assert framing_of(kind.upper() + "; charset=utf-8") == expected
    assert framing_of("application/jsonl") == "ndjson"
    assert framing_of("text/html") is None
    assert framing_of(None) is None
