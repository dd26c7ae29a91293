"""Gemini requests: the reader and the writer (``_apis/gemini/request.py``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import laminate
from laminate import (
    Document,
    FlexValue,
    Image,
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
from laminate._core.request import Block

from .request_support import Vector, canonical, needs_vectors, vectors
from .request_validators import validate

API = "gemini"
PATH = "/v1beta/models/gemini-2.5-flash:generateContent"


@needs_vectors
@pytest.mark.parametrize("vector", vectors(API), ids=lambda v: v.id)
def test_every_recorded_request_is_written_back_as_it_came(vector: Vector) -> None:
    body = vector.body()
    written = laminate.write_request(laminate.read_request(body, API, path=vector.path), API)
    assert written.losses == []
    assert written.path == vector.path
    assert canonical(API, written.body) == canonical(API, body)  # a number is a number: 40 == 40.0


def test_the_model_and_the_streaming_are_in_the_path() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    streamed = "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse"
    request = laminate.read_request(body, API, path=streamed)
    assert (request.model, request.stream) == ("gemini-3-pro-preview", True)
    assert laminate.write_request(request, API).path == streamed
    vertex = "/v1/projects/p/locations/l/publishers/google/models/gemini-2.5-pro:generateContent"
    request = laminate.read_request(body, API, path=vertex)
    assert (request.model, request.stream) == ("gemini-2.5-pro", False)
    with pytest.raises(TranslationError, match="generateContent"):
        laminate.read_request(body, API, path="/v1/chat/completions")


def test_snake_case_is_read_as_camel_case() -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "system_instruction": {"parts": [{"text": "Be brief."}]},
        "generation_config": {"max_output_tokens": 50, "top_k": 3},
        "tool_config": {"function_calling_config": {"mode": "ANY"}},
        "tools": [
            {
                "function_declarations": [
                    {"name": "w", "parameters_json_schema": {"type": "object", "properties": {}}}
                ]
            }
        ],
    }
    request = laminate.read_request(body, API)
    assert request.system == [Text("Be brief.")]
    assert (request.max_tokens, request.top_k, request.tool_choice) == (50, 3, "any")
    assert [t.name for t in request.tools] == ["w"]


def test_calls_and_results_are_paired_by_id_or_by_name_and_order() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "Two cities"}]},
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "w", "args": {"city": "Oslo"}}},
                    {"functionCall": {"name": "w", "args": {"city": "Lima"}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "w", "response": {"output": "5 C"}}},
                    {"functionResponse": {"name": "w", "response": {"error": "no data"}}},
                ],
            },
        ]
    }
    request = laminate.read_request(body, API)
    calls = request.messages[1].content
    results = request.messages[2].content
    assert [c.id for c in calls if isinstance(c, ToolUse)] == ["call_0", "call_1"]
    assert results == [
        ToolResult(tool_use_id="call_0", content="5 C", is_error=False, name="w"),
        ToolResult(tool_use_id="call_1", content="no data", is_error=True, name="w"),
    ]
    # Ids laminate made up are not Gemini's: they are not sent.
    assert laminate.write_request(request, API).body == body


def test_a_result_is_named_after_its_call_and_its_response_is_an_object() -> None:
    request = Request(
        model="m",
        messages=[
            Message("user", [Text("Oslo?")]),
            Message("assistant", [ToolUse("toolu_1", "get_weather", FlexValue({"city": "Oslo"}))]),
            Message(
                "user",
                [
                    ToolResult(tool_use_id="toolu_1", content="5 C", is_error=False),
                    ToolResult(tool_use_id="toolu_1", content='{"temp": 5}', is_error=False),
                    ToolResult(tool_use_id="toolu_1", content="down", is_error=True),
                ],
            ),
        ],
        api="anthropic",
    )
    body = laminate.write_request(request, API).body
    replies = [p["functionResponse"] for p in body["contents"][2]["parts"]]
    assert replies == [
        {"name": "get_weather", "response": {"output": "5 C"}, "id": "toolu_1"},
        {"name": "get_weather", "response": {"temp": 5}, "id": "toolu_1"},
        {"name": "get_weather", "response": {"error": "down"}, "id": "toolu_1"},
    ]


def test_signatures_go_back_only_to_gemini_and_foreign_calls_get_the_documented_one() -> None:
    content: list[Block] = [
        Reasoning("Think.", signature="c2lnMQ=="),
        Text("Calling.", signature="c2lnMg=="),
        ToolUse("c1", "w", FlexValue({}), signature="c2lnMw=="),
    ]
    own = Request(model="m", messages=[Message("assistant", list(content))], api=API)
    parts = laminate.write_request(own, API).body["contents"][0]["parts"]
    assert parts == [
        {"text": "Think.", "thought": True, "thoughtSignature": "c2lnMQ=="},
        {"text": "Calling.", "thoughtSignature": "c2lnMg=="},
        {"functionCall": {"name": "w", "args": {}, "id": "c1"}, "thoughtSignature": "c2lnMw=="},
    ]
    foreign = Request(model="m", messages=[Message("assistant", list(content))], api="openai")
    written = laminate.write_request(foreign, API)
    assert written.body["contents"][0]["parts"] == [
        {"text": "Calling."},
        {
            "functionCall": {"name": "w", "args": {}, "id": "c1"},
            "thoughtSignature": "skip_thought_signature_validator",
        },
    ]
    assert [(loss.path, loss.reason) for loss in written.losses] == [
        ("messages[0].content[0]", "foreign-reasoning")
    ]


def test_a_system_message_inside_the_conversation_joins_the_instruction() -> None:
    request = Request(
        model="m",
        system=[Text("Be brief.")],
        messages=[
            Message("user", [Text("hi")]),
            Message("system", [Text("Answer in French.")]),
        ],
    )
    written = laminate.write_request(request, API)
    assert written.body["systemInstruction"] == {
        "parts": [{"text": "Be brief."}, {"text": "Answer in French."}]
    }
    assert [loss.reason for loss in written.losses] == ["reordered"]


def test_tools_are_declared_with_json_schema_and_a_ref_beside_keywords_inlined() -> None:
    place = {"type": "object", "properties": {"city": {"type": "string"}}}
    schema = {
        "type": "object",
        "properties": {
            "place": {"$ref": "#/$defs/Place", "description": "Where."},
            "home": {"$ref": "#/$defs/Place"},
        },
        "$defs": {"Place": place},
    }
    request = Request(
        model="m",
        messages=[Message("user", [Text("hi")])],
        tools=[ToolSpec("w", "Weather.", schema), ToolSpec("ping", "", {"type": "object"})],
        tool_choice="w",
    )
    written = laminate.write_request(request, API)
    # Gemini refuses a `$ref` beside other keywords; a `$ref` alone it resolves.
    assert written.body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "w",
                    "description": "Weather.",
                    "parametersJsonSchema": {
                        "type": "object",
                        "properties": {
                            "place": {**place, "description": "Where."},
                            "home": {"$ref": "#/$defs/Place"},
                        },
                        "$defs": {"Place": place},
                    },
                },
                {"name": "ping", "parametersJsonSchema": {"type": "object"}},
            ]
        }
    ]
    assert written.body["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["w"]}
    }
    assert [(loss.path, loss.reason) for loss in written.losses] == [("tools[0].schema", "schema")]
    validate(API, written.body, written.path)


def test_openapi_parameters_are_read_as_json_schema_and_written_back_as_sent() -> None:
    declaration = {
        "name": "w",
        "description": "",
        "parameters": {
            "type": "OBJECT",
            "properties": {"city": {"type": "STRING", "nullable": True}},
        },
    }
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": [declaration]}],
    }
    request = laminate.read_request(body, API)
    assert request.tools[0].schema == {
        "type": "object",
        "properties": {"city": {"type": ["string", "null"]}},
    }
    assert laminate.write_request(request, API).body["tools"] == body["tools"]
    # Another API gets the JSON Schema, and nothing of Gemini's spelling.
    written = laminate.write_request(request, "openai")
    function = written.body["tools"][0]["function"]
    assert function["parameters"]["properties"]["city"]["type"] == ["string", "null"]


def test_settings_are_read_and_written() -> None:
    request = Request(
        model="m",
        messages=[Message("user", [Text("hi")])],
        max_tokens=100,
        temperature=0.2,
        top_p=0.9,
        top_k=5,
        stop=["END"],
        reasoning="low",
        response_format=JsonSchema("answer", {"type": "object"}),
        user="u-1",
        parallel_tool_calls=False,
    )
    written = laminate.write_request(request, API)
    assert written.body["generationConfig"] == {
        "maxOutputTokens": 100,
        "temperature": 0.2,
        "topP": 0.9,
        "topK": 5,
        "stopSequences": ["END"],
        "thinkingConfig": {"thinkingLevel": "LOW", "includeThoughts": True},
        "responseMimeType": "application/json",
        "responseJsonSchema": {"type": "object"},
    }
    assert {loss.path for loss in written.losses} == {"user", "parallel_tool_calls"}
    again = laminate.read_request(written.body, API, path=written.path)
    assert (again.max_tokens, again.top_k, again.reasoning) == (100, 5, "low")
    assert again.response_format == JsonSchema("response", {"type": "object"})
    budget = laminate.write_request(Request(model="m", reasoning=1024), API).body
    assert budget["generationConfig"]["thinkingConfig"] == {
        "thinkingBudget": 1024,
        "includeThoughts": True,
    }


def test_images_and_documents_are_inline_data_or_files_gemini_can_reach() -> None:
    request = Request(
        model="m",
        messages=[
            Message(
                "user",
                [
                    Image("image/png", data="iVBORw0KGgo="),
                    Image("image/png", url="gs://bucket/a.png"),
                    Image("image/png", url="https://example.test/a.png"),
                    Document("application/pdf", data="JVBERi0="),
                ],
            )
        ],
    )
    written = laminate.write_request(request, API)
    assert written.body["contents"][0]["parts"] == [
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
        {"fileData": {"mimeType": "image/png", "fileUri": "gs://bucket/a.png"}},
        {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0="}},
    ]
    assert [(loss.path, loss.reason) for loss in written.losses] == [
        ("messages[0].content[2]", "unsupported")
    ]
    again = laminate.read_request(written.body, API)
    assert again.messages[0].content[2] == Document("application/pdf", data="JVBERi0=")


def test_parts_laminate_does_not_model_go_back_to_gemini_only() -> None:
    code = {"executableCode": {"language": "PYTHON", "code": "print(1)"}}
    body = {"contents": [{"role": "model", "parts": [code]}]}
    request = laminate.read_request(body, API)
    assert laminate.write_request(request, API).body == body
    written = laminate.write_request(request, "anthropic")
    assert "executableCode" not in json.dumps(written.body)
    assert written.losses


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({}, "contents"),
        ({"contents": {"role": "user"}}, "contents"),
        ({"contents": [{"role": "robot", "parts": []}]}, "contents[0].role"),
        ({"contents": [{"parts": [{"functionCall": {"args": {}}}]}]}, "contents[0].parts[0]"),
        ({"contents": [{"parts": [{}]}]}, "contents[0].parts[0]"),
        ({"contents": [], "generationConfig": {"maxOutputTokens": "many"}}, "generationConfig"),
    ],
)
def test_an_invalid_body_is_a_translation_error_naming_the_place(
    body: dict[str, Any], where: str
) -> None:
    with pytest.raises(TranslationError) as raised:
        laminate.read_request(body, API)
    assert raised.value.path.startswith(where)
