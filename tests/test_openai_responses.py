"""The Responses API provider: event-level rules, complete bodies, and every real recording."""

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
    MalformedStreamError,
    NormalizedResponse,
    ProviderError,
    Reasoning,
    ReasoningDelta,
    ResponseDone,
    ResponseStart,
    StopReason,
    StringDelta,
    Text,
    TextDelta,
    ToolInputDelta,
    ToolUse,
    Unknown,
    normalize,
)
from laminate._io.complete import parse_responses_response

from .support import (
    FIXTURES,
    REAL_STREAMS,
    Outcome,
    lines_of,
    needs_real_streams,
    run_chunks,
    split_at,
)

PROVIDER = "openai-responses"
RECORDINGS = REAL_STREAMS / "openai-responses"


# -- building streams by hand ---------------------------------------------------------------


def sse(*events: dict[str, Any], event_lines: bool = True) -> bytes:
    out = []
    for obj in events:
        prefix = f"event: {obj['type']}\n" if event_lines else ""
        out.append(f"{prefix}data: {json.dumps(obj)}\n\n")
    return "".join(out).encode()


def resp(status: str = "in_progress", **fields: Any) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "model": "m", "status": status, **fields}


def created() -> dict[str, Any]:
    return {"type": "response.created", "response": resp()}


def completed(**fields: Any) -> dict[str, Any]:
    return {"type": "response.completed", "response": resp("completed", **fields)}


def incomplete(reason: str | None, **fields: Any) -> dict[str, Any]:
    details = {"reason": reason} if reason is not None else None
    return {
        "type": "response.incomplete",
        "response": resp("incomplete", incomplete_details=details, **fields),
    }


def added(index: int, **item: Any) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def done(index: int, **item: Any) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def text_delta(index: int, delta: str, part: int = 0) -> dict[str, Any]:
    return {
        "type": "response.output_text.delta",
        "output_index": index,
        "content_index": part,
        "delta": delta,
    }


def args_delta(index: int, delta: str) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.delta", "output_index": index, "delta": delta}


def call_item(call_id: str, name: str, arguments: str = "", status: str = "completed") -> Any:
    return {
        "type": "function_call",
        "id": "fc_" + call_id,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    }


def run(*events: dict[str, Any], event_lines: bool = True) -> Outcome:
    return run_chunks([sse(*events, event_lines=event_lines)], provider=PROVIDER)


def final(outcome: Outcome) -> NormalizedResponse:
    assert outcome.error is None, repr(outcome.error)
    assert outcome.response is not None
    return outcome.response


def of_type(outcome: Outcome, kind: type) -> list[Any]:
    return [e for e in outcome.events if isinstance(e, kind)]


# -- text -------------------------------------------------------------------------------------


def test_text_deltas_stream_as_they_come_and_done_text_is_not_repeated() -> None:
    outcome = run(
        created(),
        added(0, type="message", id="msg_1", content=[]),
        text_delta(0, "Hel"),
        text_delta(0, "lo"),
        {
            "type": "response.output_text.done",
            "output_index": 0,
            "content_index": 0,
            "text": "Hello",
        },
        done(0, type="message", content=[{"type": "output_text", "text": "Hello"}]),
        completed(),
    )
    assert [e.text for e in of_type(outcome, TextDelta)] == ["Hel", "lo"]
    assert final(outcome).content == [Text("Hello")]


def test_a_server_that_sends_only_the_done_text_still_gives_the_text() -> None:
    # Some servers skip output_item.added, content_part.added and every delta.
    outcome = run(
        created(),
        {"type": "response.output_text.done", "output_index": 0, "content_index": 0, "text": "Hi"},
        completed(),
    )
    assert [e.text for e in of_type(outcome, TextDelta)] == ["Hi"]
    assert final(outcome).text() == "Hi"


def test_content_never_streamed_is_taken_from_the_terminal_response() -> None:
    output = [{"type": "message", "content": [{"type": "output_text", "text": "From the end"}]}]
    outcome = run(created(), completed(output=output))
    assert final(outcome).content == [Text("From the end")]


def test_two_content_parts_of_one_message_are_two_text_blocks() -> None:
    outcome = run(
        created(),
        added(0, type="message", content=[]),
        text_delta(0, "first", part=0),
        text_delta(0, "second", part=1),
        done(0, type="message", content=[]),
        completed(),
    )
    assert final(outcome).content == [Text("first"), Text("second")]
    assert [e.index for e in of_type(outcome, TextDelta)] == [0, 1]


def test_unknown_event_types_change_nothing_and_annotations_are_citations() -> None:
    plain = [
        created(),
        added(0, type="message", content=[]),
        text_delta(0, "See the source."),
        done(0, type="message", content=[]),
        completed(),
    ]
    noisy = [
        *plain[:3],
        {
            "type": "response.output_text.annotation.added",
            "output_index": 0,
            "content_index": 0,
            "annotation_index": 0,
            "annotation": {"type": "url_citation", "url": "https://example.org"},
        },
        {"type": "response.audio.transcript.delta", "output_index": 0, "delta": "x"},
        {"type": "response.some_event_added_later", "output_index": 7},
        *plain[3:],
    ]
    got = run(*noisy).response
    want = run(*plain).response
    assert got is not None
    assert want is not None
    # The annotation is a citation block right after the text it annotates; else alike.
    assert got.content == [
        *want.content,
        Unknown("citation", FlexValue({"type": "url_citation", "url": "https://example.org"})),
    ]
    assert (got.text(), got.stop_reason) == (want.text(), want.stop_reason)


def test_refusal_is_text_with_a_refusal_stop_reason() -> None:
    outcome = run(
        created(),
        added(0, type="message", content=[]),
        {
            "type": "response.content_part.added",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "refusal", "refusal": ""},
        },
        {"type": "response.refusal.delta", "output_index": 0, "content_index": 0, "delta": "No."},
        done(0, type="message", content=[{"type": "refusal", "refusal": "No."}]),
        completed(),
    )
    response = final(outcome)
    assert response.content == [Text("No.")]
    assert response.stop_reason == StopReason.REFUSAL
    assert response.stop_reason.raw == "completed"


# -- function calls ---------------------------------------------------------------------------


def test_call_id_is_the_tool_id_and_fragments_are_passed_through() -> None:
    outcome = run(
        created(),
        added(0, **call_item("call_a", "get_weather", status="in_progress")),
        args_delta(0, '{"city":'),
        args_delta(0, '"Paris"}'),
        {
            "type": "response.function_call_arguments.done",
            "output_index": 0,
            "arguments": '{"city":"Paris"}',
        },
        done(0, **call_item("call_a", "get_weather", '{"city":"Paris"}')),
        completed(),
    )
    starts = of_type(outcome, BlockStart)
    assert starts[0].block == ToolUse("call_a", "get_weather", starts[0].block.input)
    assert [e.fragment for e in of_type(outcome, ToolInputDelta)] == ['{"city":', '"Paris"}']
    response = final(outcome)
    assert response.tool_uses()[0].input.value == {"city": "Paris"}
    assert response.stop_reason == StopReason.TOOL_USE
    assert response.stop_reason.raw == "completed"


def test_arguments_sent_only_in_done_are_one_fragment() -> None:
    outcome = run(
        created(),
        added(0, **call_item("call_a", "f", status="in_progress")),
        done(0, **call_item("call_a", "f", '{"x":1}')),
        completed(),
    )
    assert [e.fragment for e in of_type(outcome, ToolInputDelta)] == ['{"x":1}']
    assert final(outcome).tool_uses()[0].input.value == {"x": 1}


def test_a_call_is_finished_by_its_item_not_by_its_buffer_parsing() -> None:
    outcome = run(
        created(),
        added(0, **call_item("call_a", "f", status="in_progress")),
        args_delta(0, "{}"),
    )
    assert isinstance(outcome.error, IncompleteStreamError)
    assert not of_type(outcome, BlockEnd)
    assert outcome.response is not None
    assert isinstance(outcome.response.content[0], InvalidToolUse)


def test_deltas_without_output_item_added_open_the_call_and_done_names_it() -> None:
    outcome = run(
        created(),
        args_delta(0, '{"q":"x"}'),
        done(0, **call_item("call_late", "search", '{"q":"x"}')),
        completed(),
    )
    assert final(outcome).tool_uses() == [
        ToolUse("call_late", "search", final(outcome).tool_uses()[0].input)
    ]
    assert final(outcome).tool_uses()[0].input.value == {"q": "x"}


def test_call_cut_off_by_max_output_tokens_is_invalid_even_if_it_parses() -> None:
    outcome = run(
        created(),
        added(0, **call_item("call_a", "f", status="in_progress")),
        args_delta(0, '{"a":1}'),
        done(0, **call_item("call_a", "f", '{"a":1}', status="incomplete")),
        incomplete("max_output_tokens"),
    )
    response = final(outcome)
    assert response.stop_reason == StopReason.MAX_TOKENS
    assert response.stop_reason.raw == "max_output_tokens"
    assert response.tool_uses() == []
    block = response.content[0]
    assert isinstance(block, InvalidToolUse)
    assert block.raw_input == '{"a":1}'
    assert "token limit" in block.reason


def test_custom_tool_call_is_a_custom_tool_use() -> None:
    item = {"type": "custom_tool_call", "call_id": "call_c", "name": "shell", "input": "ls -la"}
    outcome = run(created(), added(0, **item), done(0, **item), completed())
    response = final(outcome)
    (block,) = response.content
    assert block == ToolUse("call_c", "shell", FlexValue("ls -la"), kind="custom")
    assert response.tool_uses() == [block]
    assert response.stop_reason == StopReason.TOOL_USE


def custom_delta(index: int, delta: str) -> dict[str, Any]:
    return {
        "type": "response.custom_tool_call_input.delta",
        "output_index": index,
        "item_id": "ctc_1",
        "delta": delta,
    }


def test_custom_tool_call_input_streams_as_text_fragments() -> None:
    """A free-form call's input is text, not JSON: each delta is a fragment of the one
    string at the path ``()``, finished only by the item's end."""
    opened = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_c", "name": "shell"}
    text = 'grep -n "a\\u00e9" {x} | head'
    outcome = run(
        created(),
        added(0, **opened, input=""),
        custom_delta(0, text[:9]),
        custom_delta(0, text[9:]),
        {"type": "response.custom_tool_call_input.done", "output_index": 0, "input": text},
        done(0, **opened, input=text),
        completed(),
    )
    starts = [e for e in outcome.events if isinstance(e, BlockStart)]
    assert starts == [BlockStart(0, ToolUse("call_c", "shell", FlexValue(""), kind="custom"))]
    deltas = [e for e in outcome.events if isinstance(e, ToolInputDelta)]
    assert [d.fragment for d in deltas] == [text[:9], text[9:]]  # the done repeats nothing
    assert [d.string_deltas for d in deltas] == [
        (StringDelta((), text[:9]),),
        (StringDelta((), text[9:]),),
    ]
    assert [d.partial.value for d in deltas] == [text[:9], text]
    assert not any(d.is_complete() for d in deltas)
    assert all(d.invalid is None for d in deltas)
    (block,) = final(outcome).content
    assert block == ToolUse("call_c", "shell", FlexValue(text), kind="custom")


def test_custom_tool_call_cut_by_the_limit_is_invalid() -> None:
    opened = {"type": "custom_tool_call", "call_id": "call_c", "name": "shell"}
    outcome = run(
        created(),
        added(0, **opened, input=""),
        custom_delta(0, "ls -"),
        {
            "type": "response.incomplete",
            "response": {
                "id": "resp_1",
                "status": "incomplete",
                "incomplete_details": {"reason": "max_output_tokens"},
                "output": [],
            },
        },
    )
    (block,) = final(outcome).content
    assert isinstance(block, InvalidToolUse)
    assert block.raw_input == "ls -"


# -- reasoning --------------------------------------------------------------------------------


def summary_delta(index: int, part: int, delta: str) -> dict[str, Any]:
    return {
        "type": "response.reasoning_summary_text.delta",
        "output_index": index,
        "summary_index": part,
        "delta": delta,
    }


def test_summary_parts_are_one_block_joined_by_a_blank_line() -> None:
    outcome = run(
        created(),
        added(0, type="reasoning", id="rs_1", summary=[]),
        summary_delta(0, 0, "**A**"),
        summary_delta(0, 0, " one"),
        summary_delta(0, 1, "**B**"),
        done(0, type="reasoning", id="rs_1", summary=[], encrypted_content="enc=="),
        completed(),
    )
    assert [e.text for e in of_type(outcome, ReasoningDelta)] == ["**A**", " one", "\n\n**B**"]
    assert final(outcome).content == [Reasoning("**A** one\n\n**B**", "enc==", False, "rs_1")]


def test_reasoning_text_parts_and_an_interleaved_message() -> None:
    # As OpenRouter sends it: the message item opens and closes inside the reasoning item.
    reasoning_delta = {
        "type": "response.reasoning_text.delta",
        "output_index": 0,
        "content_index": 0,
        "delta": "think",
    }
    outcome = run(
        created(),
        added(0, type="reasoning", id="rs_1", summary=[]),
        reasoning_delta,
        added(1, type="message", content=[]),
        text_delta(1, "4"),
        done(1, type="message", content=[{"type": "output_text", "text": "4"}]),
        {**reasoning_delta, "delta": "ing"},
        done(0, type="reasoning", id="rs_1", content=[{"type": "reasoning_text", "text": "x"}]),
        completed(),
        event_lines=False,
    )
    assert final(outcome).content == [Reasoning("thinking", None, False, "rs_1"), Text("4")]


def test_encrypted_content_is_taken_from_the_done_item_once() -> None:
    outcome = run(
        created(),
        added(0, type="reasoning", id="rs_1", encrypted_content="early", summary=[]),
        done(0, type="reasoning", id="rs_1", encrypted_content="final", summary=[]),
        completed(),
    )
    assert final(outcome).content == [Reasoning("", "final", False, "rs_1")]


# -- unknown items ------------------------------------------------------------------------------


def test_unknown_item_holds_the_finished_item() -> None:
    outcome = run(
        created(),
        added(0, type="image_generation_call", id="ig_1", status="in_progress"),
        {"type": "response.image_generation_call.generating", "output_index": 0},
        done(0, type="image_generation_call", id="ig_1", status="completed", result="aGk="),
        completed(),
    )
    block = final(outcome).content[0]
    assert isinstance(block, Unknown)
    assert block.block_type == "image_generation_call"
    assert block.data.value == {"id": "ig_1", "status": "completed", "result": "aGk="}
    assert final(outcome).stop_reason == StopReason.END_TURN


# -- ends ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("max_output_tokens", StopReason.MAX_TOKENS),
        ("content_filter", StopReason.CONTENT_FILTER),
        ("budget_exhausted", StopReason.unknown("budget_exhausted")),
        (None, StopReason.unknown("incomplete")),
    ],
)
def test_incomplete_reasons(reason: str | None, expected: StopReason) -> None:
    response = final(run(created(), incomplete(reason)))
    assert response.stop_reason == expected
    assert response.stop_reason.raw == (reason or "incomplete")


def test_usage_from_the_terminal_response() -> None:
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 40, "cache_write_tokens": 8},
        "output_tokens": 30,
        "output_tokens_details": {"reasoning_tokens": 12},
        "total_tokens": 130,
    }
    response = final(run(created(), completed(usage=usage)))
    assert (
        response.usage.input_tokens,
        response.usage.output_tokens,
        response.usage.cache_read_tokens,
        response.usage.cache_write_tokens,
        response.usage.reasoning_tokens,
    ) == (100, 30, 40, 8, 12)


def test_stream_may_start_at_queued_and_done_after_completion_is_ignored() -> None:
    data = sse({"type": "response.queued", "response": resp("queued")}, completed())
    outcome = run_chunks([data + b"data: [DONE]\n\n"])
    response = final(outcome)
    assert response.provider == PROVIDER
    assert outcome.events[0] == ResponseStart("resp_1", "m", PROVIDER)
    assert isinstance(outcome.events[-1], ResponseDone)


def test_done_marker_before_a_terminal_event_is_incomplete() -> None:
    data = sse(created(), added(0, type="message", content=[]), text_delta(0, "so far"))
    outcome = run_chunks([data + b"data: [DONE]\n\n"], provider=PROVIDER)
    assert isinstance(outcome.error, IncompleteStreamError)
    assert "[DONE]" in str(outcome.error)
    assert outcome.error.partial is not None
    assert outcome.error.partial.text() == "so far"


def test_error_event_raises_once_with_the_nested_shape() -> None:
    error = {
        "type": "error",
        "error": {"type": "insufficient_quota", "code": "insufficient_quota", "message": "quota"},
    }
    failed = {
        "type": "response.failed",
        "response": resp("failed", error={"code": "insufficient_quota", "message": "quota"}),
    }
    outcome = run(created(), error, failed)
    assert isinstance(outcome.error, ProviderError)
    assert (outcome.error.error_type, outcome.error.retryable) == ("insufficient_quota", False)
    assert outcome.error.raw == error
    assert outcome.error.partial is not None
    assert outcome.error.partial.id == "resp_1"


@pytest.mark.parametrize(
    ("error", "error_type", "retryable"),
    [
        ({"code": "rate_limit_exceeded", "message": "slow down"}, "rate_limit_exceeded", True),
        ({"code": "vector_store_timeout", "message": "timed out"}, "vector_store_timeout", True),
        ({"code": "invalid_prompt", "message": "no"}, "invalid_prompt", False),
        (None, "response_failed", False),
    ],
)
def test_response_failed_alone(error: Any, error_type: str, retryable: bool) -> None:
    outcome = run(created(), {"type": "response.failed", "response": resp("failed", error=error)})
    assert isinstance(outcome.error, ProviderError)
    assert (outcome.error.error_type, outcome.error.retryable) == (error_type, retryable)


def test_a_second_item_at_the_same_output_index_is_malformed() -> None:
    outcome = run(
        created(),
        added(0, type="message", content=[]),
        text_delta(0, "one"),
        done(0, type="message", content=[]),
        added(0, type="message", content=[]),
    )
    assert isinstance(outcome.error, MalformedStreamError)
    assert "output_index 0" in str(outcome.error)


def test_a_delta_after_its_item_is_done_is_malformed_not_dropped() -> None:
    outcome = run(
        created(),
        added(0, type="message", content=[]),
        done(0, type="message", content=[]),
        text_delta(0, "late"),
    )
    assert isinstance(outcome.error, MalformedStreamError)


def test_an_event_without_output_index_is_malformed() -> None:
    outcome = run(created(), {"type": "response.output_text.delta", "delta": "x"})
    assert isinstance(outcome.error, MalformedStreamError)
    assert "output_index" in str(outcome.error)


# -- complete bodies ----------------------------------------------------------------------------


def test_body_parser_and_normalize_agree() -> None:
    data = (FIXTURES / "openai-responses" / "function-call.body.json").read_bytes()
    assert parse_responses_response(data) == normalize(data)
    assert normalize(data).provider == PROVIDER


def test_body_still_in_progress_is_incomplete() -> None:
    body = resp("in_progress", output=[], usage=None)
    with pytest.raises(IncompleteStreamError, match="in_progress"):
        parse_responses_response(body)


def test_failed_body_is_a_provider_error() -> None:
    body = resp("failed", output=[], error={"code": "server_error", "message": "boom"})
    with pytest.raises(ProviderError) as info:
        parse_responses_response(body)
    assert (info.value.error_type, info.value.retryable) == ("server_error", True)


def test_incomplete_body_cuts_off_an_unfinished_call() -> None:
    body = resp(
        "incomplete",
        incomplete_details={"reason": "max_output_tokens"},
        output=[call_item("call_a", "f", '{"a":', status="incomplete")],
    )
    response = parse_responses_response(body)
    assert response.stop_reason == StopReason.MAX_TOKENS
    (block,) = response.content
    assert isinstance(block, InvalidToolUse)
    assert (block.id, block.name, block.raw_input) == ("call_a", "f", '{"a":')


# -- the real recordings ------------------------------------------------------------------------


@dataclass(frozen=True)
class Recording:
    """What a recording holds, written down by reading it."""

    name: str
    stop: StopReason
    stop_raw: str = "completed"
    tools: list[tuple[str, str, Any]] = field(default_factory=list)  # (id, name, input)
    text: str | None = None
    text_start: str | None = None
    reasoning: list[str | None] = field(default_factory=list)  # text, or None: check no text
    signed: bool = False  # the reasoning blocks carry encrypted_content
    unknown: list[str] = field(default_factory=list)
    output_tokens: int | None = None
    reasoning_tokens: int | None = None


COPILOT_TEXT = (
    "There are **3** letter **\u201cr\u201d**s in **\u201cstrawberry.\u201d**\n\n"
    "Breakdown: **s t r a w b e r r y**  \nYou can see **r** at positions **3, 8, and 9**."
)

RECORDED = [
    Recording(
        "azure-function-call.sse",
        StopReason.TOOL_USE,
        tools=[("call_H5DxLSFnsGhiROnUiDHmgyc8", "weather", {"location": "San Francisco"})],
        output_tokens=24,
    ),
    Recording(
        "background-queued.sse", StopReason.END_TURN, text="2 + 2 equals 4.", output_tokens=9
    ),
    Recording(
        "background-resume-starting-after.sse",
        StopReason.END_TURN,
        text="2 + 2 equals 4.",
        output_tokens=9,
    ),
    Recording(
        "bedrock-mantle-function-calls.sse",
        StopReason.TOOL_USE,
        tools=[("call_1", "second_tool", {})],
        reasoning=[None],
        signed=True,
        reasoning_tokens=14,
    ),
    Recording(
        "deepseek-reasoning-text-then-function-call.sse",
        StopReason.TOOL_USE,
        tools=[("call_00_xjY8Z2BvSlzgEmmw0DtH0464", "get_temperature", {"city": "Tokyo"})],
        reasoning=["The user asks about temperature in Tokyo. I'll call the tool."],
        reasoning_tokens=14,
    ),
    Recording(
        "function-call-args-delta.sse",
        StopReason.TOOL_USE,
        tools=[("call_kL0PCQV7M2WMoVX8V8OtYSAL", "get_capital", {"country": "France"})],
        output_tokens=16,
    ),
    Recording(
        "github-copilot-rotating-ids.sse",
        StopReason.END_TURN,
        text=COPILOT_TEXT,
        reasoning=["**Counting character occurrences**"],
        output_tokens=105,
        reasoning_tokens=44,
    ),
    Recording(
        "lmstudio-reasoning-then-function-call.sse",
        StopReason.TOOL_USE,
        tools=[("call_2025306790300011", "weather", {"location": "San Francisco"})],
        text="I'll get the current weather information for San Francisco for you.",
        reasoning=[
            "The user is asking for the weather in San Francisco. I have a weather function "
            'available that takes a location parameter. The user has provided "San Francisco" '
            "as the location, so I have all the required information to make the function call."
        ],
    ),
    Recording(
        "openrouter-raw-cot-comment-and-done.sse",
        StopReason.END_TURN,
        text="4",
        reasoning=[
            'The user asks: "What is 2+2?" They expect a straightforward answer: 4. Just answer 4.'
        ],
        output_tokens=37,
    ),
    Recording(
        "reasoning-item-then-function-call.sse",
        StopReason.TOOL_USE,
        tools=[("call_CWXgs68YprAjp6t0371hiPOI", "final_result", {"result": 6666})],
        reasoning=[None],
        signed=True,
        reasoning_tokens=448,
    ),
    Recording(
        "reasoning-summary-text.sse",
        StopReason.END_TURN,
        text_start="I'm not a road safety professional, but here are some generally accepted",
        reasoning=[None],
        signed=True,
        output_tokens=1680,
        reasoning_tokens=1408,
    ),
    Recording(
        "text-and-function-call-with-phase.sse",
        StopReason.TOOL_USE,
        tools=[("call_LabG58Uhrq9kZvR52BYKjToD", "get_capital", {"country": "PotatoLand"})],
        text="I\u2019ll check the capital lookup tool for \u201cPotatoLand.\u201d",
        reasoning=[None],
        signed=True,
        reasoning_tokens=26,
    ),
    Recording(
        "text-output.sse",
        StopReason.END_TURN,
        text="The capital of France is Paris.",
        output_tokens=9,
    ),
    Recording(
        "web-search-annotations.sse",
        StopReason.END_TURN,
        text=(
            "The tallest mountain in Alberta is **Mount Columbia** (3,747 m / 12,294 ft). "
            "([britannica.com](https://www.britannica.com/place/Mount-Columbia?utm_source=openai))"
        ),
        unknown=["web_search_call", "web_search_call", "citation"],
        reasoning_tokens=100,
    ),
]


def check_recording(response: NormalizedResponse, rec: Recording) -> None:
    assert response.provider == PROVIDER
    assert response.stop_reason == rec.stop
    assert response.stop_reason.raw == rec.stop_raw
    tools = [(t.id, t.name, t.input.value) for t in response.tool_uses()]
    assert tools == rec.tools
    assert not [b for b in response.content if isinstance(b, InvalidToolUse)]
    if rec.text is not None:
        assert response.text() == rec.text
    if rec.text_start is not None:
        assert response.text().startswith(rec.text_start)
    reasoning = response.reasoning()
    assert len(reasoning) == len(rec.reasoning)
    for block, want in zip(reasoning, rec.reasoning, strict=True):
        if want is not None:
            assert block.text == want
        assert block.id
        assert (block.signature is not None) == rec.signed
    assert [b.block_type for b in response.content if isinstance(b, Unknown)] == rec.unknown
    if rec.output_tokens is not None:
        assert response.usage.output_tokens == rec.output_tokens
    if rec.reasoning_tokens is not None:
        assert response.usage.reasoning_tokens == rec.reasoning_tokens


@needs_real_streams
@pytest.mark.parametrize("rec", RECORDED, ids=[r.name for r in RECORDED])
def test_real_recording(rec: Recording) -> None:
    data = (RECORDINGS / rec.name).read_bytes()
    outcome = run_chunks([data])  # detected from the bytes
    check_recording(final(outcome), rec)
    for chunks in (lines_of(data), list(split_at(data, range(0, len(data), 97)))):
        assert run_chunks(chunks).events == outcome.events


@needs_real_streams
def test_real_recording_list_is_complete() -> None:
    streams = {p.name for p in RECORDINGS.glob("*.sse")}
    assert streams == {r.name for r in RECORDED} | {"error-insufficient-quota.sse"}


@needs_real_streams
def test_real_summary_parts_are_joined_in_order() -> None:
    data = (RECORDINGS / "reasoning-summary-text.sse").read_bytes()
    (block,) = final(run_chunks([data])).reasoning()
    titles = [
        "**Providing street crossing instructions**",
        "**Explaining street crossing safety**",
        "**Sharing street crossing safety tips**",
        "**Providing safe crossing advice**",
    ]
    assert block.text.startswith(titles[0])
    positions = [block.text.index("\n\n" + title) for title in titles[1:]]
    assert positions == sorted(positions)
    assert block.signature is not None
    assert block.signature.startswith("gAAAAABoxC0m")  # from output_item.done, not .added


@needs_real_streams
def test_real_copilot_ids_rotate_but_items_are_keyed_by_position() -> None:
    data = (RECORDINGS / "github-copilot-rotating-ids.sse").read_bytes()
    response = final(run_chunks([data]))
    assert response.id == "capture-id-1"  # the first lifecycle event's id
    assert [type(b) for b in response.content] == [Reasoning, Text]
    assert response.usage.cache_write_tokens == 0


@needs_real_streams
def test_real_error_event_then_failed() -> None:
    outcome = run_chunks([(RECORDINGS / "error-insufficient-quota.sse").read_bytes()])
    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.error_type == "insufficient_quota"
    assert outcome.error.retryable is False
    assert outcome.error.message.startswith("You exceeded your current quota")
    assert outcome.error.partial is not None
    assert outcome.error.partial.id == "resp_05500b38c2cd9bfc00691c7c9d222481a3b595421266dab424"
    assert outcome.error.partial.content == []


@needs_real_streams
@pytest.mark.parametrize(
    ("name", "tools", "signed"),
    [
        (
            "nonstream-function-call.json",
            [("call_nJmCK7SJe3ajdYYplIbH0KgL", "multiply", {"a": 1231, "b": 2331})],
            False,
        ),
        (
            "nonstream-reasoning-between-tool-calls.json",
            [("call_Uj506iEKjBZWrHPq2C3GDtgr", "db_lookup", {"key": "7"})],
            True,
        ),
    ],
)
def test_real_complete_bodies(name: str, tools: list[tuple[str, str, Any]], signed: bool) -> None:
    response = normalize(Path(RECORDINGS / name).read_bytes())
    assert response.provider == PROVIDER
    assert [(t.id, t.name, t.input.value) for t in response.tool_uses()] == tools
    assert response.stop_reason == StopReason.TOOL_USE
    assert [r.signature is not None for r in response.reasoning()] == ([True] if signed else [])


def test_a_compact_complete_body_with_a_null_error_read_as_a_stream() -> None:
    # One line whose `error` is null (every complete body has the field): a body to read,
    # not an error; one whose `error` is set and has no `output` is the error.
    body = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "error": None,
        "model": "grok-4.3",
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Hi.", "annotations": []}],
            }
        ],
        "usage": {"input_tokens": 5, "output_tokens": 2},
    }
    outcome = run_chunks([json.dumps(body).encode()])
    assert outcome.error is None
    assert outcome.response is not None
    assert outcome.response.provider == PROVIDER
    assert outcome.response.text() == "Hi."
    failed = {"error": {"type": "invalid_request_error", "message": "no such model"}}
    outcome = run_chunks([json.dumps(failed).encode()])
    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.message == "no such model"


def test_a_message_part_counted_from_one_is_read_once() -> None:
    # Bedrock Mantle numbers a message's only part `content_index` 1; the item's content
    # (index 0 of its list) at `output_item.done` is that part, not a second one.
    part = {"type": "output_text", "text": "1 2 3", "annotations": []}
    frames: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "r", "model": "m", "output": []}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "message", "id": "m1", "role": "assistant", "content": []},
        },
        {
            "type": "response.content_part.added",
            "output_index": 0,
            "content_index": 1,
            "part": {**part, "text": ""},
        },
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 1,
            "delta": "1 2 3",
        },
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {"type": "message", "id": "m1", "role": "assistant", "content": [part]},
        },
        {
            "type": "response.completed",
            "response": {"id": "r", "model": "m", "status": "completed", "output": []},
        },
    ]
    body = b"".join(b"data: " + json.dumps(f).encode() + b"\n\n" for f in frames)
    outcome = run_chunks([body])
    assert outcome.error is None
    assert outcome.response is not None
    assert [type(b).__name__ for b in outcome.response.content] == ["Text"]
    assert outcome.response.text() == "1 2 3"
