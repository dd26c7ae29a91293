"""Anthropic Messages requests: the reader and the writer (``_apis/anthropic/request.py``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import laminate
from laminate import (
    CachePoint,
    Document,
    FlexValue,
    Image,
    JsonSchema,
    Loss,
    Message,
    Reasoning,
    Text,
    ToolResult,
    ToolSpec,
    ToolUse,
    TranslationError,
    Unknown,
)
from laminate._apis.requestkit import DEFAULT_MAX_TOKENS

from .request_support import Vector, canonical, needs_vectors, vector_params, vectors

API = "anthropic"


@needs_vectors
@pytest.mark.parametrize("vector", vector_params(API))
def test_every_recorded_request_is_written_back_as_it_came(vector: Vector) -> None:
    body = vector.body()
    written = laminate.write_request(laminate.read_request(body, API), API)
    assert written.losses == []
    assert written.path == "/v1/messages"
    assert canonical(API, written.body) == canonical(API, body)


def test_system_blocks_and_cache_breakpoints_are_read_and_written_back() -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "system": [
            {"type": "text", "text": "You are a coder.", "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "Be brief."},
        ],
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "hi",
                        "cache_control": {"type": "ephemeral", "ttl": "1h"},
                    }
                ],
            }
        ],
    }
    request = laminate.read_request(body, API)
    assert request.system == [Text("You are a coder."), CachePoint(), Text("Be brief.")]
    assert request.messages[0].content == [Text("hi"), CachePoint("1h")]
    assert laminate.write_request(request, API).body == body


def test_every_block_kind_is_read() -> None:
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
                    },
                    {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}},
                    {
                        "type": "document",
                        "source": {
                            "type": "base64",
                            "media_type": "application/pdf",
                            "data": "JVBE",
                        },
                        "title": "spec",
                    },
                    {
                        "type": "document",
                        "source": {"type": "text", "media_type": "text/plain", "data": "notes"},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "c2ln"},
                    {"type": "redacted_thinking", "data": "ZW5j"},
                    {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": 1}},
                    {
                        "type": "server_tool_use",
                        "id": "srvtoolu_1",
                        "name": "web_search",
                        "input": {},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [{"type": "text", "text": "ok"}],
                        "is_error": True,
                    }
                ],
            },
        ],
    }
    request = laminate.read_request(body, API)
    user, assistant, results = request.messages
    assert user.content == [
        Image("image/png", data="iVBO"),
        Image("", url="https://x/y.png"),
        Document("application/pdf", data="JVBE", title="spec"),
        Document("text/plain", text="notes"),
    ]
    assert assistant.content == [
        Reasoning("hmm", "c2ln"),
        Reasoning("", "ZW5j", redacted=True),
        ToolUse("toolu_1", "f", FlexValue({"a": 1})),
        Unknown(
            "server_tool_use", FlexValue({"id": "srvtoolu_1", "name": "web_search", "input": {}})
        ),
    ]
    assert results.content == [
        ToolResult(tool_use_id="toolu_1", content=[Text("ok")], is_error=True)
    ]
    assert canonical(API, laminate.write_request(request, API).body) == canonical(API, body)


def test_settings_are_read_into_their_neutral_names() -> None:
    body = {
        "model": "m",
        "max_tokens": 2000,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "f", "input_schema": {"type": "object", "properties": {}}}],
        "tool_choice": {"type": "tool", "name": "f", "disable_parallel_tool_use": True},
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "metadata": {"user_id": "u-1"},
        "stop_sequences": ["END"],
        "top_k": 40,
        "temperature": 1,
        "output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}},
        "service_tier": "auto",
    }
    request = laminate.read_request(body, API)
    assert request.tool_choice == "f"
    assert request.parallel_tool_calls is False
    assert request.reasoning == 1024
    assert request.user == "u-1"
    assert request.stop == ["END"]
    assert request.top_k == 40
    assert request.response_format == JsonSchema("", {"type": "object"})
    assert request.extra == {"service_tier": "auto"}
    assert laminate.write_request(request, API).body == body


def test_adaptive_thinking_with_an_effort_is_an_effort() -> None:
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
        "thinking": {"type": "adaptive"},
        "output_config": {"effort": "high"},
    }
    request = laminate.read_request(body, API)
    assert request.reasoning == "high"
    assert laminate.write_request(request, API).body == body
    chat = laminate.write_request(request, "openai").body
    assert chat["reasoning_effort"] == "high"


def test_a_system_message_inside_the_conversation_is_kept_for_anthropic_and_moved_for_others() -> (
    None
):
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "system", "content": "Reminder: be brief."},
            {"role": "user", "content": "and?"},
        ],
    }
    request = laminate.read_request(body, API)
    assert request.messages[1] == Message("system", [Text("Reminder: be brief.")])
    assert canonical(API, laminate.write_request(request, API).body) == canonical(API, body)
    chat = laminate.write_request(request, "openai").body
    assert chat["messages"][1] == {"role": "system", "content": "Reminder: be brief."}


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"max_tokens": 1, "messages": []}, "model"),
        ({"model": "m", "messages": {}}, "messages"),
        (
            {"model": "m", "messages": [{"role": "user", "content": [{"text": "x"}]}]},
            "messages[0].content[0].type",
        ),
        ({"model": "m", "messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
        (
            {
                "model": "m",
                "messages": [
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "a", "name": "f", "input": "x"}],
                    }
                ],
            },
            "messages[0].content[0].input",
        ),
        ({"model": "m", "messages": [], "tool_choice": {"type": "sometimes"}}, "tool_choice.type"),
        ({"model": "m", "messages": [], "max_tokens": "many"}, "max_tokens"),
        ({"model": "m", "messages": [], "system": [{"type": "image"}]}, "system[0].type"),
    ],
)
def test_an_invalid_body_is_a_translation_error_naming_the_path(
    body: dict[str, Any], path: str
) -> None:
    with pytest.raises(TranslationError) as caught:
        laminate.read_request(body, API)
    assert caught.value.path == path
    assert path in str(caught.value)


# -- written from elsewhere --------------------------------------------------------------------


def chat_tool_loop() -> dict[str, Any]:
    return {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Oslo and Rome?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "w", "arguments": '{"city":"Oslo"}'},
                    },
                    {
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "w", "arguments": '{"city":"Rome"}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_a", "content": "5 C"},
            {"role": "tool", "tool_call_id": "call_b", "content": "20 C"},
            {"role": "user", "content": "Thanks. Which is warmer?"},
        ],
        "tools": [{"type": "function", "function": {"name": "w", "parameters": {}}}],
    }


def test_what_messages_requires_is_done_for_a_request_from_chat_completions() -> None:
    written = laminate.translate_request(chat_tool_loop(), "openai", API)
    body = written.body
    assert written.path == "/v1/messages"
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS
    assert body["system"] == "Be brief."
    _user, assistant, results = body["messages"]
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "call_a", "name": "w", "input": {"city": "Oslo"}},
            {"type": "tool_use", "id": "call_b", "name": "w", "input": {"city": "Rome"}},
        ],
    }
    # Both results in ONE user turn, right after the calls, before the text.
    assert results["content"] == [
        {"type": "tool_result", "tool_use_id": "call_a", "content": "5 C", "is_error": False},
        {"type": "tool_result", "tool_use_id": "call_b", "content": "20 C", "is_error": False},
        {"type": "text", "text": "Thanks. Which is warmer?"},
    ]
    assert body["tools"] == [{"name": "w", "input_schema": {"type": "object", "properties": {}}}]
    assert written.losses == []


def test_reasoning_goes_back_only_to_anthropic() -> None:
    request = laminate.Request(
        model="m",
        messages=[
            Message("user", [Text("hi")]),
            Message("assistant", [Reasoning("hmm", "sig"), Text("hello")]),
        ],
        api=API,
    )
    own = laminate.write_request(request, API)
    assert own.body["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "hmm",
        "signature": "sig",
    }
    assert own.losses == []
    for target in ("openai", "openai-responses"):
        other = laminate.write_request(request, target)
        assert Loss("messages[1].content[0]", "foreign-reasoning") in other.losses
        assert "sig" not in json.dumps(other.body)


@needs_vectors
@pytest.mark.parametrize(
    "vector",
    [
        pytest.param(v, id=v.id)
        for v in vectors(API)
        if "thinking-signature" in v.name or "redacted" in v.name
    ],
)
def test_recorded_thinking_is_replayed_byte_for_byte_and_lost_to_another_api(
    vector: Vector,
) -> None:
    body = vector.body()
    written = laminate.translate_request(body, API, API)
    signatures = [
        b.get("signature") or b.get("data")
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] in ("thinking", "redacted_thinking")
    ]
    assert signatures
    text = json.dumps(written.body)
    assert all(s in text for s in signatures)
    other = laminate.translate_request(body, API, "openai")
    assert any(loss.reason == "foreign-reasoning" for loss in other.losses)
    assert not any(s in json.dumps(other.body) for s in signatures)


def test_parallel_calls_and_choices_are_mapped() -> None:
    request = laminate.Request(
        model="m",
        messages=[Message("user", [Text("x")])],
        tools=[ToolSpec("f")],
        tool_choice="any",
        parallel_tool_calls=False,
    )
    body = laminate.write_request(request, API).body
    assert body["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    none = laminate.write_request(laminate.Request(model="m", parallel_tool_calls=False), API).body
    assert none["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}


def test_a_cache_breakpoint_on_a_tool_is_the_tools_and_a_loss_where_caching_is_automatic() -> None:
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {
                "name": "f",
                "input_schema": {"type": "object", "properties": {}},
                "cache_control": {"type": "ephemeral", "ttl": "1h"},
            }
        ],
    }
    request = laminate.read_request(body, API)
    assert request.tools[0].cache == CachePoint("1h")
    assert request.tools[0].extra == {}
    assert laminate.write_request(request, API).body == body
    assert laminate.write_request(request, "openai").losses == [
        Loss("tools[0].cache", "unsupported")
    ]


def test_with_thinking_on_the_settings_messages_refuses_are_left_out() -> None:
    request = laminate.Request(
        model="m",
        messages=[Message("user", [Text("x")])],
        tools=[ToolSpec("f")],
        tool_choice="f",
        reasoning="medium",
        temperature=0.2,
        top_k=5,
    )
    written = laminate.write_request(request, API)
    assert written.body["tool_choice"] == {"type": "auto"}
    assert "temperature" not in written.body
    assert "top_k" not in written.body
    assert set(written.losses) == {
        Loss("tool_choice", "approximated"),
        Loss("temperature", "unsupported"),
        Loss("top_k", "unsupported"),
    }


def test_results_that_answer_no_call_or_answer_one_twice_are_left_out() -> None:
    request = laminate.Request(
        model="m",
        messages=[
            Message("user", [Text("go")]),
            Message("assistant", [ToolUse("a", "f", FlexValue({}))]),
            Message("user", [ToolResult("a", "f", "one", True)]),
            Message(
                "user", [ToolResult("a", "f", "again", True), ToolResult("zz", "f", "?", True)]
            ),
        ],
    )
    written = laminate.write_request(request, API)
    (results,) = [m for m in written.body["messages"] if m["role"] == "user"][1:]
    assert results["content"] == [
        {"type": "tool_result", "tool_use_id": "a", "content": "one", "is_error": False}
    ]
    assert written.losses == [
        Loss("messages[3].content[0]", "unsupported"),
        Loss("messages[3].content[1]", "unsupported"),
    ]


def test_a_text_document_given_as_base64_goes_as_a_text_source() -> None:
    request = laminate.Request(
        model="m",
        messages=[
            Message("user", [Text("sum up"), Document("text/plain", data="aGVsbG8=", title="n")])
        ],
    )
    written = laminate.write_request(request, API)
    assert written.body["messages"][0]["content"][1] == {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "hello"},
        "title": "n",
    }
    assert written.losses == []
    broken = laminate.Request(
        model="m", messages=[Message("user", [Text("x"), Document("text/plain", data="%%%")])]
    )
    assert laminate.write_request(broken, API).losses == [
        Loss("messages[0].content[1]", "unsupported")
    ]
