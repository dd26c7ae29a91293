"""The proxy's usage scan (``_proxy/usage.py``): the token counts of an answer passed
through, found from the few frames that carry them, equal those the whole normalizer
reads, however the bytes are split."""

from __future__ import annotations

import json

import pytest

from laminate import LaminateError, StreamEncoder, StreamNormalizer
from laminate._apis.registry import APIS
from laminate._core.response import Usage
from laminate._proxy import usage as usage_module
from laminate._proxy.usage import UsageScan

from .scripted_backend import Asked, answer_events
from .support import Fixture, stream_fixtures

_CONTENT_TYPES = {
    ".sse": "text/event-stream",
    ".ndjson": "application/x-ndjson",
    ".eventstream": "application/vnd.amazon.eventstream",
    ".json": "application/json",
}


def _read_whole(api: str, data: bytes) -> Usage | None:
    normalizer = StreamNormalizer(api)
    try:
        normalizer.feed(data)
        normalizer.close()
    except LaminateError as exc:
        return exc.partial.usage if exc.partial is not None else None
    return normalizer.response.usage if normalizer.response else None


def _scanned(api: str, content_type: str, data: bytes, step: int | None) -> Usage | None:
    scan = UsageScan(api, content_type)
    for at in range(0, len(data), step or len(data) or 1):
        scan.feed(data[at : at + (step or len(data))])
    return scan.usage()


def _counts(usage: Usage | None) -> tuple[int | None, int | None]:
    return (None, None) if usage is None else (usage.input_tokens, usage.output_tokens)


# Malformed on purpose: the whole normalizer stops at the second `message_start`, the
# scan reads the counts the stream ends with. Both are right for a log line.
_SPLICED = "anthropic-drift/spliced-message-start.sse"


@pytest.mark.parametrize(
    "fixture", [f for f in stream_fixtures() if f.provider in APIS], ids=lambda f: f.id
)
def test_the_scan_finds_the_counts_the_normalizer_reads(fixture: Fixture) -> None:
    if fixture.id == _SPLICED:
        pytest.skip("a malformed stream: the two readers stop in different places")
    data = fixture.path.read_bytes()
    content_type = _CONTENT_TYPES[fixture.path.suffix]
    expected = _counts(_read_whole(fixture.provider, data))
    for step in (None, 1, 7, 100):
        assert _counts(_scanned(fixture.provider, content_type, data, step)) == expected, step


@pytest.mark.parametrize("api", [name for name, r in APIS.items() if r.http is not None])
def test_every_api_is_scanned_without_its_normalizer(api: str) -> None:
    events, _ = answer_events("m", Asked(user="a usage question: \"usage\": {'x': 1}"))
    encoder = StreamEncoder(api)
    data = b"".join(encoder.encode(e) for e in events) + encoder.close()
    scan = UsageScan(api, encoder.media_type)
    assert scan._mode != "full"  # each API's usage key is known
    for at in range(0, len(data), 5):
        scan.feed(data[at : at + 5])
    assert _counts(scan.usage()) == (11, 7)


def test_usage_null_chunks_are_not_taken_for_the_counts() -> None:
    head = {"id": "c", "object": "chat.completion.chunk", "model": "m"}
    chunks = [
        {**head, "choices": [{"index": 0, "delta": {"content": "hi"}}], "usage": None},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": None},
        {**head, "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}},
        {**head, "choices": [], "usage": None},  # a trailing chunk without counts
    ]
    data = b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in chunks)
    data += b"data: [DONE]\r\n\r\n"
    assert _counts(_scanned("openai", "text/event-stream", data, 3)) == (3, 4)


def test_other_framings_and_apis_are_read_whole() -> None:
    # A streamed JSON array (Gemini without alt=sse) is not split into lines here.
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 1},
    }
    data = b"[" + json.dumps(chunk, indent=2).encode() + b"]"
    scan = UsageScan("gemini", "application/json; charset=UTF-8")
    assert scan._mode == "full"
    scan.feed(data)
    assert _counts(scan.usage()) == (5, 1)


def test_a_stream_that_is_not_what_it_says_leaves_no_counts() -> None:
    scan = UsageScan("bedrock", "application/vnd.amazon.eventstream")
    scan.feed(b"\xff\xff\xff\xff" + b"x" * 64)
    assert scan.usage() is None
    scan = UsageScan("anthropic", "text/event-stream")
    scan.feed(b'data: {"type": "message_delta", "usage": {"output_tokens": 2}')  # no line end
    scan.feed(b"x" * 1024)
    assert _counts(scan.usage()) == (None, None)  # an unreadable frame: no counts


@pytest.mark.parametrize("api", ["openai", "anthropic", "gemini"])
def test_a_long_answer_is_held_in_a_bounded_tail_and_read_alike(api: str) -> None:
    # Two megabytes of text: all but the last quarter-megabyte or so is looked at as it
    # passes, and the counts are those the whole normalizer reads.
    events, _ = answer_events("m", Asked(user="a long answer"))
    encoder = StreamEncoder(api)
    head = b"".join(encoder.encode(e) for e in events[:2])
    words = b"".join(encoder.encode(e) for e in events[2:3]) * 20_000
    data = head + words + b"".join(encoder.encode(e) for e in events[3:]) + encoder.close()
    scan = UsageScan(api, encoder.media_type)
    held = 0
    for at in range(0, len(data), 4096):
        scan.feed(data[at : at + 4096])
        held = max(held, scan._held_size)
    assert len(data) > 2_000_000
    assert held <= 2 * usage_module._TAIL + 4096
    assert _counts(scan.usage()) == _counts(_read_whole(api, data)) != (None, None)


def test_a_long_line_is_held_until_it_ends_and_the_counts_after_it_are_found() -> None:
    # One frame of a megabyte (a whole call's arguments, say), then the usage: the long
    # line is held as pieces until its end comes, never searched while it grows.
    head = {"id": "c", "object": "chat.completion.chunk", "model": "m"}
    big = {**head, "choices": [{"index": 0, "delta": {"content": "x" * 1_000_000}}]}
    last = {**head, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 6}}
    data = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in (big, last))
    data += b"data: [DONE]\n\n"
    scan = UsageScan("openai", "text/event-stream")
    for at in range(0, len(data), 4096):
        scan.feed(data[at : at + 4096])
        assert scan._held_size <= 2 * usage_module._TAIL + 4096
    assert _counts(scan.usage()) == (5, 6) == _counts(_read_whole("openai", data))
