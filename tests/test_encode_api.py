"""The encoder's surface: sans-IO order checks, the async and sync shells, complete
bodies, media types, live output, tool-call numbering, opaque tokens and JSON round trips."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import laminate
from laminate import (
    BlockEnd,
    BlockStart,
    FlexValue,
    LaminateError,
    NormalizedResponse,
    Reasoning,
    ResponseDone,
    ResponseStart,
    StopReason,
    Text,
    TextDelta,
    ToolUse,
    UnknownProviderError,
    Usage,
)
from laminate._apis.writer import json_bytes, wire_stop
from laminate._encode.encoder import targets

from .support import FIXTURES

PARALLEL = FIXTURES / "anthropic" / "parallel-tool-calls.sse"
THINKING = FIXTURES / "anthropic" / "thinking.sse"
# APIs that send a tool call whole: their writers write it when it ends.
WHOLE_CALLS = frozenset({"ollama", "gemini"})


def events_of(path: Path, provider: str | None = None) -> list[laminate.Event]:
    normalizer = laminate.StreamNormalizer(provider)
    return normalizer.feed(path.read_bytes()) + normalizer.close()


def response_of(path: Path) -> NormalizedResponse:
    done = events_of(path)[-1]
    assert isinstance(done, ResponseDone)
    return done.response


def test_media_types_and_headers() -> None:
    assert laminate.media_type("ollama") == "application/x-ndjson"
    assert laminate.media_type("anthropic") == "text/event-stream"
    assert laminate.media_type("events") == "application/x-ndjson"
    encoder = laminate.StreamEncoder("ai-sdk")
    assert encoder.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert encoder.headers["content-type"] == "text/event-stream"
    for target in targets():
        assert laminate.media_type(target)


def test_an_unknown_target_names_the_known_ones() -> None:
    with pytest.raises(UnknownProviderError, match="anthropic"):
        laminate.StreamEncoder("nope")
    with pytest.raises(UnknownProviderError):
        laminate.media_type("nope")


def test_every_delta_becomes_bytes_at_once() -> None:
    events = events_of(PARALLEL)
    for target in targets():
        encoder = laminate.StreamEncoder(target)
        for event in events:
            data = encoder.encode(event)
            if isinstance(event, TextDelta) and target != "ollama":
                assert json_bytes(event.text)[1:-1] in data, target
            if type(event).__name__ == "ToolInputDelta" and target not in WHOLE_CALLS:
                assert data, target  # arguments grow on the wire as they arrive


def test_parallel_calls_get_their_own_tool_call_index() -> None:
    # The answer's blocks are text (0), then two calls (1, 2): the calls are 0 and 1.
    data = b"".join(map(laminate.StreamEncoder("openai").encode, events_of(PARALLEL)))
    indexes = {
        call["index"]
        for line in data.split(b"\n")
        if line.startswith(b"data: {")
        for choice in json.loads(line[6:])["choices"]
        for call in choice["delta"].get("tool_calls", [])
    }
    assert indexes == {0, 1}


def test_signatures_go_only_to_their_own_provider() -> None:
    events = events_of(THINKING)
    signature = response_of(THINKING).reasoning()[0].signature
    assert signature
    for target in targets():
        encoder = laminate.StreamEncoder(target)
        data = b"".join(map(encoder.encode, events)) + encoder.close()
        assert (signature.encode() in data) == (target in ("anthropic", "events")), target


def test_events_out_of_order_are_refused() -> None:
    encoder = laminate.StreamEncoder("anthropic")
    encoder.encode(ResponseStart("r", "m", "openai"))
    with pytest.raises(LaminateError, match="not open"):
        encoder.encode(TextDelta(0, "x"))
    encoder.encode(BlockStart(0, Text("")))
    with pytest.raises(LaminateError, match="already open"):
        encoder.encode(BlockStart(0, Text("")))
    done = NormalizedResponse("r", "m", "openai", [], StopReason.END_TURN, Usage())
    with pytest.raises(LaminateError, match="still open"):
        encoder.encode(ResponseDone(done))
    encoder.encode(BlockEnd(0, Text("")))
    encoder.encode(ResponseDone(done))
    with pytest.raises(LaminateError, match="already complete"):
        encoder.encode(BlockStart(1, Text("")))


def test_a_stream_cut_short_ends_without_a_terminal_frame() -> None:
    encoder = laminate.StreamEncoder("openai")
    encoder.encode(ResponseStart("r", "m", "openai"))
    head = encoder.encode(BlockStart(0, Text(""))) + encoder.encode(TextDelta(0, "par"))
    assert encoder.close() == b""
    with pytest.raises(laminate.IncompleteStreamError) as caught:
        laminate.collect_sync([head], "openai")
    assert caught.value.partial is not None
    assert caught.value.partial.text() == "par"


def test_hand_built_events_need_no_response_start() -> None:
    response = NormalizedResponse(
        "r1", "m1", "anthropic", [Text("hi")], StopReason.END_TURN, Usage(3, 4)
    )
    events: list[laminate.Event] = [
        BlockStart(0, Text("")),
        TextDelta(0, "hi"),
        BlockEnd(0, Text("hi")),
    ]
    data = b"".join(
        map(laminate.StreamEncoder("anthropic").encode, [*events, ResponseDone(response)])
    )
    back = laminate.collect_sync([data], "anthropic")
    assert back.text() == "hi"
    assert back.usage.output_tokens == 4


def test_a_call_named_late_is_written_whole_with_its_name() -> None:
    call = ToolUse("c1", "lookup", FlexValue({"q": 1}))
    done = NormalizedResponse("r", "m", "openai", [call], StopReason.TOOL_USE, Usage())
    events = [
        ResponseStart("r", "m", "openai"),
        BlockStart(0, ToolUse("c1", "", FlexValue({}))),
        *events_of_fragments('{"q": 1}'),
        BlockEnd(0, call),
        ResponseDone(done),
    ]
    for target in ("anthropic", "openai-responses", "openai"):
        data = b"".join(map(laminate.StreamEncoder(target).encode, events))
        assert laminate.collect_sync([data], target).tool_uses() == [call]


def events_of_fragments(text: str) -> list[laminate.Event]:
    """``ToolInputDelta`` events for ``text`` as block 0's arguments."""
    return [laminate.event_from_dict({"event": "tool_input_delta", "index": 0, "fragment": text})]


@pytest.mark.anyio
async def test_encode_stream_over_normalize_stream() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield PARALLEL.read_bytes()

    stream = laminate.normalize_stream(chunks(), "anthropic")
    data = b"".join([c async for c in laminate.encode_stream(stream, "openai")])
    assert data.endswith(b"data: [DONE]\n\n")
    back = laminate.collect_sync([data], "openai")
    assert back.tool_uses() == response_of(PARALLEL).tool_uses()


def test_encode_stream_sync_closes_its_source() -> None:
    closed = []

    class Source:
        def __init__(self) -> None:
            self.events = iter(events_of(PARALLEL))

        def __iter__(self) -> Source:
            return self

        def __next__(self) -> laminate.Event:
            return next(self.events)

        def close(self) -> None:
            closed.append(True)

    chunks = laminate.encode_stream_sync(Source(), "ollama")
    next(chunks)
    chunks.close()
    assert closed == [True]


def test_complete_bodies_say_the_targets_own_stop_reason() -> None:
    """Not the source's raw string (every body of every writer is read back in
    test_encode)."""
    cohere = response_of(FIXTURES / "cohere" / "text.sse")
    assert cohere.stop_reason.raw == "COMPLETE"
    assert laminate.encode_response(cohere, "anthropic")["stop_reason"] == "end_turn"
    assert laminate.encode_response(cohere, "bedrock")["stopReason"] == "end_turn"
    assert laminate.encode_response(cohere, "ollama")["done_reason"] == "stop"
    chat = laminate.encode_response(cohere, "openai")
    assert chat["choices"][0]["finish_reason"] == "stop"
    calls = response_of(PARALLEL)
    assert calls.stop_reason.raw == "tool_use"
    assert laminate.encode_response(calls, "openai")["choices"][0]["finish_reason"] == "tool_calls"
    assert laminate.encode_response(calls, "cohere")["finish_reason"] == "TOOL_CALL"
    gemini = laminate.encode_response(calls, "gemini")
    assert gemini["candidates"][0]["finishReason"] == "STOP"


def test_complete_bodies_drop_foreign_signatures() -> None:
    response = response_of(THINKING)
    assert laminate.encode_response(response, "anthropic")["content"][0]["signature"]
    body = laminate.encode_response(response, "openai-responses")
    assert "encrypted_content" not in json.dumps(body)
    message = laminate.encode_response(response, "ai-sdk")
    assert message["role"] == "assistant"
    assert [p["type"] for p in message["parts"]] == ["reasoning", "text"]
    assert laminate.encode_response(response, "events") == response.to_dict()


def test_stop_strings_keep_their_own_value_or_name_their_kind() -> None:
    table = {"stop": StopReason.END_TURN, "length": StopReason.MAX_TOKENS}
    by_kind = {"end_turn": "stop", "max_tokens": "length"}
    assert wire_stop(StopReason.END_TURN.with_raw("stop"), table, by_kind) == "stop"
    assert wire_stop(StopReason.MAX_TOKENS.with_raw("max_tokens"), table, by_kind) == "length"
    assert wire_stop(StopReason.unknown("eos_token"), table, by_kind) == "eos_token"
    assert wire_stop(StopReason.REFUSAL.with_raw("stop"), table, by_kind) == "refusal"


def test_json_bytes_survives_a_lone_surrogate() -> None:
    assert json.loads(json_bytes("a\ud800b")) == "a\ud800b"
    assert json_bytes("é\u2028") == '"é\u2028"'.encode()


# -- JSON round trips ---------------------------------------------------------------------


def test_response_to_dict_and_back() -> None:
    for path in (PARALLEL, THINKING):
        response = response_of(path)
        data = json.loads(json.dumps(response.to_dict()))
        assert NormalizedResponse.from_dict(data) == response
    odd = NormalizedResponse(
        "r",
        "m",
        "p",
        [Reasoning("", "sig", True, "rs_1"), Text("t", "ts")],
        StopReason.unknown("eos"),
        Usage(1, None, 2, 3, 4),
    )
    back = NormalizedResponse.from_dict(odd.to_dict())
    assert back == odd
    assert back.stop_reason.is_unknown


def test_events_to_dict_and_back() -> None:
    events = events_of(PARALLEL)
    views: dict[int, Any] = {}
    back = [laminate.event_from_dict(json.loads(json.dumps(e.to_dict())), views) for e in events]
    assert back == events
    last_delta = [e for e in back if type(e).__name__ == "ToolInputDelta"][-1]
    assert last_delta.partial.value == {"city": "Zürich", "days": 2}  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"event": "nope"},
        {"event": "text_delta", "index": "0", "text": "x"},
        {"event": "block_start", "index": 0, "block": {"type": "text"}},
        {"event": "response_done", "response": {"id": 1}},
    ],
)
def test_malformed_dicts_say_what_is_wrong(data: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=r"\w"):
        laminate.event_from_dict(data)
