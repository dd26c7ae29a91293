"""The neutral request and translation between APIs: what holds for every reader and writer.

Table-driven over the registry: every API that reads requests and every API that writes
them is covered here without a line of its own. The per-API request tests are in
``test_request_<api>.py``.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import laminate
from laminate import (
    BlockEnd,
    BlockStart,
    CachePoint,
    Document,
    FlexValue,
    Image,
    JsonSchema,
    Loss,
    Message,
    NormalizedResponse,
    Reasoning,
    Request,
    ResponseDone,
    StopReason,
    Text,
    ToolRegistry,
    ToolResult,
    ToolSpec,
    ToolUse,
    TranslationError,
    Usage,
)
from laminate._apis.registry import APIS
from laminate._core.request import LOSS_REASONS

from .request_support import (
    READERS,
    WRITERS,
    Vector,
    canonical,
    kept,
    needs_vectors,
    recording_params,
    translated,
    vectors,
    written_mapped,
)
from .support import ROOT

LONG_NAME = "mcp__claude_in_chrome__read_the_whole_page_and_summarise_it_for_the_user"
ODD_ID = "functions.Bash:0"


def weather_request(**changes: Any) -> Request:
    call = ToolUse("call_1", "get_weather", FlexValue({"city": "Oslo"}))
    fields: dict[str, Any] = {
        "model": "m",
        "system": [Text("Be brief.")],
        "messages": [
            Message("user", [Text("Weather in Oslo?")]),
            Message("assistant", [Text("Looking."), call]),
            Message("user", [ToolResult("call_1", "get_weather", "5 C, rain", True)]),
        ],
        "tools": [
            ToolSpec(
                "get_weather",
                "Weather for a city.",
                {"type": "object", "properties": {"city": {"type": "string"}}},
            )
        ],
        "tool_choice": "auto",
        "max_tokens": 300,
    }
    fields.update(changes)
    return Request(**fields)


# -- ToolResult: one record, two sets of names -----------------------------------------------


def test_a_tool_result_is_built_with_the_tool_loops_names_or_the_requests() -> None:
    loop = ToolResult("c1", "get_weather", "sunny", True)
    block = ToolResult(tool_use_id="c1", content="sunny", is_error=False, name="get_weather")
    assert loop == block
    assert (loop.call_id, loop.output, loop.ok) == ("c1", "sunny", True)
    assert (loop.tool_use_id, loop.content, loop.is_error) == ("c1", "sunny", False)
    failed = ToolResult("c2", "x", "boom", ok=False)
    assert failed.is_error
    assert not failed.ok


def test_a_tool_results_output_joins_the_text_of_its_content_blocks() -> None:
    result = ToolResult(tool_use_id="c1", content=[Text("a"), Text("b")], is_error=True)
    assert result.output == "ab"
    assert result.name == ""
    assert not result.ok


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        (("c1",), {"tool_use_id": "c1", "content": "x"}),
        (("c1", "n", "x"), {"content": "x"}),
        (("c1", "n", "x", True), {"is_error": True}),
        ((), {"content": "x"}),
        ((1, "n", "x", True), {}),
        (("c1", "n", 3, True), {}),
    ],
)
def test_a_tool_result_given_both_names_or_wrong_types_is_a_type_error(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    with pytest.raises(TypeError):
        ToolResult(*args, **kwargs)


# -- the public functions' arguments -------------------------------------------------------


def test_a_body_may_be_json_text() -> None:
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    as_text = laminate.read_request(json.dumps(body), "anthropic")
    assert as_text == laminate.read_request(json.dumps(body).encode(), "anthropic")
    assert as_text.messages == [Message("user", [Text("hi")])]


def test_a_body_of_another_type_is_a_type_error_that_says_what_is_accepted() -> None:
    with pytest.raises(TypeError, match="dict"):
        laminate.read_request([1, 2], "openai")
    with pytest.raises(TypeError, match="Request"):
        laminate.write_request({"model": "m"}, "openai")  # type: ignore[arg-type]


def test_text_that_is_not_a_json_object_is_a_translation_error() -> None:
    with pytest.raises(TranslationError):
        laminate.read_request("{not json", "openai")
    with pytest.raises(TranslationError):
        laminate.read_request("[1]", "openai")


def test_an_unknown_api_is_named_in_the_error() -> None:
    with pytest.raises(laminate.UnknownProviderError, match="nope"):
        laminate.read_request({}, "nope")


# -- every writer ----------------------------------------------------------------------------


@pytest.mark.parametrize("api", WRITERS)
def test_every_writer_writes_a_request_built_by_hand_and_reads_it_back(api: str) -> None:
    request = weather_request()
    written = laminate.write_request(request, api)
    assert isinstance(written.body, dict)
    assert written.path.startswith("/")
    again = laminate.read_request(written.body, api, path=written.path)
    lost = {loss.path for loss in written.losses}
    expected = kept(request)
    if "tool_choice" in lost:  # an API that cannot say "auto" (the default) lists it
        expected = dataclasses.replace(expected, tool_choice=kept(again).tool_choice)
    assert kept(again) == expected
    json.dumps(written.body)  # plain JSON


@pytest.mark.parametrize("api", WRITERS)
def test_a_normalized_response_is_a_valid_assistant_message(api: str) -> None:
    response = NormalizedResponse(
        id="r",
        model="m",
        provider="nowhere",
        content=[Text("Looking it up."), ToolUse("c9", "get_weather", FlexValue({"city": "Rome"}))],
        stop_reason=StopReason.TOOL_USE,
        usage=Usage(),
    )
    request = weather_request(
        messages=[
            Message("user", [Text("Rome?")]),
            Message("assistant", response.content),
            Message("user", [ToolResult("c9", "get_weather", "hot", True)]),
        ]
    )
    written = laminate.write_request(request, api)
    again = laminate.read_request(written.body, api, path=written.path)
    assert kept(again).calls == (("get_weather", '{"city": "Rome"}'),)
    assert kept(again).results == ("hot",)


@pytest.mark.parametrize("api", WRITERS)
def test_strict_raises_before_anything_is_written_when_something_would_be_lost(api: str) -> None:
    # Reasoning signed by a provider no API here is: no writer may send it on.
    request = weather_request(
        messages=[
            Message("user", [Text("Hi")]),
            Message("assistant", [Reasoning("hmm", signature="sig"), Text("Hello")]),
        ]
    )
    lenient = laminate.write_request(request, api)
    assert Loss("messages[1].content[0]", "foreign-reasoning") in lenient.losses
    with pytest.raises(TranslationError) as caught:
        laminate.write_request(request, api, strict=True)
    assert caught.value.path == lenient.losses[0].path
    assert caught.value.losses == lenient.losses


@pytest.mark.parametrize("api", WRITERS)
def test_losses_use_the_documented_vocabulary(api: str) -> None:
    request = weather_request(
        top_k=5,
        extra={"some_field": 1},
        messages=[
            Message("user", [Text("Hi")]),
            Message("assistant", [Reasoning("hmm", signature="sig"), Text("Hello")]),
        ],
    )
    written = laminate.write_request(request, api)
    assert written.losses
    assert {loss.reason for loss in written.losses} <= set(LOSS_REASONS)
    assert Loss("extra.some_field", "source-only") in written.losses


# -- renaming --------------------------------------------------------------------------------


def renaming_request() -> Request:
    call = ToolUse(ODD_ID, LONG_NAME, FlexValue({"url": "https://example.com"}))
    return weather_request(
        messages=[
            Message("user", [Text("Read it")]),
            Message("assistant", [call]),
            Message("user", [ToolResult(ODD_ID, LONG_NAME, "page text", True)]),
        ],
        tools=[ToolSpec(LONG_NAME, "Read a page.", {"type": "object", "properties": {}})],
        tool_choice=LONG_NAME,
    )


@pytest.mark.parametrize("api", WRITERS)
def test_names_and_ids_the_target_refuses_are_renamed_and_restored(api: str) -> None:
    written = laminate.write_request(renaming_request(), api)
    record = APIS[api]
    text = json.dumps(written.body)
    if re.fullmatch(record.tool_name_rule, LONG_NAME):  # an API that takes any name
        assert written.names == {}
        assert LONG_NAME in text
        return
    assert LONG_NAME not in text  # 74 characters: over 64
    assert written.names
    assert set(written.names.values()) == {LONG_NAME}
    (short,) = written.names
    assert len(short) <= 64
    if ODD_ID in written.ids.values():
        assert ODD_ID not in text
    for new in written.ids:
        assert re.fullmatch(record.call_id_rule, new)
    again = laminate.read_request(written.body, api, path=written.path)
    assert again.tool_choice == short
    # The answer names the tool as written; the client gets its own name back.
    answer_call = ToolUse("fresh_1", short, FlexValue({}))
    response = NormalizedResponse("r", "m", api, [answer_call], StopReason.TOOL_USE, Usage())
    restored = written.restore_response(response)
    assert restored.content == [ToolUse("fresh_1", LONG_NAME, FlexValue({}))]
    start = written.restore(BlockStart(0, answer_call))
    end = written.restore(BlockEnd(0, answer_call))
    done = written.restore(ResponseDone(response))
    assert isinstance(start, BlockStart)
    assert start.block == restored.content[0]
    assert isinstance(end, BlockEnd)
    assert end.block == restored.content[0]
    assert isinstance(done, ResponseDone)
    assert done.response == restored


def test_renaming_is_the_same_every_time_and_keeps_names_apart() -> None:
    first = laminate.write_request(renaming_request(), "anthropic")
    second = laminate.write_request(renaming_request(), "anthropic")
    assert first.names == second.names
    assert first.ids == second.ids
    assert set(first.ids.values()) == {ODD_ID}
    near = LONG_NAME + "_v2"
    request = weather_request(
        tools=[ToolSpec(LONG_NAME), ToolSpec(near)], messages=[Message("user", [Text("x")])]
    )
    written = laminate.write_request(request, "openai")
    assert len(set(written.names)) == 2
    assert set(written.names.values()) == {LONG_NAME, near}


def test_nothing_is_renamed_when_the_target_takes_every_name() -> None:
    written = laminate.write_request(weather_request(), "anthropic")
    assert written.names == {}
    assert written.ids == {}
    event = BlockStart(0, ToolUse("call_1", "get_weather", FlexValue({})))
    assert written.restore(event) is event


# -- translation over the recordings ---------------------------------------------------------


@needs_vectors
@pytest.mark.parametrize("vector", recording_params())
@pytest.mark.parametrize("target", WRITERS)
def test_every_recording_written_as_every_api_keeps_what_matters_or_lists_the_loss(
    vector: Vector, target: str
) -> None:
    translation = translated(vector, target)
    assert translation.request is not None
    source = kept(translation.request)
    again = kept(laminate.read_request(translation.body, target, path=translation.path))
    lost = {loss.path for loss in translation.losses}
    assert again.system == source.system or any(p.startswith("system") for p in lost)
    assert again.calls == source.calls or any(".content[" in p for p in lost)
    assert again.results == source.results or any(".content[" in p for p in lost)
    assert again.texts == source.texts or any(".content[" in p for p in lost)
    named = {n for n, _ in source.tools}
    # An API that wants the tools of the calls in the history declared (Bedrock) may add them.
    assert {n for n, _ in again.tools} in (named, named | {n for n, _ in source.calls}) or any(
        p.startswith("tools") for p in lost
    )
    assert dict(again.tools) == {n: args for n, args in source.tools if n in dict(again.tools)} | {
        n: args for n, args in again.tools if n not in named
    }
    assert again.tool_choice == source.tool_choice or "tool_choice" in lost
    if source.max_tokens is not None:
        assert again.max_tokens == source.max_tokens


def _strings(value: Any, out: list[str]) -> None:
    """Every string of a written body (and of the JSON a string holds)."""
    if isinstance(value, dict):
        for item in value.values():
            _strings(item, out)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out)
    elif isinstance(value, str):
        out.append(value)
        if value[:1] in "{[":
            with contextlib.suppress(ValueError):
                _strings(json.loads(value), out)


def _contents(block: Any, where: str) -> list[tuple[str, list[str]]]:
    """``(path, spellings)`` of what a block carries: its text, or its media's data or
    link (the data also as the text it decodes to, for a text document)."""
    match block:
        case Text(text=text) | Reasoning(text=text) if text.strip():
            return [(where, [text.strip()])]
        case Document(text=str(text)) if text.strip():
            return [(where, [text.strip()])]
        case ToolResult(content=str(text)) if text.strip():
            return [(where, [text.removeprefix("Error: ").strip()])]
        case ToolResult(content=list(parts)):
            return [
                found
                for k, part in enumerate(parts)
                for found in _contents(part, f"{where}.content[{k}]")
            ]
        case Image(data=str(data)) | Document(data=str(data)) if data:
            decoded = base64.b64decode(data + "==").decode("utf-8", "replace")
            return [(where, [data[:200], decoded.strip()[:200]])]
        case Image(url=str(url)) | Document(url=str(url)) if url:
            return [(where, [url])]
        case _:
            return []


def _to_other_apis() -> list[Any]:
    return [
        pytest.param(p.values[0], target, id=f"{p.id}->{target}", marks=p.marks)
        for p in recording_params()
        for target in WRITERS
        if p.values[0] is None or target != p.values[0].api
    ]


@needs_vectors
@pytest.mark.parametrize(("vector", "target"), _to_other_apis())
def test_every_recording_written_as_another_api_keeps_each_blocks_content_or_lists_it(
    vector: Vector, target: str
) -> None:
    """Each text, reasoning text, result and medium of the conversation is in the body
    written for another API (spacing aside), or a loss names its place: nothing is
    dropped silently."""
    request = laminate.read_request(vector.body(), vector.api, path=vector.path)
    written = written_mapped(request, target)
    found: list[str] = []
    _strings(written.body, found)
    joined = "\n".join(found)
    squeezed = "".join(joined.split())
    lost = [loss.path for loss in written.losses]
    for i, message in enumerate(request.messages):
        for j, block in enumerate(message.content):
            for where, spellings in _contents(block, f"messages[{i}].content[{j}]"):
                carried = any(s in joined or "".join(s.split()) in squeezed for s in spellings)
                named = any(where.startswith(p) or p.startswith(where) for p in lost)
                assert carried or named or f"messages[{i}]" in lost, (where, spellings[0][:80])


# -- the tool loop through every writer --------------------------------------------------------


@pytest.mark.parametrize("api", WRITERS)
def test_a_tool_loop_goes_request_answer_request_in_every_api(api: str) -> None:
    registry = ToolRegistry()

    @registry.tool
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return f"{city}: 5 C"

    first = weather_request(messages=[Message("user", [Text("Weather in Oslo?")])])
    written = laminate.write_request(first, api)
    answer = NormalizedResponse(
        "r1",
        "m",
        api,
        [Text("Checking."), ToolUse("call_7", "get_weather", FlexValue({"city": "Oslo"}))],
        StopReason.TOOL_USE,
        Usage(),
    )
    results = registry.run_sync(answer)
    record = APIS[api]
    body = written.body
    laminate.append_turn(body.setdefault(record.turn_key, []), answer, results, api)
    again = laminate.read_request(body, api, path=written.path)
    assert kept(again).calls == (("get_weather", '{"city": "Oslo"}'),)
    assert kept(again).results == ("Oslo: 5 C",)
    assert again.messages[-2].role == "assistant"


# -- the tool-choice matrix: one conversation recorded against several APIs --------------------

SCENARIOS = ("auto", "required", "none", "list_single")
# Each scenario's tool choice in the neutral request.
SAID = {"auto": "auto", "required": "any", "none": "none", "list_single": "get_weather"}


def matrix_params() -> list[Any]:
    found = []
    for scenario in SCENARIOS:
        recorded = {v.api: v for v in vectors() if v.name.endswith(f"toolchoice-{scenario}")}
        for source, vector in recorded.items():
            for target, expected in recorded.items():
                if source != target and source in READERS and target in WRITERS:
                    found.append(
                        pytest.param(vector, expected, scenario, id=f"{scenario}-{source}-{target}")
                    )
    if not found:
        return [pytest.param(None, None, "", marks=pytest.mark.skip(reason="no recordings"))]
    return found


@needs_vectors
@pytest.mark.parametrize(("vector", "expected", "scenario"), matrix_params())
def test_each_recording_of_the_matrix_written_as_another_api_gives_its_recorded_choice(
    vector: Vector, expected: Vector, scenario: str
) -> None:
    # pydantic-ai's "tools_plus_output" scenario is left out: which tools it sends differs
    # by provider (a choice of the client, not of the API).
    target = expected.api
    source = laminate.read_request(vector.body(), vector.api, path=vector.path)
    if source.tool_choice != SAID[scenario]:
        pytest.skip(f"the {vector.api} recording cannot say {scenario!r} (the API has no way to)")
    written = translated(vector, target)
    recorded = laminate.read_request(expected.body(), target, path=expected.path)
    again = laminate.read_request(written.body, target, path=written.path)
    assert again.tool_choice == recorded.tool_choice
    assert [t.name for t in again.tools] == [t.name for t in recorded.tools]
    choice = canonical(target, expected.body()).get("tool_choice")
    if choice is not None:
        assert canonical(target, written.body).get("tool_choice") == choice


# -- the table of docs/requests.md ---------------------------------------------------------------

HI = Message("user", [Text("hi")])
WEATHER = ToolSpec("w", "Weather.", {"type": "object", "properties": {"city": {"type": "string"}}})
FEATURES: dict[str, Request] = {
    "system text": Request(model="m", system=[Text("Be brief.")], messages=[HI]),
    "system message mid-conversation": Request(
        model="m",
        messages=[
            HI,
            Message("assistant", [Text("hello")]),
            Message("system", [Text("Answer in French from now on.")]),
            Message("user", [Text("ok")]),
        ],
    ),
    "image (base64)": Request(
        model="m", messages=[Message("user", [Text("what?"), Image("image/png", data="iVBO")])]
    ),
    "image (link)": Request(
        model="m",
        messages=[Message("user", [Text("what?"), Image("image/png", url="https://x.test/a.png")])],
    ),
    "PDF document": Request(
        model="m",
        messages=[
            Message(
                "user", [Text("sum up"), Document("application/pdf", data="JVBE", title="spec")]
            )
        ],
    ),
    "tool calls and results": Request(
        model="m",
        tools=[WEATHER],
        messages=[
            HI,
            Message("assistant", [ToolUse("call_1", "w", FlexValue({"city": "Oslo"}))]),
            Message("user", [ToolResult("call_1", "w", "5 C", True)]),
        ],
    ),
    "top_k": Request(model="m", messages=[HI], top_k=5),
    "stop sequences": Request(model="m", messages=[HI], stop=["END"]),
    "reasoning effort": Request(model="m", messages=[HI], reasoning="high"),
    "reasoning budget": Request(model="m", messages=[HI], reasoning=4096),
    "JSON schema output": Request(
        model="m",
        messages=[HI],
        response_format=JsonSchema("answer", {"type": "object", "properties": {}}),
    ),
    "JSON output without a schema": Request(model="m", messages=[HI], response_format="json"),
    "end-user id": Request(model="m", messages=[HI], user="u-1"),
    "parallel calls turned off": Request(
        model="m", messages=[HI], tools=[WEATHER], parallel_tool_calls=False
    ),
    "cache breakpoints": Request(model="m", system=[Text("long"), CachePoint()], messages=[HI]),
    "a required call among some tools": Request(
        model="m",
        messages=[HI],
        tools=[WEATHER, ToolSpec("t", "Time.", {"type": "object", "properties": {}})],
        tool_choice="any",
        allowed_tools=["w"],
    ),
    "reasoning from another provider": Request(
        model="m",
        messages=[HI, Message("assistant", [Reasoning("hmm", signature="sig"), Text("hello")])],
    ),
}
NEAR = frozenset({"approximated", "reordered"})


def documented_table() -> dict[tuple[str, str], str]:
    page = (ROOT / "docs" / "requests.md").read_text(encoding="utf-8")
    rows = page.split("<!-- features-table -->", 1)[1].strip().splitlines()
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    table = {}
    for row in rows[2:]:
        if not row.startswith("|"):
            break
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        for api, cell in zip(header[1:], cells[1:], strict=True):
            table[cells[0], api] = cell
    return table


def test_the_table_lists_every_feature_and_every_api() -> None:
    table = documented_table()
    assert {feature for feature, _ in table} == set(FEATURES)
    assert {api for _, api in table} == set(APIS)
    assert set(table.values()) <= {"yes", "~", "no"}


@pytest.mark.parametrize("feature", FEATURES)
@pytest.mark.parametrize("api", WRITERS)
def test_the_documented_table_is_what_each_writer_does(feature: str, api: str) -> None:
    expected = documented_table()[feature, api]
    losses = laminate.write_request(FEATURES[feature], api).losses
    reasons = {loss.reason for loss in losses}
    match expected:
        case "yes":
            assert losses == []
        case "~":
            assert losses
            assert reasons <= NEAR
        case _:
            assert reasons - NEAR


@pytest.mark.parametrize("api", WRITERS)
def test_reasoning_of_a_tool_loop_goes_back_to_its_provider_and_is_a_loss_to_another(
    api: str,
) -> None:
    registry = ToolRegistry()

    @registry.tool
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return "cold"

    answer = NormalizedResponse(
        "r1",
        "m",
        api,
        [
            Reasoning("Look it up.", signature="opaque-signature", id="rs_1"),
            ToolUse("call_7", "get_weather", FlexValue({"city": "Oslo"})),
        ],
        StopReason.TOOL_USE,
        Usage(),
    )
    written = laminate.write_request(weather_request(messages=[HI], api=api), api)
    body = written.body
    laminate.append_turn(
        body.setdefault(APIS[api].turn_key, []), answer, registry.run_sync(answer), api
    )
    again = laminate.read_request(body, api, path=written.path)
    replayed = [
        b for m in again.messages for b in m.content if isinstance(b, Reasoning) and b.signature
    ]
    if not replayed:  # this API takes no reasoning back: the tool loop leaves it out
        assert "opaque-signature" not in json.dumps(body)
        return
    assert replayed[0].signature == "opaque-signature"
    assert laminate.write_request(again, api).losses == []
    for other in WRITERS:
        if other != api:
            moved = laminate.write_request(again, other)
            assert "foreign-reasoning" in {loss.reason for loss in moved.losses}
            assert "opaque-signature" not in json.dumps(moved.body)


# -- invalid bodies: a TranslationError naming the path, never anything else -------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


def nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += nodes(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += nodes(item, (*path, index))
    return found


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = json.loads(json.dumps(value))
    target = copy
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return copy


@needs_vectors
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_recording_with_any_part_replaced_reads_or_is_a_translation_error(
    data: st.DataObject,
) -> None:
    vector = data.draw(st.sampled_from([v for v in vectors() if v.api in READERS]))
    body = vector.body()
    where = data.draw(st.sampled_from(nodes(body)[1:]))  # the body itself stays an object
    broken = replaced(body, where, data.draw(JSON))
    try:
        request = laminate.read_request(broken, vector.api, path=vector.path)
    except TranslationError as exc:
        failed: TranslationError | None = exc
    else:
        failed = None
        for target in WRITERS:
            try:
                laminate.write_request(request, target)
            except TranslationError as exc:  # only a model the target cannot serve
                refused: TranslationError | None = exc
            else:
                refused = None
            assert refused is None or refused.reason == "model", refused
    assert failed is None or failed.path in str(failed)
