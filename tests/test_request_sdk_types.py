"""Every request laminate writes is one the target API's server takes.

Each recorded request of ``../shared/request-vectors`` and each real client's request of
``../shared/real-streams-4/requests`` is translated to every API and the body judged by
that API's types (``request_validators.py``: openai's and anthropic's request TypedDicts
with unknown keys refused, google-genai's models, botocore's Converse input shape,
ollama's ``ChatRequest``, cohere's V2 types) and by what its servers refuse beyond them
(``written_problems``). So are the requests of a tool loop built by hand in every API.
"""

from __future__ import annotations

from functools import cache
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

from .request_support import (
    FOLDERS,
    NOT_REQUESTS,
    READERS,
    Vector,
    needs_vectors,
    recordings,
    translated,
)
from .request_validators import validate
from .test_request_server_rules import written_problems

TARGETS = tuple(name for name in FOLDERS if APIS[name].write_request is not None)

# Translations an API's own types refuse, with why (none today).
REFUSED: dict[tuple[str, str], str] = {}


def _params() -> list[Any]:
    found = []
    for vector in recordings():
        if vector.api not in READERS:
            continue
        for target in TARGETS:
            marks = []
            why = REFUSED.get((vector.id, target)) or NOT_REQUESTS.get(vector.name)
            if why is not None:
                marks.append(pytest.mark.skip(reason=why))
            found.append(pytest.param(vector, target, id=f"{vector.id}->{target}", marks=marks))
    if not found:
        reason = "no recorded requests (../shared is not beside this clone)"
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=reason))]
    return found


@cache
def _fits_its_own_api(vector: Vector) -> bool:
    try:
        validate(vector.api, vector.body(), vector.path)
    except AssertionError:
        return False
    return True


@needs_vectors
@pytest.mark.parametrize(("vector", "target"), _params())
def test_every_recording_written_as_any_api_is_one_its_server_takes(
    vector: Vector, target: str
) -> None:
    """Read with its API, written for each: the target's types and its servers' own
    rules take it. Written back for its own API, it is judged only when the client's
    body itself fits the API's types (a client's own extra fields go back as they came)."""
    body, path, model = _written(vector, target)
    # A client's own body that its API's types refuse is judged by the servers' rules alone.
    validate(target, body, path, schema=target != vector.api or _fits_its_own_api(vector))
    problems = written_problems(target, body, path, model)
    assert not problems, problems


def _written(vector: Vector, target: str) -> tuple[dict[str, Any], str, str]:
    """The body, path and model ``vector`` is written with for ``target`` (its model mapped
    where the target's servers cannot serve the recorded one)."""
    translation = translated(vector, target)
    model = laminate.read_request(translation.body, target, path=translation.path).model
    return translation.body, translation.path, model


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


@pytest.mark.parametrize("name", REQUESTS)
@pytest.mark.parametrize("target", TARGETS)
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
