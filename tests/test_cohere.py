"""Cohere v2 chat: the stream handler's rules, complete bodies, detection, request shapes,
the body writer, and every real recording in ../shared/real-streams*/cohere against what
a reader of that recording expects (written by hand from the recording: ids, tool names
and arguments, how the text starts, stop reason, usage). The v1 recording must fail with a
clear error, never give an answer."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from laminate import (
    BlockEnd,
    BlockStart,
    FlexValue,
    IncompleteStreamError,
    InvalidToolUse,
    LaminateError,
    MalformedStreamError,
    NormalizedResponse,
    ProviderError,
    Reasoning,
    StopReason,
    StreamNormalizer,
    Text,
    TextDelta,
    ToolInputDelta,
    ToolResult,
    ToolUse,
    Unknown,
    Usage,
    append_turn,
    assistant_message,
    encode_response,
    normalize,
    parse_cohere_response,
    tool_results,
)
from laminate._apis.cohere.write_body import write_body
from laminate._apis.detect import provider_from_body, provider_from_frame, provider_from_url
from laminate._tools.registry import ToolRegistry

from .support import (
    FIXTURES,
    REAL_STREAMS,
    REAL_STREAMS_2,
    bytes_of,
    lines_of,
    needs_real_streams,
    needs_real_streams_2,
    run_chunks,
)

COHERE = FIXTURES / "cohere"
MESSAGE_START = {
    "id": "m-1",
    "type": "message-start",
    "delta": {"message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": []}},
}


def sse(*frames: dict[str, Any] | str) -> bytes:
    """An SSE body: each frame with its ``event:`` line (as Cohere sends them)."""
    out = []
    for frame in frames:
        if isinstance(frame, str):
            out.append(f"data: {frame}\n\n")
        else:
            out.append(f"event: {frame.get('type')}\ndata: {json.dumps(frame)}\n\n")
    return "".join(out).encode()


def text_start(index: int = 0, kind: str = "text") -> dict[str, Any]:
    content = {"type": kind, kind: ""}
    return {"type": "content-start", "index": index, "delta": {"message": {"content": content}}}


def text_delta(text: str, index: int = 0, kind: str = "text") -> dict[str, Any]:
    content = {kind: text}
    return {"type": "content-delta", "index": index, "delta": {"message": {"content": content}}}


def call_start(index: int, id: str, name: str, arguments: str = "") -> dict[str, Any]:
    call = {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}
    return {"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": call}}}


def call_delta(index: int, fragment: str) -> dict[str, Any]:
    call = {"function": {"arguments": fragment}}
    return {"type": "tool-call-delta", "index": index, "delta": {"message": {"tool_calls": call}}}


def end(finish: str | None = "COMPLETE", **delta: Any) -> dict[str, Any]:
    usage = {
        "billed_units": {"input_tokens": 3, "output_tokens": 4},
        "tokens": {"input_tokens": 30, "output_tokens": 5},
    }
    body: dict[str, Any] = {"usage": usage, **delta}
    if finish is not None:
        body["finish_reason"] = finish
    return {"type": "message-end", "delta": body}


def collect(data: bytes, provider: str | None = None) -> NormalizedResponse:
    outcome = run_chunks([data], provider)
    if outcome.error is not None:
        raise outcome.error
    assert outcome.response is not None
    return outcome.response


# -- the stream ------------------------------------------------------------------------


def test_usage_counts_tokens_and_keeps_billed_units_in_raw() -> None:
    response = collect(sse(MESSAGE_START, text_start(), text_delta("hi"), end(), "[DONE]"))
    assert (response.usage.input_tokens, response.usage.output_tokens) == (30, 5)
    assert response.usage.raw["billed_units"] == {"input_tokens": 3, "output_tokens": 4}
    assert response.stop_reason == StopReason.END_TURN
    assert response.stop_reason.raw == "COMPLETE"


def test_message_end_completes_without_done_marker() -> None:
    response = collect(sse(MESSAGE_START, text_start(), text_delta("hi"), end()))
    assert response.text() == "hi"


def test_done_marker_before_message_end_is_incomplete() -> None:
    outcome = run_chunks([sse(MESSAGE_START, text_start(), text_delta("hi"), "[DONE]")])
    assert isinstance(outcome.error, IncompleteStreamError)
    assert outcome.error.partial is not None
    assert outcome.error.partial.text() == "hi"


def test_events_are_ordered_and_blocks_numbered_across_kinds() -> None:
    # Cohere numbers content, calls and citations separately: index 0 of each is its own.
    plan = {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "Plan."}}}
    data = sse(
        MESSAGE_START,
        text_start(0, "thinking"),
        text_delta("think", 0, "thinking"),
        {"type": "content-end", "index": 0},
        plan,
        call_start(0, "c0", "f", '{"a":'),
        call_delta(0, "1}"),
        {"type": "tool-call-end", "index": 0},
        end("TOOL_CALL"),
    )
    outcome = run_chunks([data])
    assert outcome.error is None
    starts = [
        (e.index, type(e.block).__name__) for e in outcome.events if isinstance(e, BlockStart)
    ]
    assert starts == [(0, "Reasoning"), (1, "Reasoning"), (2, "ToolUse")]
    ends = [e.index for e in outcome.events if isinstance(e, BlockEnd)]
    assert ends == [0, 1, 2]  # the plan ends when the call starts
    response = outcome.response
    assert response is not None
    assert response.content[1] == Reasoning("Plan.", id="tool_plan")
    assert response.tool_uses()[0].input.value == {"a": 1}
    fragments = [e.fragment for e in outcome.events if isinstance(e, ToolInputDelta)]
    assert fragments == ['{"a":', "1}"]


def test_content_delta_without_content_start_opens_a_text_block() -> None:
    response = collect(sse(MESSAGE_START, text_delta("a"), text_delta("b"), end()))
    assert response.content == [Text("ab")]


def test_unknown_content_type_is_kept() -> None:
    start = text_start(0, "image")
    start["delta"]["message"]["content"]["url"] = "https://example.invalid/a.png"
    response = collect(sse(MESSAGE_START, start, {"type": "content-end", "index": 0}, end()))
    assert response.content == [
        Unknown("image", FlexValue({"image": "", "url": "https://example.invalid/a.png"}))
    ]


def test_unknown_and_debug_events_are_ignored() -> None:
    data = sse(
        MESSAGE_START,
        {"type": "debug", "prompt": "<rendered prompt>"},
        {"type": "some-future-event", "index": 0},
        text_delta("ok"),
        end(),
    )
    assert collect(data).text() == "ok"


def test_tool_calls_as_a_list_is_malformed() -> None:
    bad = call_start(0, "c0", "f")
    bad["delta"]["message"]["tool_calls"] = [bad["delta"]["message"]["tool_calls"]]
    outcome = run_chunks([sse(MESSAGE_START, bad, end("TOOL_CALL"))])
    assert isinstance(outcome.error, MalformedStreamError)


def test_tool_delta_for_a_call_never_started_is_malformed() -> None:
    outcome = run_chunks([sse(MESSAGE_START, call_delta(3, "{}"), end("TOOL_CALL"))])
    assert isinstance(outcome.error, MalformedStreamError)


def test_older_tool_call_field_is_read() -> None:
    start = {
        "type": "tool-call-start",
        "index": 0,
        "delta": {"tool_call": {"id": "c0", "function": {"name": "f", "arguments": "{}"}}},
    }
    data = sse(MESSAGE_START, start, {"type": "tool-call-end", "index": 0}, end("TOOL_CALL"))
    assert collect(data).tool_uses()[0].name == "f"


def test_error_finish_with_an_open_call_is_a_provider_error() -> None:
    data = sse(MESSAGE_START, call_start(0, "c0", "f", '{"a": 1}'), end("ERROR"))
    outcome = run_chunks([data])
    error = outcome.error
    assert isinstance(error, ProviderError)
    assert error.error_type == "error"
    assert error.partial is not None
    assert isinstance(error.partial.content[0], InvalidToolUse)
    assert error.partial.content[0].raw_input == '{"a": 1}'


def test_timeout_with_error_text_is_retryable() -> None:
    data = sse(MESSAGE_START, text_delta("x"), end("TIMEOUT", error="generation timed out"))
    error = run_chunks([data]).error
    assert isinstance(error, ProviderError)
    assert (error.error_type, error.retryable, error.message) == (
        "timeout",
        True,
        "generation timed out",
    )


def test_untyped_error_frame_is_a_provider_error() -> None:
    data = sse(MESSAGE_START, text_delta("x"), {"id": "e", "message": "too many tokens"})
    error = run_chunks([data]).error
    assert isinstance(error, ProviderError)
    assert error.message == "too many tokens"


def test_two_answers_spliced_are_malformed() -> None:
    other = {**MESSAGE_START, "id": "m-2"}
    outcome = run_chunks([sse(MESSAGE_START, text_delta("x"), other, end())])
    assert isinstance(outcome.error, MalformedStreamError)
    assert run_chunks([sse(MESSAGE_START, MESSAGE_START, text_delta("x"), end())]).error is None


def test_frames_fed_as_payloads_give_the_same_events() -> None:
    frames: list[dict[str, Any] | str] = [
        MESSAGE_START,
        text_start(),
        text_delta("hé"),
        {"type": "content-end", "index": 0},
        end(),
        "[DONE]",
    ]
    by_bytes = run_chunks([sse(*frames)])
    normalizer = StreamNormalizer("cohere")
    events = []
    for frame in frames:
        events.extend(normalizer.feed_payload(frame, event=None))
    events.extend(normalizer.close())
    assert events == by_bytes.events


# -- detection -------------------------------------------------------------------------


def test_detection() -> None:
    assert provider_from_url("/v2/chat") == "cohere"
    assert provider_from_frame("message-start", MESSAGE_START) == "cohere"
    assert provider_from_frame(None, text_delta("x")) == "cohere"
    # Anthropic's underscored names stay Anthropic's.
    assert provider_from_frame(None, {"type": "message_start", "message": {}}) == "anthropic"
    assert provider_from_frame(None, {"type": "content-block"}) is None
    body = json.loads((COHERE / "text.body.json").read_text("utf-8"))
    assert provider_from_body(body) == "cohere"


def test_detected_from_the_url_of_a_response() -> None:
    normalizer = StreamNormalizer(url="https://api.cohere.com/v2/chat")
    assert normalizer.provider == "cohere"


def test_v1_stream_is_refused_clearly() -> None:
    line = {"is_finished": False, "event_type": "stream-start", "generation_id": "g"}
    data = (json.dumps(line) + "\n").encode()
    error = run_chunks([data]).error
    assert isinstance(error, MalformedStreamError)
    assert "v1" in str(error)


# -- complete bodies -----------------------------------------------------------------------


def test_body_fixtures_parse() -> None:
    response = parse_cohere_response((COHERE / "parallel-tool-calls.body.json").read_bytes())
    assert [t.input.value for t in response.tool_uses()] == [
        {"city": "Lyon", "units": "celsius"},
        {"city": "Oslo"},
    ]
    assert response.content[0] == Reasoning(
        "I will look up the weather in Lyon and in Oslo.", id="tool_plan"
    )
    assert response.usage.raw["billed_units"] == {"input_tokens": 31, "output_tokens": 38}


def test_error_body_is_a_provider_error() -> None:
    with pytest.raises(ProviderError, match="invalid request"):
        parse_cohere_response({"id": "x", "message": "invalid request: model not found"})


def test_v1_body_is_refused_clearly() -> None:
    body = {"response_id": "r", "text": "hi", "generation_id": "g", "finish_reason": "COMPLETE"}
    with pytest.raises(MalformedStreamError, match="v1"):
        normalize(body)


@pytest.mark.parametrize("name", ["text", "thinking", "parallel-tool-calls", "citations"])
def test_written_body_reads_back_the_same(name: str) -> None:
    streamed = collect((COHERE / f"{name}.sse").read_bytes())
    written = write_body(streamed)
    again = normalize(json.loads(json.dumps(written)))
    assert again.provider == "cohere"
    assert again.content == streamed.content
    assert again.stop_reason == streamed.stop_reason
    assert again.usage == streamed.usage


def test_written_body_names_a_foreign_stop_reason_in_cohere_terms() -> None:
    foreign = NormalizedResponse(
        "id", "m", "anthropic", [Text("hi")], StopReason.END_TURN.with_raw("end_turn"), Usage(1, 2)
    )
    assert write_body(foreign)["finish_reason"] == "COMPLETE"


# -- request shapes ------------------------------------------------------------------------


def test_tool_shape() -> None:
    registry = ToolRegistry()

    @registry.tool
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return city

    (entry,) = registry.tools("cohere")
    assert entry["type"] == "function"
    assert entry["function"]["name"] == "get_weather"
    assert entry["function"]["description"] == "Weather for a city."
    assert entry["function"]["parameters"]["properties"] == {"city": {"type": "string"}}


def test_assistant_turn_echoes_the_plan_and_calls() -> None:
    response = collect((COHERE / "parallel-tool-calls.sse").read_bytes())
    message = assistant_message(response, "cohere")
    assert message == {
        "role": "assistant",
        "tool_plan": "I will look up the weather in Lyon and in Oslo.",
        "tool_calls": [
            {
                "id": "get_weather_k2m8p4x7q1zd",
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "arguments": '{"city":"Lyon","units":"celsius"}',
                },
            },
            {
                "id": "get_weather_w9c3t6r5b0ne",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
            },
        ],
    }


def test_assistant_turn_of_text_keeps_citations_and_not_thinking() -> None:
    cited = assistant_message(collect((COHERE / "citations.sse").read_bytes()), "cohere")
    assert isinstance(cited, dict)
    assert cited["content"] == "The library opens at 9 and closes at 18."
    assert [c["text"] for c in cited["citations"]] == ["9", "18"]
    thought = assistant_message(collect((COHERE / "thinking.sse").read_bytes()), "cohere")
    assert thought == {"role": "assistant", "content": "17 \u00d7 3 = 51."}


def test_assistant_turn_of_another_provider_sends_no_plan() -> None:
    response = NormalizedResponse(
        "id",
        "m",
        "anthropic",
        [Reasoning("thinking", signature="sig"), ToolUse("t1", "f", FlexValue({"a": 1}))],
        StopReason.TOOL_USE,
        Usage(1, 2),
    )
    message = assistant_message(response, "cohere")
    assert message == {
        "role": "assistant",
        "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
        ],
    }


def test_cut_call_is_echoed_with_its_raw_text() -> None:
    response = collect((COHERE / "max-tokens-cut-call.sse").read_bytes())
    message = assistant_message(response, "cohere")
    assert isinstance(message, dict)
    (call,) = message["tool_calls"]
    assert call["function"]["arguments"].startswith('{\n    "title": "Q3"')


def test_results_and_append_turn() -> None:
    response = collect((COHERE / "parallel-tool-calls.sse").read_bytes())
    results = [
        ToolResult("get_weather_k2m8p4x7q1zd", "get_weather", "12°C", True),
        ToolResult("get_weather_w9c3t6r5b0ne", "get_weather", "city not found", False),
    ]
    assert tool_results(results, "cohere") == [
        {"role": "tool", "tool_call_id": "get_weather_k2m8p4x7q1zd", "content": "12°C"},
        {
            "role": "tool",
            "tool_call_id": "get_weather_w9c3t6r5b0ne",
            "content": "Error: city not found",
        },
    ]
    messages: list[Any] = [{"role": "user", "content": "Weather?"}]
    append_turn(messages, response, results, "cohere")
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]


# -- real recordings ------------------------------------------------------------------------


@dataclass(frozen=True)
class Recording:
    """What one recording must normalize to (written by reading it)."""

    path: Path
    id: str
    blocks: tuple[str, ...]
    stop: str
    usage: tuple[int, int, int | None]
    billed: tuple[int, int]
    tools: tuple[tuple[str, str, dict[str, Any]], ...] = ()
    text_start: str = ""
    text_deltas: int | None = None
    reasoning_start: str = ""
    plan_start: str = ""
    fragments: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


RECORDINGS = [
    Recording(
        REAL_STREAMS / "cohere" / "v2-text.sse",
        id="3ec845ed-ebb1-4223-9648-4e5632d5c6b5",
        blocks=("Text",),
        stop="COMPLETE",
        usage=(70, 69, None),
        billed=(4, 69),
        text_start="Hi there!",
        text_deltas=69,
    ),
    Recording(
        REAL_STREAMS / "cohere" / "v2-reasoning-thinking-content.sse",
        id="c9117d7f-a7e4-499f-b643-a2a1e139687b",
        blocks=("Reasoning", "Text"),
        stop="COMPLETE",
        usage=(1394, 54, 1360),
        billed=(8, 50),
        reasoning_start="The user is asking",
        text_start="The answer",
    ),
    Recording(
        REAL_STREAMS / "cohere" / "v2-empty-tool-call.sse",
        id="66dec7d7-45e6-427c-8fd9-7d6375d12046",
        blocks=("Reasoning", "ToolUse"),
        stop="TOOL_CALL",
        usage=(1445, 43, 704),
        billed=(46, 14),
        tools=(("currentTime_y46ar19t5gvw", "currentTime", {}),),
        plan_start="I will use the currentTime tool",
        fragments=0,
    ),
    Recording(
        REAL_STREAMS / "cohere" / "v2-tool-plan-then-tool-call.sse",
        id="35c028fc-0223-47b6-8fae-ebd3255e9a63",
        blocks=("Reasoning", "ToolUse"),
        stop="TOOL_CALL",
        usage=(906, 77, None),
        billed=(23, 41),
        tools=(("Person_2fnrphbsnr66", "Person", {"name": "Erick", "age": 27}),),
        plan_start="I will use the Person tool",
        fragments=16,
    ),
    Recording(
        REAL_STREAMS_2 / "cohere" / "openllmetry-cohere-v2-text-stream.sse",
        id="6cd6ce61-bb3b-46f6-907e-fcfab45e51b6",
        blocks=("Text",),
        stop="COMPLETE",
        usage=(69, 110, None),
        billed=(7, 109),
        text_start="Arrrr, matey!",
        text_deltas=100,
    ),
    Recording(
        REAL_STREAMS_2 / "cohere" / "openllmetry-cohere-v2-tool-plan-2-tool-calls.sse",
        id="e6d757a9-f0f3-40fe-9b8a-44cdc3bd18a7",
        blocks=("Reasoning", "ToolUse", "ToolUse"),
        stop="TOOL_CALL",
        usage=(968, 83, None),
        billed=(62, 28),
        tools=(
            ("get_time_dg5wwc00d8v5", "get_time", {"location": "Tokyo"}),
            ("get_weather_bc8241gkqss5", "get_weather", {"location": "Tokyo"}),
        ),
        plan_start="I will search for",
        fragments=16,
    ),
]


def _marks(recording: Recording) -> list[Any]:
    folder = recording.path.parent.parent
    return [needs_real_streams_2 if folder == REAL_STREAMS_2 else needs_real_streams]


@pytest.mark.parametrize(
    "recording",
    [pytest.param(r, marks=_marks(r), id=r.path.name) for r in RECORDINGS],
)
def test_real_recording(recording: Recording) -> None:
    data = recording.path.read_bytes()
    outcome = run_chunks([data])
    assert outcome.error is None, outcome.error
    response = outcome.response
    assert response is not None
    assert response.provider == "cohere"
    assert response.id == recording.id
    assert tuple(type(b).__name__ for b in response.content) == recording.blocks
    assert response.stop_reason.raw == recording.stop
    assert response.stop_reason.kind == (
        "tool_use" if recording.stop == "TOOL_CALL" else "end_turn"
    )
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == recording.usage
    billed = usage.raw["billed_units"]
    assert (billed["input_tokens"], billed["output_tokens"]) == recording.billed
    assert [(t.id, t.name, t.input.value) for t in response.tool_uses()] == list(recording.tools)
    if recording.text_start:
        assert response.text().startswith(recording.text_start)
    if recording.text_deltas is not None:
        assert sum(isinstance(e, TextDelta) for e in outcome.events) == recording.text_deltas
    reasoning = response.reasoning()
    if recording.reasoning_start:
        assert reasoning[0].id is None
        assert reasoning[0].text.startswith(recording.reasoning_start)
    if recording.plan_start:
        assert reasoning[0].id == "tool_plan"
        assert reasoning[0].text.startswith(recording.plan_start)
    if recording.fragments is not None:
        fragments = [e for e in outcome.events if isinstance(e, ToolInputDelta)]
        assert len(fragments) == recording.fragments
    # Any chunking gives the same events.
    for chunks in (lines_of(data), bytes_of(data)):
        assert run_chunks(chunks).events == outcome.events
    # The plan and the calls go back to Cohere in its own shape.
    if recording.tools:
        turn = assistant_message(response, "cohere")
        assert isinstance(turn, dict)
        assert turn["tool_plan"] == reasoning[0].text
        assert [c["id"] for c in turn["tool_calls"]] == [t[0] for t in recording.tools]


@needs_real_streams
def test_real_complete_body() -> None:
    response = normalize((REAL_STREAMS / "cohere" / "v2-nonstream-tool-call.json").read_bytes())
    assert response.provider == "cohere"
    assert response.id == "bd32370b-684b-4de3-8f99-8a7653ffd93b"
    assert [type(b).__name__ for b in response.content] == ["Reasoning", "ToolUse"]
    assert response.content[0].id == "tool_plan"  # type: ignore[union-attr]
    (call,) = response.tool_uses()
    assert (call.id, call.name, call.input.value) == (
        "Person_zh3gneaxfh7q",
        "Person",
        {"age": 27, "name": "Erick"},
    )
    assert response.stop_reason == StopReason.TOOL_USE
    assert (response.usage.input_tokens, response.usage.output_tokens) == (906, 77)


@needs_real_streams
@pytest.mark.parametrize("provider", [None, "cohere"])
def test_real_v1_recording_is_refused(provider: str | None) -> None:
    """Cohere's v1 chat stream is another format: an error, never an answer."""
    data = (REAL_STREAMS / "cohere" / "v1-chat-stream-json.ndjson").read_bytes()
    outcome = run_chunks([data], provider)
    assert isinstance(outcome.error, LaminateError)
    assert not any(isinstance(e, BlockStart) for e in outcome.events)
    if provider is None:
        assert isinstance(outcome.error, MalformedStreamError)
        assert "v1" in str(outcome.error)


def test_the_reasoning_tokens_are_read_and_written() -> None:
    body = {
        "id": "c1",
        "finish_reason": "COMPLETE",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "4"}]},
        "usage": {
            "billed_units": {"input_tokens": 4, "output_tokens": 9},
            "tokens": {"input_tokens": 40, "output_tokens": 90, "reasoning_tokens": 80},
            "cached_tokens": 32,
        },
    }
    response = normalize(body, "cohere")
    assert (response.usage.output_tokens, response.usage.reasoning_tokens) == (90, 80)
    assert response.usage.cache_read_tokens == 32
    written = encode_response(response, "cohere")
    assert written["usage"]["tokens"]["reasoning_tokens"] == 80
    assert written["usage"]["billed_units"] == {"input_tokens": 4, "output_tokens": 9}
