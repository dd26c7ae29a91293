"""Chat Completions requests: the reader and the writer (``_apis/openai_chat/request.py``)."""

from __future__ import annotations

from typing import Any

import pytest

import laminate
from laminate import (
    FlexValue,
    Image,
    InvalidToolUse,
    JsonSchema,
    Loss,
    Message,
    Text,
    ToolResult,
    ToolSpec,
    ToolUse,
    TranslationError,
)
from laminate._apis.requestkit import is_custom

from .request_support import Vector, canonical, needs_vectors, vector_params

API = "openai"


@needs_vectors
@pytest.mark.parametrize("vector", vector_params(API))
def test_every_recorded_request_is_written_back_as_it_came(vector: Vector) -> None:
    body = vector.body()
    written = laminate.write_request(laminate.read_request(body, API), API)
    assert written.losses == []
    assert written.path == "/v1/chat/completions"
    assert canonical(API, written.body) == canonical(API, body)


def test_roles_are_read_system_first_developer_kept_tool_messages_named_after_their_call() -> None:
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "developer", "content": "Use tools."},
            {"role": "user", "content": "Oslo?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "w", "arguments": '{"city": "Oslo"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "5 C"},
        ],
    }
    request = laminate.read_request(body, API)
    assert request.system == [Text("Be brief.")]
    developer, user, assistant, result = request.messages
    assert developer == Message("system", [Text("Use tools.")], {"role": "developer"})
    assert user == Message("user", [Text("Oslo?")])
    assert assistant == Message("assistant", [ToolUse("c1", "w", FlexValue({"city": "Oslo"}))])
    assert result == Message("user", [ToolResult("c1", "w", "5 C", True)])
    assert canonical(API, laminate.write_request(request, API).body) == canonical(API, body)


def test_arguments_that_are_not_an_object_are_kept_as_an_invalid_call() -> None:
    body = {
        "model": "m",
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "w", "arguments": '{"city": "Os'},
                    }
                ],
            }
        ],
    }
    request = laminate.read_request(body, API)
    (call,) = request.messages[0].content
    assert isinstance(call, InvalidToolUse)
    assert call.raw_input == '{"city": "Os'
    written = laminate.write_request(request, API).body
    assert written["messages"][0]["tool_calls"][0]["function"]["arguments"] == '{"city": "Os'


def test_custom_tools_and_their_calls_are_read_and_written() -> None:
    body = {
        "model": "gpt-5",
        "messages": [
            {"role": "user", "content": "run it"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "custom", "custom": {"name": "shell", "input": "ls -la"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        ],
        "tools": [
            {
                "type": "custom",
                "custom": {
                    "name": "shell",
                    "description": "Run a command.",
                    "format": {"type": "text"},
                },
            }
        ],
        "tool_choice": {"type": "custom", "custom": {"name": "shell"}},
    }
    request = laminate.read_request(body, API)
    (tool,) = request.tools
    assert (tool.kind, tool.name, tool.extra) == ("custom", "shell", {"format": {"type": "text"}})
    (call,) = request.messages[1].content
    assert isinstance(call, ToolUse)
    assert is_custom(call)
    assert call.input.value == "ls -la"
    assert request.tool_choice == "shell"
    assert canonical(API, laminate.write_request(request, API).body) == canonical(API, body)
    responses = laminate.write_request(request, "openai-responses").body
    assert responses["tools"] == [
        {
            "type": "custom",
            "name": "shell",
            "description": "Run a command.",
            "format": {"type": "text"},
        }
    ]
    assert {
        "type": "custom_tool_call",
        "call_id": "c1",
        "name": "shell",
        "input": "ls -la",
    } in responses["input"]
    assert {"type": "custom_tool_call_output", "call_id": "c1", "output": "a.txt"} in responses[
        "input"
    ]
    assert responses["tool_choice"] == {"type": "custom", "name": "shell"}


def test_streaming_asks_for_usage_and_settings_get_their_chat_names() -> None:
    request = laminate.Request(
        model="m",
        messages=[Message("user", [Text("hi")])],
        stream=True,
        max_tokens=50,
        reasoning=20000,
        stop=["END"],
        top_k=3,
        tool_choice="any",
        tools=[ToolSpec("f")],
        response_format=JsonSchema("answer", {"type": "object"}, strict=True),
        user="u1",
    )
    written = laminate.write_request(request, API)
    body = written.body
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 50  # a model other than OpenAI's reasoning ones
    assert body["reasoning_effort"] == "high"
    assert body["stop"] == ["END"]
    assert body["tool_choice"] == "required"
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "f", "parameters": {"type": "object", "properties": {}}},
        }
    ]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": {"type": "object"}, "strict": True},
    }
    assert body["user"] == "u1"
    assert set(written.losses) == {Loss("top_k", "unsupported"), Loss("reasoning", "approximated")}


def test_a_failed_result_says_so_in_its_text_and_an_image_follows_the_tool_message() -> None:
    request = laminate.Request(
        model="m",
        messages=[
            Message("assistant", [ToolUse("t1", "shot", FlexValue({}))]),
            Message(
                "user",
                [
                    ToolResult(
                        tool_use_id="t1",
                        content=[Text("see"), Image("image/png", data="iVBO")],
                        is_error=False,
                    ),
                    Text("What is in it?"),
                ],
            ),
            Message("assistant", [ToolUse("t2", "shot", FlexValue({}))]),
            Message("user", [ToolResult("t2", "shot", "disk full", False)]),
        ],
    )
    written = laminate.write_request(request, API)
    messages = written.body["messages"]
    assert messages[1] == {"role": "tool", "tool_call_id": "t1", "content": "see"}
    assert messages[2] == {
        "role": "user",
        "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
            {"type": "text", "text": "What is in it?"},
        ],
    }
    assert messages[4] == {"role": "tool", "tool_call_id": "t2", "content": "Error: disk full"}
    assert Loss("messages[1].content[0].content[1]", "reordered") in written.losses


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"messages": []}, "model"),
        ({"model": "m", "messages": [{"content": "x"}]}, "messages[0].role"),
        (
            {"model": "m", "messages": [{"role": "tool", "content": "x"}]},
            "messages[0].tool_call_id",
        ),
        (
            {
                "model": "m",
                "messages": [
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "id": "a",
                                "type": "function",
                                "function": {"name": "f", "arguments": {}},
                            }
                        ],
                    }
                ],
            },
            "messages[0].tool_calls[0].function.arguments",
        ),
        ({"model": "m", "messages": [], "tools": [{"type": "function"}]}, "tools[0].function"),
        ({"model": "m", "messages": [], "tool_choice": 3}, "tool_choice"),
        ({"model": "m", "messages": [], "temperature": "hot"}, "temperature"),
    ],
)
def test_an_invalid_body_is_a_translation_error_naming_the_path(
    body: dict[str, Any], path: str
) -> None:
    with pytest.raises(TranslationError) as caught:
        laminate.read_request(body, API)
    assert caught.value.path == path


def test_a_strict_tool_whose_schema_strict_mode_refuses_is_sent_without_strict() -> None:
    open_schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    closed = {**open_schema, "required": ["a"], "additionalProperties": False}
    request = laminate.Request(
        model="m",
        messages=[Message("user", [Text("x")])],
        tools=[
            ToolSpec("loose", schema=open_schema, strict=True),
            ToolSpec("tight", schema=closed, strict=True),
        ],
    )
    for api in ("openai", "openai-responses"):
        written = laminate.write_request(request, api)
        assert written.losses == [Loss("tools[0].strict", "schema")]
        flags = [
            t.get("strict", t.get("function", {}).get("strict")) for t in written.body["tools"]
        ]
        assert flags == [False, True]
