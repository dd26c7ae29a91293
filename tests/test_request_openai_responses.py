"""Responses requests: the reader and the writer (``_apis/openai_responses/request.py``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import laminate
from laminate import (
    FlexValue,
    JsonSchema,
    Loss,
    Message,
    Reasoning,
    Text,
    ToolResult,
    ToolUse,
    TranslationError,
)

from .request_support import Vector, canonical, needs_vectors, vector_params, vectors

API = "openai-responses"


@needs_vectors
@pytest.mark.parametrize("vector", vector_params(API))
def test_every_recorded_request_is_written_back_as_it_came(vector: Vector) -> None:
    body = vector.body()
    written = laminate.write_request(laminate.read_request(body, API), API)
    assert written.losses == []
    assert written.path == "/v1/responses"
    assert canonical(API, written.body) == canonical(API, body)


def loop_body() -> dict[str, Any]:
    return {
        "model": "gpt-5",
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": "Oslo?"},
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "Look it up."}],
                "encrypted_content": "gAAAA-opaque",
            },
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "w",
                "arguments": '{"city":"Oslo"}',
                "status": "completed",
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "5 C"},
        ],
        "tools": [
            {
                "type": "function",
                "name": "w",
                "parameters": {"type": "object", "properties": {}},
                "strict": False,
            }
        ],
        "reasoning": {"effort": "low", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
        "store": False,
    }


def test_items_are_read_one_message_each_with_the_items_own_fields_kept() -> None:
    request = laminate.read_request(loop_body(), API)
    assert request.system == [Text("Be brief.")]
    user, reasoning, call, output = request.messages
    assert user == Message("user", [Text("Oslo?")])
    assert reasoning == Message("assistant", [Reasoning("Look it up.", "gAAAA-opaque", id="rs_1")])
    assert call == Message(
        "assistant",
        [ToolUse("call_1", "w", FlexValue({"city": "Oslo"}))],
        {"id": "fc_1", "status": "completed"},
    )
    assert output == Message("user", [ToolResult("call_1", "w", "5 C", True)])
    assert request.reasoning == "low"
    assert request.extra == {
        "reasoning": {"summary": "auto"},
        "include": ["reasoning.encrypted_content"],
        "store": False,
    }
    assert canonical(API, laminate.write_request(request, API).body) == canonical(API, loop_body())


def test_to_another_api_the_reasoning_and_the_item_ids_are_losses_and_the_turn_is_one_message() -> (
    None
):
    written = laminate.translate_request(loop_body(), API, "anthropic")
    assert written.body["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "call_1", "name": "w", "input": {"city": "Oslo"}}],
    }
    assert "gAAAA-opaque" not in json.dumps(written.body)
    assert "fc_1" not in json.dumps(written.body)
    assert Loss("messages[1].content[0]", "foreign-reasoning") in written.losses
    assert Loss("messages[2].id", "source-only") in written.losses
    assert Loss("extra.include", "source-only") in written.losses


def test_reasoning_from_an_answer_of_this_api_goes_back_with_its_encrypted_content() -> None:
    request = laminate.Request(
        model="gpt-5",
        messages=[Message("assistant", [Reasoning("", "enc", id="rs_9"), Text("Hi")])],
        api=API,
    )
    body = laminate.write_request(request, API).body
    assert body["input"] == [
        {"type": "reasoning", "id": "rs_9", "summary": [], "encrypted_content": "enc"},
        {"type": "message", "role": "assistant", "content": "Hi"},
    ]


def test_settings_get_their_responses_names() -> None:
    request = laminate.Request(
        model="m",
        messages=[Message("user", [Text("hi")])],
        max_tokens=99,
        reasoning=1000,
        stop=["END"],
        response_format=JsonSchema("City", {"type": "object"}, strict=True),
        tool_choice="w",
        stream=True,
    )
    written = laminate.write_request(request, API)
    body = written.body
    assert body["max_output_tokens"] == 99
    assert body["reasoning"] == {"effort": "low"}
    assert body["text"] == {
        "format": {
            "type": "json_schema",
            "name": "City",
            "schema": {"type": "object"},
            "strict": True,
        }
    }
    assert body["tool_choice"] == {"type": "function", "name": "w"}
    assert body["stream"] is True
    assert set(written.losses) == {Loss("stop", "unsupported"), Loss("reasoning", "approximated")}


@needs_vectors
@pytest.mark.parametrize(
    "vector",
    [pytest.param(v, id=v.id) for v in vectors(API) if "reasoning-encrypted" in v.name],
)
def test_recorded_encrypted_reasoning_is_replayed_byte_for_byte(vector: Vector) -> None:
    body = vector.body()
    encrypted = [i["encrypted_content"] for i in body["input"] if i.get("type") == "reasoning"]
    assert encrypted
    written = json.dumps(laminate.translate_request(body, API, API).body)
    assert all(e in written for e in encrypted)


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"input": "hi"}, "model"),
        (
            {"model": "m", "input": [{"type": "function_call", "name": "f", "arguments": "{}"}]},
            "input[0].call_id",
        ),
        (
            {
                "model": "m",
                "input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}],
            },
            "input[0].arguments",
        ),
        (
            {"model": "m", "input": [{"role": "user", "content": [{"text": "x"}]}]},
            "input[0].content[0].type",
        ),
        ({"model": "m", "input": [{"content": "x"}]}, "input[0].type"),
        ({"model": "m", "input": 5}, "input"),
    ],
)
def test_an_invalid_body_is_a_translation_error_naming_the_path(
    body: dict[str, Any], path: str
) -> None:
    with pytest.raises(TranslationError) as caught:
        laminate.read_request(body, API)
    assert caught.value.path == path
