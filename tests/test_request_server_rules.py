"""What the servers refuse beyond their published request types, and the translations
that once broke it.

:func:`judged` holds a written body to :func:`request_validators.validate` (each API's
types and its servers' own rules, in their words) and to :func:`written_problems`, which
looks wider than those rules: an empty list under any ``content`` or ``parts`` key at any
depth, a Responses ``input_image`` without its ``detail`` anywhere, and a path that names
another model than the one asked for. The recorded requests are judged so in
``test_request_sdk_types.py``; the tests here pin each translation that broke one of these
rules, or lost something silently.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote

import httpx
import pytest

import laminate
from laminate import Document, Image, Message, Reasoning, Request, Text, ToolResult, ToolUse
from laminate._apis.spec import MaxTokensField
from laminate.proxy import Backend, ConfigError, ProxyConfig, config_from_toml, proxy_server

from .request_support import WRITERS, canonical
from .request_validators import Refused, validate
from .scripted_backend import scripted_backend

# Where the path names the model (whether the name fits is the validators' rule).
_MODEL_IN_PATH: Final = {
    "gemini": re.compile(
        r"/v1beta/models/([^/?:]+):(generateContent|streamGenerateContent\?alt=sse)"
    ),
    "bedrock": re.compile(r"/model/([^/]+)/(converse|converse-stream)"),
}
_CONTENT_KEYS: Final = frozenset({"content", "parts"})


def written_problems(
    api: str, body: Mapping[str, Any], path: str, model: str | None = None
) -> list[str]:
    """What ``body`` sent on ``path`` breaks, looked for at every depth (see the module);
    ``model``: the model the path must name."""
    problems: list[str] = []
    _walk(body, "body", problems)
    pattern = _MODEL_IN_PATH.get(api)
    if pattern is not None:
        found = pattern.fullmatch(path)
        if found is None:
            problems.append(f"path {path!r}: the model does not fit it")
        elif model is not None and unquote(found[1]) != model.removeprefix("models/"):
            problems.append(f"path {path!r} names {unquote(found[1])!r}, not {model!r}")
    return problems


def _walk(value: Any, where: str, problems: list[str]) -> None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key in _CONTENT_KEYS and item == []:
                problems.append(f"{where}.{key}: an empty list")
            _walk(item, f"{where}.{key}", problems)
        if value.get("type") == "input_image" and "detail" not in value:
            problems.append(f"{where}: an input_image without its detail")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _walk(item, f"{where}[{index}]", problems)


def judged(api: str, written: laminate.WrittenRequest, model: str | None = None) -> None:
    """``written`` passes ``api``'s types and its servers' own rules."""
    validate(api, written.body, written.path)
    problems = written_problems(api, written.body, written.path, model)
    assert not problems, problems


def test_the_rules_find_what_they_say() -> None:
    body = {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "u"}]}]}
    assert written_problems("openai-responses", body, "/v1/responses") == [
        "body.input[0].content[0]: an input_image without its detail"
    ]
    assert written_problems("openai", {"messages": [{"role": "user", "content": []}]}, "") == [
        "body.messages[0].content: an empty list"
    ]
    assert written_problems("gemini", {}, "/v1beta/models/a/b:generateContent")
    assert written_problems("gemini", {}, "/v1beta/models/m1:generateContent", "m2")
    # An escaped router name fits this pattern, but Gemini's servers refuse it: the
    # validators' rule, which judged() applies too.
    with pytest.raises(Refused, match="unexpected model name format"):
        validate("gemini", {"contents": []}, "/v1beta/models/a%2Fb:generateContent", schema=False)


# -- a cache breakpoint is a mark on a block, never a block ------------------------------------


def claude_turn_with_marked_result() -> dict[str, Any]:
    """The shape Claude Code and Crush send: the last tool result carries ``cache_control``."""
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 1000,
        "messages": [
            {"role": "user", "content": "List the files."},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": "a.py",
                        "cache_control": {"type": "ephemeral"},
                    }
                ],
            },
        ],
        "tools": [{"name": "ls", "input_schema": {"type": "object", "properties": {}}}],
    }


@pytest.mark.parametrize("target", ["openai", "openai-responses"])
def test_a_marked_tool_result_is_written_without_an_empty_message(target: str) -> None:
    translation = laminate.translate_request(claude_turn_with_marked_result(), "anthropic", target)
    judged(target, translation)
    turns = translation.body["messages" if target == "openai" else "input"]
    assert turns[-1].get("role") == "tool" or turns[-1].get("type") == "function_call_output"
    # The mark is a loss, at its own place: the block after the result.
    assert [(loss.path, loss.reason) for loss in translation.losses] == [
        ("messages[2].content[1]", "unsupported")
    ]


@pytest.mark.parametrize("target", WRITERS)
def test_a_marked_tool_result_fits_every_api(target: str) -> None:
    translation = laminate.translate_request(claude_turn_with_marked_result(), "anthropic", target)
    judged(target, translation, "claude-sonnet-4-6")


# -- search results and documents in tool results ------------------------------------------


def anthropic_search_result_turn() -> dict[str, Any]:
    body = claude_turn_with_marked_result()
    body["messages"][2]["content"] = [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [
                {
                    "type": "search_result",
                    "source": "https://example.com/ruby",
                    "title": "Ruby",
                    "content": [{"type": "text", "text": "Ruby was made by Matz in 1993."}],
                    "citations": {"enabled": True},
                }
            ],
        }
    ]
    return body


@pytest.mark.parametrize("target", WRITERS)
def test_a_search_result_in_a_tool_result_keeps_its_text_in_every_api(target: str) -> None:
    body = anthropic_search_result_turn()
    translation = laminate.translate_request(body, "anthropic", target)
    judged(target, translation, "claude-sonnet-4-6")
    assert "Ruby was made by Matz in 1993." in str(translation.body)
    if target == "anthropic":
        assert canonical(target, translation.body) == canonical(target, body)
        assert translation.losses == []
    else:  # its source and its citations setting are the source API's alone
        assert any(loss.path.startswith("messages[2].content[0]") for loss in translation.losses)


def test_a_bedrock_search_result_in_a_tool_result_is_read_and_written_back() -> None:
    result = {
        "toolUseId": "t1",
        "content": [
            {
                "searchResult": {
                    "source": "https://example.com/ruby",
                    "title": "Ruby",
                    "content": [{"text": "Ruby was made by Matz in 1993."}],
                    "citations": {"enabled": True},
                }
            }
        ],
    }
    body = {
        "messages": [
            {"role": "user", "content": [{"text": "Who made Ruby?"}]},
            {
                "role": "assistant",
                "content": [{"toolUse": {"toolUseId": "t1", "name": "kb", "input": {}}}],
            },
            {"role": "user", "content": [{"toolResult": result}]},
        ]
    }
    path = "/model/m/converse"
    request = laminate.read_request(body, "bedrock", path=path)
    (read,) = request.messages[2].content
    assert isinstance(read, ToolResult)
    assert isinstance(read.content, list)
    (document,) = read.content
    assert isinstance(document, Document)
    assert (document.media_type, document.text, document.title) == (
        "text/plain",
        "Ruby was made by Matz in 1993.",
        "Ruby",
    )
    again = laminate.write_request(request, "bedrock")
    assert again.body["messages"] == body["messages"]
    assert again.losses == []
    to_anthropic = laminate.write_request(request, "anthropic")
    judged("anthropic", to_anthropic)


def cohere_document_turn() -> dict[str, Any]:
    return {
        "model": "command-a-03-2025",
        "messages": [
            {"role": "user", "content": "Who made Ruby?"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "kb_1",
                        "type": "function",
                        "function": {"name": "kb", "arguments": "{}"},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "kb_1",
                "content": [
                    {
                        "type": "document",
                        "document": {
                            "id": "doc-1",
                            "data": {"title": "Ruby", "text": "Ruby was made by Matz in 1993."},
                        },
                    }
                ],
            },
        ],
    }


@pytest.mark.parametrize("target", WRITERS)
def test_a_cohere_document_in_a_tool_result_keeps_its_text_in_every_api(target: str) -> None:
    body = cohere_document_turn()
    translation = laminate.translate_request(body, "cohere", target)
    judged(target, translation, "command-a-03-2025")
    assert "Ruby was made by Matz in 1993." in str(translation.body)
    if target == "cohere":
        assert translation.body["messages"] == body["messages"]


# -- the output limit keeps its client's spelling ----------------------------------------------


@pytest.mark.parametrize("spelling", ["max_tokens", "max_completion_tokens"])
def test_chat_completions_keeps_the_clients_spelling_of_the_limit(spelling: str) -> None:
    hi = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    body = {"model": "glm-4.6", "messages": hi, spelling: 50}
    choices: tuple[MaxTokensField, ...] = ("auto", "max_tokens", "max_completion_tokens")
    for choice in choices:
        written = laminate.translate_request(body, "openai", "openai", max_tokens_field=choice)
        assert written.body == body
    request = laminate.read_request(body, "openai")
    assert request.max_tokens == 50
    assert laminate.write_request(request, "anthropic").losses == []


def test_both_spellings_given_both_go_back() -> None:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "max_completion_tokens": 50,
        "max_tokens": 40,
    }
    assert laminate.translate_request(body, "openai", "openai").body == body


@pytest.mark.parametrize(
    ("model", "field"),
    [
        ("qwen3-coder", "max_tokens"),
        ("deepseek-chat", "max_tokens"),
        ("openai/gpt-5", "max_tokens"),
        ("gpt-4o", "max_tokens"),
        ("gpt-5", "max_completion_tokens"),
        ("gpt-5.2-mini", "max_completion_tokens"),
        ("o3", "max_completion_tokens"),
        ("o4-mini", "max_completion_tokens"),
    ],
)
def test_a_translated_limit_goes_where_the_model_reads_it(model: str, field: str) -> None:
    body = claude_turn_with_marked_result() | {"model": model}
    written = laminate.translate_request(body, "anthropic", "openai")
    assert written.body[field] == 1000
    assert {"max_tokens", "max_completion_tokens"} - {field} - set(written.body) == {
        "max_tokens",
        "max_completion_tokens",
    } - {field}


@pytest.mark.parametrize("field", ["max_tokens", "max_completion_tokens"])
def test_the_caller_chooses_where_a_translated_limit_goes(field: str) -> None:
    body = claude_turn_with_marked_result()
    written = laminate.translate_request(body, "anthropic", "openai", max_tokens_field=field)  # type: ignore[arg-type]
    assert written.body[field] == 1000
    assert len({"max_tokens", "max_completion_tokens"} & set(written.body)) == 1


def test_a_wrong_limit_field_is_refused() -> None:
    with pytest.raises(ValueError, match="max_tokens_field"):
        laminate.translate_request(
            claude_turn_with_marked_result(),
            "anthropic",
            "openai",
            max_tokens_field="limit",  # type: ignore[arg-type]
        )
    with pytest.raises(TypeError, match="max_tokens_field"):
        laminate.write_request(Request(model="m"), "openai", max_tokens_field=5)  # type: ignore[arg-type]


# -- a Responses image has its detail -----------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "detail"), [({}, "auto"), ({"detail": "low"}, "low"), ({"detail": "high"}, "high")]
)
def test_an_input_image_is_written_with_its_detail(extra: dict[str, Any], detail: str) -> None:
    image = Image("image/png", data="iVBORw0KGgo=", extra=extra)
    request = Request(
        model="gpt-5",
        messages=[
            Message("user", [Text("What is it?"), image]),
            Message("assistant", [ToolUse("c1", "look", laminate.FlexValue({}))]),
            Message("user", [ToolResult(tool_use_id="c1", content=[image], is_error=False)]),
        ],
        api="openai",
    )
    written = laminate.write_request(request, "openai-responses")
    judged("openai-responses", written)
    images = [
        part
        for item in written.body["input"]
        for part in (item.get("content") or item.get("output") or [])
        if isinstance(part, dict) and part.get("type") == "input_image"
    ]
    assert [p["detail"] for p in images] == [detail, detail]


# -- a model name with a "/" in a path -----------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_a_model_name_the_target_cannot_serve_is_refused_not_escaped(stream: bool) -> None:
    # Gemini's servers answer "unexpected model name format" for a router's name, escaped
    # or not; Bedrock's modelId pattern takes no "/" outside an ARN.
    for api, model in (("gemini", "anthropic/claude-haiku-4.5"), ("bedrock", "moonshotai/kimi-k2")):
        request = Request(model=model, messages=[Message("user", [Text("hi")])], stream=stream)
        with pytest.raises(laminate.TranslationError, match="map the client's model") as info:
            laminate.write_request(request, api)
        assert (info.value.reason, info.value.path) == ("model", "model")


def test_a_bedrock_arn_and_profile_fit_its_path() -> None:
    for model in (
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-v2",
    ):
        request = Request(model=model, messages=[Message("user", [Text("hi")])])
        written = laminate.write_request(request, "bedrock")
        judged("bedrock", written, model)
        assert laminate.read_request(written.body, "bedrock", path=written.path).model == model


def test_a_models_prefix_is_the_paths_own() -> None:
    request = Request(model="models/gemini-2.5-flash", messages=[Message("user", [Text("hi")])])
    assert (
        laminate.write_request(request, "gemini").path
        == "/v1beta/models/gemini-2.5-flash:generateContent"
    )


# -- images a tool returned, in Gemini 3's functionResponse.parts ------------------------------


def gemini_image_result_turn() -> dict[str, Any]:
    image = {"inline_data": {"mime_type": "image/png", "data": "iVBORw0KGgo="}}
    reply = {"name": "fetch", "response": {"output": "Fetched."}, "parts": [image]}
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "Fetch the logo."}]},
            {"role": "model", "parts": [{"functionCall": {"name": "fetch", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": reply}]},
        ]
    }


def test_the_media_of_a_gemini_function_response_are_read_and_written_back() -> None:
    path = "/v1beta/models/gemini-3-flash-preview:generateContent"
    body = gemini_image_result_turn()
    request = laminate.read_request(body, "gemini", path=path)
    (result,) = request.messages[2].content
    assert isinstance(result, ToolResult)
    assert result.content == [Text("Fetched."), Image("image/png", data="iVBORw0KGgo=")]
    again = laminate.write_request(request, "gemini")
    assert canonical("gemini", again.body) == canonical("gemini", body)
    assert again.losses == []


@pytest.mark.parametrize("target", WRITERS)
def test_the_media_of_a_gemini_function_response_reach_every_api_or_are_a_loss(
    target: str,
) -> None:
    path = "/v1beta/models/gemini-3-flash-preview:generateContent"
    translation = laminate.translate_request(
        gemini_image_result_turn(), "gemini", target, path=path
    )
    judged(target, translation, "gemini-3-flash-preview")
    assert "iVBORw0KGgo=" in str(translation.body) or any(
        loss.path.startswith("messages[2].content[0]") for loss in translation.losses
    )


# -- the proxy: each Chat Completions backend says where the limit goes -------------------------


@pytest.mark.parametrize(
    ("field", "model", "sent"),
    [
        ("auto", "qwen3-coder", "max_tokens"),
        ("auto", "gpt-5", "max_completion_tokens"),
        ("max_tokens", "gpt-5", "max_tokens"),
        ("max_completion_tokens", "qwen3-coder", "max_completion_tokens"),
    ],
)
def test_a_proxy_backend_says_where_a_translated_limit_goes(
    field: MaxTokensField, model: str, sent: str
) -> None:
    with scripted_backend(pace=0.0) as (url, scripted):
        backend = Backend("openai", url + "/v1", model=model, max_tokens_field=field)
        with proxy_server(ProxyConfig(backends=(backend,))) as proxy:
            body = claude_turn_with_marked_result() | {"stream": False}
            answer = httpx.post(proxy + "/v1/messages", json=body, timeout=30)
            assert answer.status_code == 200, answer.text
        (_, _, received, _) = scripted.record.requests[-1]
    assert received[sent] == 1000
    assert {"max_tokens", "max_completion_tokens"} & set(received) == {sent}


def test_a_toml_backend_takes_the_limit_field(tmp_path: Path) -> None:
    path = tmp_path / "proxy.toml"
    backend = '[[backend]]\napi = "openai"\nbase_url = "http://127.0.0.1:1/v1"\n'
    path.write_text(backend + 'max_tokens_field = "max_completion_tokens"\n', encoding="utf-8")
    config = config_from_toml(path, {})
    assert config.backends[0].max_tokens_field == "max_completion_tokens"
    path.write_text(backend + 'max_tokens_field = "limit"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="max_tokens_field"):
        config_from_toml(path, {})


# -- a subset of the tools -----------------------------------------------------------------------

WEATHER_TOOLS = ("get_weather", "final_result", "search")


def allowed_tools_body(api: str, mode: str) -> tuple[dict[str, Any], str | None]:
    """A request of ``api`` offering three tools and allowing two of them."""
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    tools: list[dict[str, Any]]
    allowed: list[dict[str, Any]]
    choice: dict[str, Any]
    match api:
        case "openai":
            tools = [
                {"type": "function", "function": {"name": n, "parameters": schema}}
                for n in WEATHER_TOOLS
            ]
            allowed = [{"type": "function", "function": {"name": n}} for n in WEATHER_TOOLS[:2]]
            choice = {"type": "allowed_tools", "allowed_tools": {"mode": mode, "tools": allowed}}
            return {"model": "m", "messages": [USER], "tools": tools, "tool_choice": choice}, None
        case "openai-responses":
            tools = [
                {"type": "function", "name": n, "parameters": schema, "strict": False}
                for n in WEATHER_TOOLS
            ]
            allowed = [{"type": "function", "name": n} for n in WEATHER_TOOLS[:2]]
            choice = {"type": "allowed_tools", "mode": mode, "tools": allowed}
            return {"model": "m", "input": [USER], "tools": tools, "tool_choice": choice}, None
        case _:
            declarations = [{"name": n, "parameters": schema} for n in WEATHER_TOOLS]
            config = {"mode": "ANY", "allowedFunctionNames": list(WEATHER_TOOLS[:2])}
            body = {
                "contents": [{"role": "user", "parts": [{"text": "Weather in Oslo?"}]}],
                "tools": [{"functionDeclarations": declarations}],
                "toolConfig": {"functionCallingConfig": config},
            }
            return body, "/v1beta/models/gemini-2.5-flash:generateContent"


USER = {"role": "user", "content": "Weather in Oslo?"}
SUBSETS = [("openai", "required"), ("openai", "auto"), ("openai-responses", "required")]
SUBSETS += [("openai-responses", "auto"), ("gemini", "ANY")]


@pytest.mark.parametrize(("source", "mode"), SUBSETS)
def test_an_allowed_tools_choice_is_read_with_its_mode_and_its_subset(
    source: str, mode: str
) -> None:
    body, path = allowed_tools_body(source, mode)
    request = laminate.read_request(body, source, path=path)
    assert request.tool_choice == ("auto" if mode == "auto" else "any")
    assert request.allowed_tools == list(WEATHER_TOOLS[:2])
    assert [t.name for t in request.tools] == list(WEATHER_TOOLS)
    again = laminate.write_request(request, source)
    assert canonical(source, again.body) == canonical(source, body)
    assert again.losses == []


@pytest.mark.parametrize(("source", "mode"), SUBSETS)
@pytest.mark.parametrize("target", WRITERS)
def test_an_allowed_tools_choice_is_carried_where_the_target_can_and_a_loss_elsewhere(
    source: str, mode: str, target: str
) -> None:
    body, path = allowed_tools_body(source, mode)
    translation = laminate.translate_request(body, source, target, path=path)
    judged(target, translation)
    again = laminate.read_request(translation.body, target, path=translation.path)
    lost = [loss.path for loss in translation.losses]
    if again.allowed_tools is not None:
        assert again.allowed_tools == list(WEATHER_TOOLS[:2])
        assert "allowed_tools" not in lost
        assert again.tool_choice == ("auto" if mode == "auto" else "any")
    else:
        assert "allowed_tools" in lost
        assert [t.name for t in again.tools] == list(WEATHER_TOOLS)  # every tool offered
    carried = {"openai", "openai-responses"} | ({"gemini"} if mode != "auto" else set())
    assert (again.allowed_tools is not None) == (target in carried)


# -- Mistral's thinking parts --------------------------------------------------------------------


def mistral_turn() -> dict[str, Any]:
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "12 * 12 = 144."}]}
    return {
        "model": "mistral-small-latest",
        "messages": [
            {"role": "user", "content": "What is 12 * 12?"},
            {"role": "assistant", "content": [thinking, {"type": "text", "text": "144"}]},
            {"role": "user", "content": "Add 10."},
        ],
    }


def test_a_chat_completions_thinking_part_is_reasoning_and_goes_back_as_it_came() -> None:
    request = laminate.read_request(mistral_turn(), "openai")
    assert request.messages[1].content == [Reasoning("12 * 12 = 144."), Text("144")]
    again = laminate.translate_request(mistral_turn(), "openai", "openai")
    assert again.body["messages"][1] == mistral_turn()["messages"][1]
    assert again.losses == []


@pytest.mark.parametrize("target", WRITERS)
def test_a_chat_completions_thinking_part_is_carried_or_a_loss(target: str) -> None:
    translation = laminate.translate_request(mistral_turn(), "openai", target)
    if target != "openai":  # back to its own API it is Mistral's shape, as it came
        judged(target, translation)
    assert "12 * 12 = 144." in str(translation.body) or "messages[1].content[0]" in [
        loss.path for loss in translation.losses
    ]


# -- Cohere's message fields ---------------------------------------------------------------------


def test_a_cohere_messages_own_fields_go_back_to_cohere_and_are_losses_elsewhere() -> None:
    citation = {"start": 0, "end": 4, "text": "Matz", "sources": []}
    body = {
        "model": "command-a-03-2025",
        "messages": [
            {"role": "user", "content": "Who made Ruby?"},
            {"role": "assistant", "content": "Matz.", "citations": [citation]},
            {"role": "user", "content": "When?", "name": "ana"},
        ],
    }
    again = laminate.translate_request(body, "cohere", "cohere")
    assert again.body["messages"][1:] == body["messages"][1:]
    elsewhere = laminate.translate_request(body, "cohere", "openai")
    lost = [(loss.path, loss.reason) for loss in elsewhere.losses]
    assert ("messages[1].citations", "source-only") in lost
    assert ("messages[2].name", "source-only") in lost
