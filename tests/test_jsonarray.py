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
from laminate._framing import (
    JSONArrayDecoder,
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
