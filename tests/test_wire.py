"""Wire shapes: the assistant turn and the tool results in each API's request shape,
checked against the complete bodies of the fixtures."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

import laminate
from laminate._apis.wire import assistant_message, tool_results
from laminate._core.errors import UnknownProviderError
from laminate._core.flex import FlexValue
from laminate._core.response import (
    InvalidToolUse,
    NormalizedResponse,
    Reasoning,
    StopReason,
    Text,
    ToolUse,
    Unknown,
    Usage,
)
from laminate._tools.registry import ToolRegistry, ToolResult

from .support import FIXTURES, REAL_STREAMS, needs_real_streams


def body(path: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / path).read_text("utf-8"))
    return data


def response_with(*blocks: Any, provider: str) -> NormalizedResponse:
    return NormalizedResponse("resp", "model", provider, list(blocks), StopReason.TOOL_USE, Usage())


def collect_file(path: Path) -> NormalizedResponse:
    return laminate.collect_sync([path.read_bytes()])


TOOL_BODIES = ["tool-call", "parallel-tool-calls", "text"]


# --- the assistant turn, against the bodies the providers sent ----------------------------


@pytest.mark.parametrize("name", TOOL_BODIES)
def test_openai_assistant_turn_matches_the_body(name: str) -> None:
    data = body(f"openai/{name}.body.json")
    message = data["choices"][0]["message"]
    echoed = assistant_message(laminate.normalize(data), "openai")
    assert echoed["role"] == "assistant"
    assert echoed["content"] == message["content"]
    assert len(echoed.get("tool_calls", [])) == len(message.get("tool_calls") or [])
    for mine, theirs in zip(
        echoed.get("tool_calls", []), message.get("tool_calls") or [], strict=True
    ):
        assert mine["id"] == theirs["id"]
        assert mine["type"] == "function"
        assert mine["function"]["name"] == theirs["function"]["name"]
        assert isinstance(mine["function"]["arguments"], str)
        mine_args = json.loads(mine["function"]["arguments"])
        assert mine_args == json.loads(theirs["function"]["arguments"])


@pytest.mark.parametrize("name", TOOL_BODIES)
def test_anthropic_assistant_turn_matches_the_body(name: str) -> None:
    data = body(f"anthropic/{name}.body.json")
    echoed = assistant_message(laminate.normalize(data), "anthropic")
    assert echoed == {"role": "assistant", "content": data["content"]}


@pytest.mark.parametrize("name", TOOL_BODIES)
def test_ollama_assistant_turn_matches_the_body(name: str) -> None:
    data = body(f"ollama/{name}.body.json")
    message = data["message"]
    echoed = assistant_message(laminate.normalize(data), "ollama")
    assert echoed["role"] == "assistant"
    assert echoed["content"] == message["content"]
    theirs = message.get("tool_calls") or []
    assert len(echoed.get("tool_calls", [])) == len(theirs)
    for index, (mine, sent) in enumerate(zip(echoed.get("tool_calls", []), theirs, strict=True)):
        assert mine["function"]["name"] == sent["function"]["name"]
        assert mine["function"]["arguments"] == sent["function"]["arguments"]
        assert mine["function"]["index"] == index
        assert mine["id"]  # generated where Ollama sent none, paired by tool_call_id


def responses_bodies() -> list[Path]:
    return sorted((FIXTURES / "openai-responses").glob("*.body.json"))


@pytest.mark.parametrize("path", responses_bodies(), ids=lambda p: p.name)
def test_responses_assistant_turn_matches_the_body(path: Path) -> None:
    data = json.loads(path.read_text("utf-8"))
    check_responses_items(data)


@needs_real_streams
def test_responses_assistant_turn_matches_a_recorded_body() -> None:
    path = REAL_STREAMS / "openai-responses" / "nonstream-reasoning-between-tool-calls.json"
    check_responses_items(json.loads(path.read_text("utf-8")))


def check_responses_items(data: dict[str, Any]) -> None:
    try:
        response = laminate.normalize(data, "openai-responses")
    except UnknownProviderError:
        pytest.skip("the Responses API body parser is not available yet")
    items = assistant_message(response, "openai-responses")
    assert isinstance(items, list)
    # A message item gives one item per text part: compare the sequence of item kinds.
    assert collapsed(i["type"] for i in items) == collapsed(
        i["type"] for i in data["output"] if i["type"] != "message" or message_text(i)
    )
    sent = [i for i in data["output"] if i["type"] != "message"]
    mine = [i for i in items if i["type"] != "message"]
    for item, original in zip(mine, sent, strict=True):
        match item["type"]:
            case "reasoning":
                assert item["id"] == original["id"]
                assert item.get("encrypted_content") == original.get("encrypted_content")
                assert isinstance(item["summary"], list)
            case "function_call":
                assert item["call_id"] == original["call_id"]
                assert item["name"] == original["name"]
                assert same_arguments(item["arguments"], original["arguments"])
            case _:
                assert item == original  # an item laminate does not model goes back whole
    texts = [item["content"] for item in items if item["type"] == "message"]
    assert "".join(texts) == response.text()


def collapsed(kinds: Iterable[str]) -> list[str]:
    result: list[str] = []
    for kind in kinds:
        if not (result and result[-1] == kind == "message"):
            result.append(kind)
    return result


def message_text(item: dict[str, Any]) -> str:
    return "".join(part.get("text") or part.get("refusal") or "" for part in item["content"])


def same_arguments(mine: str, theirs: str) -> bool:
    try:
        return bool(json.loads(mine) == json.loads(theirs))
    except ValueError:  # a call cut off by the token limit goes back as it was written
        return mine == theirs


# --- reasoning ---------------------------------------------------------------------------


def anthropic_thinking() -> NormalizedResponse:
    return collect_file(FIXTURES / "anthropic" / "thinking.sse")


def test_anthropic_thinking_goes_back_byte_for_byte() -> None:
    expected = body("anthropic/thinking.expected.json")["content"]
    echoed = assistant_message(anthropic_thinking(), "anthropic")
    assert echoed["content"] == [
        {
            "type": "thinking",
            "thinking": expected[0]["text"],
            "signature": expected[0]["signature"],
        },
        {"type": "redacted_thinking", "data": expected[1]["signature"]},
        {"type": "text", "text": "Yes, 17 is prime."},
    ]


@needs_real_streams
def test_recorded_thinking_signature_goes_back_byte_for_byte() -> None:
    path = REAL_STREAMS / "anthropic-messages" / "thinking-then-tool-use.sse"
    raw = path.read_text("utf-8")
    response = collect_file(path)
    echoed = assistant_message(response, "anthropic")
    thinking = [b for b in echoed["content"] if b["type"] == "thinking"]
    assert thinking
    for block in thinking:
        assert block["signature"]
        assert json.dumps(block["signature"])[1:-1] in raw
    assert [b["type"] for b in echoed["content"]][-1] == "tool_use"


def test_opaque_reasoning_goes_only_to_the_api_that_made_it() -> None:
    response = anthropic_thinking()
    chat = assistant_message(response, "openai")
    assert chat == {"role": "assistant", "content": "Yes, 17 is prime."}
    responses = assistant_message(response, "openai-responses")
    assert responses == [{"type": "message", "role": "assistant", "content": "Yes, 17 is prime."}]
    # Plain reasoning text is not opaque: Ollama takes it as ``thinking``.
    ollama = assistant_message(response, "ollama")
    assert ollama["thinking"] == "17 is not divisible by 2, 3 or 4;\n√17 < 5."


def test_ollama_thinking_goes_back() -> None:
    response = collect_file(FIXTURES / "ollama" / "thinking.ndjson")
    assert assistant_message(response, "ollama") == {
        "role": "assistant",
        "content": "Half of two dozen is 12.",
        "thinking": "Two dozen is 24; half is 12.",
    }


def test_chat_reasoning_goes_back_only_in_a_named_field() -> None:
    response = response_with(
        Reasoning("First, the forecast."),
        ToolUse("c1", "forecast", FlexValue({"city": "Oslo"})),
        provider="openai",
    )
    assert "reasoning_content" not in assistant_message(response, "openai")
    echoed = assistant_message(response, "openai", reasoning_field="reasoning_content")
    assert echoed["reasoning_content"] == "First, the forecast."
    assert echoed["content"] is None


def test_responses_reasoning_items_keep_id_and_encrypted_content() -> None:
    response = response_with(
        Reasoning("**Plan**\n\nLook it up.", signature="gAAAA-opaque==", id="rs_1"),
        Reasoning("", signature="gAAAA-second==", id="rs_2"),
        Text("Looking."),
        ToolUse("call_9", "db_lookup", FlexValue({"key": "7"})),
        provider="openai-responses",
    )
    assert assistant_message(response, "openai-responses") == [
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "**Plan**\n\nLook it up."}],
            "encrypted_content": "gAAAA-opaque==",
        },
        {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "gAAAA-second=="},
        {"type": "message", "role": "assistant", "content": "Looking."},
        {
            "type": "function_call",
            "call_id": "call_9",
            "name": "db_lookup",
            "arguments": '{"key":"7"}',
        },
    ]


# --- invalid calls and unknown blocks ----------------------------------------------------


def test_invalid_calls_are_echoed_so_their_results_have_a_call() -> None:
    bad = InvalidToolUse("c7", "forecast", '{"city": "Os', "arguments are not valid JSON")
    chat = assistant_message(response_with(bad, provider="openai"), "openai")
    assert chat["tool_calls"][0]["function"] == {"name": "forecast", "arguments": '{"city": "Os'}
    responses = assistant_message(response_with(bad, provider="openai"), "openai-responses")
    assert responses[0]["arguments"] == '{"city": "Os'
    anthropic = assistant_message(response_with(bad, provider="anthropic"), "anthropic")
    assert anthropic["content"] == [
        {"type": "tool_use", "id": "c7", "name": "forecast", "input": {}}
    ]
    ollama = assistant_message(response_with(bad, provider="ollama"), "ollama")
    assert ollama["tool_calls"][0]["function"]["arguments"] == {}


def test_anthropic_server_tool_blocks_go_back_to_anthropic_only() -> None:
    server = Unknown(
        "server_tool_use",
        FlexValue({"id": "srvtoolu_1", "name": "web_search", "input": {"query": "tides"}}),
    )
    response = response_with(server, Text("Found it."), provider="anthropic")
    assert assistant_message(response, "anthropic")["content"] == [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"query": "tides"},
        },
        {"type": "text", "text": "Found it."},
    ]
    assert assistant_message(response, "openai") == {"role": "assistant", "content": "Found it."}


def test_empty_text_is_left_out_where_the_api_rejects_it() -> None:
    response = response_with(Text(""), ToolUse("c1", "ping", FlexValue({})), provider="anthropic")
    assert assistant_message(response, "anthropic")["content"] == [
        {"type": "tool_use", "id": "c1", "name": "ping", "input": {}}
    ]
    assert assistant_message(response, "ollama")["content"] == ""


def test_the_assistant_turn_is_an_independent_copy() -> None:
    arguments = {"filters": [{"field": "city"}]}
    response = response_with(ToolUse("c1", "search", FlexValue(arguments)), provider="anthropic")
    echoed = assistant_message(response, "anthropic")
    echoed["content"][0]["input"]["filters"].append("changed")
    assert arguments == {"filters": [{"field": "city"}]}


def test_an_unknown_provider_is_refused() -> None:
    response = response_with(Text("hi"), provider="openai")
    with pytest.raises(UnknownProviderError, match="gopher"):
        assistant_message(response, "gopher")
    with pytest.raises(UnknownProviderError):
        tool_results([], "gopher")


# --- results -----------------------------------------------------------------------------

RESULTS = [
    ToolResult("c1", "forecast", "sunny", True),
    ToolResult("c2", "forcast", "unknown tool 'forcast'", False),
]


def test_chat_results_are_tool_messages_with_an_error_prefix() -> None:
    assert tool_results(RESULTS, "openai") == [
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "c2", "content": "Error: unknown tool 'forcast'"},
    ]


def test_responses_results_are_function_call_outputs() -> None:
    assert tool_results(RESULTS, "openai-responses") == [
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
        {
            "type": "function_call_output",
            "call_id": "c2",
            "output": "Error: unknown tool 'forcast'",
        },
    ]


def test_anthropic_results_are_one_user_message_with_error_flags() -> None:
    assert tool_results(RESULTS, "anthropic") == [
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "sunny", "is_error": False},
                {
                    "type": "tool_result",
                    "tool_use_id": "c2",
                    "content": "unknown tool 'forcast'",
                    "is_error": True,
                },
            ],
        }
    ]
    assert tool_results([], "anthropic") == []


def test_ollama_results_name_their_tool() -> None:
    assert tool_results(RESULTS, "ollama") == [
        {"role": "tool", "tool_name": "forecast", "tool_call_id": "c1", "content": "sunny"},
        {
            "role": "tool",
            "tool_name": "forcast",
            "tool_call_id": "c2",
            "content": "Error: unknown tool 'forcast'",
        },
    ]


def test_an_output_that_already_says_error_is_not_prefixed_twice() -> None:
    failed = ToolResult("c1", "x", "Error: disk full", False)
    assert tool_results([failed], "openai")[0]["content"] == "Error: disk full"


# --- a whole tool loop, per provider -----------------------------------------------------


def weather_registry() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool
    def get_weather(city: str, units: str = "celsius") -> str:
        """Weather for a city."""
        return f"{city}: 21 degrees {units}"

    @registry.tool
    def get_forecast(city: str, days: int) -> dict[str, Any]:
        """Forecast for a city."""
        return {"city": city, "days": days}

    @registry.tool
    def get_local_time(tz: str) -> str:
        """Local time in a time zone."""
        return f"12:00 in {tz}"

    @registry.tool
    def read_file(path: str, max_lines: int = 100) -> str:
        """Read a file."""
        return f"{path}: {max_lines} lines"

    return registry


@pytest.mark.parametrize("provider", ["openai", "anthropic", "ollama"])
@pytest.mark.parametrize("name", ["tool-call", "parallel-tool-calls"])
def test_a_second_request_can_be_built_from_the_first_answer(provider: str, name: str) -> None:
    registry = weather_registry()
    response = laminate.normalize(body(f"{provider}/{name}.body.json"))
    results = registry.run_sync(response, timeout=5)
    assert len(results) == len(response.tool_uses())
    assert [r.call_id for r in results] == [c.id for c in response.tool_uses()]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather?"}]
    turn = assistant_message(response, provider)
    assert isinstance(turn, dict)  # one message for every API but the Responses API
    messages.append(turn)
    messages.extend(tool_results(results, provider))
    request = {"model": response.model, "tools": registry.tools(provider), "messages": messages}
    json.dumps(request)  # plain JSON all the way down
    answered = {r.call_id for r in results}
    if provider == "anthropic":
        assert {b["tool_use_id"] for b in messages[-1]["content"]} == answered
    else:
        assert {m["tool_call_id"] for m in messages[2:]} == answered


@pytest.mark.parametrize("name", ["function-call", "parallel-function-calls"])
def test_a_second_responses_request_can_be_built_from_the_first(name: str) -> None:
    registry = weather_registry()

    @registry.tool
    def get_time(timezone: str) -> str:
        """Time in a time zone."""
        return f"12:00 in {timezone}"

    response = laminate.normalize(body(f"openai-responses/{name}.body.json"))
    results = registry.run_sync(response, timeout=5)
    assert all(r.ok for r in results)
    items: list[dict[str, Any]] = [{"role": "user", "content": "Weather?"}]
    items.extend(assistant_message(response, "openai-responses"))
    items.extend(tool_results(results, "openai-responses"))
    json.dumps({"tools": registry.tools("openai-responses"), "input": items})
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    assert calls == outputs == [c.id for c in response.tool_uses()]


@pytest.mark.parametrize("provider", ["anthropic", "bedrock", "openai-responses", "openai"])
def test_citations_are_not_sent_back_as_blocks_of_the_next_request(provider: str) -> None:
    citation = laminate.Unknown("citation", laminate.FlexValue({"type": "x", "url": "u"}))
    content: list[laminate.ContentBlock] = [laminate.Text("Cited."), citation]
    response = laminate.NormalizedResponse(
        "r", "m", provider, content, laminate.StopReason.END_TURN, laminate.Usage()
    )
    turn = json.dumps(assistant_message(response, provider))
    assert "Cited." in turn
    assert '"url"' not in turn
