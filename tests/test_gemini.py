"""Gemini (``provider="gemini"``): the handler's rules one by one, the streamed-argument
writer, the request shapes and the body writer, then every recording in
../shared/real-streams*/gemini-native against what a reader of that recording expects
(written by hand from the recording: text, calls and their arguments, signatures, stop
reason, usage)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import laminate
from laminate import (
    IncompleteStreamError,
    InvalidToolUse,
    LaminateError,
    MalformedStreamError,
    NormalizedResponse,
    ProviderError,
    Reasoning,
    StopReason,
    StreamNormalizer,
    Text,
    ToolInputDelta,
    ToolRegistry,
    ToolResult,
    ToolUse,
    Unknown,
    UnknownProviderError,
    Usage,
    normalize,
)
from laminate._apis.detect import provider_from_url
from laminate._apis.gemini.arguments import parse_json_path
from laminate._apis.gemini.read import gemini_error
from laminate._apis.registry import api

from .support import (
    FIXTURES,
    REAL_STREAMS,
    REAL_STREAMS_2,
    needs_real_streams,
    needs_real_streams_2,
    run_chunks,
)

GEMINI = FIXTURES / "gemini"


def sse(*chunks: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in chunks)


def chunk(*parts: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "gemini-test", "responseId": "r1", **extra}


def run(data: bytes, **options: Any) -> NormalizedResponse:
    outcome = run_chunks([data], **options)
    if outcome.error is not None:
        raise outcome.error
    response = outcome.response
    assert response is not None
    return response


# -- blocks, signatures, stop reasons ------------------------------------------------------


def test_text_reasoning_and_calls_become_blocks_when_the_kind_changes() -> None:
    data = sse(
        chunk({"text": "plan", "thought": True}),
        chunk({"text": " more", "thought": True}, {"text": "Hi"}),
        chunk({"text": " there"}, {"functionCall": {"name": "f", "args": {"a": 1}}}),
        chunk({"functionCall": {"name": "g", "args": {}}}, finish="STOP"),
    )
    response = run(data)
    assert response.content == [
        Reasoning("plan more"),
        Text("Hi there"),
        ToolUse("call_2", "f", laminate.FlexValue({"a": 1})),
        ToolUse("call_3", "g", laminate.FlexValue({})),
    ]
    assert response.stop_reason == "tool_use"
    assert response.stop_reason.raw == "STOP"


def test_a_lone_signature_with_nothing_before_it_is_an_empty_signed_text() -> None:
    response = run(sse(chunk({"text": "", "thoughtSignature": "c2ln"}, finish="STOP")))
    assert response.content == [Text("", "c2ln")]


def test_a_second_signature_starts_a_new_block_rather_than_replacing_the_first() -> None:
    data = sse(
        chunk({"text": "one", "thoughtSignature": "AAA"}),
        chunk({"text": "two", "thoughtSignature": "BBB"}),
        chunk({"text": "", "thoughtSignature": "CCC"}, finish="STOP"),
    )
    assert run(data).content == [Text("one", "AAA"), Text("two", "BBB"), Text("", "CCC")]


def test_a_signature_only_part_signs_the_call_it_follows() -> None:
    data = sse(
        chunk({"functionCall": {"name": "f", "args": {}}}),
        chunk({"text": "", "thoughtSignature": "U0lH"}, finish="STOP"),
    )
    (call,) = run(data).content
    assert isinstance(call, ToolUse)
    assert call.signature == "U0lH"


def test_a_thought_signature_goes_on_the_reasoning_block() -> None:
    data = sse(chunk({"text": "hmm", "thought": True, "thoughtSignature": "UkVB"}, finish="STOP"))
    assert run(data).content == [Reasoning("hmm", "UkVB")]


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        ("STOP", "end_turn"),
        ("MAX_TOKENS", "max_tokens"),
        ("SAFETY", "content_filter"),
        ("RECITATION", "content_filter"),
        ("BLOCKLIST", "content_filter"),
        ("PROHIBITED_CONTENT", "content_filter"),
        ("SPII", "content_filter"),
        ("IMAGE_SAFETY", "content_filter"),
        ("MALFORMED_FUNCTION_CALL", None),
        ("UNEXPECTED_TOOL_CALL", None),
        ("LANGUAGE", None),
        ("OTHER", None),
        ("NOT_YET_DOCUMENTED", None),
    ],
)
def test_stop_reasons(raw: str, kind: str | None) -> None:
    stop = run(sse(chunk({"text": "x"}, finish=raw))).stop_reason
    assert stop.kind == kind
    assert stop.raw == raw


def test_a_whole_call_at_max_tokens_is_finished_but_a_streamed_one_is_cut() -> None:
    whole = run(sse(chunk({"functionCall": {"name": "f", "args": {"a": 1}}}, finish="MAX_TOKENS")))
    assert isinstance(whole.content[0], ToolUse)
    cut = run(
        sse(
            chunk({"functionCall": {"name": "f", "willContinue": True}}),
            chunk(
                {
                    "functionCall": {
                        "partialArgs": [{"jsonPath": "$.a", "numberValue": 1}],
                        "willContinue": True,
                    }
                },
                finish="MAX_TOKENS",
            ),
        )
    )
    (block,) = cut.content
    assert isinstance(block, InvalidToolUse)
    assert block.raw_input == '{"a":1'
    assert "cut off" in block.reason


def test_a_finish_on_every_chunk_keeps_the_text_in_one_block() -> None:
    # Old Vertex streams repeat finishReason on every chunk while the text goes on.
    data = sse(
        chunk({"text": "one "}, finish="STOP"),
        chunk({"text": "two "}, finish="STOP"),
        chunk({"text": "three"}, finish="STOP"),
        chunk(usageMetadata={"promptTokenCount": 3, "candidatesTokenCount": 5}),
    )
    outcome = run_chunks([data])
    assert outcome.error is None
    assert outcome.response is not None
    assert [type(block) for block in outcome.response.content] == [Text]
    assert outcome.response.text() == "one two three"
    assert outcome.response.stop_reason.raw == "STOP"
    kinds = [type(event).__name__ for event in outcome.events]
    assert kinds.count("BlockStart") == kinds.count("BlockEnd") == 1
    assert kinds[-2:] == ["BlockEnd", "ResponseDone"]


def test_a_call_after_a_finish_is_a_block_of_its_own_and_the_stop_says_tool_use() -> None:
    data = sse(
        chunk({"text": "Let me look."}, finish="STOP"),
        chunk({"functionCall": {"name": "f", "args": {"a": 1}}}, finish="STOP"),
    )
    response = run(data)
    assert [type(block) for block in response.content] == [Text, ToolUse]
    assert response.text() == "Let me look."
    # The finish that came with the text was not the last: the last one wins.
    assert response.stop_reason == StopReason.TOOL_USE
    assert response.stop_reason.raw == "STOP"


def test_a_cutting_finish_still_closes_the_text_at_once() -> None:
    outcome = run_chunks(
        [sse(chunk({"text": "a"}), chunk({"text": "b"}, finish="MAX_TOKENS"), chunk({"text": "c"}))]
    )
    assert outcome.response is not None
    assert [type(block) for block in outcome.response.content] == [Text, Text]
    assert outcome.response.stop_reason.raw == "MAX_TOKENS"


def test_usage_is_cumulative_and_output_counts_thoughts() -> None:
    data = sse(
        chunk({"text": "a"}, usageMetadata={"promptTokenCount": 5, "thoughtsTokenCount": 7}),
        chunk(
            {"text": "b"},
            finish="STOP",
            usageMetadata={
                "promptTokenCount": 5,
                "candidatesTokenCount": 2,
                "thoughtsTokenCount": 7,
                "cachedContentTokenCount": 3,
            },
        ),
    )
    assert run(data).usage == Usage(
        5, 9, cache_read_tokens=3, reasoning_tokens=7, input_includes_cache=True
    )


def test_the_chosen_candidate_is_read() -> None:
    both = {
        "candidates": [
            {"content": {"parts": [{"text": "first"}]}, "finishReason": "STOP", "index": 0},
            {"content": {"parts": [{"text": "second"}]}, "finishReason": "STOP", "index": 1},
        ],
        "responseId": "r",
    }
    assert run(sse(both)).text() == "first"
    assert run(sse(both), choice=1).text() == "second"


def test_done_marker_after_the_finish_ends_the_answer_and_before_it_is_a_cut() -> None:
    done = b"data: [DONE]\r\n\r\n"
    assert run(sse(chunk({"text": "a"}, finish="STOP")) + done).text() == "a"
    with pytest.raises(IncompleteStreamError):
        run(sse(chunk({"text": "a"})) + done)


def test_errors_are_typed_by_status() -> None:
    def error(status: str | None, code: int) -> ProviderError:
        body: dict[str, Any] = {"code": code, "message": "m"}
        if status is not None:
            body["status"] = status
        return gemini_error({"error": body})

    for status in ("UNAVAILABLE", "RESOURCE_EXHAUSTED", "INTERNAL", "DEADLINE_EXCEEDED"):
        assert error(status, 500).retryable
        assert error(status, 500).error_type == status
    assert not error("CANCELLED", 499).retryable
    assert not error("INVALID_ARGUMENT", 400).retryable
    assert error(None, 503).retryable
    assert error(None, 503).error_type == "503"


def test_an_error_chunk_is_a_provider_error_with_the_text_so_far() -> None:
    data = sse(chunk({"text": "so far"}), {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}})
    with pytest.raises(ProviderError) as caught:
        run(data, provider="gemini")
    assert caught.value.error_type == "RESOURCE_EXHAUSTED"
    assert caught.value.retryable
    assert caught.value.partial is not None
    assert caught.value.partial.text() == "so far"


# -- streamed arguments ----------------------------------------------------------------------


def tool_deltas(path: Path) -> list[ToolInputDelta]:
    events = run_chunks([path.read_bytes()]).events
    return [e for e in events if isinstance(e, ToolInputDelta) and e.index == 0]


def test_streamed_arguments_join_into_the_final_json() -> None:
    deltas = tool_deltas(GEMINI / "vertex-partial-args.sse")
    joined = "".join(d.fragment for d in deltas)
    assert json.loads(joined) == {
        "city": 'Lisbon "old" town\né',
        "days": 3,
        "items": [{"name": "tram 28", "booked": True}, {"name": "fado night", "price": None}],
        "notes": {"lang": "pt"},
    }
    assert deltas[0].fragment == "{"


def test_streamed_arguments_give_live_string_deltas_and_completeness() -> None:
    deltas = tool_deltas(GEMINI / "vertex-partial-args.sse")
    pieces = [sd for d in deltas for sd in d.string_deltas if sd.path == ("items", 1, "name")]
    assert "".join(sd.text for sd in pieces) == "fado night"
    city = [sd.text for d in deltas for sd in d.string_deltas if sd.path == ("city",)]
    assert city == ["Lis", 'bon "old" town\n', "é"]
    first_fado = next(d for d in deltas if any(s.text == "fado" for s in d.string_deltas))
    assert not first_fado.is_written(("items", 1, "name"))
    assert first_fado.is_written(("items", 0))
    assert not first_fado.is_complete(("items", 0))  # "items" may come again until the end
    assert first_fado.partial["items"][1]["name"].value == "fado"
    assert deltas[-1].is_complete()


def test_a_string_is_closed_as_soon_as_its_last_piece_arrives() -> None:
    deltas = tool_deltas(GEMINI / "vertex-partial-args.sse")
    city_done = next(d for d in deltas if any(s.text == "é" for s in d.string_deltas))
    assert city_done.is_written(("city",))


def streamed(*pieces: dict[str, Any]) -> bytes:
    return sse(
        chunk({"functionCall": {"name": "f", "willContinue": True}}),
        chunk({"functionCall": {"partialArgs": list(pieces), "willContinue": True}}),
        chunk({"functionCall": {}}, finish="STOP"),
    )


def test_missing_array_elements_are_null() -> None:
    response = run(streamed({"jsonPath": "$.xs[2]", "numberValue": 7}))
    assert response.tool_uses()[0].input.value == {"xs": [None, None, 7]}


def test_nested_arrays_and_objects_open_and_close_in_order() -> None:
    response = run(
        streamed(
            {"jsonPath": "$.m[0][1].k", "boolValue": False},
            {"jsonPath": "$.m[1][0]", "stringValue": "z"},
            {"jsonPath": "$.n", "numberValue": 1.5},
        )
    )
    assert response.tool_uses()[0].input.value == {
        "m": [[None, {"k": False}], ["z"]],
        "n": 1.5,
    }


@pytest.mark.parametrize(
    "pieces",
    [
        ({"jsonPath": "$.xs[1]", "numberValue": 1}, {"jsonPath": "$.xs[0]", "numberValue": 2}),
        ({"jsonPath": "$.a", "numberValue": 1}, {"jsonPath": "$.a", "numberValue": 2}),
        ({"jsonPath": "$.a[0]", "numberValue": 1}, {"jsonPath": "$.a.b", "numberValue": 2}),
        ({"jsonPath": "$", "numberValue": 1},),
        ({"jsonPath": "a.b", "numberValue": 1},),
    ],
)
def test_paths_that_cannot_be_written_in_order_are_errors(pieces: tuple[Any, ...]) -> None:
    with pytest.raises(MalformedStreamError):
        run(streamed(*pieces))


def test_json_paths() -> None:
    assert parse_json_path("$.a.b[0]") == ("a", "b", 0)
    assert parse_json_path("$['a b'][2]") == ("a b", 2)
    assert parse_json_path('$["x\\"y"].z') == ('x"y', "z")
    with pytest.raises(MalformedStreamError):
        parse_json_path("$.a[")


def test_a_call_without_a_name_is_invalid_not_dropped() -> None:
    (block,) = run(sse(chunk({"functionCall": {"args": {"a": 1}}}, finish="STOP"))).content
    assert isinstance(block, InvalidToolUse)
    assert block.raw_input == '{"a":1}'


# -- detection ---------------------------------------------------------------------------


def test_detection_from_urls_and_frames() -> None:
    assert provider_from_url("/v1beta/models/gemini-2.5-flash:streamGenerateContent") == "gemini"
    assert provider_from_url(
        "/v1/projects/p/locations/l/publishers/google/models/m:generateContent"
    ) == ("gemini")
    normalizer = StreamNormalizer()
    normalizer.feed(sse(chunk({"text": "hi"}, finish="STOP")))
    assert normalizer.provider == "gemini"


# -- request shapes and bodies ---------------------------------------------------------------


def gemini_response(*blocks: Any) -> NormalizedResponse:
    return NormalizedResponse(
        "r",
        "m",
        "gemini",
        list(blocks),
        laminate.StopReason.TOOL_USE,
        Usage(),
        laminate.FlexValue(None),
    )


def test_tools_are_one_function_declarations_tool() -> None:
    registry = ToolRegistry()

    @registry.tool
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return city

    (tool,) = registry.tools("gemini")
    (declaration,) = tool["functionDeclarations"]
    assert declaration["name"] == "get_weather"
    assert declaration["description"] == "Weather for a city."
    assert declaration["parametersJsonSchema"]["properties"]["city"] == {"type": "string"}
    assert ToolRegistry().tools("gemini") == []


def test_the_model_turn_keeps_signatures_where_they_came() -> None:
    response = gemini_response(
        Reasoning("why", "UjE="),
        Text("Checking.", "VDE="),
        ToolUse("k3v9", "f", laminate.FlexValue({"a": 1}), "RjE="),
        ToolUse("call_3", "g", laminate.FlexValue({})),
        Unknown("executableCode", laminate.FlexValue({"executableCode": {"code": "1"}})),
        Unknown("groundingMetadata", laminate.FlexValue({"webSearchQueries": []})),
    )
    assert laminate.assistant_message(response, "gemini") == {
        "role": "model",
        "parts": [
            {"text": "why", "thought": True, "thoughtSignature": "UjE="},
            {"text": "Checking.", "thoughtSignature": "VDE="},
            {
                "functionCall": {"name": "f", "args": {"a": 1}, "id": "k3v9"},
                "thoughtSignature": "RjE=",
            },
            {"functionCall": {"name": "g", "args": {}}},
            {"executableCode": {"code": "1"}},
        ],
    }


def test_a_foreign_turn_carries_no_signatures() -> None:
    foreign = NormalizedResponse(
        "r",
        "m",
        "anthropic",
        [Reasoning("why", "sig"), Text("ok"), ToolUse("toolu_1", "f", laminate.FlexValue({}))],
        laminate.StopReason.TOOL_USE,
        Usage(),
        laminate.FlexValue(None),
    )
    assert laminate.assistant_message(foreign, "gemini")["parts"] == [
        {"text": "ok"},
        {"functionCall": {"name": "f", "args": {}, "id": "toolu_1"}},
    ]


def test_results_are_one_user_turn_of_function_responses() -> None:
    results = [ToolResult("k3v9", "f", "12", True), ToolResult("call_1", "g", "boom", False)]
    assert laminate.tool_results(results, "gemini") == [
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "f", "response": {"output": "12"}, "id": "k3v9"}},
                {"functionResponse": {"name": "g", "response": {"error": "boom"}}},
            ],
        }
    ]
    assert laminate.tool_results([], "gemini") == []


def test_append_turn_extends_contents() -> None:
    response = run((GEMINI / "function-call-id.sse").read_bytes())
    contents: list[Any] = [{"role": "user", "parts": [{"text": "tide?"}]}]
    laminate.append_turn(
        contents, response, [ToolResult("k3v9ztq1", "lookup_tide", "low", True)], "gemini"
    )
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[1]["parts"][0]["thoughtSignature"] == "Q2FsbFNpZ25hdHVyZS1icmF2by0wMg=="
    assert api("gemini").turn_key == "contents"


@pytest.mark.parametrize(
    "name",
    [
        "text",
        "thinking-signatures",
        "function-call-id",
        "parallel-calls-per-chunk",
        "vertex-partial-args",
        "unknown-parts",
        "signature-only-part",
    ],
)
def test_a_written_body_reads_back_the_same(name: str) -> None:
    response = run((GEMINI / f"{name}.sse").read_bytes())
    again = normalize(api("gemini").write_body(response))
    assert again.content == response.content
    assert again.stop_reason == response.stop_reason
    assert again.usage == response.usage


def test_a_body_of_another_provider_becomes_a_gemini_body() -> None:
    foreign = NormalizedResponse(
        "msg_1",
        "claude",
        "anthropic",
        [Reasoning("t", "s"), Text("hi")],
        laminate.StopReason.END_TURN.with_raw("end_turn"),
        Usage(3, 4),
        laminate.FlexValue(None),
    )
    body = api("gemini").write_body(foreign)
    assert body["candidates"][0]["finishReason"] == "STOP"
    assert body["candidates"][0]["content"]["parts"] == [
        {"text": "t", "thought": True},
        {"text": "hi"},
    ]
    assert body["usageMetadata"] == {
        "promptTokenCount": 3,
        "candidatesTokenCount": 4,
        "totalTokenCount": 7,
    }


# -- the recordings ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Rec:
    """What one recording must normalize to, written from reading it. Blocks are
    ``("text", start, signed)``, ``("reasoning", start)``, ``("tool", name, input, id,
    signed)`` (``id`` ``None``: generated) or ``("unknown", block_type)``."""

    blocks: tuple[tuple[Any, ...], ...] = ()
    stop: tuple[str | None, str] | None = None
    usage: tuple[int | None, int | None, int | None] | None = None  # input, output, reasoning
    id: str | None = None
    model: str | None = None
    text: str | None = None  # all text joined, when checked whole
    error: type[LaminateError] | None = None
    options: dict[str, Any] = field(default_factory=dict)


def T(start: str, signed: bool = False) -> tuple[Any, ...]:
    return ("text", start, signed)


def R(start: str) -> tuple[Any, ...]:
    return ("reasoning", start)


def C(
    name: str, args: dict[str, Any], id: str | None = None, signed: bool = False
) -> tuple[Any, ...]:
    return ("tool", name, args, id, signed)


def X(block_type: str) -> tuple[Any, ...]:
    return ("unknown", block_type)


END = ("end_turn", "STOP")
TOOL = ("tool_use", "STOP")

RECORDINGS: dict[str, Rec] = {
    "function-call-single-event.sse": Rec(
        (C("get_capital", {"country": "France"}),),
        TOOL,
        (52, 5, None),
        id="1lpeaMTxIpW1nvgP-O3vwQY",
        model="gemini-2.0-flash",
    ),
    "function-call-thought-signature-gemini-3.sse": Rec(
        (C("get_country", {}, signed=True),), TOOL, (29, 212, 202), model="gemini-3-pro-preview"
    ),
    "function-call-with-id-gemini-3.sse": Rec(
        (C("get_user_country", {}, "96c1su3s", signed=True),), TOOL, (29, 81, 69)
    ),
    # The Interactions API (/v1beta/interactions) is another API, not generateContent.
    "interactions-api-function-call.sse": Rec(error=UnknownProviderError),
    "parallel-function-calls-one-event.sse": Rec(
        (
            C("secret_retrieval_tool", {"password": "mellon"}, signed=True),
            C("secret_retrieval_tool", {"password": "radiance"}),
        ),
        TOOL,
        (70, 101, 61),
    ),
    "text-stream-2025.sse": Rec(
        (T("Clementine was a creature "),), END, (8, 541, None), id="jnxxaPe9J8WUsbQP9veWoQk"
    ),
    "thinking-thought-parts.sse": Rec(
        (R("**Clarifying User Goals**"), T("This is a great question!", signed=True)),
        END,
        (34, 1256, 787),
        model="gemini-2.5-pro",
    ),
    "vertex-streaming-partial-args-missing-terminator.sse": Rec(
        (
            C(
                "writeItems",
                {
                    "operations": [
                        {
                            "action": "add",
                            "description": "Fresh red apple",
                            "itemid": "apple_001",
                            "price": 0.5,
                        },
                        {
                            "action": "add",
                            "description": "Ripe yellow banana",
                            "itemid": "banana_001",
                            "price": 0.3,
                        },
                    ]
                },
                signed=True,
            ),
        ),
        TOOL,
        (54, 195, 121),
    ),
    "vertex-streaming-partial-args-no-args-call.sse": Rec(
        (
            R("**Processing User Requests**"),
            C("read_theme", {}, signed=True),
            C("read_screen", {"id": "A"}),
            C("read_screen", {"id": "B"}),
            C("read_screen", {"id": "C"}),
        ),
        TOOL,
        (249, 241, 183),
    ),
    "vertex-streaming-partial-args.sse": Rec(
        (
            C("getWeather", {"location": "Boston"}, signed=True),
            C("getWeather", {"location": "San Francisco"}),
        ),
        TOOL,
        (26, 155, 132),
        model="gemini-3.1-pro-preview",
    ),
    "vertex-text-flex.sse": Rec((T("OK", signed=True),), END, (5, 101, 100), text="OK"),
    "json-array-stream-function-call.json": Rec(
        (R("**Generating Pelican Names**"), C("pelican_name_generator", {}, signed=True)),
        TOOL,
        (32, 54, 42),
    ),
    "json-array-stream-thought-signature-gemini-3.json": Rec(
        (C("multiply", {"y": 3, "x": 5}, signed=True),), TOOL, (60, 48, 32)
    ),
    "nonstream-function-call.json": Rec(
        (C("calculate", {"expression": "15 * 7"}),),
        TOOL,
        (21, 7, None),
        id="onxxaNXSCPy-gLUP6pjS0Qs",
    ),
}

RECORDINGS_2: dict[str, Rec] = {
    "crewai-gemini20flash-2-functioncalls-no-thoughtsig.sse": Rec(
        (
            C("get_current_temperature", {"city": "Paris"}),
            C("get_current_temperature", {"city": "London"}),
        ),
        TOOL,
        (37, 14, None),
    ),
    "fbtest-googleai-code-execution-crlf.sse": Rec(
        (
            T("To find the sum of the first 5 prime numbers"),
            X("executableCode"),
            X("codeExecutionResult"),
            T("The sum of the first 5 prime numbers is 28."),
        ),
        END,
        (21, 221, 95),
    ),
    "fbtest-googleai-image-gen-empty-content-no-parts.sse": Rec(
        (T("Here's a cute cartoon kitten playing with a ball of yarn for you! "), X("inlineData")),
        END,
        (16, 1307, None),
    ),
    "fbtest-googleai-image-gen-final-chunk-no-parts.sse": Rec(
        (T("I will generate a 3D rendering"),), END, (34, 1370, None), id=""
    ),
    "fbtest-googleai-prompt-blocked-safety.sse": Rec(
        (), ("content_filter", "SAFETY"), (None, None, None)
    ),
    "fbtest-googleai-recitation-finish.sse": Rec(
        (T("text1text2"), X("citationMetadata")),
        ("content_filter", "RECITATION"),
        (9, 261, None),
        text="text1text2text3text4text5text6text7text8",
    ),
    "fbtest-googleai-thinking-functioncall-thoughtsig-crlf.sse": Rec(
        (R("**Calculating the Days**"), C("now", {}, signed=True)), TOOL, (38, 174, 168)
    ),
    "fbtest-googleai-thinking-reply-thought-summary-crlf.sse": Rec(
        (R("**Exploring Sky Color**"), T("The sky is blue because")), END, (10, 588, 540)
    ),
    "fbtest-googleai-unary-code-execution.json": Rec(
        (X("executableCode"), X("codeExecutionResult"), T("The first 5 prime numbers")),
        END,
        (21, 182, 86),
    ),
    "fbtest-googleai-unary-error-api-key.json": Rec(error=ProviderError),
    "fbtest-googleai-unary-google-search-grounding.json": Rec(
        (T("The current weather in London"), X("groundingMetadata")), END, (8, 60, None)
    ),
    "fbtest-googleai-unary-thinking-functioncall-thoughtsig.json": Rec(
        (R("**Thinking Through the New Year"), C("now", {}, signed=True)), TOOL, (38, 509, 501)
    ),
    "fbtest-googleai-url-context-crlf.sse": Rec(
        (T("\nThe Google homepage"), X("urlContextMetadata"), X("groundingMetadata")),
        END,
        (438, 120, 39),
    ),
    "fbtest-vertex-empty-text-part.sse": Rec((T("1"),), END, (8, 1, None), text="1"),
    "fbtest-vertex-finish-reason-safety.sse": Rec(
        (T("<redacted>"),), ("content_filter", "SAFETY"), (10, 66, None)
    ),
    "fbtest-vertex-function-call-short.sse": Rec(
        (C("getTemperature", {"city": "San Jose"}),), TOOL, (None, None, None)
    ),
    "fbtest-vertex-quotes-escaped-no-finish.sse": Rec(
        (T(' Pineapples and "bananas" are two different types of fruit.'),),
        error=IncompleteStreamError,
    ),
    "fbtest-vertex-thinking-reply-thought-summary.sse": Rec(
        (R("**Understanding the Core Question**"), T("The sky is blue due to")),
        END,
        (9, 1201, 1067),
    ),
    "fbtest-vertex-unary-different-parallel-function-calls.json": Rec(
        (
            C("sum", {"y": 1, "x": 2}),
            C("multiply", {"y": 3, "x": 4}),
            C("subtract", {"y": 5, "x": 6}),
        ),
        TOOL,
    ),
    "fbtest-vertex-unary-function-call-args-empty-object.json": Rec((C("current_time", {}),), TOOL),
    "fbtest-vertex-unary-function-call-args-key-absent.json": Rec((C("current_time", {}),), TOOL),
    "fbtest-vertex-unary-parallel-function-calls.json": Rec(
        (C("sum", {"y": 1, "x": 2}), C("sum", {"y": 3, "x": 4}), C("sum", {"y": 5, "x": 6})),
        TOOL,
    ),
    "fbtest-vertex-unary-quota-exceeded.json": Rec(error=ProviderError),
    # Old Vertex put finishReason on every chunk: the text goes on in the same block, and
    # the last finish (an unknown FAKE_ENUM) is the one kept.
    "fbtest-vertex-unknown-finish-enum.sse": Rec((T(""),), (None, "FAKE_ENUM"), text=None),
    "llm-gemini-arraystream-functioncall-only.json": Rec(
        (C("pelican_name_generator", {}),), TOOL, (105, 13, None)
    ),
    "llm-gemini-arraystream-gemini3-functioncall-thoughtsig-empty-text-final.json": Rec(
        (C("multiply", {"y": 3, "x": 5}, signed=True),), TOOL, (60, 48, 32)
    ),
    "llm-gemini-arraystream-text-with-thoughtsig-after-tool.json": Rec(
        (T("Alice (age 30) living at 123 Main St", signed=True),), END, (467, 47, 13)
    ),
    "llm-gemini-arraystream-thought-summary-text.json": Rec(
        (R("**Defining the Output**"), T('{"dogs":[{"name":"Shadow"', signed=True)),
        END,
        (6, 635, 570),
    ),
    "llm-gemini-arraystream-thought-then-functioncall-25flash.json": Rec(
        (R("**Generating Pelican Names**"), C("pelican_name_generator", {}, signed=True)),
        TOOL,
        (32, 54, 42),
    ),
    "mirascope-gemini25flash-2-parallel-functioncalls-one-chunk.sse": Rec(
        (
            C("secret_retrieval_tool", {"password": "mellon"}, signed=True),
            C("secret_retrieval_tool", {"password": "radiance"}),
        ),
        TOOL,
        (70, 101, 61),
    ),
    "mirascope-gemini25flash-final-chunk-content-no-parts.sse": Rec(
        (T("Hello"),), END, (7, 18, 17), text="Hello"
    ),
    "mirascope-gemini25flash-google-search-grounding-stream.sse": Rec(
        (T("While an exact price for Ethereum"), X("groundingMetadata")), END, (73, 270, 33)
    ),
    "mirascope-gemini25flash-max-tokens.sse": Rec(
        (T("Here are all 50 U.S."),), ("max_tokens", "MAX_TOKENS"), (9, 48, 38)
    ),
    "mirascope-gemini25flash-thinking-26-chunks.sse": Rec(
        (R("**Generating Prime Candidates**"), T("To find the number of primes")),
        END,
        (30, 4621, 3768),
    ),
    "mirascope-gemini3pro-functioncall-thoughtsig-then-empty-text.sse": Rec(
        (C("customAdditionImplementation", {"a": 2, "b": 3}, signed=True),),
        TOOL,
        (85, 171, 153),
    ),
    "mirascope-gemini3pro-thinking-summary.sse": Rec(
        (R("**Processing the Input**"), T('{\n  "integer_a": 2,', signed=True)),
        END,
        (13, 338, 308),
    ),
    "mirascope-stream-error-400-api-key-json-body.json": Rec(error=ProviderError),
    "mirascope-stream-error-404-model-not-found.json": Rec(error=ProviderError),
    "oi-gemini-INTERACTIONS-api-thinking-stream.sse": Rec(error=UnknownProviderError),
    "oi-gemini-stream-code-execution.sse": Rec(
        (
            T("To find the sum of the first 50 prime numbers"),
            X("executableCode"),
            X("codeExecutionResult"),
            T("The first 50 prime numbers are"),
        ),
        END,
        (32, 717, 240),
    ),
    "oi-gemini-stream-thinking-2-functioncalls.sse": Rec(
        (
            C("get_weather", {"location": "Boston"}, "dv8szvqe", signed=True),
            C("get_weather", {"location": "New Delhi"}, "j80tal12"),
        ),
        TOOL,
        (71, 126, 93),
    ),
    "otel-vertex-gemini25flash-stream.sse": Rec(
        (T("In tangled webs of cloud"),), END, (8, 2464, 2027)
    ),
}

# What the recordings show that laminate cannot yet read as the issue asks; each needs a
# change outside the Gemini package (see the reason). Strict: they flip when it lands.
PENDING: dict[str, str] = {
    "fbtest-vertex-error-json-after-data-midstream.sse": (
        "the SSE decoder drops the pretty-printed error object after the data events"
    ),
}
ERROR_STATUS = {
    "fbtest-googleai-unary-error-api-key.json": ("INVALID_ARGUMENT", False),
    "fbtest-vertex-unary-quota-exceeded.json": ("RESOURCE_EXHAUSTED", True),
    "mirascope-stream-error-400-api-key-json-body.json": ("INVALID_ARGUMENT", False),
    "mirascope-stream-error-404-model-not-found.json": ("NOT_FOUND", False),
}


def check(path: Path, rec: Rec) -> None:
    data = path.read_bytes()
    if data.lstrip()[:1] == b"[" and not hasattr(laminate._framing, "JSONArrayDecoder"):
        pytest.skip("the JSON-array framing is not in this tree")
    outcome = run_chunks([data], **rec.options)
    if rec.error is not None:
        assert isinstance(outcome.error, rec.error), outcome.error
    else:
        assert outcome.error is None, outcome.error
    response = outcome.response
    if rec.error is ProviderError or rec.error is UnknownProviderError:
        return
    assert response is not None
    assert len(response.content) == len(rec.blocks), response.content
    for block, want in zip(response.content, rec.blocks, strict=True):
        match want:
            case ("text", start, signed):
                assert isinstance(block, Text), block
                assert block.text.startswith(start)
                assert (block.signature is not None) == signed
            case ("reasoning", start):
                assert isinstance(block, Reasoning), block
                assert block.text.startswith(start)
            case ("tool", name, args, id, signed):
                assert isinstance(block, ToolUse), block
                assert (block.name, block.input.value) == (name, args)
                assert id is None or block.id == id
                assert (block.signature is not None) == signed
            case ("unknown", block_type):
                assert isinstance(block, Unknown), block
                assert block.block_type == block_type
    if rec.stop is not None:
        assert (response.stop_reason.kind, response.stop_reason.raw) == rec.stop
    if rec.usage is not None:
        u = response.usage
        assert (u.input_tokens, u.output_tokens, u.reasoning_tokens) == rec.usage
    if rec.id is not None:
        assert response.id == rec.id
    if rec.model is not None:
        assert response.model == rec.model
    if rec.text is not None:
        assert response.text() == rec.text
    ids = [b.id for b in response.content if isinstance(b, ToolUse)]
    assert len(set(ids)) == len(ids)
    assert all(ids)
    assert response.provider == "gemini"


@needs_real_streams
@pytest.mark.parametrize("name", sorted(RECORDINGS))
def test_recording(name: str) -> None:
    check(REAL_STREAMS / "gemini-native" / name, RECORDINGS[name])


@needs_real_streams
def test_every_recording_has_an_expectation() -> None:
    on_disk = {p.name for p in (REAL_STREAMS / "gemini-native").iterdir()}
    assert on_disk - {"SOURCES.md"} == set(RECORDINGS)


@needs_real_streams_2
@pytest.mark.parametrize("name", sorted(RECORDINGS_2))
def test_recording_2(name: str) -> None:
    check(REAL_STREAMS_2 / "gemini-native" / name, RECORDINGS_2[name])


@needs_real_streams_2
def test_every_second_recording_has_an_expectation() -> None:
    on_disk = {p.name for p in (REAL_STREAMS_2 / "gemini-native").iterdir()}
    assert on_disk - {"SOURCES.md"} == set(RECORDINGS_2) | set(PENDING)


@needs_real_streams_2
def test_old_vertex_repeated_finish_keeps_all_the_text_in_one_block() -> None:
    path = REAL_STREAMS_2 / "gemini-native" / "fbtest-vertex-unknown-finish-enum.sse"
    response = run(path.read_bytes())
    assert len(response.content) == 1
    assert response.text().startswith("**Cats:**\n\n- **Physical Characteristics:**")
    assert "devotion to their owners." in response.text()
    assert response.stop_reason.kind is None
    assert response.stop_reason.raw == "FAKE_ENUM"


@needs_real_streams_2
def test_error_object_after_the_data_events() -> None:
    path = REAL_STREAMS_2 / "gemini-native" / "fbtest-vertex-error-json-after-data-midstream.sse"
    with pytest.raises(ProviderError) as caught:
        run(path.read_bytes())
    assert caught.value.error_type == "CANCELLED"
    assert not caught.value.retryable


@needs_real_streams_2
@pytest.mark.parametrize("name", sorted(ERROR_STATUS))
def test_error_bodies_are_provider_errors_with_their_retry_advice(name: str) -> None:
    with pytest.raises(ProviderError) as caught:
        run((REAL_STREAMS_2 / "gemini-native" / name).read_bytes(), provider="gemini")
    assert caught.value.retryable is ERROR_STATUS[name][1]


@needs_real_streams_2
@pytest.mark.parametrize("name", sorted(ERROR_STATUS))
def test_error_bodies_are_typed_by_status(name: str) -> None:
    with pytest.raises(ProviderError) as caught:
        run((REAL_STREAMS_2 / "gemini-native" / name).read_bytes(), provider="gemini")
    assert caught.value.error_type == ERROR_STATUS[name][0]


@needs_real_streams
def test_the_complete_body_and_its_stream_agree() -> None:
    # The same answer is not recorded both ways; the bodies are checked read directly.
    body = normalize((REAL_STREAMS / "gemini-native" / "nonstream-function-call.json").read_bytes())
    assert body.provider == "gemini"
    assert body.tool_uses()[0].input.value == {"expression": "15 * 7"}


# -- the mock server and the demo -----------------------------------------------------------


def test_the_mock_server_answers_sse_a_json_array_and_a_body() -> None:
    import httpx

    from laminate.testing import mock_server

    request = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    base = "/v1beta/models/gemini-3-pro-preview"
    with mock_server() as url, httpx.Client(base_url=url) as client:
        with client.stream("POST", base + ":streamGenerateContent?alt=sse", json=request) as http:
            assert http.headers["content-type"].startswith("text/event-stream")
            streamed = laminate.collect_sync(http)
        with client.stream("POST", base + ":streamGenerateContent", json=request) as http:
            assert http.headers["content-type"].startswith("application/json")
            array = http.read()
        body = client.post(base + ":generateContent", json=request)
    assert streamed.provider == "gemini"
    assert streamed.has_tool_use()
    assert array.startswith(b"[{")
    assert array.endswith(b"}]")
    assert b",\r\n{" in array
    if hasattr(laminate._framing, "JSONArrayDecoder"):
        from_array = laminate.collect_sync([array], provider="gemini")
        assert from_array.content == streamed.content
    complete = normalize(body.json())
    assert complete.content == streamed.content
    assert complete.stop_reason == streamed.stop_reason
    assert complete.usage == streamed.usage


def test_the_demo_runs_a_gemini_tool_loop() -> None:
    import io

    from laminate._cli.demo import run_demo

    out = io.StringIO()
    (run,) = run_demo(["gemini"], pace=0, stream=out, plain=True)
    first, second = run.responses
    assert [c.name for c in first.tool_uses()] == ["write_file", "run_command"]
    assert all(c.signature for c in first.tool_uses()[:1])
    assert second.stop_reason == "end_turn"
    assert "creme-brulee-10-recipes" in second.text()
    assert "gemini · turn 2" in out.getvalue()
