"""The streamed JSON array decoder, the choice of framing, and frames fed already parsed
(``StreamNormalizer.feed_payload``)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from laminate import (
    IncompleteStreamError,
    MalformedStreamError,
    StreamNormalizer,
    UnknownProviderError,
)
from laminate._framing import (
    JSONArrayDecoder,
    choose_framing,
    encode_message,
)
from laminate._framing.lines import SSEDecoder

from .support import FIXTURES, run_chunks, split_at

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


# -- choosing the framing ---------------------------------------------------------------------


def test_framing_is_told_from_the_first_bytes() -> None:
    prelude = encode_message({":event-type": "messageStart"}, b"{}")[:12]
    assert choose_framing(prelude, None, "") == "eventstream"
    assert choose_framing(b"\x00\x00\x00\x00" * 3, None, "") == "sse"  # no valid prelude
    assert choose_framing(b"[", None, "") == "json-array"
    assert choose_framing(b"{", "sse", "") == "document"
    assert choose_framing(b"{", None, "") == "ndjson"
    assert choose_framing(b"{", None, "application/x-ndjson") == "ndjson"
    assert choose_framing(b"d", None, "") == "sse"
    assert choose_framing(b"{", "eventstream", "") == "document"
    assert choose_framing(b"d", None, "application/vnd.amazon.eventstream") == "eventstream"


def test_a_binary_prelude_split_before_its_twelfth_byte_is_still_binary() -> None:
    message = encode_message({":message-type": "event", ":event-type": "x"}, b"{}")
    normalizer = StreamNormalizer()
    for byte in message:
        assert normalizer.feed(bytes([byte])) == []
    # One event frame of no known provider: nothing to detect a provider from.
    with pytest.raises(UnknownProviderError):
        normalizer.close()


# -- frames fed already parsed ----------------------------------------------------------------


def sse_payloads(data: bytes) -> list[tuple[str | None, str]]:
    decoder = SSEDecoder()
    return [(f.event, f.data) for f in decoder.feed(data) + decoder.close()]


@pytest.mark.parametrize(
    "name",
    ["openai/parallel-tool-calls.sse", "anthropic/thinking.sse", "openai-responses/text.sse"],
)
@pytest.mark.parametrize("as_text", [False, True])
def test_parsed_frames_give_the_events_of_their_bytes(name: str, as_text: bool) -> None:
    data = (FIXTURES / name).read_bytes()
    expected = run_chunks([data]).events
    normalizer = StreamNormalizer()
    events = []
    for event, text in sse_payloads(data):
        payload: object = text if as_text or text == "[DONE]" else json.loads(text)
        events += normalizer.feed_payload(payload, event=event)
    events += normalizer.close()
    assert events == expected


def test_model_objects_are_read_through_model_dump_or_to_dict() -> None:
    class Dumped:
        def __init__(self, data: dict[str, object]) -> None:
            self.data = data

        def model_dump(self, **options: object) -> dict[str, object]:
            assert options["by_alias"] is True
            return self.data

    class ToDict(Dumped):
        model_dump = None  # type: ignore[assignment]

        def to_dict(self) -> dict[str, object]:
            return self.data

    data = (FIXTURES / "ollama" / "text.ndjson").read_bytes()
    lines = [json.loads(line) for line in data.splitlines() if line.strip()]
    normalizer = StreamNormalizer()
    events = []
    for n, line in enumerate(lines):
        events += normalizer.feed_payload(Dumped(line) if n % 2 else ToDict(line))
    events += normalizer.close()
    assert events == run_chunks([data]).events


def test_a_payload_of_another_type_is_a_type_error() -> None:
    normalizer = StreamNormalizer("openai")
    with pytest.raises(TypeError, match=r"feed_payload\(\) takes a dict.*got int"):
        normalizer.feed_payload(42)
    assert normalizer.feed_payload({"choices": []}) == []  # still usable


def test_payloads_that_stop_early_are_incomplete() -> None:
    normalizer = StreamNormalizer("anthropic")
    normalizer.feed_payload({"type": "message_start", "message": {"id": "m", "model": "x"}})
    with pytest.raises(IncompleteStreamError, match="before the provider signalled"):
        normalizer.close()
