"""Cohere v2 ``/v2/chat`` requests: the reader and the writer (``_apis/cohere/request.py``)."""

from __future__ import annotations

from typing import Any

import pytest

import laminate
from laminate import (
    FlexValue,
    Image,
    InvalidToolUse,
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
from laminate._apis.cohere.read import PLAN_ID

from .request_support import Vector, needs_vectors, vectors
from .request_validators import validate

API = "cohere"


@needs_vectors
@pytest.mark.parametrize("vector", vectors(API), ids=lambda v: v.id)
def test_every_recorded_request_is_written_back_as_it_came(vector: Vector) -> None:
    body = vector.body()
    written = laminate.write_request(laminate.read_request(body, API), API)
    assert written.losses == []
    assert written.path == "/v2/chat"
    assert written.body == body


def test_an_assistant_turn_keeps_its_plan_thinking_calls_and_citations_for_cohere() -> None:
    citations = [{"start": 0, "end": 4, "text": "Oslo", "sources": []}]
    body = {
        "model": "command-a-reasoning-08-2025",
        "messages": [
            {"role": "user", "content": "Oslo?"},
            {
                "role": "assistant",
                "tool_plan": "I will look it up.",
                "tool_calls": [
                    {
                        "id": "w_1",
                        "type": "function",
                        "function": {"name": "w", "arguments": '{"city":"Oslo"}'},
                    },
                    {"id": "w_2", "type": "function", "function": {"name": "w", "arguments": "{"}},
                ],
                "content": [
                    {"type": "thinking", "thinking": "Weather."},
                    {"type": "text", "text": "Oslo it is."},
                ],
                "citations": citations,
            },
            {"role": "tool", "tool_call_id": "w_1", "content": "5 C"},
        ],
        "thinking": {"type": "enabled", "token_budget": 2000},
        "stream": True,
    }
    request = laminate.read_request(body, API)
    assert request.messages[1] == Message(
        "assistant",
        [
            Reasoning("I will look it up.", id=PLAN_ID),
            Reasoning("Weather."),
            Text("Oslo it is."),
            ToolUse("w_1", "w", FlexValue({"city": "Oslo"})),
            InvalidToolUse("w_2", "w", "{", "arguments are not valid JSON"),
        ],
        {"citations": citations},
    )
    assert request.reasoning == 2000
    assert laminate.write_request(request, API).body == body
    # Another API gets no plan and no citations; reasoning text it may take.
    elsewhere = laminate.write_request(request, "openai-responses")
    assert "I will look it up." not in str(elsewhere.body)


def test_written_for_cohere_from_another_api() -> None:
    request = Request(
        model="command-r",
        system=[Text("Be brief.")],
        messages=[
            Message("user", [Text("What is it?"), Image("image/png", data="iVBO")]),
            Message(
                "assistant",
                [Reasoning("Look.", signature="sig"), ToolUse("c1", "w", FlexValue({"x": 1}))],
            ),
            Message("user", [ToolResult("c1", "w", "no", False)]),
        ],
        tools=[ToolSpec("w", "W.", {"type": "object", "properties": {"x": {"type": "integer"}}})],
        tool_choice="any",
        max_tokens=50,
        top_p=0.5,
        top_k=3,
        stop=["END"],
        response_format=JsonSchema("a", {"type": "object"}),
        api="anthropic",
    )
    written = laminate.write_request(request, API)
    assert written.body == {
        "model": "command-r",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is it?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
                ],
            },
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "w", "arguments": '{"x":1}'},
                    }
                ],
                "content": [{"type": "thinking", "thinking": "Look."}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "Error: no"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "w",
                    "description": "W.",
                    "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}},
                },
            }
        ],
        "tool_choice": "REQUIRED",
        "max_tokens": 50,
        "p": 0.5,
        "k": 3,
        "stop_sequences": ["END"],
        "response_format": {"type": "json_object", "json_schema": {"type": "object"}},
    }
    assert [(loss.path, loss.reason) for loss in written.losses] == [
        ("messages[1].content[0]", "foreign-reasoning")
    ]
    validate(API, written.body, written.path)


def test_one_tool_is_chosen_by_narrowing_the_tools() -> None:
    tools = [ToolSpec("a"), ToolSpec("b")]
    request = Request(
        model="m", messages=[Message("user", [Text("hi")])], tools=tools, tool_choice="b"
    )
    written = laminate.write_request(request, API)
    assert [t["function"]["name"] for t in written.body["tools"]] == ["b"]
    assert written.body["tool_choice"] == "REQUIRED"
    assert [(loss.path, loss.reason) for loss in written.losses] == [
        ("tools[0]", "approximated"),
        ("tool_choice", "approximated"),
    ]


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({}, "messages"),
        ({"messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
        ({"messages": [{"role": "tool", "content": "x"}]}, "messages[0].tool_call_id"),
        ({"messages": [{"role": "user", "content": 3}]}, "messages[0].content"),
        ({"messages": [{"role": "user", "content": [{"text": "x"}]}]}, "messages[0].content[0]"),
        ({"messages": [], "tool_choice": "AUTO"}, "tool_choice"),
        ({"messages": [], "thinking": {"type": "enabled", "token_budget": "x"}}, "thinking"),
    ],
)
def test_an_invalid_body_is_a_translation_error_naming_the_place(
    body: dict[str, Any], where: str
) -> None:
    with pytest.raises(TranslationError) as raised:
        laminate.read_request(body, API)
    assert raised.value.path.startswith(where)
