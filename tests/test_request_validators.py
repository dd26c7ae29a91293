"""The SDK-type judges of written requests: they accept what each API's recorded clients
sent, and refuse an unknown key or a wrong type wherever it is."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from .request_support import needs_vectors, vectors
from .request_validators import Refused, validate

# Recorded bodies the SDK types refuse although the API answered them.
SDK_REFUSES: dict[str, str] = {
    # pydantic-ai sent `"status": null` on a function call item; the API took it, the
    # SDK's type lists only the three statuses.
    "openai-responses/pydantic-ai-function-call-status-none": "status",
}


@needs_vectors
@pytest.mark.parametrize("vector", vectors(), ids=lambda v: v.id)
def test_every_recorded_request_fits_its_own_api(vector: Any) -> None:
    if vector.id in SDK_REFUSES:
        with pytest.raises(Refused, match=SDK_REFUSES[vector.id]):
            validate(vector.api, vector.body(), vector.path)
    else:
        validate(vector.api, vector.body(), vector.path)


def _user(api: str, text: str) -> dict[str, Any]:
    """A one-message request body of ``api`` and its path."""
    match api:
        case "gemini":
            return {"contents": [{"role": "user", "parts": [{"text": text}]}]}
        case "bedrock":
            return {"messages": [{"role": "user", "content": [{"text": text}]}]}
        case "openai-responses":
            return {"model": "m", "input": [{"role": "user", "content": text}]}
        case "anthropic":
            return {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": text}]}
        case _:
            return {"model": "m", "messages": [{"role": "user", "content": text}]}


PATHS = {
    "openai": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/gemini-2.5-flash:generateContent",
    "bedrock": "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse",
    "ollama": "/api/chat",
    "cohere": "/v2/chat",
}


@pytest.mark.parametrize("api", sorted(PATHS))
def test_a_plain_request_is_accepted(api: str) -> None:
    validate(api, _user(api, "hi"), PATHS[api])


@pytest.mark.parametrize("api", sorted(PATHS))
def test_an_unknown_key_in_a_message_is_refused(api: str) -> None:
    body = _user(api, "hi")
    turns = body.get("messages") or body.get("contents") or body["input"]
    turns[0]["colour"] = "blue"
    with pytest.raises(Refused, match="colour"):
        validate(api, body, PATHS[api])


@pytest.mark.parametrize("api", sorted(PATHS))
def test_an_unknown_top_level_key_is_refused(api: str) -> None:
    body = {**_user(api, "hi"), "colour": "blue"}
    with pytest.raises(Refused, match="colour"):
        validate(api, body, PATHS[api])


def test_an_unknown_key_deep_in_a_block_is_refused() -> None:
    body: dict[str, Any] = {
        "model": "m",
        "max_tokens": 5,
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
            },
        ],
    }
    validate("anthropic", body, PATHS["anthropic"])
    wrong = copy.deepcopy(body)
    wrong["messages"][1]["content"][0]["colour"] = "blue"
    # A response block (the SDK's `ToolUseBlock`) would keep the key as an extra: it
    # is no judge of a request.
    with pytest.raises(Refused, match=r"messages\[1\]\.content\[0\].*colour"):
        validate("anthropic", wrong, PATHS["anthropic"])


def test_a_wrong_type_is_refused() -> None:
    body = _user("gemini", "hi")
    body["generationConfig"] = {"maxOutputTokens": "many"}
    with pytest.raises(Refused, match="generationConfig"):
        validate("gemini", body, PATHS["gemini"])


def test_bedrock_takes_the_model_from_the_path() -> None:
    body = _user("bedrock", "hi")
    with pytest.raises(Refused, match="path"):
        validate("bedrock", body, "/v1/converse")
    validate("bedrock", body, "/model/amazon.nova-micro-v1%3A0/converse-stream")


def test_ollama_ids_the_server_pairs_on_are_accepted() -> None:
    body: dict[str, Any] = {
        "model": "m",
        "messages": [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c1", "function": {"index": 0, "name": "f", "arguments": {}}}
                ],
            },
            {"role": "tool", "tool_name": "f", "tool_call_id": "c1", "content": "ok"},
        ],
    }
    validate("ollama", body, PATHS["ollama"])
    body["messages"][1]["tool_call_id"] = 5
    with pytest.raises(Refused, match="tool_call_id"):
        validate("ollama", body, PATHS["ollama"])


def test_a_cohere_tool_message_needs_its_call_id() -> None:
    body = {"model": "m", "messages": [{"role": "tool", "content": "x"}]}
    with pytest.raises(Refused, match="tool_call_id"):
        validate("cohere", body, PATHS["cohere"])
