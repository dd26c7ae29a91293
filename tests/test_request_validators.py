"""The SDK-type judges of written requests: they accept what each API's recorded clients
sent, and refuse an unknown key or a wrong type wherever it is."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from .request_support import needs_vectors, vectors
from .request_validators import Refused, refusal, validate

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


# -- what the servers refuse beyond the schema ------------------------------------------


def _with_turns(api: str, *contents: Any) -> dict[str, Any]:
    """A request of ``api`` whose messages (user, assistant, user, ...) hold ``contents``."""
    body = _user(api, "hi")
    key = "contents" if api == "gemini" else "input" if api == "openai-responses" else "messages"
    field = "parts" if api == "gemini" else "content"
    roles = ("user", "model" if api == "gemini" else "assistant")
    body[key] = [{"role": roles[n % 2], field: c} for n, c in enumerate(contents)]
    return body


TEXT_PART = {
    "openai": {"type": "text", "text": "hi"},
    "openai-responses": {"type": "input_text", "text": "hi"},
    "anthropic": {"type": "text", "text": "hi"},
    "gemini": {"text": "hi"},
    "bedrock": {"text": "hi"},
    "cohere": {"type": "text", "text": "hi"},
}
EMPTY_LIST = {
    "openai": r"Invalid 'messages\[1\]\.content': empty array",
    "openai-responses": r"Invalid 'input\[1\]\.content': empty array",
    "anthropic": "messages.1: all messages must have non-empty content",
    "gemini": r"contents\[1\]\.parts: contents.parts must not be empty",
    "bedrock": "The content field in the Message object at messages.1 is empty",
    "cohere": r"messages\[1\]: message must be at least 1 token long",
}


@pytest.mark.parametrize("api", sorted(EMPTY_LIST))
def test_a_message_with_an_empty_content_list_is_refused(api: str) -> None:
    part = TEXT_PART[api]
    validate(api, _with_turns(api, [part], [part], [part]), PATHS[api])
    body = _with_turns(api, [part], [], [part])
    with pytest.raises(Refused, match=EMPTY_LIST[api]):
        validate(api, body, PATHS[api])
    # A client with fields newer than the SDK's types is still held to the servers' rules.
    with pytest.raises(Refused, match=EMPTY_LIST[api]):
        validate(api, body, PATHS[api], schema=False)


def test_ollama_takes_an_empty_content_string() -> None:
    body = _with_turns("ollama", "hi", "", "go on")
    validate("ollama", body, PATHS["ollama"])


def test_anthropic_takes_an_empty_final_assistant_message_only() -> None:
    validate("anthropic", _with_turns("anthropic", "hi", []), PATHS["anthropic"])
    with pytest.raises(Refused, match=r"messages\.1: all messages must have non-empty"):
        validate("anthropic", _with_turns("anthropic", "hi", "", "go on"), PATHS["anthropic"])
    with pytest.raises(Refused, match=r"messages\.0: all messages must have non-empty"):
        validate("anthropic", _with_turns("anthropic", ""), PATHS["anthropic"])


@pytest.mark.parametrize(
    ("text", "refused"),
    [("", "must be non-empty"), (" \n", "must contain non-whitespace text")],
)
def test_anthropic_refuses_an_empty_or_blank_text_block(text: str, refused: str) -> None:
    marked = {"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}
    result = {"type": "tool_result", "tool_use_id": "t", "content": [marked]}
    call = {"type": "tool_use", "id": "t", "name": "f", "input": {}}
    body = _with_turns("anthropic", "hi", [call], [result])
    with pytest.raises(Refused, match=f"messages: text content blocks {refused}"):
        validate("anthropic", body, PATHS["anthropic"])
    body = {**_user("anthropic", "hi"), "system": [{"type": "text", "text": text}]}
    with pytest.raises(Refused, match=f"system: text content blocks {refused}"):
        validate("anthropic", body, PATHS["anthropic"])


def test_bedrock_refuses_an_empty_text_block_and_takes_whitespace() -> None:
    validate("bedrock", _with_turns("bedrock", [{"text": "\n"}, {"text": "hi"}]), PATHS["bedrock"])
    with pytest.raises(Refused, match=r"ContentBlock object at messages\.0\.content\.1 is blank"):
        validate(
            "bedrock", _with_turns("bedrock", [{"text": "hi"}, {"text": ""}]), PATHS["bedrock"]
        )


def test_a_gemini_part_needs_one_of_its_data_fields() -> None:
    signed = {"thoughtSignature": "c2ln"}
    with pytest.raises(Refused, match=r"contents\[0\]\.parts\[1\]\.data: required oneof"):
        validate("gemini", _with_turns("gemini", [{"text": "hi"}, signed]), PATHS["gemini"])
    validate("gemini", _with_turns("gemini", [{"text": "hi", **signed}]), PATHS["gemini"])
    with pytest.raises(Refused, match=r"contents\[0\]\.parts: contents.parts must not be"):
        validate("gemini", {"contents": [{"role": "user"}]}, PATHS["gemini"])


def test_a_responses_image_needs_its_detail_in_a_tool_output_too() -> None:
    image = {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}
    body: dict[str, Any] = {
        "model": "m",
        "input": [
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c", "output": [image]},
        ],
    }
    with pytest.raises(Refused, match=r"'input\[1\]\.output\[0\]\.detail'"):
        validate("openai-responses", body, PATHS["openai-responses"])
    image["detail"] = "auto"
    validate("openai-responses", body, PATHS["openai-responses"])


@pytest.mark.parametrize(
    ("api", "path"),
    [
        ("gemini", "/v1beta/models/qwen3:8b:generateContent"),
        ("gemini", "/v1beta/models/models/gemini-2.5-flash:streamGenerateContent?alt=sse"),
        ("bedrock", "/model/a%20b/converse"),
        ("bedrock", "/model/anthropic%2Fclaude/converse-stream"),
    ],
)
def test_a_model_name_that_does_not_fit_the_path_is_refused(api: str, path: str) -> None:
    with pytest.raises(Refused, match="model"):
        validate(api, _user(api, "hi"), path)


def _refused(api: str) -> Refused:
    with pytest.raises(Refused) as raised:
        validate(api, _with_turns(api, []), PATHS[api], schema=False)
    return raised.value


@pytest.mark.parametrize("api", sorted(EMPTY_LIST))
def test_a_refusal_is_answered_in_the_apis_own_error_shape(api: str) -> None:
    refused = _refused(api)
    status, headers, body = refusal(refused)
    assert status == 400
    said = refused.problems[0]
    match api:
        case "openai" | "openai-responses":
            assert body["error"]["message"] == said
            assert body["error"]["type"] == "invalid_request_error"
            assert set(body["error"]) == {"message", "type", "param", "code"}
        case "anthropic":
            assert body == {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": said},
            }
        case "gemini":
            assert body == {"error": {"code": 400, "message": said, "status": "INVALID_ARGUMENT"}}
        case "bedrock":
            assert body == {"message": said}
            assert headers["x-amzn-errortype"].startswith("ValidationException:")
        case "cohere":
            assert body == {"message": said}
