"""The sans-IO core: detection, bad input, the error boundary and terminal state."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from laminate import (
    BlockStart,
    IncompleteStreamError,
    LaminateError,
    MalformedStreamError,
    ProviderError,
    ResponseDone,
    ResponseStart,
    StopReason,
    StreamNormalizer,
    TextDelta,
    UnknownProviderError,
    normalize,
)

from .builders import chat_chunk, sse_of
from .support import FIXTURES, run_chunks, split_at, stream_fixtures


def test_detects_each_core_provider_from_bytes() -> None:
    for fixture in stream_fixtures():
        if (
            fixture.provider in {"openai", "anthropic", "ollama"}
            and fixture.expected.get("error") is None
        ):
            outcome = run_chunks([fixture.path.read_bytes()])
            assert outcome.response is not None
            assert outcome.response.provider == fixture.provider, fixture.id


def test_detects_from_url_hint() -> None:
    normalizer = StreamNormalizer(url="https://api.example.com/v1/chat/completions?x=1")
    assert normalizer.provider == "openai"
    assert StreamNormalizer(url="http://localhost:11434/api/chat").provider == "ollama"
    assert StreamNormalizer(url="https://api.anthropic.com/v1/messages").provider == "anthropic"


def test_unknown_provider_says_what_was_seen() -> None:
    body = sse_of(*({"hello": i} for i in range(10)))
    with pytest.raises(UnknownProviderError) as info:
        StreamNormalizer().feed(body)
    assert "hello" in info.value.seen
    assert "provider" in str(info.value)


def test_unknown_provider_at_close() -> None:
    normalizer = StreamNormalizer()
    normalizer.feed(sse_of({"hello": 1}))
    with pytest.raises(UnknownProviderError):
        normalizer.close()


def test_invalid_provider_name() -> None:
    with pytest.raises(ValueError, match="unknown provider"):
        StreamNormalizer("gopher")


def test_empty_stream_is_incomplete() -> None:
    with pytest.raises(IncompleteStreamError, match="before any byte"):
        StreamNormalizer("openai").close()


def test_error_payload_before_detection_is_a_provider_error() -> None:
    body = sse_of(
        {"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded", "code": 429}}
    )
    outcome = run_chunks([body])
    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.retryable
    assert outcome.error.error_type == "rate_limit_exceeded"
    assert outcome.error.message == "Rate limit reached"


def test_non_json_frame_is_malformed_with_offset_and_snippet() -> None:
    good = sse_of(chat_chunk(content="Hi"))
    bad = b"data: {not json\n\n"
    outcome = run_chunks([good + bad], provider="openai")
    assert isinstance(outcome.error, MalformedStreamError)
    assert outcome.error.offset == len(good)
    assert outcome.error.snippet.startswith("{not json")
    assert outcome.error.partial is not None
    assert outcome.error.partial.text() == "Hi"


def test_keepalive_payloads_are_ignored() -> None:
    body = sse_of(
        chat_chunk(content="a"),
        "ping",
        "KEEP-ALIVE",
        chat_chunk(content="b", finish_reason="stop"),
        "[DONE]",
    )
    outcome = run_chunks([body], provider="openai")
    assert outcome.error is None
    assert outcome.response is not None
    assert outcome.response.text() == "ab"


def test_wrong_shape_is_malformed() -> None:
    outcome = run_chunks(
        [sse_of({"choices": "nope", "object": "chat.completion.chunk"})], provider="openai"
    )
    assert isinstance(outcome.error, MalformedStreamError)
    assert "choices" in str(outcome.error)


def test_normalizer_is_terminal_after_an_error() -> None:
    normalizer = StreamNormalizer("openai")
    with pytest.raises(MalformedStreamError):
        normalizer.feed(b"data: nope\n\n")
    with pytest.raises(LaminateError, match="failed earlier") as info:
        normalizer.feed(sse_of(chat_chunk(content="x")))
    assert isinstance(info.value.__cause__, MalformedStreamError)
    with pytest.raises(LaminateError, match="failed earlier"):
        normalizer.close()


def test_closed_normalizer_refuses_more() -> None:
    normalizer = StreamNormalizer("openai")
    normalizer.feed(sse_of(chat_chunk(content="x", finish_reason="stop")))
    normalizer.close()
    with pytest.raises(LaminateError, match="closed"):
        normalizer.feed(b"data: [DONE]\n\n")


def test_events_before_an_error_are_returned_then_the_error_raises() -> None:
    normalizer = StreamNormalizer("openai")
    events = normalizer.feed(sse_of(chat_chunk(content="Hello")) + b"data: {broken\n\n")
    assert [type(e) for e in events] == [ResponseStart, BlockStart, TextDelta]
    with pytest.raises(MalformedStreamError) as info:
        normalizer.close()
    assert info.value.partial is not None
    assert info.value.partial.text() == "Hello"


def test_complete_after_finish_reason_without_done_marker() -> None:
    outcome = run_chunks(
        [sse_of(chat_chunk(content="ok", finish_reason="stop"))], provider="openai"
    )
    assert outcome.error is None
    assert isinstance(outcome.events[-1], ResponseDone)
    assert outcome.events[-1].response.stop_reason == StopReason.END_TURN


def test_frames_after_the_terminal_event_are_ignored() -> None:
    body = sse_of(
        chat_chunk(content="ok", finish_reason="stop"), "[DONE]", chat_chunk(content="late")
    )
    outcome = run_chunks([body], provider="openai")
    assert outcome.response is not None
    assert outcome.response.text() == "ok"


def test_frame_cap() -> None:
    body = sse_of(chat_chunk(content="x" * 5000))
    outcome = run_chunks([body], provider="openai", max_frame_size=1000)
    assert isinstance(outcome.error, MalformedStreamError)


def test_keep_raw() -> None:
    body = sse_of(chat_chunk(content="a"), chat_chunk(finish_reason="stop"), "[DONE]")
    plain = run_chunks([body], provider="openai").response
    raw = run_chunks([body], provider="openai", keep_raw=True).response
    assert plain is not None
    assert raw is not None
    assert plain.raw.value is None
    assert len(raw.raw.value) == 2
    assert plain == raw  # raw takes no part in equality


def test_str_chunks_equal_bytes() -> None:
    body = sse_of(chat_chunk(content="é😀\u2028"), chat_chunk(finish_reason="stop"), "[DONE]")
    a = run_chunks([body]).events
    b = StreamNormalizer()
    events = b.feed(body.decode()) + b.close()
    assert events == a


CORPUS = [f.path.read_bytes() for f in stream_fixtures()]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=2000), cuts=st.lists(st.integers(0, 2000), max_size=10))
def test_random_bytes_raise_only_laminate_errors(data: bytes, cuts: list[int]) -> None:
    for provider in (None, "openai", "anthropic", "ollama"):
        run_chunks(split_at(data, cuts), provider=provider)  # any other exception fails the test


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    which=st.integers(0, len(CORPUS) - 1),
    edits=st.lists(
        st.tuples(st.integers(0, 10**6), st.binary(max_size=4), st.integers(0, 4)), max_size=6
    ),
    cuts=st.lists(st.integers(0, 4000), max_size=8),
)
def test_mutated_fixtures_raise_only_laminate_errors(
    which: int, edits: list[tuple[int, bytes, int]], cuts: list[int]
) -> None:
    data = bytearray(CORPUS[which])
    for position, insert, delete in edits:
        at = position % (len(data) + 1)
        data[at : at + delete] = insert
    outcome = run_chunks(split_at(bytes(data), cuts))
    if outcome.error is not None:
        assert outcome.error.partial is not None


def test_flat_error_event_before_detection() -> None:
    body = sse_of({"type": "error", "code": "server_error", "message": "boom"}, event="error")
    outcome = run_chunks([body])
    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.error_type == "server_error"
    assert outcome.error.retryable
    assert outcome.error.message == "boom"


def test_bytes_after_the_terminal_event_are_not_read() -> None:
    done = sse_of(chat_chunk(content="ok", finish_reason="stop"), "[DONE]")
    outcome = run_chunks([done, b"\xff\xfe garbage without end"], provider="openai")
    assert outcome.error is None
    assert outcome.response is not None
    assert outcome.response.text() == "ok"


@pytest.mark.parametrize(
    "name", ["openai/tool-call", "anthropic/parallel-tool-calls", "ollama/text", "openai/text"]
)
def test_a_complete_body_through_the_stream_api(name: str) -> None:
    """A non-streaming answer fed to the stream API gives the same response as the body."""
    body = (FIXTURES / f"{name}.body.json").read_bytes()
    expected = normalize(body)
    pretty = json.dumps(json.loads(body), indent=2).encode()
    compact = json.dumps(json.loads(body)).encode()
    provider = name.split("/", 1)[0]
    for data in (pretty, compact):
        for hint in (None, provider):
            outcome = run_chunks(split_at(data, range(0, len(data), 7)), provider=hint)
            assert outcome.error is None, (name, hint, outcome.error)
            assert outcome.response is not None
            assert outcome.response.content == expected.content
            assert outcome.response.stop_reason == expected.stop_reason
            assert outcome.response.usage == expected.usage
            assert isinstance(outcome.events[-1], ResponseDone)


def test_a_pretty_printed_error_body_is_a_provider_error() -> None:
    error = {"error": {"type": "invalid_request_error", "message": "messages: field required"}}
    data = json.dumps(error, indent=2).encode()
    for provider in (None, "anthropic", "openai", "ollama"):
        outcome = run_chunks([data[:10], data[10:]], provider=provider)
        assert isinstance(outcome.error, ProviderError), provider
        assert outcome.error.error_type == "invalid_request_error"
        assert not outcome.error.retryable


def test_a_body_that_is_not_json_is_malformed() -> None:
    outcome = run_chunks([b'{\n  "choices": [x]\n}'], provider="openai")
    assert isinstance(outcome.error, MalformedStreamError)
    assert outcome.error.offset == 0


@pytest.mark.parametrize("provider", ["openai", None])
def test_a_body_cut_short_is_incomplete(provider: str | None) -> None:
    outcome = run_chunks([b'{\n  "choices": [\n'], provider=provider)
    assert isinstance(outcome.error, IncompleteStreamError)
    assert "ended inside its JSON document" in str(outcome.error)


def test_an_ndjson_stream_whose_later_line_breaks_is_malformed() -> None:
    line = b'{"model":"m","message":{"role":"assistant","content":"a"},"done":false}\n'
    outcome = run_chunks([line + b"{broken\n"])
    assert isinstance(outcome.error, MalformedStreamError)
    assert outcome.error.offset == len(line)
