"""The tool registry: schemas derived from signatures, and dispatch of a response's calls."""

from __future__ import annotations

import enum
import functools
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NewType, NotRequired, TypedDict

import anyio
import pytest

from laminate._core.errors import UnknownProviderError
from laminate._core.flex import FlexValue
from laminate._core.response import (
    InvalidToolUse,
    NormalizedResponse,
    StopReason,
    Text,
    ToolUse,
    Usage,
)
from laminate._tools.registry import ToolRegistry, ToolResult
from laminate._tools.schema import schema_for

# --- helpers and shared types ------------------------------------------------------------


def response_with(*blocks: Any, provider: str = "openai") -> NormalizedResponse:
    return NormalizedResponse("resp", "model", provider, list(blocks), StopReason.TOOL_USE, Usage())


def call(name: str, arguments: dict[str, Any], id: str = "call_1") -> ToolUse:
    return ToolUse(id, name, FlexValue(arguments))


@dataclass
class Point:
    """A point on the map."""

    x: int
    y: Annotated[float, "metres north"] = 0.0


@dataclass
class GridPoint:
    row: int
    column: int


@dataclass
class Tree:
    label: str
    children: list[Tree]


class Options(TypedDict):
    depth: int
    tags: NotRequired[list[str]]


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclass
class Reading:
    city: str
    celsius: float
    colour: Colour


class Unsupported:
    pass


UserId = NewType("UserId", int)


# --- schema derivation -------------------------------------------------------------------


def test_the_decorator_reads_name_description_and_parameters() -> None:
    registry = ToolRegistry()

    @registry.tool
    def get_weather(city: str, units: Literal["celsius", "fahrenheit"] = "celsius") -> str:
        """Weather for a city.

        Uses the nearest station. This paragraph is not part of the description.
        """
        return city

    tool = registry["get_weather"]
    assert tool.name == "get_weather"
    assert tool.description == "Weather for a city."
    assert tool.parameters == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "units": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    assert get_weather("Oslo") == "Oslo"  # the function is returned unchanged


def test_scalars_collections_and_optional_values() -> None:
    assert schema_for(str) == {"type": "string"}
    assert schema_for(int) == {"type": "integer"}
    assert schema_for(float) == {"type": "number"}
    assert schema_for(bool) == {"type": "boolean"}
    assert schema_for(Any) == {}
    assert schema_for(list[int]) == {"type": "array", "items": {"type": "integer"}}
    assert schema_for(dict[str, float]) == {
        "type": "object",
        "additionalProperties": {"type": "number"},
    }
    assert schema_for(tuple[str, ...]) == {"type": "array", "items": {"type": "string"}}
    assert schema_for(tuple[str, int]) == {
        "type": "array",
        "prefixItems": [{"type": "string"}, {"type": "integer"}],
        "minItems": 2,
        "maxItems": 2,
    }
    assert schema_for(int | None) == {"type": ["integer", "null"]}
    assert schema_for(list[str] | None) == {
        "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]
    }
    assert schema_for(int | str) == {"anyOf": [{"type": "integer"}, {"type": "string"}]}


def test_literals_and_enums_are_enums_of_their_values() -> None:
    assert schema_for(Literal[1, 2, 3]) == {"type": "integer", "enum": [1, 2, 3]}
    assert schema_for(Literal[1, 2.5]) == {"type": "number", "enum": [1, 2.5]}
    assert schema_for(Literal["a", 1]) == {"type": ["integer", "string"], "enum": ["a", 1]}
    assert schema_for(Colour) == {"type": "string", "enum": ["red", "green"]}
    assert schema_for(Literal["x"] | None) == {
        "anyOf": [{"type": "string", "enum": ["x"]}, {"type": "null"}]
    }


def test_dataclasses_and_typed_dicts_are_closed_objects() -> None:
    assert schema_for(Point) == {
        "description": "A point on the map.",
        "type": "object",
        "properties": {
            "x": {"type": "integer"},
            "y": {"type": "number", "description": "metres north"},
        },
        "required": ["x"],
        "additionalProperties": False,
    }
    assert schema_for(Options) == {
        "type": "object",
        "properties": {
            "depth": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["depth"],
        "additionalProperties": False,
    }
    assert schema_for(list[Point])["items"]["required"] == ["x"]


def test_descriptions_come_from_annotated_then_from_the_args_section() -> None:
    registry = ToolRegistry()

    @registry.tool
    def search(
        query: Annotated[str, "What to look for"],
        limit: int = 10,
        fuzzy: bool = False,
    ) -> list[str]:
        """Search the notes.

        Args:
            query: not used, Annotated wins
            limit (int): How many results to return,
                at most.
            fuzzy: Match approximately.

        Returns:
            The matching titles.
        """
        return []

    properties = registry["search"].parameters["properties"]
    assert properties["query"]["description"] == "What to look for"
    assert properties["limit"]["description"] == "How many results to return, at most."
    assert properties["fuzzy"]["description"] == "Match approximately."
    assert registry["search"].description == "Search the notes."


def test_decorator_options_name_and_description() -> None:
    registry = ToolRegistry()

    @registry.tool(name="lookup-v2", description="Look a key up.")
    async def lookup(key: str) -> str:
        return key

    assert [tool.name for tool in registry] == ["lookup-v2"]
    assert registry["lookup-v2"].description == "Look a key up."
    assert "lookup" not in registry
    assert len(registry) == 1


def test_a_function_without_docstring_has_an_empty_description() -> None:
    registry = ToolRegistry()

    @registry.tool
    def ping() -> str:
        return "pong"

    assert registry["ping"].description == ""
    assert registry["ping"].parameters == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    assert "description" not in registry.tools("openai")[0]["function"]


def f_unannotated(city) -> str:  # type: ignore[no-untyped-def]
    return str(city)


def f_args(*cities: str) -> str:
    return ""


def f_kwargs(**options: str) -> str:
    return ""


def f_positional(city: str, /) -> str:
    return city


def f_unsupported(when: Unsupported) -> str:
    return ""


def f_recursive(tree: Tree) -> str:
    return ""


def f_int_keys(table: dict[int, str]) -> str:
    return ""


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (f_unannotated, "has no type annotation"),
        (f_args, r"is \*args"),
        (f_kwargs, r"is \*\*kwargs"),
        (f_positional, "is positional-only"),
        (f_unsupported, "unsupported type"),
        (f_recursive, "refers to itself"),
        (f_int_keys, "keys are strings"),
    ],
)
def test_signatures_that_cannot_be_described_fail_at_definition(fn: Any, message: str) -> None:
    registry = ToolRegistry()
    with pytest.raises(TypeError, match=message):
        registry.tool(fn)
    assert len(registry) == 0


def test_names_are_checked_and_unique() -> None:
    registry = ToolRegistry()
    registry.register("echo", "", {"type": "object"}, lambda: "")
    with pytest.raises(ValueError, match="already registered"):
        registry.register("echo", "", {"type": "object"}, lambda: "")
    for bad in ("", "has space", "a" * 65, "météo", "dot.ted"):
        with pytest.raises(ValueError, match="1 to 64"):
            registry.register(bad, "", {"type": "object"}, lambda: "")


def test_strict_tools_must_have_every_property_required() -> None:
    registry = ToolRegistry()

    def optional_units(city: str, units: str = "c") -> str:
        return city

    with pytest.raises(ValueError, match="every property must be required; units"):
        registry.tool(optional_units, strict=True)

    def place(at: Point) -> str:
        return ""

    with pytest.raises(ValueError, match=r"parameters\.at: every property must be required; y"):
        registry.tool(place, strict=True)

    @registry.tool(strict=True)
    def convert(amount: float, currency: Literal["EUR", "USD"], at: GridPoint) -> str:
        return ""

    assert registry.tools("openai")[0]["function"]["strict"] is True


def test_register_takes_a_private_copy_of_a_hand_written_schema() -> None:
    registry = ToolRegistry()
    schema: dict[str, Any] = {"type": "object", "properties": {"q": {"type": "string"}}}
    registry.register("find", "Find things.", schema, lambda q: q)
    schema["properties"]["q"]["type"] = "integer"
    assert registry["find"].parameters["properties"]["q"] == {"type": "string"}
    with pytest.raises(ValueError, match="object"):
        registry.register("bad", "", {"type": "string"}, lambda: "")


def test_newtype_annotated_unions_and_bare_containers() -> None:
    assert schema_for(UserId) == {"type": "integer"}
    assert schema_for(Annotated[UserId, "the user"]) == {
        "type": "integer",
        "description": "the user",
    }
    assert schema_for(Annotated[str, "kept"] | None) == {
        "type": ["string", "null"],
        "description": "kept",
    }
    assert schema_for(list) == {"type": "array", "items": {}}
    assert schema_for(dict) == {"type": "object", "additionalProperties": {}}
    assert schema_for(None) == {"type": "null"}
    with pytest.raises(TypeError, match="not a JSON value"):
        schema_for(Literal[b"raw"])


def test_defaults_that_are_not_json_are_left_out_of_the_schema() -> None:
    registry = ToolRegistry()
    marker = object()

    @registry.tool
    def paint(colour: Colour = Colour.RED, brush: Any = marker) -> str:
        return ""

    properties = registry["paint"].parameters["properties"]
    assert properties["colour"]["default"] == "red"
    assert "default" not in properties["brush"]
    assert "required" not in registry["paint"].parameters


def test_unresolvable_annotations_fail_at_definition() -> None:
    registry = ToolRegistry()

    def broken(city: NotDefinedAnywhere) -> str:  # type: ignore[name-defined]  # noqa: F821
        return ""

    with pytest.raises(TypeError, match="cannot resolve the annotations"):
        registry.tool(broken)


def test_a_partial_is_described_by_what_it_leaves_open() -> None:
    registry = ToolRegistry()

    def scaled(factor: int, value: float) -> float:
        return factor * value

    registry.tool(functools.partial(scaled, 10), name="times_ten")
    assert registry["times_ten"].parameters["properties"] == {"value": {"type": "number"}}
    (result,) = registry.run_sync(response_with(call("times_ten", {"value": "1.5"})))
    assert result.output == "15.0"


def test_strict_refuses_free_form_objects_at_any_depth() -> None:
    registry = ToolRegistry()

    def tagged(tags: dict[str, str]) -> str:
        return ""

    def listed(points: list[Point]) -> str:
        return ""

    with pytest.raises(ValueError, match=r"parameters\.tags: an object must have"):
        registry.tool(tagged, strict=True)
    with pytest.raises(ValueError, match=r"parameters\.points\.items: every property"):
        registry.tool(listed, strict=True)
    closed = {
        "type": "object",
        "properties": {"a": {"anyOf": [{"type": "object"}]}},
        "required": ["a"],
        "additionalProperties": False,
    }
    with pytest.raises(ValueError, match=r"parameters\.a\[0\]"):
        registry.register("loose", "", closed, lambda a: a, strict=True)
    with pytest.raises(ValueError, match="additionalProperties false"):
        registry.register("open", "", {"type": "object"}, lambda: "", strict=True)


def test_a_handler_must_be_callable() -> None:
    with pytest.raises(TypeError, match="not callable"):
        ToolRegistry().register("x", "", {"type": "object"}, "not a function")  # type: ignore[arg-type]


# --- the tools array ---------------------------------------------------------------------


@pytest.fixture
def weather() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return f"sunny in {city}"

    return registry


PARAMETERS = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}


def test_tools_array_for_each_provider(weather: ToolRegistry) -> None:
    function = {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": PARAMETERS,
    }
    assert weather.tools("openai") == [{"type": "function", "function": function}]
    assert weather.tools("ollama") == [{"type": "function", "function": function}]
    assert weather.tools("openai-responses") == [{"type": "function", **function, "strict": False}]
    assert weather.tools("anthropic") == [
        {"name": "get_weather", "description": "Weather for a city.", "input_schema": PARAMETERS}
    ]
    with pytest.raises(UnknownProviderError, match="no tool wire shapes"):
        weather.tools("gopher")


def test_tools_arrays_are_independent_copies(weather: ToolRegistry) -> None:
    first = weather.tools("anthropic")
    first[0]["input_schema"]["properties"]["city"]["type"] = "integer"
    assert weather.tools("anthropic")[0]["input_schema"] == PARAMETERS


# --- dispatch ----------------------------------------------------------------------------


@dataclass
class Seen:
    calls: list[tuple[str, Any]]


@pytest.fixture
def seen() -> Seen:
    return Seen([])


@pytest.fixture
def registry(seen: Seen) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool
    async def forecast(city: str, days: int = 1, units: Literal["c", "f"] = "c") -> str:
        seen.calls.append(("forecast", (city, days, units)))
        return f"{city}: {days} day(s) in {units}"

    @registry.tool
    def locate(at: Point, options: Options | None = None) -> dict[str, Any]:
        seen.calls.append(("locate", (at, options)))
        return {"x": at.x, "y": at.y, "options": options}

    @registry.tool
    def fail(reason: str) -> str:
        raise ValueError(reason)

    return registry


@pytest.mark.anyio
async def test_arguments_are_converted_to_the_annotated_types(
    registry: ToolRegistry, seen: Seen
) -> None:
    response = response_with(
        call("forecast", {"city": "Oslo", "days": "5"}, "a"),
        call("locate", {"at": {"x": "3", "y": 1}, "options": {"depth": 2.0}}, "b"),
    )
    results = await registry.run(response)
    assert results == [
        ToolResult("a", "forecast", "Oslo: 5 day(s) in c", True),
        ToolResult("b", "locate", '{"x": 3, "y": 1.0, "options": {"depth": 2}}', True),
    ]
    assert ("forecast", ("Oslo", 5, "c")) in seen.calls
    assert ("locate", (Point(3, 1.0), {"depth": 2})) in seen.calls


@pytest.mark.anyio
async def test_a_value_that_cannot_be_converted_names_the_argument(
    registry: ToolRegistry, seen: Seen
) -> None:
    response = response_with(
        call("forecast", {"city": "Oslo", "days": "5.5", "units": "kelvin"}, "a"),
        call("locate", {"at": {"x": "three"}}, "b"),
    )
    first, second = await registry.run(response)
    assert not first.ok
    assert "invalid argument 'days': wrong type: expected int" in first.output
    assert 'invalid argument \'units\': wrong type: expected one of "c", "f"' in first.output
    assert not second.ok
    assert "invalid argument 'at.x': wrong type: expected int, got str 'three'" in second.output
    assert seen.calls == []


@pytest.mark.anyio
async def test_missing_and_unexpected_arguments_fail(registry: ToolRegistry, seen: Seen) -> None:
    response = response_with(call("forecast", {"town": "Oslo"}))
    (result,) = await registry.run(response)
    assert not result.ok
    assert "unexpected argument 'town'" in result.output
    assert "missing required argument 'city'" in result.output
    assert "forecast takes: city, days, units" in result.output
    assert seen.calls == []


@pytest.mark.anyio
async def test_null_for_an_optional_parameter_means_its_default(
    registry: ToolRegistry, seen: Seen
) -> None:
    response = response_with(call("forecast", {"city": "Oslo", "days": None}))
    (result,) = await registry.run(response)
    assert result.ok
    assert seen.calls == [("forecast", ("Oslo", 1, "c"))]


@pytest.mark.anyio
async def test_an_unknown_tool_is_named_and_never_guessed(
    registry: ToolRegistry, seen: Seen
) -> None:
    (result,) = await registry.run(response_with(call("forcast", {"city": "Oslo"}, "x")))
    assert result == ToolResult(
        "x", "forcast", "unknown tool 'forcast' (the tools are: forecast, locate, fail)", False
    )
    assert seen.calls == []


@pytest.mark.anyio
async def test_an_invalid_tool_use_tells_the_model_its_arguments_were_not_json(
    registry: ToolRegistry, seen: Seen
) -> None:
    bad = InvalidToolUse("c9", "forecast", '{"city": "Os', "arguments are not valid JSON: x")
    (result,) = await registry.run(response_with(bad))
    assert result.call_id == "c9"
    assert result.name == "forecast"
    assert not result.ok
    assert "not a valid JSON object" in result.output
    assert "arguments are not valid JSON" in result.output
    assert seen.calls == []


@pytest.mark.anyio
async def test_a_handler_exception_is_a_failed_result_and_the_others_still_run(
    registry: ToolRegistry, seen: Seen, caplog: pytest.LogCaptureFixture
) -> None:
    response = response_with(
        call("fail", {"reason": "station offline"}, "a"),
        call("forecast", {"city": "Oslo"}, "b"),
    )
    failed, ok = await registry.run(response)
    assert failed == ToolResult(
        "a", "fail", "the call to 'fail' failed: ValueError: station offline", False
    )
    assert ok.ok
    assert any(r.exc_info for r in caplog.records if "raised" in r.getMessage())


class Interrupt(BaseException):
    pass


@pytest.mark.anyio
async def test_base_exceptions_are_not_swallowed() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def stop() -> str:
        raise Interrupt

    caught = []
    try:
        await registry.run(response_with(call("stop", {})))
    except* Interrupt as group:
        caught.append(group)
    assert caught


@pytest.mark.anyio
async def test_cancellation_from_outside_propagates() -> None:
    registry = ToolRegistry()
    started = anyio.Event()

    @registry.tool
    async def wait() -> str:
        started.set()
        await anyio.sleep_forever()
        return ""

    async with anyio.create_task_group() as group:
        with anyio.CancelScope() as scope:
            group.start_soon(_cancel_when, started, scope)
            await registry.run(response_with(call("wait", {})))
            pytest.fail("run() returned although it was cancelled")
    assert scope.cancelled_caught


async def _cancel_when(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


@pytest.mark.anyio
async def test_calls_run_concurrently() -> None:
    # Each handler waits for the other to start: only concurrent calls can finish.
    registry = ToolRegistry()
    started = {"a": anyio.Event(), "b": anyio.Event()}

    @registry.tool
    async def meet(me: str, other: str) -> str:
        started[me].set()
        await started[other].wait()
        return me

    response = response_with(
        call("meet", {"me": "a", "other": "b"}, "1"), call("meet", {"me": "b", "other": "a"}, "2")
    )
    with anyio.fail_after(5):
        results = await registry.run(response)
    assert [r.output for r in results] == ["a", "b"]


@pytest.mark.anyio
async def test_results_keep_call_order_whatever_finishes_first() -> None:
    registry = ToolRegistry()
    second_done = anyio.Event()
    finished: list[str] = []

    @registry.tool
    async def first() -> str:
        await second_done.wait()
        finished.append("first")
        return "1"

    @registry.tool
    async def second() -> str:
        finished.append("second")
        second_done.set()
        return "2"

    response = response_with(call("first", {}, "a"), call("second", {}, "b"))
    with anyio.fail_after(5):
        results = await registry.run(response)
    assert finished == ["second", "first"]
    assert [(r.call_id, r.output) for r in results] == [("a", "1"), ("b", "2")]


@pytest.mark.anyio
async def test_sync_handlers_run_in_worker_threads_concurrently() -> None:
    registry = ToolRegistry()
    barrier = threading.Barrier(2, timeout=5)
    threads: list[int] = []

    @registry.tool
    def blocking(n: int) -> int:
        threads.append(threading.get_ident())
        barrier.wait()  # both calls must be inside at once
        return n * 2

    response = response_with(call("blocking", {"n": 1}, "a"), call("blocking", {"n": "2"}, "b"))
    results = await registry.run(response)
    assert [r.output for r in results] == ["2", "4"]
    assert threading.get_ident() not in threads
    assert len(set(threads)) == 2


@pytest.mark.anyio
async def test_a_call_that_exceeds_its_timeout_fails() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def hang() -> str:
        await anyio.sleep_forever()
        return ""

    @registry.tool
    async def quick() -> str:
        return "ok"

    response = response_with(call("hang", {}, "a"), call("quick", {}, "b"))
    with anyio.fail_after(5):
        hung, quick_result = await registry.run(response, timeout=0.01)
    assert hung == ToolResult("a", "hang", "the call to 'hang' timed out after 0.01 s", False)
    assert quick_result.ok


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()  # let an abandoned worker thread finish


@pytest.mark.anyio
async def test_a_sync_handler_that_exceeds_its_timeout_is_abandoned(
    release: threading.Event,
) -> None:
    registry = ToolRegistry()

    @registry.tool
    def block() -> str:
        release.wait(10)
        return "late"

    with anyio.fail_after(5):
        (result,) = await registry.run(response_with(call("block", {})), timeout=0.01)
    assert not result.ok
    assert "timed out" in result.output


@pytest.mark.anyio
async def test_a_handler_timeout_error_is_not_mistaken_for_ours() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def upstream() -> str:
        raise TimeoutError("upstream took too long")

    (result,) = await registry.run(response_with(call("upstream", {})), timeout=5)
    assert result.output == "the call to 'upstream' failed: TimeoutError: upstream took too long"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("value", "output"),
    [
        ("plain text", "plain text"),
        ({"temp": 21.5, "city": "Zürich"}, '{"temp": 21.5, "city": "Zürich"}'),
        ([1, 2], "[1, 2]"),
        (3, "3"),
        (None, "null"),
        (Reading("Oslo", -3.5, Colour.RED), '{"city": "Oslo", "celsius": -3.5, "colour": "red"}'),
        (Colour.GREEN, '"green"'),
    ],
)
async def test_return_values_are_serialized(value: Any, output: str) -> None:
    registry = ToolRegistry()
    registry.register("give", "", {"type": "object"}, lambda: value)
    (result,) = await registry.run(response_with(call("give", {})))
    assert result == ToolResult("call_1", "give", output, True)


@pytest.mark.anyio
@pytest.mark.parametrize("value", [object(), {1, 2}, float("nan"), b"bytes"])
async def test_a_return_value_that_is_not_json_fails(value: Any) -> None:
    registry = ToolRegistry()
    registry.register("give", "", {"type": "object"}, lambda: value)
    (result,) = await registry.run(response_with(call("give", {})))
    assert not result.ok
    assert result.output.startswith("the call to 'give' returned a value that is not JSON")


@pytest.mark.anyio
async def test_hand_written_tools_get_keyword_arguments_unconverted() -> None:
    registry = ToolRegistry()
    received: list[Any] = []

    def handler(count: Any, label: str = "") -> str:
        received.append((count, label))
        return "done"

    schema = {"type": "object", "properties": {"count": {"type": "integer"}}}
    registry.register("count", "Count.", schema, handler)
    ok, bad = await registry.run(
        response_with(
            call("count", {"count": "5"}, "a"), call("count", {"count": 1, "amount": 5}, "b")
        )
    )
    assert ok.ok
    assert received == [("5", "")]
    assert not bad.ok
    assert "the arguments do not fit" in bad.output
    assert "amount" in bad.output


@pytest.mark.anyio
async def test_a_handler_without_a_signature_gets_the_arguments_as_sent() -> None:
    registry = ToolRegistry()
    registry.register("merge", "", {"type": "object"}, dict)
    (result,) = await registry.run(response_with(call("merge", {"a": 1, "b": [2]})))
    assert result == ToolResult("call_1", "merge", '{"a": 1, "b": [2]}', True)


@pytest.mark.anyio
async def test_arguments_that_are_not_an_object_fail() -> None:
    registry = ToolRegistry()
    registry.register("echo", "", {"type": "object"}, lambda **kw: kw)
    (result,) = await registry.run(response_with(ToolUse("c1", "echo", FlexValue([1, 2]))))
    assert not result.ok
    assert "not a JSON object (got list)" in result.output


@pytest.mark.anyio
async def test_handlers_cannot_change_the_response_arguments() -> None:
    registry = ToolRegistry()

    @registry.tool
    def grab(items: Any) -> str:
        items.append("added by the handler")
        return "ok"

    arguments = {"items": [1]}
    await registry.run(response_with(ToolUse("c1", "grab", FlexValue(arguments))))
    assert arguments == {"items": [1]}


class AsyncCallable:
    async def __call__(self, word: str) -> str:
        await anyio.lowlevel.checkpoint()
        return word.upper()


class SyncCallable:
    def __call__(self, word: str) -> str:
        return word.lower()


@pytest.mark.anyio
async def test_callable_objects_are_handlers() -> None:
    registry = ToolRegistry()
    registry.tool(name="shout")(AsyncCallable())
    registry.tool(name="whisper")(SyncCallable())
    assert registry["shout"].parameters["required"] == ["word"]
    results = await registry.run(
        response_with(call("shout", {"word": "Hi"}, "a"), call("whisper", {"word": "Hi"}, "b"))
    )
    assert [r.output for r in results] == ["HI", "hi"]


@pytest.mark.anyio
async def test_a_response_without_calls_gives_no_results(registry: ToolRegistry) -> None:
    assert await registry.run(response_with(Text("just text"))) == []


def test_run_sync_needs_no_event_loop(registry: ToolRegistry, seen: Seen) -> None:
    response = response_with(
        call("forecast", {"city": "Oslo", "days": 2}, "a"),
        call("locate", {"at": {"x": 1}}, "b"),
    )
    results = registry.run_sync(response, timeout=5)
    assert [r.ok for r in results] == [True, True]
    assert results[0].output == "Oslo: 2 day(s) in c"


@pytest.mark.anyio
async def test_run_sync_refuses_to_run_inside_an_event_loop(registry: ToolRegistry) -> None:
    with pytest.raises(RuntimeError, match="inside a running event loop"):
        registry.run_sync(response_with(call("forecast", {"city": "Oslo"})))
