"""Bedrock Converse requests: the reader and the writer (``_apis/bedrock/request.py``)."""

from __future__ import annotations

from typing import Any

import pytest

import laminate
from laminate import (
    CachePoint,
    Document,
    FlexValue,
    Image,
    Message,
    Reasoning,
    Request,
    Text,
    ToolResult,
    ToolSpec,
    ToolUse,
    TranslationError,
)
from laminate._core.request import Block

from .request_support import Vector, canonical, needs_vectors, vectors
from .request_validators import validate

API = "bedrock"
CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
PATH = "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"


@needs_vectors
@pytest.mark.parametrize("vector", vectors(API), ids=lambda v: v.id)
def test_every_recorded_request_is_written_back_as_it_came(vector: Vector) -> None:
    body = vector.body()
    written = laminate.write_request(laminate.read_request(body, API, path=vector.path), API)
    assert written.losses == []
    assert written.path == vector.path
    assert canonical(API, written.body) == canonical(API, body)


def test_the_model_id_and_the_streaming_are_in_the_path() -> None:
    body = {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}
    request = laminate.read_request(body, API, path=PATH)
    assert (request.model, request.stream) == (CLAUDE, False)
    streamed = PATH.replace("/converse", "/converse-stream")
    assert laminate.read_request(body, API, path=streamed).stream is True
    written = laminate.write_request(Request(model=CLAUDE, stream=True), API)
    assert written.path == streamed
    with pytest.raises(TranslationError, match="Converse"):
        laminate.read_request(body, API, path="/v1/messages")


def test_results_are_one_user_turn_right_after_the_call_and_turns_alternate() -> None:
    request = Request(
        model=CLAUDE,
        messages=[
            Message("user", [Text("Oslo and Lima?")]),
            Message("user", [Text("Quickly.")]),
            Message(
                "assistant",
                [
                    ToolUse("c1", "w", FlexValue({"city": "Oslo"})),
                    ToolUse("c2", "w", FlexValue({"city": "Lima"})),
                ],
            ),
            Message("user", [Text("Here:"), ToolResult("c1", "w", "5 C", True)]),
            Message("user", [ToolResult("c2", "w", "", False)]),
        ],
        tools=[ToolSpec("w", "Weather.", {"type": "object", "properties": {}})],
        api="openai",
    )
    written = laminate.write_request(request, API)
    messages = written.body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0]["content"] == [{"text": "Oslo and Lima?"}, {"text": "Quickly."}]
    assert messages[2]["content"] == [
        {"toolResult": {"toolUseId": "c1", "content": [{"text": "5 C"}]}},
        {
            "toolResult": {
                "toolUseId": "c2",
                "content": [{"text": "(no output)"}],
                "status": "error",
            }
        },
        {"text": "Here:"},
    ]
    validate(API, written.body, written.path)


def test_a_tool_config_whenever_the_history_holds_tool_blocks() -> None:
    history = [
        Message("user", [Text("Oslo?")]),
        Message("assistant", [ToolUse("c1", "w", FlexValue({"city": "Oslo"}))]),
        Message("user", [ToolResult("c1", "w", "5 C", True)]),
    ]
    bare = laminate.write_request(Request(model=CLAUDE, messages=history), API)
    assert bare.body["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "w",
                    "inputSchema": {"json": {"type": "object", "properties": {}}},
                }
            }
        ]
    }
    tools = [ToolSpec("w", "Weather.", {"type": "object", "properties": {}})]
    none = laminate.write_request(
        Request(model=CLAUDE, messages=history, tools=tools, tool_choice="none"), API
    )
    assert "toolChoice" not in none.body["toolConfig"]
    assert [(loss.path, loss.reason) for loss in none.losses] == [("tool_choice", "unsupported")]
    fresh = laminate.write_request(
        Request(model=CLAUDE, messages=history[:1], tools=tools, tool_choice="none"), API
    )
    assert "toolConfig" not in fresh.body
    assert {loss.path for loss in fresh.losses} == {"tools", "tool_choice"}


@pytest.mark.parametrize(
    ("choice", "written"),
    [("auto", {"auto": {}}), ("any", {"any": {}}), ("w", {"tool": {"name": "w"}})],
)
def test_tool_choice(choice: str, written: dict[str, Any]) -> None:
    tools = [ToolSpec("w", "Weather.", {"type": "object", "properties": {}})]
    request = Request(model=CLAUDE, messages=[Message("user", [Text("hi")])], tools=tools)
    body = laminate.write_request(Request(**{**_fields(request), "tool_choice": choice}), API).body
    assert body["toolConfig"]["toolChoice"] == written
    assert laminate.read_request(body, API).tool_choice == choice


def _fields(request: Request) -> dict[str, Any]:
    return {name: getattr(request, name) for name in Request.__dataclass_fields__}


def test_signed_reasoning_goes_back_to_bedrock_only() -> None:
    content: list[Block] = [
        Reasoning("Think.", signature="c2ln"),
        Reasoning("", signature="cmVkYWN0ZWQ=", redacted=True),
        Text("Answer."),
    ]
    own = Request(model=CLAUDE, messages=[Message("assistant", list(content))], api=API)
    assert laminate.write_request(own, API).body["messages"][0]["content"] == [
        {"reasoningContent": {"reasoningText": {"text": "Think.", "signature": "c2ln"}}},
        {"reasoningContent": {"redactedContent": "cmVkYWN0ZWQ="}},
        {"text": "Answer."},
    ]
    foreign = Request(model=CLAUDE, messages=[Message("assistant", list(content))], api="gemini")
    written = laminate.write_request(foreign, API)
    assert written.body["messages"][0]["content"] == [{"text": "Answer."}]
    assert {loss.reason for loss in written.losses} == {"foreign-reasoning"}


def test_blank_text_from_another_api_is_not_sent() -> None:
    request = Request(
        model=CLAUDE,
        system=[Text(""), Text("Be brief.")],
        messages=[Message("user", [Text(" "), Text("hi")])],
        api="openai",
    )
    body = laminate.write_request(request, API).body
    assert body["system"] == [{"text": "Be brief."}]
    assert body["messages"] == [{"role": "user", "content": [{"text": "hi"}]}]


def test_cache_points_images_and_documents() -> None:
    request = Request(
        model=CLAUDE,
        system=[Text("Long."), CachePoint(ttl="1h")],
        messages=[
            Message(
                "user",
                [
                    Text("Compare."),
                    Image("image/jpeg", data="/9j/"),
                    Image("image/png", url="https://example.test/a.png"),
                    Document("application/pdf", data="JVBERi0=", title="spec.v2 (final)"),
                    Document("text/plain", text="Plain.", title="notes"),
                ],
            )
        ],
    )
    written = laminate.write_request(request, API)
    assert written.body["system"] == [
        {"text": "Long."},
        {"cachePoint": {"type": "default", "ttl": "1h"}},
    ]
    assert written.body["messages"][0]["content"][1:] == [
        {"image": {"format": "jpeg", "source": {"bytes": "/9j/"}}},
        {"document": {"format": "pdf", "name": "spec v2 (final)", "source": {"bytes": "JVBERi0="}}},
        {"document": {"format": "txt", "name": "notes", "source": {"text": "Plain."}}},
    ]
    assert [(loss.path, loss.reason) for loss in written.losses] == [
        ("messages[0].content[2]", "unsupported"),  # Converse fetches no link
        ("messages[0].content[3].title", "approximated"),  # a name of Bedrock's characters
    ]
    validate(API, written.body, written.path)


def test_top_k_and_reasoning_take_the_shape_of_the_models_family() -> None:
    claude = laminate.write_request(Request(model=CLAUDE, top_k=5, reasoning=2048), API)
    assert claude.body["additionalModelRequestFields"] == {
        "top_k": 5,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
    }
    again = laminate.read_request(claude.body, API, path=claude.path)
    assert (again.top_k, again.reasoning, again.extra) == (5, 2048, {})
    nova = laminate.write_request(
        Request(model="amazon.nova-pro-v1:0", top_k=5, reasoning="low"), API
    )
    assert nova.body["additionalModelRequestFields"] == {
        "inferenceConfig": {"topK": 5},
        "reasoningConfig": {"type": "enabled", "maxReasoningEffort": "low"},
    }
    other = laminate.write_request(Request(model="meta.llama3-70b", top_k=5, reasoning=10), API)
    assert "additionalModelRequestFields" not in other.body
    assert {loss.path for loss in other.losses} == {"top_k", "reasoning"}


def test_the_tool_loop_hands_redacted_reasoning_to_boto3_as_bytes() -> None:
    response = laminate.NormalizedResponse(
        "r",
        CLAUDE,
        API,
        [Reasoning("", signature="cmVkYWN0ZWQ=", redacted=True), Text("Hi.")],
        laminate.StopReason.END_TURN,
        laminate.Usage(),
    )
    message = laminate.assistant_message(response, API)
    assert message == {
        "role": "assistant",
        "content": [{"reasoningContent": {"redactedContent": b"redacted"}}, {"text": "Hi."}],
    }


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({}, "messages"),
        ({"messages": [{"role": "robot", "content": []}]}, "messages[0].role"),
        ({"messages": [{"role": "user"}]}, "messages[0].content"),
        ({"messages": [{"role": "user", "content": [{"text": 1}]}]}, "messages[0].content[0]"),
        (
            {"messages": [{"role": "user", "content": [{"text": "a", "image": {}}]}]},
            "messages[0].content[0]",
        ),
        (
            {"messages": [], "toolConfig": {"tools": [], "toolChoice": {"none": {}}}},
            "toolConfig.toolChoice",
        ),
    ],
)
def test_an_invalid_body_is_a_translation_error_naming_the_place(
    body: dict[str, Any], where: str
) -> None:
    with pytest.raises(TranslationError) as raised:
        laminate.read_request(body, API)
    assert raised.value.path.startswith(where)
