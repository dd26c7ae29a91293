"""Every request laminate writes is one the target API's own SDK types accept.

Each recorded request of ``../shared/request-vectors`` is translated to every other API
and the body judged by that API's types (``request_validators.py``): openai's and
anthropic's request TypedDicts with unknown keys refused, google-genai's models,
botocore's Converse input shape, ollama's ``ChatRequest``, cohere's V2 types. So are the
requests of a tool loop built by hand in every API.
"""

from __future__ import annotations

from typing import Any

import pytest

import laminate
from laminate import (
    CachePoint,
    Document,
    FlexValue,
    Image,
    JsonSchema,
    Message,
    NormalizedResponse,
    Reasoning,
    Request,
    StopReason,
    Text,
    ToolRegistry,
    ToolResult,
    ToolSpec,
    ToolUse,
    Usage,
)
from laminate._apis.registry import APIS

from .request_support import FOLDERS, Vector, needs_vectors, vectors
from .request_validators import validate

TARGETS = tuple(name for name in FOLDERS if APIS[name].write_request is not None)

# What the library writes today that the target's servers refuse, with why: each is
# marked to fail (strictly) until the writer is fixed.
EMPTY_AFTER_RESULT = (
    "a cache_control on a tool result is written as a user message of its own with an "
    "empty content list"
)
NO_DETAIL = "an image is written as a Responses input_image without its detail"
MODEL_IN_PATH = "a Bedrock model id (with ':') is written into Gemini's /v1beta/models/{model} path"
BLANK_TEXT = "a whitespace-only text block is written for Anthropic, whose servers refuse it"
REFUSED: dict[tuple[str, str], str] = {
    ("openai/pydantic-ai-image-in-tool-result", "openai-responses"): NO_DETAIL,
    ("bedrock/pydantic-ai-image-in-tool-result", "openai-responses"): NO_DETAIL,
    ("ollama/ollama-doc-images", "openai-responses"): NO_DETAIL,
    ("anthropic/claude-code-api-logger-claude-code-0.2.107-tool-loop-15msg", "openai"): (
        EMPTY_AFTER_RESULT
    ),
    ("anthropic/claude-code-api-logger-claude-code-0.2.107-tool-loop-15msg", "openai-responses"): (
        EMPTY_AFTER_RESULT
    ),
    ("bedrock/pydantic-ai-cache-point", "anthropic"): BLANK_TEXT,
}


def _refused(vector: Vector, target: str) -> str | None:
    if vector.api == "bedrock" and target == "gemini" and "%3A" in vector.path:
        return MODEL_IN_PATH
    return REFUSED.get((vector.id, target))


def _params() -> list[Any]:
    found = []
    for vector in vectors():
        for target in TARGETS:
            if target == vector.api:
                continue  # the same API gives the body back as it came
            marks = []
            why = _refused(vector, target)
            if why is not None:
                marks.append(pytest.mark.xfail(reason=why, strict=True))
            found.append(pytest.param(vector, target, id=f"{vector.id}->{target}", marks=marks))
    if not found:
        return [pytest.param(None, None, marks=pytest.mark.skip(reason="no recorded requests"))]
    return found


@needs_vectors
@pytest.mark.parametrize(("vector", "target"), _params())
def test_every_recording_written_as_another_api_fits_that_apis_types(
    vector: Vector, target: str
) -> None:
    translation = laminate.translate_request(vector.body(), vector.api, target, path=vector.path)
    validate(target, translation.body, translation.path)


HI = Message("user", [Text("hi")])
WEATHER = ToolSpec(
    "get_weather",
    "Weather for a city.",
    {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city."}},
        "required": ["city"],
        "additionalProperties": False,
    },
)
REQUESTS: dict[str, Request] = {
    "everything": Request(
        model="m",
        system=[Text("Be brief."), CachePoint()],
        messages=[
            Message("user", [Text("What is on it?"), Image("image/png", data="iVBORw0KGgo=")]),
            Message(
                "assistant",
                [
                    Reasoning("Look first.", signature="c2ln"),
                    Text("Checking."),
                    ToolUse("call_1", "get_weather", FlexValue({"city": "Oslo"})),
                ],
            ),
            Message(
                "user",
                [ToolResult("call_1", "get_weather", "5 C", False), Text("And then?")],
            ),
            Message("system", [Text("Answer in French.")]),
            Message("user", [Document("application/pdf", data="JVBERi0=", title="spec.pdf")]),
        ],
        tools=[WEATHER, ToolSpec("ping", "No parameters.")],
        tool_choice="get_weather",
        parallel_tool_calls=False,
        max_tokens=300,
        temperature=0.5,
        top_p=0.9,
        top_k=20,
        stop=["END"],
        reasoning=2048,
        response_format=JsonSchema("answer", {"type": "object", "properties": {}}),
        user="u-1",
        stream=True,
    ),
    "effort and plain JSON": Request(
        model="m", messages=[HI], reasoning="high", response_format="json", tool_choice="none"
    ),
    "no tools, calls in the history": Request(
        model="m",
        messages=[
            HI,
            Message("assistant", [ToolUse("call_1", "get_weather", FlexValue({}))]),
            Message("user", [ToolResult("call_1", "get_weather", "", True)]),
        ],
    ),
}


def _by_hand() -> list[Any]:
    refused = {("everything", "openai-responses"): NO_DETAIL}
    return [
        pytest.param(
            target,
            name,
            id=f"{target}-{name}",
            marks=[pytest.mark.xfail(reason=refused[name, target], strict=True)]
            if (name, target) in refused
            else [],
        )
        for target in TARGETS
        for name in REQUESTS
    ]


@pytest.mark.parametrize(("target", "name"), _by_hand())
def test_requests_built_by_hand_fit_every_apis_types(name: str, target: str) -> None:
    written = laminate.write_request(REQUESTS[name], target)
    validate(target, written.body, written.path)


@pytest.mark.parametrize("target", TARGETS)
def test_a_tool_loops_next_request_fits_every_apis_types(target: str) -> None:
    registry = ToolRegistry()

    @registry.tool
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return f"{city}: 5 C"

    first = laminate.write_request(Request(model="m", messages=[HI], tools=[WEATHER]), target)
    answer = NormalizedResponse(
        "r1",
        "m",
        target,
        [Text("Checking."), ToolUse("call_7", "get_weather", FlexValue({"city": "Oslo"}))],
        StopReason.TOOL_USE,
        Usage(),
    )
    body = first.body
    turns = body.setdefault(APIS[target].turn_key, [])
    laminate.append_turn(turns, answer, registry.run_sync(answer), target)
    validate(target, body, first.path)
