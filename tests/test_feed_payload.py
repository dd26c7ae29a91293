"""Frames fed already parsed (``StreamNormalizer.feed_payload``): dicts and SDK model
objects give the events of their bytes."""

from __future__ import annotations

import json

import pytest

from laminate import (
    IncompleteStreamError,
    StreamNormalizer,
)
from laminate._framing.sse import SSEDecoder

from .support import FIXTURES, run_chunks

ELEMENTS: list[dict[str, object]] = [
    {"text": 'a } ] " { [ , \\ \u2028 \U0001f600'},
    {"nested": {"list": [1, 2, {"deep": [[], {}]}], "empty": ""}},
    {"n": -1.5e3, "t": True, "f": False, "z": None},
]


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
