"""The sans-IO core: detection, bad input, the error boundary and terminal state."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from laminate import (
    BlockEnd,
    BlockStart,
    IncompleteStreamError,
    InvalidToolUse,
    LaminateError,
    MalformedStreamError,
    ProviderError,
    ResponseDone,
    ResponseStart,
    StopReason,
    StreamNormalizer,
    TextDelta,
    ToolInputDelta,
    ToolUse,
    UnknownProviderError,
    normalize,
)

from .support import FIXTURES, run_chunks, split_at, stream_fixtures


def sse(*payloads: object, event: str | None = None) -> bytes:
    out = []
    for payload in payloads:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        prefix = f"event: {event}\n" if event else ""
        out.append(f"{prefix}data: {data}\n\n")
    return "".join(out).encode()


def chunk(**delta: object) -> dict[str, object]:
    finish = delta.pop("finish_reason", None)
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


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
    body = sse(*({"hello": i} for i in range(10)))
    with pytest.raises(UnknownProviderError) as info:
        StreamNormalizer().feed(body)
    assert "hello" in info.value.seen
    assert "provider" in str(info.value)


def test_unknown_provider_at_close() -> None:
    normalizer = StreamNormalizer()
    normalizer.feed(sse({"hello": 1}))
    with pytest.raises(UnknownProviderError):
        normalizer.close()


def test_invalid_provider_name() -> None:
    with pytest.raises(ValueError, match="unknown provider"):
        StreamNormalizer("gopher")


def test_empty_stream_is_incomplete() -> None:
    with pytest.raises(IncompleteStreamError, match="before any byte"):
        StreamNormalizer("openai").close()


def test_error_payload_before_detection_is_a_provider_error() -> None:
    body = sse(
        {"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded", "code": 429}}
    )
    outcome = run_chunks([body])
    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.retryable
    assert outcome.error.error_type == "rate_limit_exceeded"
    assert outcome.error.message == "Rate limit reached"


def test_non_json_frame_is_malformed_with_offset_and_snippet() -> None:
    good = sse(chunk(content="Hi"))
    bad = b"data: {not json\n\n"
    outcome = run_chunks([good + bad], provider="openai")
    assert isinstance(outcome.error, MalformedStreamError)
    assert outcome.error.offset == len(good)
    assert outcome.error.snippet.startswith("{not json")
    assert outcome.error.partial is not None
    assert outcome.error.partial.text() == "Hi"


def test_keepalive_payloads_are_ignored() -> None:
    body = sse(
        chunk(content="a"), "ping", "KEEP-ALIVE", chunk(content="b", finish_reason="stop"), "[DONE]"
    )
    outcome = run_chunks([body], provider="openai")
    assert outcome.error is None
    assert outcome.response is not None
    assert outcome.response.text() == "ab"


def test_wrong_shape_is_malformed() -> None:
    outcome = run_chunks(
        [sse({"choices": "nope", "object": "chat.completion.chunk"})], provider="openai"
    )
    assert isinstance(outcome.error, MalformedStreamError)
    assert "choices" in str(outcome.error)


def test_normalizer_is_terminal_after_an_error() -> None:
    normalizer = StreamNormalizer("openai")
    with pytest.raises(MalformedStreamError):
        normalizer.feed(b"data: nope\n\n")
    with pytest.raises(LaminateError, match="failed earlier") as info:
        normalizer.feed(sse(chunk(content="x")))
    assert isinstance(info.value.__cause__, MalformedStreamError)
    with pytest.raises(LaminateError, match="failed earlier"):
        normalizer.close()


def test_closed_normalizer_refuses_more() -> None:
    normalizer = StreamNormalizer("openai")
    normalizer.feed(sse(chunk(content="x", finish_reason="stop")))
    normalizer.close()
    with pytest.raises(LaminateError, match="closed"):
        normalizer.feed(b"data: [DONE]\n\n")


def test_events_before_an_error_are_returned_then_the_error_raises() -> None:
    normalizer = StreamNormalizer("openai")
    events = normalizer.feed(sse(chunk(content="Hello")) + b"data: {broken\n\n")
    assert [type(e) for e in events] == [ResponseStart, BlockStart, TextDelta]
    with pytest.raises(MalformedStreamError) as info:
        normalizer.close()
    assert info.value.partial is not None
    assert info.value.partial.text() == "Hello"


def test_tool_call_is_not_finalized_because_its_buffer_parses() -> None:
    normalizer = StreamNormalizer("openai")
    opener = {
        "index": 0,
        "id": "call_a",
        "type": "function",
        "function": {"name": "f", "arguments": ""},
    }
    events = normalizer.feed(
        sse(
            chunk(tool_calls=[opener]),
            chunk(tool_calls=[{"index": 0, "function": {"arguments": "{}"}}]),
        )
    )
    assert not any(isinstance(e, BlockEnd) for e in events)
    with pytest.raises(IncompleteStreamError) as info:
        normalizer.close()
    partial = info.value.partial
    assert partial is not None
    assert partial.tool_uses() == []
    block = partial.content[0]
    assert isinstance(block, InvalidToolUse)
    assert block.raw_input == "{}"
    assert "unfinished" in block.reason


def test_arguments_that_are_not_an_object_are_invalid() -> None:
    opener = {"index": 0, "id": "call_a", "function": {"name": "f", "arguments": "[1, 2]"}}
    outcome = run_chunks(
        [sse(chunk(tool_calls=[opener]), chunk(finish_reason="tool_calls"), "[DONE]")]
    )
    assert outcome.response is not None
    block = outcome.response.content[0]
    assert isinstance(block, InvalidToolUse)
    assert block.raw_input == "[1, 2]"
    assert "not an object" in block.reason
    assert not outcome.response.has_tool_use()


def test_empty_arguments_mean_no_arguments() -> None:
    opener = {"index": 0, "id": "call_a", "function": {"name": "now", "arguments": ""}}
    outcome = run_chunks(
        [sse(chunk(tool_calls=[opener]), chunk(finish_reason="tool_calls"), "[DONE]")]
    )
    assert outcome.response is not None
    assert outcome.response.tool_uses() == [
        ToolUse("call_a", "now", outcome.response.tool_uses()[0].input)
    ]
    assert outcome.response.tool_uses()[0].input.value == {}


def test_tool_ids_are_never_empty_or_repeated() -> None:
    calls = [
        {"index": 0, "id": "", "function": {"name": "a", "arguments": "{}"}},
        {"index": 1, "id": "dup", "function": {"name": "b", "arguments": "{}"}},
        {"index": 2, "id": "dup", "function": {"name": "c", "arguments": "{}"}},
    ]
    outcome = run_chunks(
        [sse(chunk(tool_calls=calls), chunk(finish_reason="tool_calls"), "[DONE]")]
    )
    assert outcome.response is not None
    ids = [t.id for t in outcome.response.tool_uses()]
    assert all(ids)
    assert len(set(ids)) == 3
    assert ids[1] == "dup"


def test_complete_after_finish_reason_without_done_marker() -> None:
    outcome = run_chunks([sse(chunk(content="ok", finish_reason="stop"))], provider="openai")
    assert outcome.error is None
    assert isinstance(outcome.events[-1], ResponseDone)
    assert outcome.events[-1].response.stop_reason == StopReason.END_TURN


def test_frames_after_the_terminal_event_are_ignored() -> None:
    body = sse(chunk(content="ok", finish_reason="stop"), "[DONE]", chunk(content="late"))
    outcome = run_chunks([body], provider="openai")
    assert outcome.response is not None
    assert outcome.response.text() == "ok"


def test_frame_cap() -> None:
    body = sse(chunk(content="x" * 5000))
    outcome = run_chunks([body], provider="openai", max_frame_size=1000)
    assert isinstance(outcome.error, MalformedStreamError)


def test_tool_input_cap() -> None:
    opener = {"index": 0, "id": "c", "function": {"name": "f", "arguments": '{"a": "'}}
    more = [
        chunk(tool_calls=[{"index": 0, "function": {"arguments": "y" * 100}}]) for _ in range(20)
    ]
    outcome = run_chunks(
        [sse(chunk(tool_calls=[opener]), *more)], provider="openai", max_tool_input_size=1000
    )
    assert isinstance(outcome.error, MalformedStreamError)
    assert "max_tool_input_size" in str(outcome.error)
    assert outcome.error.partial is not None
    assert isinstance(outcome.error.partial.content[0], InvalidToolUse)


def test_keep_raw() -> None:
    body = sse(chunk(content="a"), chunk(finish_reason="stop"), "[DONE]")
    plain = run_chunks([body], provider="openai").response
    raw = run_chunks([body], provider="openai", keep_raw=True).response
    assert plain is not None
    assert raw is not None
    assert plain.raw.value is None
    assert len(raw.raw.value) == 2
    assert plain == raw  # raw takes no part in equality


def test_str_chunks_equal_bytes() -> None:
    body = sse(chunk(content="é😀\u2028"), chunk(finish_reason="stop"), "[DONE]")
    a = run_chunks([body]).events
    b = StreamNormalizer()
    events = b.feed(body.decode()) + b.close()
    assert events == a


def test_tool_input_delta_events_carry_fragments() -> None:
    opener = {"index": 0, "id": "c", "function": {"name": "f", "arguments": '{"a"'}}
    body = sse(
        chunk(tool_calls=[opener]),
        chunk(tool_calls=[{"index": 0, "function": {"arguments": ": 1}"}}]),
    )
    events = StreamNormalizer("openai").feed(body)
    assert [e.fragment for e in events if isinstance(e, ToolInputDelta)] == ['{"a"', ": 1}"]


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
    body = sse({"type": "error", "code": "server_error", "message": "boom"}, event="error")
    outcome = run_chunks([body])
    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.error_type == "server_error"
    assert outcome.error.retryable
    assert outcome.error.message == "boom"


def test_open_tool_call_at_content_filter_is_cut_off() -> None:
    opener = {"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}
    body = sse(chunk(tool_calls=[opener]), chunk(finish_reason="content_filter"), "[DONE]")
    outcome = run_chunks([body])
    assert outcome.response is not None
    block = outcome.response.content[0]
    assert isinstance(block, InvalidToolUse)
    assert "content_filter" in block.reason
    assert outcome.response.stop_reason == StopReason.CONTENT_FILTER


def test_bytes_after_the_terminal_event_are_not_read() -> None:
    done = sse(chunk(content="ok", finish_reason="stop"), "[DONE]")
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


def test_a_call_that_never_got_a_name_is_invalid() -> None:
    opener = {"index": 0, "id": "c", "function": {"arguments": "{}"}}
    outcome = run_chunks(
        [sse(chunk(tool_calls=[opener]), chunk(finish_reason="tool_calls"), "[DONE]")]
    )
    assert outcome.response is not None
    block = outcome.response.content[0]
    assert isinstance(block, InvalidToolUse)
    assert "name" in block.reason
    assert outcome.response.tool_uses() == []


def test_nan_in_arguments_is_not_json() -> None:
    opener = {"index": 0, "id": "c", "function": {"name": "f", "arguments": '{"x": NaN}'}}
    outcome = run_chunks(
        [sse(chunk(tool_calls=[opener]), chunk(finish_reason="tool_calls"), "[DONE]")]
    )
    assert outcome.response is not None
    block = outcome.response.content[0]
    assert isinstance(block, InvalidToolUse)
    assert "NaN" in block.reason
