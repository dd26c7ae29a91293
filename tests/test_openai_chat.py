"""Chat Completions: custom (free-form) tool calls, read from streams and complete bodies,
written back by the stream writer and in the tool loop's request shapes, and declared by
the registry (with the other APIs' function of one string parameter beside them)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import laminate
from laminate import (
    BlockStart,
    FlexValue,
    NormalizedResponse,
    StopReason,
    StringDelta,
    ToolInputDelta,
    ToolRegistry,
    ToolResult,
    ToolUse,
    Usage,
)
from laminate._encode.encoder import encode_stream_sync

from .support import REAL_STREAMS_3, needs_real_streams_3, run_chunks


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    frame = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-5"}
    return b"data: " + json.dumps({**frame, "choices": [choice]}).encode() + b"\n\n"


def custom_call_stream(text: str, cuts: tuple[int, ...]) -> bytes:
    opened = {"index": 0, "id": "call_c", "type": "custom", "custom": {"name": "sh", "input": ""}}
    pieces = [text[a:b] for a, b in zip((0, *cuts), (*cuts, len(text)), strict=True)]
    return b"".join(
        [
            chunk({"role": "assistant", "content": None, "tool_calls": [opened]}),
            *(chunk({"tool_calls": [{"index": 0, "custom": {"input": p}}]}) for p in pieces),
            chunk({}, "tool_calls"),
            b"data: [DONE]\n\n",
        ]
    )


TEXT = 'printf "%s\\n" caf\u00e9 {a,b} | wc -l'


def test_a_streamed_custom_call_is_a_custom_tool_use() -> None:
    outcome = run_chunks([custom_call_stream(TEXT, (5, 17))])
    assert outcome.error is None
    starts = [e for e in outcome.events if isinstance(e, BlockStart)]
    assert starts == [BlockStart(0, ToolUse("call_c", "sh", FlexValue(""), kind="custom"))]
    deltas = [e for e in outcome.events if isinstance(e, ToolInputDelta)]
    assert [d.fragment for d in deltas] == [TEXT[:5], TEXT[5:17], TEXT[17:]]
    assert deltas[0].string_deltas == (StringDelta((), TEXT[:5]),)
    assert deltas[1].partial.value == TEXT[:17]
    response = outcome.events[-1].response  # type: ignore[union-attr]
    assert response.content == [ToolUse("call_c", "sh", FlexValue(TEXT), kind="custom")]
    assert response.tool_uses()[0].input.value == TEXT
    assert response.stop_reason == StopReason.TOOL_USE


def test_the_events_do_not_depend_on_the_chunking() -> None:
    data = custom_call_stream(TEXT, (1, 2, 3, 20))
    whole = run_chunks([data]).events
    assert run_chunks([data[i : i + 1] for i in range(len(data))]).events == whole


def test_custom_and_function_calls_side_by_side() -> None:
    custom = {"index": 1, "id": "call_b", "type": "custom", "custom": {"name": "sh", "input": "ls"}}
    function = {
        "index": 0,
        "id": "call_a",
        "type": "function",
        "function": {"name": "add", "arguments": '{"a": 1}'},
    }
    data = chunk({"tool_calls": [function, custom]}, "tool_calls") + b"data: [DONE]\n\n"
    response = laminate.collect_sync([data])
    assert response.content == [
        ToolUse("call_a", "add", FlexValue({"a": 1})),
        ToolUse("call_b", "sh", FlexValue("ls"), kind="custom"),
    ]


def test_a_complete_body_with_a_custom_call() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_c", "type": "custom", "custom": {"name": "sh", "input": "ls -la"}}
        ],
    }
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-5",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
    }
    response = laminate.normalize(body)
    assert response.content == [ToolUse("call_c", "sh", FlexValue("ls -la"), kind="custom")]
    assert NormalizedResponse.from_dict(response.to_dict()) == response
    assert response.to_dict()["content"][0]["kind"] == "custom"


@needs_real_streams_3
def test_the_recorded_custom_call_body() -> None:
    path = REAL_STREAMS_3 / "openai-chat" / "ddtrace-openai-gpt5-nonstream-custom-tool-call.json"
    response = laminate.normalize(path.read_bytes())
    assert response.content == [
        ToolUse("call_QpgJRI5C9DcjExMNU6lrJPcu", "math_exp", FlexValue("4 + 4"), kind="custom")
    ]
    assert response.usage.reasoning_tokens == 192


def custom_response(provider: str = "openai") -> NormalizedResponse:
    return NormalizedResponse(
        "r1",
        "gpt-5",
        provider,
        [ToolUse("call_c", "sh", FlexValue(TEXT), kind="custom")],
        StopReason.TOOL_USE.with_raw("tool_calls"),
        Usage(3, 4),
    )


@pytest.mark.parametrize("target", ["openai", "openai-responses"])
def test_the_stream_writers_write_a_custom_call_back(target: str) -> None:
    events = list(laminate.normalize_stream_sync([custom_call_stream(TEXT, (4, 9))]))
    data = b"".join(encode_stream_sync(events, target))
    assert b'"custom"' in data or b"custom_tool_call" in data
    back = laminate.collect_sync([data])
    assert back.content == [ToolUse("call_c", "sh", FlexValue(TEXT), kind="custom")]
    fragments = [
        e.fragment for e in laminate.normalize_stream_sync([data]) if isinstance(e, ToolInputDelta)
    ]
    assert fragments == [TEXT[:4], TEXT[4:9], TEXT[9:]]


def test_the_assistant_turn_and_results_of_chat_completions() -> None:
    response = custom_response()
    results = [ToolResult("call_c", "sh", "3", True, "custom")]
    assert laminate.assistant_message(response, "openai") == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_c", "type": "custom", "custom": {"name": "sh", "input": TEXT}}],
    }
    assert laminate.tool_results(results, "openai") == [
        {"role": "tool", "tool_call_id": "call_c", "content": "3"}
    ]


def test_the_assistant_turn_and_results_of_the_responses_api() -> None:
    response = custom_response("openai-responses")
    results = [ToolResult("call_c", "sh", "3", True, "custom")]
    assert laminate.assistant_message(response, "openai-responses") == [
        {"type": "custom_tool_call", "call_id": "call_c", "name": "sh", "input": TEXT}
    ]
    assert laminate.tool_results(results, "openai-responses") == [
        {"type": "custom_tool_call_output", "call_id": "call_c", "output": "3"}
    ]


def test_other_apis_get_a_function_of_one_string_parameter() -> None:
    response = custom_response()
    turn = laminate.assistant_message(response, "anthropic")
    assert turn["content"] == [
        {"type": "tool_use", "id": "call_c", "name": "sh", "input": {"input": TEXT}}
    ]


def test_the_sdk_reads_the_turn_back() -> None:
    from openai.types.chat import ChatCompletionMessage
    from openai.types.responses import ResponseCustomToolCall

    message = laminate.assistant_message(custom_response(), "openai")
    parsed = ChatCompletionMessage.model_validate(message)
    assert parsed.tool_calls is not None
    assert parsed.tool_calls[0].type == "custom"
    (item,) = laminate.assistant_message(custom_response(), "openai-responses")
    assert ResponseCustomToolCall.model_validate(item).input == TEXT


# -- the registry -----------------------------------------------------------------------


def registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.custom_tool("sh", "Run a shell line.", lambda line: f"ran {line}")
    registry.custom_tool(
        "digits", "Only digits.", lambda text: str(len(text)), grammar=r"\d+", syntax="regex"
    )
    return registry


def test_a_custom_tool_is_declared_for_each_api() -> None:
    tools = registry()
    assert tools.tools("openai") == [
        {
            "type": "custom",
            "custom": {
                "name": "sh",
                "description": "Run a shell line.",
                "format": {"type": "text"},
            },
        },
        {
            "type": "custom",
            "custom": {
                "name": "digits",
                "description": "Only digits.",
                "format": {"type": "grammar", "grammar": {"syntax": "regex", "definition": r"\d+"}},
            },
        },
    ]
    assert tools.tools("openai-responses")[1] == {
        "type": "custom",
        "name": "digits",
        "description": "Only digits.",
        "format": {"type": "grammar", "syntax": "regex", "definition": r"\d+"},
    }
    (anthropic, _) = tools.tools("anthropic")
    assert anthropic["input_schema"] == {
        "type": "object",
        "properties": {
            "input": {"type": "string", "description": "The tool's input, as free-form text."}
        },
        "required": ["input"],
        "additionalProperties": False,
    }


def test_the_sdk_types_take_the_declarations() -> None:
    from openai.types.chat import ChatCompletionCustomToolParam
    from openai.types.responses import CustomToolParam
    from pydantic import TypeAdapter

    for tool in registry().tools("openai"):
        TypeAdapter(ChatCompletionCustomToolParam).validate_python(tool)
    for tool in registry().tools("openai-responses"):
        TypeAdapter(CustomToolParam).validate_python(tool)


def test_a_custom_call_runs_with_its_text_and_answers_in_kind() -> None:
    tools = registry()
    (result,) = tools.run_sync(custom_response())
    assert result == ToolResult("call_c", "sh", f"ran {TEXT}", True, "custom")
    # The same tool called by an API without custom tools: a function of one string.
    call = ToolUse("toolu_1", "sh", FlexValue({"input": "ls"}))
    other = NormalizedResponse("r", "m", "anthropic", [call], StopReason.TOOL_USE, Usage())
    assert tools.run_sync(other) == [ToolResult("toolu_1", "sh", "ran ls", True)]


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (ToolUse("c", "sh", FlexValue({"line": "ls"})), "one string argument"),
        (ToolUse("c", "nope", FlexValue("ls"), kind="custom"), "unknown tool"),
    ],
)
def test_a_custom_call_that_does_not_fit_fails(call: ToolUse, reason: str) -> None:
    response = NormalizedResponse("r", "m", "openai", [call], StopReason.TOOL_USE, Usage())
    (result,) = registry().run_sync(response)
    assert not result.ok
    assert reason in result.output
    assert result.kind == call.kind


def test_a_function_tool_called_with_text_fails() -> None:
    tools = ToolRegistry()

    @tools.tool
    def add(a: int) -> int:
        return a

    call = ToolUse("c", "add", FlexValue("1"), kind="custom")
    response = NormalizedResponse("r", "m", "openai", [call], StopReason.TOOL_USE, Usage())
    (result,) = tools.run_sync(response)
    assert not result.ok
    assert "takes a JSON object" in result.output


@pytest.mark.parametrize("target", ["anthropic", "gemini", "bedrock", "ollama", "cohere"])
def test_other_stream_writers_write_a_function_of_one_string(target: str) -> None:
    """An API without custom tools gets the call as a function of one string parameter,
    ``input``, its text streamed inside that JSON string as it arrives."""
    events = list(laminate.normalize_stream_sync([custom_call_stream(TEXT, (4, 9))]))
    back = laminate.collect_sync([b"".join(encode_stream_sync(events, target))])
    (call,) = back.tool_uses()
    assert (call.name, call.input.value, call.kind) == ("sh", {"input": TEXT}, "function")
    assert call.id == "call_c" or target == "ollama"  # Ollama's calls carry no id
