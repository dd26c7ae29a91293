"""Chat Completions streams (``provider="openai"``) and the OpenAI-compatible servers that
drift from them: the stop-reason table, stream endings and keep-alives, ``choice=``, the
tool-call matching policy and the reasoning shapes compatible servers send. Whole streams
live in fixtures/openai and fixtures/openai-compat; these tests pin the rules the fixtures
only sample. And custom (free-form) tool calls: read from streams and complete bodies,
written back by the stream writer and in the tool loop's request shapes, declared by the
registry."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

import laminate
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
    StopReason,
    StringDelta,
    Text,
    ToolInputDelta,
    ToolRegistry,
    ToolResult,
    ToolUse,
    Usage,
)
from laminate._encode.encoder import encode_stream_sync

from .builders import DONE, call, chunk, done_response, openai
from .support import FIXTURES, REAL_STREAMS_3, needs_real_streams_3, run_chunks

OPENAI_STOPS = [
    ("stop", "end_turn"),
    ("length", "max_tokens"),
    ("tool_calls", "tool_use"),
    ("function_call", "tool_use"),
    ("content_filter", "content_filter"),
    # Values other servers invent stay unknown, kept as sent.
    ("eos_token", None),
    ("eos", None),
    ("stop_sequence", None),
    ("end_turn", None),
    ("abort", None),
    ("model_length", None),
    ("insufficient_system_resource", None),
    ("unknown", None),
]


@pytest.mark.parametrize(("raw", "kind"), OPENAI_STOPS)
def test_openai_stop_reason_table(raw: str, kind: str | None) -> None:
    response = done_response(openai(chunk({"content": "x"}), chunk(finish=raw), DONE))
    assert response.stop_reason.kind == kind
    assert response.stop_reason.raw == raw
    assert str(response.stop_reason) == (kind or raw)


def test_openai_stop_with_tool_calls_is_tool_use_and_keeps_raw() -> None:
    tool = chunk({"tool_calls": [call(0, "call_1", "f", "{}")]})
    response = done_response(openai(tool, chunk(finish="stop"), DONE))
    assert response.stop_reason == StopReason.TOOL_USE
    assert response.stop_reason.raw == "stop"


def test_openai_only_stop_is_promoted_by_tool_calls() -> None:
    tool = chunk({"tool_calls": [call(0, "call_1", "f", "{}")]})
    response = done_response(openai(tool, chunk(finish="eos"), DONE))
    assert response.stop_reason == StopReason.unknown("eos")
    assert response.tool_uses()[0].name == "f"


def test_openai_stop_after_refusal_is_refusal() -> None:
    response = done_response(openai(chunk({"refusal": "No."}), chunk(finish="stop"), DONE))
    assert response.stop_reason == StopReason.REFUSAL
    assert response.stop_reason.raw == "stop"
    assert response.content == [Text("No.")]


@pytest.mark.parametrize(
    "payload", ["", "ping", "PING", "keep-alive", "Keep-Alive", "keepalive", "heartbeat", " ping "]
)
def test_keepalive_payloads_are_ignored(payload: str) -> None:
    keepalive = f"data: {payload}\n\n".encode()
    response = done_response(
        openai(keepalive, chunk({"content": "a"}), keepalive, chunk({"content": "b"}, "stop"), DONE)
    )
    assert response.text() == "ab"


@pytest.mark.parametrize("payload", ["pong", "retry later", "{", "[DONE"])
def test_other_non_json_payloads_are_malformed(payload: str) -> None:
    outcome = openai(chunk({"content": "a"}), f"data: {payload}\n\n".encode(), DONE)
    assert isinstance(outcome.error, MalformedStreamError)
    assert outcome.error.partial is not None
    assert outcome.error.partial.text() == "a"


def test_done_with_nothing_before_it_is_incomplete() -> None:
    outcome = openai(b": ping\n\n", DONE)
    assert isinstance(outcome.error, IncompleteStreamError)


def test_done_after_an_empty_role_chunk_is_incomplete() -> None:
    outcome = openai(chunk({"role": "assistant", "content": ""}), DONE)
    assert isinstance(outcome.error, IncompleteStreamError)


def test_done_after_content_without_finish_reason_is_complete() -> None:
    response = done_response(openai(chunk({"content": "ok"}), DONE))
    assert response.stop_reason == StopReason.END_TURN
    assert response.stop_reason.raw == ""


def test_done_after_only_a_finish_reason_is_complete() -> None:
    response = done_response(openai(chunk(finish="stop"), DONE))
    assert response.content == []
    assert response.stop_reason.raw == "stop"


def test_later_null_finish_reason_never_clears_it() -> None:
    response = done_response(
        openai(chunk({"content": "a"}, "length"), chunk({"content": ""}, None), DONE)
    )
    assert response.stop_reason == StopReason.MAX_TOKENS


def test_usage_null_and_absent_counts_never_clear() -> None:
    usage = {"prompt_tokens": 3, "completion_tokens": 1, "prompt_cache_hit_tokens": 2}
    response = done_response(
        openai(
            chunk({"content": "a"}, usage=usage),
            chunk({"content": "b"}, usage=None),
            chunk(finish="stop", usage={"completion_tokens": 2}),
            DONE,
        )
    )
    assert (response.usage.input_tokens, response.usage.output_tokens) == (3, 2)
    assert response.usage.cache_read_tokens == 2  # DeepSeek's top-level cache count


def test_choice_option_selects_another_choice() -> None:
    data = (FIXTURES / "openai-compat" / "n2-choices.sse").read_bytes()
    response = done_response(run_chunks([data], choice=1))
    assert response.content == [Text("Tails, and more")]
    assert response.stop_reason == StopReason.MAX_TOKENS
    assert response.usage.output_tokens == 5


def test_choice_index_missing_means_choice_zero() -> None:
    frame = b'data: {"id":"x","model":"m","choices":[{"delta":{"content":"hi"}}]}\n\n'
    assert done_response(openai(frame, chunk(finish="stop"), DONE)).text() == "hi"


def test_tool_block_starts_at_first_fragment_even_without_a_name() -> None:
    outcome = openai(
        chunk({"tool_calls": [call(0, "call_a", "", "")]}),
        chunk({"tool_calls": [call(0, None, "lookup", '{"q": 1}')]}),
        chunk(finish="tool_calls"),
        DONE,
    )
    starts = [e for e in outcome.events if isinstance(e, BlockStart)]
    ends = [e for e in outcome.events if isinstance(e, BlockEnd)]
    first = starts[0].block
    assert isinstance(first, ToolUse)
    assert (first.id, first.name, first.input.value) == ("call_a", "", {})
    assert isinstance(ends[0].block, ToolUse)
    assert ends[0].block.name == "lookup"


def test_different_id_without_name_is_the_same_call(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="laminate"):
        response = done_response(
            openai(
                chunk({"tool_calls": [call(0, "call_a", "f", '{"x":')]}),
                chunk({"tool_calls": [call(0, "call_b", None, " 1}")]}),
                chunk(finish="tool_calls"),
                DONE,
            )
        )
    assert [(t.id, t.name, t.input.value) for t in response.tool_uses()] == [
        ("call_a", "f", {"x": 1})
    ]
    assert "call_b" in caplog.text


def test_different_id_and_name_at_a_known_index_is_a_new_call() -> None:
    response = done_response(
        openai(
            chunk({"tool_calls": [call(0, "call_a", "f", "{}")]}),
            chunk({"tool_calls": [call(0, "call_b", "g", '{"y": 2}')]}),
            chunk(finish="tool_calls"),
            DONE,
        )
    )
    assert [(t.id, t.name) for t in response.tool_uses()] == [("call_a", "f"), ("call_b", "g")]


def test_new_id_and_name_before_the_first_call_has_a_name_continue_it() -> None:
    # The call at index 0 has no name yet: the element names it, it does not start a
    # new call (its id conflicts and is logged).
    response = done_response(
        openai(
            chunk({"tool_calls": [call(0, "call_a", "", '{"x":')]}),
            chunk({"tool_calls": [call(0, "call_b", "f", " 1}")]}),
            chunk(finish="tool_calls"),
            DONE,
        )
    )
    assert [(t.id, t.name) for t in response.tool_uses()] == [("call_a", "f")]


def test_conflicting_name_is_logged_and_the_first_kept(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="laminate"):
        response = done_response(
            openai(
                chunk({"tool_calls": [call(0, None, "first", '{"a":')]}),
                chunk({"tool_calls": [call(0, None, "second", " 1}")]}),
                chunk(finish="tool_calls"),
                DONE,
            )
        )
    assert response.tool_uses()[0].name == "first"
    assert "second" in caplog.text


def test_a_new_index_is_a_new_call_even_with_a_known_id() -> None:
    # The index is the key: a repeated id at another index is another call, and gets
    # a unique id of its own.
    response = done_response(
        openai(
            chunk({"tool_calls": [call(0, "dup", "f", "{}")]}),
            chunk({"tool_calls": [call(1, "dup", "g", "{}")]}),
            chunk(finish="tool_calls"),
            DONE,
        )
    )
    calls = response.tool_uses()
    assert [c.name for c in calls] == ["f", "g"]
    assert calls[0].id == "dup"
    assert calls[1].id not in ("", "dup")


def test_object_arguments_are_one_fragment_of_compact_json() -> None:
    outcome = openai(
        chunk({"tool_calls": [call(0, "c", "f", {"city": "Zürich", "n": [1, 2]})]}),
        chunk(finish="tool_calls"),
        DONE,
    )
    fragments = [e.fragment for e in outcome.events if isinstance(e, ToolInputDelta)]
    assert fragments == ['{"city":"Zürich","n":[1,2]}']


def test_arguments_after_the_call_was_finished_are_malformed() -> None:
    outcome = openai(
        chunk({"tool_calls": [call(0, "c", "f", "{}")]}, "tool_calls"),
        chunk({"tool_calls": [call(0, None, None, '{"late": true}')]}),
        DONE,
    )
    assert isinstance(outcome.error, MalformedStreamError)
    assert "after the call" in str(outcome.error)
    assert outcome.error.partial is not None
    assert outcome.error.partial.tool_uses()[0].id == "c"


def test_cut_off_call_is_invalid_even_if_it_parses() -> None:
    response = done_response(
        openai(chunk({"tool_calls": [call(0, "c", "f", '{"a": 1}')]}, "length"), DONE)
    )
    assert isinstance(response.content[0], InvalidToolUse)
    assert response.content[0].raw_input == '{"a": 1}'


def test_tool_calls_that_are_not_a_list_are_malformed() -> None:
    outcome = openai(chunk({"tool_calls": {"index": 0}}), DONE)
    assert isinstance(outcome.error, MalformedStreamError)


def test_error_event_without_error_key_is_a_provider_error() -> None:
    frame = b'event: error\ndata: {"message": "overloaded", "type": "overloaded_error"}\n\n'
    outcome = openai(chunk({"content": "a"}), frame)
    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.error_type == "overloaded_error"
    assert outcome.error.retryable


def test_encrypted_details_without_ids_are_separate_blocks() -> None:
    details = [
        {"type": "reasoning.encrypted", "data": "AAA"},
        {"type": "reasoning.encrypted", "data": "BBB"},
    ]
    response = done_response(
        openai(chunk({"reasoning_details": details}), chunk({"content": "x"}, "stop"), DONE)
    )
    assert response.content == [
        Reasoning("", "AAA", True, None),
        Reasoning("", "BBB", True, None),
        Text("x"),
    ]


def test_summary_details_are_reasoning_text() -> None:
    details = [{"type": "reasoning.summary", "summary": "Plan.", "id": "rs_1"}]
    response = done_response(
        openai(chunk({"reasoning_details": details}), chunk({"content": "x"}, "stop"), DONE)
    )
    assert response.content[0] == Reasoning("Plan.", None, False, "rs_1")


def custom_frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    frame = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-5"}
    return b"data: " + json.dumps({**frame, "choices": [choice]}).encode() + b"\n\n"


def custom_call_stream(text: str, cuts: tuple[int, ...]) -> bytes:
    opened = {"index": 0, "id": "call_c", "type": "custom", "custom": {"name": "sh", "input": ""}}
    pieces = [text[a:b] for a, b in zip((0, *cuts), (*cuts, len(text)), strict=True)]
    return b"".join(
        [
            custom_frame({"role": "assistant", "content": None, "tool_calls": [opened]}),
            *(custom_frame({"tool_calls": [{"index": 0, "custom": {"input": p}}]}) for p in pieces),
            custom_frame({}, "tool_calls"),
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
    data = custom_frame({"tool_calls": [function, custom]}, "tool_calls") + b"data: [DONE]\n\n"
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


def test_a_complete_body_with_an_empty_delta_beside_its_message_read_as_a_stream() -> None:
    # Perplexity's complete body: each choice has an empty `delta` beside its `message`;
    # handed to the streaming side, the message is the answer, whatever the key order.
    body = {
        "id": "p1",
        "model": "sonar",
        "usage": {"prompt_tokens": 8, "completion_tokens": 3},
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Ruby is a language."},
                "delta": {"role": "assistant", "content": ""},
                "finish_reason": "stop",
            }
        ],
    }
    for provider in (None, "openai"):
        outcome = run_chunks([json.dumps(body).encode()], provider)
        assert outcome.error is None
        assert outcome.response is not None
        assert outcome.response.text() == "Ruby is a language."
        assert outcome.response.usage.output_tokens == 3
    assert laminate.normalize(body).text() == "Ruby is a language."
