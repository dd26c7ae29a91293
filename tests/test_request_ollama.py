"""Ollama ``/api/chat`` requests: the reader and the writer (``_apis/ollama/request.py``)."""

from __future__ import annotations

from typing import Any

import pytest

import laminate
from laminate import (
    Document,
    FlexValue,
    Image,
    JsonSchema,
    Message,
    Reasoning,
    Request,
    Text,
    ToolResult,
    ToolSpec,
    ToolUse,
    TranslationError,
)

from .request_support import Vector, needs_vectors, vectors
from .request_validators import validate

API = "ollama"


@needs_vectors
@pytest.mark.parametrize("vector", vectors(API), ids=lambda v: v.id)
def test_every_recorded_request_is_written_back_as_it_came(vector: Vector) -> None:
    body = vector.body()
    written = laminate.write_request(laminate.read_request(body, API), API)
    assert written.losses == []
    assert written.path == "/api/chat"
    assert written.body == body


def test_a_conversation_is_read_system_first_results_paired_by_tool_name() -> None:
    body = {
        "model": "llama3.2",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Look.", "images": ["iVBORw0KGgoAAA", "/9j/4AAQ"]},
            {
                "role": "assistant",
                "content": "",
                "thinking": "Weather first.",
                "tool_calls": [{"function": {"name": "w", "arguments": {"city": "Oslo"}}}],
            },
            {"role": "tool", "tool_name": "w", "content": "5 C"},
        ],
        "options": {"num_predict": 64, "temperature": 0, "seed": 7},
        "format": "json",
        "think": True,
        "stream": False,
    }
    request = laminate.read_request(body, API)
    assert request.system == [Text("Be brief.")]
    assert request.messages == [
        Message(
            "user",
            [
                Text("Look."),
                Image("image/png", data="iVBORw0KGgoAAA"),
                Image("image/jpeg", data="/9j/4AAQ"),
            ],
        ),
        Message(
            "assistant",
            [Reasoning("Weather first."), ToolUse("call_0", "w", FlexValue({"city": "Oslo"}))],
        ),
        Message(
            "user", [ToolResult(tool_use_id="call_0", content="5 C", is_error=False, name="w")]
        ),
    ]
    assert (request.max_tokens, request.temperature, request.response_format) == (64, 0, "json")
    assert request.extra == {"options": {"seed": 7}, "think": True}
    assert laminate.write_request(request, API).body == body


def test_written_for_ollama_text_images_thinking_and_one_message_per_result() -> None:
    request = Request(
        model="qwen3",
        system=[Text("Be brief.")],
        messages=[
            Message("user", [Text("What is it?"), Image("image/png", data="iVBO")]),
            Message(
                "assistant",
                [
                    Reasoning("Check.", signature="sig"),
                    Text("Checking."),
                    ToolUse("toolu_1", "w", FlexValue({"city": "Oslo"})),
                ],
            ),
            Message(
                "user",
                [
                    ToolResult("toolu_1", "", "5 C", True),
                    ToolResult("toolu_1", "w", "timeout", False),
                ],
            ),
        ],
        tools=[ToolSpec("w", "Weather.", {"type": "object", "properties": {}})],
        response_format=JsonSchema("answer", {"type": "object"}),
        max_tokens=10,
        api="anthropic",
    )
    written = laminate.write_request(request, API)
    assert written.body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is it?", "images": ["iVBO"]},
        {
            "role": "assistant",
            "content": "Checking.",
            "thinking": "Check.",
            "tool_calls": [
                {
                    "id": "toolu_1",
                    "function": {"index": 0, "name": "w", "arguments": {"city": "Oslo"}},
                }
            ],
        },
        {"role": "tool", "tool_name": "w", "tool_call_id": "toolu_1", "content": "5 C"},
        {"role": "tool", "tool_name": "w", "tool_call_id": "toolu_1", "content": "Error: timeout"},
    ]
    assert written.body["format"] == {"type": "object"}
    assert written.body["options"] == {"num_predict": 10}
    assert written.body["stream"] is False  # Ollama streams unless told not to
    # The reasoning's text goes; its signature cannot.
    assert [(loss.path, loss.reason) for loss in written.losses] == [
        ("messages[1].content[0]", "foreign-reasoning")
    ]
    validate(API, written.body, written.path)


def test_what_ollama_cannot_carry_is_a_loss() -> None:
    request = Request(
        model="m",
        messages=[
            Message(
                "user",
                [
                    Image("image/png", url="https://example.test/a.png"),
                    Document("application/pdf", data="JVBERi0="),
                    Document("text/plain", text="Notes.", title="n"),
                ],
            )
        ],
        tools=[ToolSpec("w", "", {"type": "object", "properties": {}, "title": "W"})],
        tool_choice="w",
        parallel_tool_calls=False,
        user="u",
        reasoning=4096,
    )
    written = laminate.write_request(request, API)
    assert written.body["messages"] == [{"role": "user", "content": "n\n\nNotes."}]
    assert written.body["think"] is True
    assert written.body["tools"][0]["function"]["parameters"] == {
        "type": "object",
        "properties": {},
    }
    assert [(loss.path, loss.reason) for loss in written.losses] == [
        ("messages[0].content[0]", "unsupported"),
        ("messages[0].content[1]", "unsupported"),
        ("messages[0].content[2]", "approximated"),
        ("tools[0].schema", "schema"),
        ("tool_choice", "unsupported"),
        ("parallel_tool_calls", "unsupported"),
        ("reasoning", "approximated"),
        ("user", "unsupported"),
    ]


def test_the_tool_loops_turns_carry_every_id() -> None:
    response = laminate.NormalizedResponse(
        "r",
        "m",
        API,
        [Text("On it."), ToolUse("call_0", "w", FlexValue({}))],
        laminate.StopReason.TOOL_USE,
        laminate.Usage(),
    )
    assert laminate.assistant_message(response, API) == {
        "role": "assistant",
        "content": "On it.",
        "tool_calls": [{"id": "call_0", "function": {"index": 0, "name": "w", "arguments": {}}}],
    }


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({}, "messages"),
        ({"messages": [{"content": "x"}]}, "messages[0].role"),
        ({"messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
        ({"messages": [{"role": "user", "content": 5}]}, "messages[0].content"),
        ({"messages": [{"role": "user", "content": "x", "images": [1]}]}, "messages[0].images[0]"),
        ({"messages": [], "format": 3}, "format"),
        ({"messages": [], "options": {"num_predict": "x"}}, "options.num_predict"),
    ],
)
def test_an_invalid_body_is_a_translation_error_naming_the_place(
    body: dict[str, Any], where: str
) -> None:
    with pytest.raises(TranslationError) as raised:
        laminate.read_request(body, API)
    assert raised.value.path.startswith(where)
