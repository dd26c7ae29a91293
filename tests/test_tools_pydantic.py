"""Tools whose parameters are pydantic models, dates, times and UUIDs: the schema each gets,
its conversion at dispatch, each failure, and laminate without pydantic."""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypedDict

import pytest
from pydantic import BaseModel, ConfigDict, Field, field_validator

from laminate._core.coerce import coerce
from laminate._core.errors import ExtractError
from laminate._core.flex import FlexValue
from laminate._core.response import NormalizedResponse, StopReason, ToolUse, Usage
from laminate._tools.registry import ToolRegistry, ToolResult
from laminate._tools.schema import schema_for, strict_schema

from .support import ROOT

PROVIDERS = ("openai", "openai-responses", "anthropic", "ollama", "gemini", "bedrock", "cohere")

# --- models and helpers ------------------------------------------------------------------


class Window(BaseModel):
    """A span of days."""

    start: datetime.date
    days: int = Field(default=1, ge=1, description="how many days")


class Query(BaseModel):
    """What to search for."""

    text: str
    window: Window = Field(description="when")
    tags: list[Window] = []
    since: datetime.datetime | None = None

    @field_validator("text")
    @classmethod
    def not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value


class Closed(BaseModel):
    """Every field required, extra keys ignored (pydantic's default)."""

    city: str
    at: datetime.datetime


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")

    city: str


class Forbidding(BaseModel):
    model_config = ConfigDict(extra="forbid")

    city: str


class Node(BaseModel):
    label: str
    children: list[Node] = []


class LookAlike:
    """Has the methods of a model without being one."""

    @classmethod
    def model_validate(cls, value: Any) -> LookAlike:
        return cls()

    @classmethod
    def model_json_schema(cls) -> dict[str, Any]:
        return {"type": "object"}


@dataclass
class Visit:
    """A planned visit."""

    place: str
    on: datetime.date
    window: Window | None = None


class Slot(TypedDict):
    starts: datetime.time
    room: uuid.UUID


ROOM_7 = uuid.UUID(int=7)
FIRST_OF_MARCH = Window(start=datetime.date(2025, 3, 1))


def response_with(*calls: ToolUse) -> NormalizedResponse:
    return NormalizedResponse("r", "m", "openai", list(calls), StopReason.TOOL_USE, Usage())


def run(registry: ToolRegistry, name: str, arguments: dict[str, Any]) -> ToolResult:
    (result,) = registry.run_sync(response_with(ToolUse("call_1", name, FlexValue(arguments))))
    return result


def walk(node: Any) -> Iterator[Any]:
    yield node
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    for child in children:
        yield from walk(child)


def inlined(model: type[BaseModel]) -> dict[str, Any]:
    """The model's schema with its references resolved by hand (the expected shape)."""
    generated = model.model_json_schema()
    definitions = generated.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, list):
            return [resolve(item) for item in node]
        if not isinstance(node, dict):
            return node
        base = resolve(definitions[node["$ref"].split("/")[-1]]) if "$ref" in node else {}
        return {**base, **{k: resolve(v) for k, v in node.items() if k != "$ref"}}

    result = resolve(generated)
    assert isinstance(result, dict)
    return result


# --- schemas: dates, times, UUIDs --------------------------------------------------------


@pytest.mark.parametrize(
    ("tp", "expected"),
    [
        (datetime.datetime, {"type": "string", "format": "date-time"}),
        (datetime.date, {"type": "string", "format": "date"}),
        (datetime.time, {"type": "string", "format": "time"}),
        (uuid.UUID, {"type": "string", "format": "uuid"}),
        (datetime.date | None, {"type": ["string", "null"], "format": "date"}),
        (
            Annotated[datetime.datetime, "when it starts"],
            {"type": "string", "format": "date-time", "description": "when it starts"},
        ),
        (
            list[datetime.date],
            {"type": "array", "items": {"type": "string", "format": "date"}},
        ),
        (
            datetime.date | int,
            {"anyOf": [{"type": "string", "format": "date"}, {"type": "integer"}]},
        ),
        (
            Slot,
            {
                "type": "object",
                "properties": {
                    "starts": {"type": "string", "format": "time"},
                    "room": {"type": "string", "format": "uuid"},
                },
                "required": ["starts", "room"],
                "additionalProperties": False,
            },
        ),
    ],
)
def test_schema_of_dates_times_and_uuids(tp: Any, expected: dict[str, Any]) -> None:
    assert schema_for(tp) == expected


def test_dates_in_a_signature_with_defaults_and_descriptions() -> None:
    registry = ToolRegistry()

    @registry.tool
    def book(
        on: Annotated[datetime.date, "the day"],
        at: datetime.time = datetime.time(9, 30),
        until: datetime.datetime | None = None,
        room: uuid.UUID = ROOM_7,
    ) -> str:
        """Book a room."""
        return "booked"

    assert registry["book"].parameters == {
        "type": "object",
        "properties": {
            "on": {"type": "string", "format": "date", "description": "the day"},
            "at": {"type": "string", "format": "time", "default": "09:30:00"},
            "until": {"type": ["string", "null"], "format": "date-time", "default": None},
            "room": {"type": "string", "format": "uuid", "default": str(uuid.UUID(int=7))},
        },
        "required": ["on"],
        "additionalProperties": False,
    }


def test_dates_inside_a_dataclass() -> None:
    schema = schema_for(Visit)
    assert schema["properties"]["on"] == {"type": "string", "format": "date"}
    window = schema["properties"]["window"]
    assert window == {"anyOf": [inlined(Window), {"type": "null"}]}


# --- schemas: pydantic models ------------------------------------------------------------


def test_a_model_is_its_own_schema_with_references_inlined() -> None:
    schema = schema_for(Query)
    assert schema == inlined(Query)
    assert not any(isinstance(n, dict) and ("$ref" in n or "$defs" in n) for n in walk(schema))
    # The field's own description wins over the definition's; the definition's is kept
    # where the model is used without one.
    assert schema["properties"]["window"]["description"] == "when"
    assert schema["properties"]["tags"]["items"]["description"] == "A span of days."
    assert schema["properties"]["window"]["properties"]["start"]["format"] == "date"
    assert schema["properties"]["since"]["anyOf"][0] == {"format": "date-time", "type": "string"}


def test_each_inlined_definition_is_a_separate_object() -> None:
    schema = schema_for(Query)
    schema["properties"]["window"]["properties"]["start"]["format"] = "changed"
    assert schema["properties"]["tags"]["items"]["properties"]["start"]["format"] == "date"
    assert schema_for(Query) == inlined(Query)


def test_a_model_in_a_list_and_optional() -> None:
    model = inlined(Window)
    assert schema_for(list[Window]) == {"type": "array", "items": model}
    assert schema_for(Window | None) == {"anyOf": [model, {"type": "null"}]}
    described = schema_for(Annotated[Window | None, "the span"])
    assert described == {"anyOf": [model, {"type": "null"}], "description": "the span"}
    assert schema_for(Annotated[Window, "the span"])["description"] == "the span"


def test_a_model_parameter_with_a_default_shows_it_as_json() -> None:
    registry = ToolRegistry()

    @registry.tool
    def plan(window: Window = FIRST_OF_MARCH) -> str:
        """Plan."""
        return "planned"

    prop = registry["plan"].parameters["properties"]["window"]
    assert prop["default"] == {"start": "2025-03-01", "days": 1}
    assert registry["plan"].parameters.get("required") is None


def test_a_model_keeps_its_own_additional_properties() -> None:
    assert "additionalProperties" not in schema_for(Closed)
    assert schema_for(Open)["additionalProperties"] is True
    assert schema_for(Forbidding)["additionalProperties"] is False


def test_a_recursive_model_is_refused_when_the_tool_is_defined() -> None:
    registry = ToolRegistry()
    with pytest.raises(TypeError, match=r"parameter 'tree'.*Node refers to itself"):

        @registry.tool
        def count(tree: Node) -> int:
            """Count."""
            return 0


def test_every_provider_carries_the_model_schema() -> None:
    registry = ToolRegistry()

    @registry.tool
    def search(query: Query, windows: list[Window] | None = None) -> str:
        """Search."""
        return "found"

    parameters = registry["search"].parameters
    assert parameters["properties"]["query"] == inlined(Query)
    for provider in PROVIDERS:
        tools = registry.tools(provider)
        text = json.dumps(tools)
        assert "$ref" not in text, provider
        assert "$defs" not in text, provider
        assert any(node == parameters for node in walk(tools)), provider


# --- strict mode -------------------------------------------------------------------------


def test_strict_closes_the_objects_a_model_leaves_open() -> None:
    registry = ToolRegistry()

    @registry.tool(strict=True)
    def weather(where: Closed, kind: Literal["rain", "sun"]) -> str:
        """Weather."""
        return "sun"

    schema = registry["weather"].parameters
    assert schema["properties"]["where"]["additionalProperties"] is False
    assert registry.tools("openai")[0]["function"]["strict"] is True
    assert registry.tools("openai")[0]["function"]["parameters"] == schema

    loose = ToolRegistry()
    loose.tool(weather)
    assert "additionalProperties" not in loose["weather"].parameters["properties"]["where"]


@pytest.mark.parametrize(
    ("model", "problem"),
    [(Window, "every property must be required; days"), (Open, "additionalProperties false")],
)
def test_strict_refuses_what_strict_mode_cannot_take(model: type, problem: str) -> None:
    def tool(value: Any) -> str:
        return ""

    tool.__annotations__ = {"value": model, "return": str}
    with pytest.raises(ValueError, match=problem):
        ToolRegistry().tool(tool, strict=True)


def test_strict_schema_keeps_what_an_object_says_and_copies() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "default": {"type": "object", "properties": {}},
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
        },
        "default": {"properties": {}},
    }
    closed = strict_schema(schema)
    assert closed["additionalProperties"] is False
    assert closed["properties"]["default"]["additionalProperties"] is False
    assert closed["properties"]["counts"]["additionalProperties"] == {"type": "integer"}
    assert closed["default"] == {"properties": {}}  # data, not a schema
    assert "additionalProperties" not in schema  # the input is not changed


# --- dispatch ----------------------------------------------------------------------------


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool
    def search(query: Query, extra: list[Window] | None = None) -> dict[str, Any]:
        """Search."""
        assert isinstance(query, Query)
        return {
            "window": [query.window.start.isoformat(), query.window.days],
            "tags": len(query.tags),
            "since": query.since.isoformat() if query.since else None,
            "extra": [type(w).__name__ for w in extra] if extra is not None else None,
        }

    @registry.tool
    def book(
        on: datetime.date,
        at: datetime.time,
        until: datetime.datetime | None = None,
        room: uuid.UUID | None = None,
    ) -> list[str]:
        """Book a room."""
        return [repr(on), repr(at), repr(until), repr(room)]

    @registry.tool
    def visit(plan: Visit, slots: list[Slot]) -> list[str]:
        """Plan visits."""
        return [repr(plan), *(repr(slot) for slot in slots)]

    @registry.tool
    def echo(window: Window) -> Window:
        """Echo a window."""
        return window

    return registry


def test_dispatch_builds_and_validates_the_model(registry: ToolRegistry) -> None:
    arguments = {
        "query": {
            "text": "rain",
            "window": {"start": "2025-03-01", "days": "3"},  # pydantic's own coercion
            "since": "2025-02-01T08:00:00Z",
        },
        "extra": [{"start": "2025-04-01"}],
    }
    result = run(registry, "search", arguments)
    assert result.ok, result.output
    assert json.loads(result.output) == {
        "window": ["2025-03-01", 3],
        "tags": 0,
        "since": "2025-02-01T08:00:00+00:00",
        "extra": ["Window"],
    }


def test_an_optional_model_takes_null_as_its_default(registry: ToolRegistry) -> None:
    query = {"text": "x", "window": {"start": "2025-03-01"}}
    result = run(registry, "search", {"query": query, "extra": None})
    assert result.ok
    assert json.loads(result.output)["extra"] is None


def test_a_returned_model_is_its_json(registry: ToolRegistry) -> None:
    result = run(registry, "echo", {"window": {"start": "2025-03-01", "days": 2}})
    assert result == ToolResult("call_1", "echo", '{"start": "2025-03-01", "days": 2}', True)


def test_dispatch_converts_dates_times_and_uuids(registry: ToolRegistry) -> None:
    room = "12345678-1234-5678-1234-567812345678"
    arguments = {"on": "2025-03-01", "at": "09:30", "until": "2025-03-01", "room": room}
    result = run(registry, "book", arguments)
    assert result.ok, result.output
    assert json.loads(result.output) == [
        repr(datetime.date(2025, 3, 1)),
        repr(datetime.time(9, 30)),
        repr(datetime.datetime(2025, 3, 1)),  # a bare date for a date and time: midnight
        repr(uuid.UUID(room)),
    ]


def test_dispatch_converts_dates_inside_dataclasses_and_typeddicts(registry: ToolRegistry) -> None:
    arguments = {
        "plan": {"place": "Lyon", "on": "2025-03-01", "window": {"start": "2025-03-01"}},
        "slots": [{"starts": "10:00:00", "room": str(uuid.UUID(int=1))}],
    }
    result = run(registry, "visit", arguments)
    assert result.ok, result.output
    plan = Visit("Lyon", datetime.date(2025, 3, 1), Window(start=datetime.date(2025, 3, 1)))
    slot = Slot(starts=datetime.time(10), room=uuid.UUID(int=1))
    assert json.loads(result.output) == [repr(plan), repr(slot)]


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        (  # one error: at the field, with pydantic's reason
            "search",
            {"query": {"text": "x", "window": {"start": "2025-02-30"}}},
            "invalid argument 'query.window.start': invalid: Input should be a valid date",
        ),
        (
            "search",
            {"query": {"text": "x"}},
            "invalid argument 'query.window': missing",
        ),
        (  # a validator's own message
            "search",
            {"query": {"text": " ", "window": {"start": "2025-03-01"}}},
            "invalid argument 'query.text': invalid: Value error, must not be blank",
        ),
        (  # a constraint of the model (days >= 1)
            "echo",
            {"window": {"start": "2025-03-01", "days": 0}},
            "invalid argument 'window.days': invalid: Input should be greater than or equal to 1",
        ),
        (  # several errors: at the model, each field named
            "search",
            {"query": {"text": 5, "window": {"start": "soon", "days": "x"}}},
            "invalid argument 'query': invalid: Query: text: Input should be a valid string; "
            "window.start: Input should be a valid date",
        ),
        (  # a model in a list
            "search",
            {"query": {"text": "x", "window": {"start": "2025-03-01"}}, "extra": [{"days": 2}]},
            "invalid argument 'extra[0].start': missing",
        ),
        (
            "echo",
            {"window": "2025-03-01"},
            "invalid argument 'window': invalid: Input should be a valid dictionary",
        ),
        (
            "book",
            {"on": "tomorrow", "at": "09:30"},
            "invalid argument 'on': wrong type: expected date, got str 'tomorrow' "
            "(not an ISO 8601 date)",
        ),
        (
            "book",
            {"on": "2025-03-01", "at": "half past nine"},
            "invalid argument 'at': wrong type: expected time, got str 'half past nine'",
        ),
        (
            "book",
            {"on": "2025-03-01", "at": "09:30", "until": "soon"},
            "invalid argument 'until': wrong type: expected datetime | None, got str 'soon'",
        ),
        (
            "book",
            {"on": "2025-03-01", "at": "09:30", "room": "room 7"},
            "invalid argument 'room': wrong type: expected UUID | None, got str 'room 7'",
        ),
        (
            "book",
            {"on": 20250301, "at": "09:30"},
            "invalid argument 'on': wrong type: expected date, got int 20250301",
        ),
        (
            "visit",
            {"plan": {"place": "Lyon", "on": "2025-13-01"}, "slots": []},
            "invalid argument 'plan.on': wrong type: expected date, got str '2025-13-01'",
        ),
        (
            "visit",
            {"plan": {"place": "Lyon", "on": "2025-03-01"}, "slots": [{"starts": "9h"}]},
            "invalid argument 'slots[0].starts': wrong type: expected time, got str '9h'",
        ),
    ],
)
def test_dispatch_failures_name_the_field_and_why(
    registry: ToolRegistry, name: str, arguments: dict[str, Any], message: str
) -> None:
    result = run(registry, name, arguments)
    assert not result.ok
    assert result.output.startswith(f"the call to {name!r} was not run: ")
    assert message in result.output


def test_the_handler_does_not_run_when_a_model_is_invalid() -> None:
    calls: list[Window] = []

    def keep(window: Window) -> str:
        calls.append(window)
        return "kept"

    registry = ToolRegistry()
    registry.tool(keep)
    assert not run(registry, "keep", {"window": {"start": "x"}}).ok
    assert calls == []


# --- the conversion engine itself --------------------------------------------------------


def test_coerce_records_a_date_widened_to_a_date_and_time() -> None:
    value, changes = coerce("2025-03-01", datetime.datetime, path="at")
    assert value == datetime.datetime(2025, 3, 1)
    assert [str(c) for c in changes] == ['at: "2025-03-01" -> datetime.datetime(2025, 3, 1, 0, 0)']
    assert coerce("2025-03-01T10:00:00+02:00", datetime.datetime, strict=True)[1] == []
    with pytest.raises(ExtractError, match="a date without a time"):
        coerce("2025-03-01", datetime.datetime, strict=True)


def test_flexvalue_extracts_dates_and_models() -> None:
    flex = FlexValue({"window": {"start": "2025-03-01", "days": 2}, "on": "2025-03-02"})
    assert flex.extract("on", type=datetime.date) == datetime.date(2025, 3, 2)
    assert flex.extract("window", type=Window) == Window(start=datetime.date(2025, 3, 1), days=2)
    with pytest.raises(ExtractError) as info:
        FlexValue({"window": {"days": 2}}).extract("window", type=Window)
    assert (info.value.path, info.value.reason) == ("window.start", "missing")


def test_coerce_keeps_values_that_are_already_converted() -> None:
    window = Window(start=datetime.date(2025, 3, 1))
    assert coerce(window, Window)[0] is window
    day = datetime.date(2025, 3, 1)
    assert coerce(day, datetime.date)[0] is day
    with pytest.raises(ExtractError):  # a date and time is not a date: that would lose the time
        coerce(datetime.datetime(2025, 3, 1, 10), datetime.date)


# --- without pydantic --------------------------------------------------------------------


def test_a_class_that_only_looks_like_a_model_is_not_one() -> None:
    with pytest.raises(TypeError, match="unsupported type"):
        schema_for(LookAlike)
    with pytest.raises(TypeError, match="unsupported type"):
        coerce({}, LookAlike)


def test_without_pydantic_loaded_nothing_is_taken_for_a_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # What an import of pydantic gives when it is not installed.
    monkeypatch.setitem(sys.modules, "pydantic", None)
    with pytest.raises(TypeError, match="unsupported type"):
        schema_for(LookAlike)
    with pytest.raises(TypeError, match="unsupported type"):
        schema_for(Window)
    assert schema_for(datetime.date) == {"type": "string", "format": "date"}


_WITHOUT_PYDANTIC = """
import sys
sys.modules["pydantic"] = None  # any import of pydantic now fails

import datetime
import laminate

registry = laminate.ToolRegistry()

@registry.tool
def days_until(day: datetime.date) -> int:
    '''Days until a date.'''
    return (day - datetime.date(2025, 3, 1)).days

call = laminate.ToolUse("c1", "days_until", laminate.FlexValue({"day": "2025-03-04"}))
response = laminate.NormalizedResponse(
    "r", "m", "openai", [call], laminate.StopReason.TOOL_USE, laminate.Usage()
)
print(registry.run_sync(response)[0].output)
"""


def test_laminate_imports_and_runs_tools_without_pydantic() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_PYDANTIC],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "3"


def test_importing_laminate_does_not_import_pydantic() -> None:
    code = "import sys, laminate; print('pydantic' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
