"""The strict application envelope: parse_envelope, to_envelopes and the CallLedger."""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import laminate
from laminate._core.errors import EnvelopeError
from laminate._core.flex import FlexValue
from laminate._core.response import (
    InvalidToolUse,
    NormalizedResponse,
    StopReason,
    Text,
    ToolUse,
    Usage,
)
from laminate._tools.envelope import (
    CallLedger,
    FinalAnswer,
    ToolCallRequest,
    parse_envelope,
    to_envelopes,
)

from .support import FIXTURES

CALL: dict[str, Any] = {
    "kind": "call",
    "id": "call_1",
    "name": "get_weather",
    "arguments": {"city": "Oslo", "days": 2, "filters": [{"max": 1.5, "ok": True}, None]},
}


def rejected(obj: object) -> EnvelopeError:
    with pytest.raises(EnvelopeError) as info:
        parse_envelope(obj)
    error = info.value
    assert str(error).startswith(error.path or "<envelope>")
    return error


# --- the two kinds -----------------------------------------------------------------------


def test_a_final_answer_is_accepted() -> None:
    parsed = parse_envelope({"kind": "final", "text": "It is sunny."})
    assert parsed == FinalAnswer("It is sunny.")
    assert parsed.to_dict() == {"kind": "final", "text": "It is sunny."}
    assert parse_envelope({"kind": "final", "text": ""}) == FinalAnswer("")


def test_a_call_is_accepted() -> None:
    parsed = parse_envelope(CALL)
    assert isinstance(parsed, ToolCallRequest)
    assert (parsed.id, parsed.name) == ("call_1", "get_weather")
    assert parsed.arguments == CALL["arguments"]
    assert parsed.to_dict() == CALL


def test_the_kinds_are_usable_with_match() -> None:
    match parse_envelope(CALL):
        case ToolCallRequest(name=name, arguments={"city": city}):
            assert (name, city) == ("get_weather", "Oslo")
        case _:
            pytest.fail("not matched as a call")


# --- keys --------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["id", "name", "arguments", "kind"])
def test_a_missing_key_is_named(key: str) -> None:
    obj = {k: v for k, v in CALL.items() if k != key}
    error = rejected(obj)
    assert (error.path, error.reason) == (key, "missing")


def test_a_final_without_text_is_rejected() -> None:
    error = rejected({"kind": "final"})
    assert (error.path, error.reason) == ("text", "missing")


@pytest.mark.parametrize(
    ("obj", "extra"),
    [
        ({"kind": "final", "text": "hi", "id": "x"}, "id"),
        ({**CALL, "extra": 1}, "extra"),
        ({**CALL, "text": "also an answer"}, "text"),
    ],
)
def test_an_extra_key_is_rejected(obj: dict[str, Any], extra: str) -> None:
    error = rejected(obj)
    assert error.path == extra
    assert error.reason.startswith(f"unexpected key {extra!r}")
    assert "has exactly" in error.reason


def test_a_non_string_extra_key_is_rejected_at_the_envelope() -> None:
    error = rejected({"kind": "final", "text": "hi", 7: "x"})
    assert error.path == ""
    assert error.reason.startswith("unexpected key 7")


@pytest.mark.parametrize("kind", ["answer", "FINAL", "", "call "])
def test_an_unknown_kind_is_rejected(kind: str) -> None:
    error = rejected({"kind": kind, "text": "hi"})
    assert error.path == "kind"
    assert error.reason.startswith("unknown kind")


@pytest.mark.parametrize("obj", [None, [], "{}", ("kind", "final"), 3])
def test_an_envelope_must_be_a_dict(obj: object) -> None:
    error = rejected(obj)
    assert error.path == ""
    assert error.reason.startswith("wrong type: expected an object")


def test_a_mapping_that_is_not_a_plain_dict_is_rejected() -> None:
    error = rejected(OrderedDict(kind="final", text="hi"))
    assert error.reason == "wrong type: expected an object (dict), got OrderedDict"


# --- types -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "got"),
    [
        ("kind", 1, "int"),
        ("id", 7, "int"),
        ("id", True, "bool"),
        ("name", None, "null"),
        ("name", ["get_weather"], "list"),
    ],
)
def test_wrong_types_are_rejected(key: str, value: Any, got: str) -> None:
    error = rejected({**CALL, key: value})
    assert error.path == key
    assert error.reason == f"wrong type: expected str, got {got}"


def test_final_text_must_be_a_string() -> None:
    error = rejected({"kind": "final", "text": 42})
    assert (error.path, error.reason) == ("text", "wrong type: expected str, got int")
    error = rejected({"kind": "final", "text": False})
    assert error.reason == "wrong type: expected str, got bool"


def test_a_string_that_looks_like_json_is_not_an_arguments_object() -> None:
    error = rejected({**CALL, "arguments": '{"city": "Oslo"}'})
    assert error.path == "arguments"
    assert error.reason.startswith("wrong type: expected an object, got str")
    assert "JSON text is not an arguments object" in error.reason


@pytest.mark.parametrize("arguments", [None, [], [["city", "Oslo"]], 1])
def test_arguments_must_be_an_object(arguments: Any) -> None:
    error = rejected({**CALL, "arguments": arguments})
    assert error.path == "arguments"
    assert error.reason.startswith("wrong type: expected an object")


@pytest.mark.parametrize(
    ("arguments", "path", "reason"),
    [
        ({"when": (1, 2)}, "arguments.when", "not JSON: tuple is not a JSON value"),
        ({"tags": {"a", "b"}}, "arguments.tags", "not JSON: set is not a JSON value"),
        ({"blob": b"\x00"}, "arguments.blob", "not JSON: bytes is not a JSON value"),
        ({"x": float("nan")}, "arguments.x", "not JSON: nan is not a finite number"),
        ({"x": [1, float("inf")]}, "arguments.x[1]", "not JSON: inf is not a finite number"),
        ({"a": {1: "one"}}, "arguments.a", "not JSON: an object key must be str, got int"),
        ({"a": [{"b": OrderedDict()}]}, "arguments.a[0].b", "not JSON: OrderedDict is not"),
        ({"a.b": {"": object()}}, 'arguments["a.b"][""]', "not JSON: object is not"),
    ],
)
def test_arguments_hold_only_json_values_at_every_depth(
    arguments: dict[Any, Any], path: str, reason: str
) -> None:
    error = rejected({**CALL, "arguments": arguments})
    assert error.path == path
    assert error.reason.startswith(reason)


def test_deep_or_cyclic_arguments_are_rejected_not_crashed() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(5000):
        node["n"] = {}
        node = node["n"]
    assert rejected({**CALL, "arguments": deep}).reason.startswith("not JSON: nested deeper")
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    assert rejected({**CALL, "arguments": cyclic}).reason.startswith("not JSON: nested deeper")


# --- identities --------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["id", "name"])
@pytest.mark.parametrize("blank", ["", " ", "\t\n", "\u3000"])
def test_blank_identities_are_rejected(key: str, blank: str) -> None:
    error = rejected({**CALL, key: blank})
    assert error.path == key
    assert error.reason.startswith("blank")


@pytest.mark.parametrize("name", ["météo_天気", "get weather", " padded ", "GET_WEATHER", "ツール"])
def test_a_valid_name_is_kept_exactly_as_sent(name: str) -> None:
    parsed = parse_envelope({**CALL, "name": name})
    assert isinstance(parsed, ToolCallRequest)
    assert parsed.name == name


# --- copies ------------------------------------------------------------------------------


def test_the_result_is_an_independent_deep_copy() -> None:
    original = copy.deepcopy(CALL)
    parsed = parse_envelope(original)
    assert isinstance(parsed, ToolCallRequest)
    original["arguments"]["filters"][0]["max"] = 99
    original["arguments"]["filters"].append("more")
    original["arguments"]["city"] = "Bergen"
    del original["arguments"]["days"]
    assert parsed.arguments == CALL["arguments"]
    exported = parsed.to_dict()
    exported["arguments"]["filters"].clear()
    assert parsed.arguments == CALL["arguments"]


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(), json_values, max_size=5))
def test_any_json_arguments_round_trip_as_a_copy(arguments: dict[str, Any]) -> None:
    snapshot = json.dumps(arguments)
    parsed = parse_envelope({**CALL, "arguments": arguments})
    assert isinstance(parsed, ToolCallRequest)
    assert parsed.arguments == arguments
    arguments.clear()
    assert json.dumps(parsed.arguments) == snapshot


# --- from a response ---------------------------------------------------------------------


def test_tool_calls_become_call_envelopes() -> None:
    data = json.loads((FIXTURES / "anthropic/parallel-tool-calls.body.json").read_text("utf-8"))
    envelopes = to_envelopes(laminate.normalize(data))
    assert envelopes == [
        {"kind": "call", "id": b["id"], "name": b["name"], "arguments": b["input"]}
        for b in data["content"]
        if b["type"] == "tool_use"
    ]
    assert all(parse_envelope(e) for e in envelopes)


def test_an_answer_without_calls_becomes_one_final_envelope() -> None:
    data = json.loads((FIXTURES / "openai/text.body.json").read_text("utf-8"))
    response = laminate.normalize(data)
    assert to_envelopes(response) == [{"kind": "final", "text": response.text()}]


def test_envelopes_do_not_share_the_response_arguments() -> None:
    arguments = {"items": [1, 2]}
    response = NormalizedResponse(
        "r", "m", "openai", [ToolUse("c1", "f", FlexValue(arguments))], StopReason.TOOL_USE, Usage()
    )
    (envelope,) = to_envelopes(response)
    envelope["arguments"]["items"].append(3)
    assert arguments == {"items": [1, 2]}


def test_invalid_calls_have_no_envelope() -> None:
    bad = InvalidToolUse("c2", "f", '{"a":', "arguments are not valid JSON")
    only_bad = NormalizedResponse(
        "r", "m", "openai", [Text("Trying."), bad], StopReason.TOOL_USE, Usage()
    )
    assert to_envelopes(only_bad) == []
    mixed = NormalizedResponse(
        "r",
        "m",
        "openai",
        [bad, ToolUse("c3", "g", FlexValue({}))],
        StopReason.TOOL_USE,
        Usage(),
    )
    assert to_envelopes(mixed) == [{"kind": "call", "id": "c3", "name": "g", "arguments": {}}]


# --- the ledger --------------------------------------------------------------------------


def call_envelope(id: str) -> dict[str, Any]:
    return {**CALL, "id": id}


def test_the_ledger_rejects_a_call_id_from_an_earlier_turn() -> None:
    ledger = CallLedger()
    assert ledger.accept(call_envelope("call_1")) == parse_envelope(call_envelope("call_1"))
    assert ledger.accept_turn([call_envelope("call_2"), {"kind": "final", "text": "ok"}])
    with pytest.raises(EnvelopeError) as info:
        ledger.accept(call_envelope("call_1"))
    assert info.value.path == "id"
    assert info.value.reason == "reused: call id 'call_1' was accepted before"
    assert "call_1" in ledger
    assert len(ledger) == 2


def test_the_ledger_always_accepts_finals() -> None:
    ledger = CallLedger()
    for _ in range(3):
        assert ledger.accept({"kind": "final", "text": "same"}) == FinalAnswer("same")
    assert len(ledger) == 0


def test_a_turn_is_accepted_all_or_nothing() -> None:
    ledger = CallLedger()
    with pytest.raises(EnvelopeError) as info:
        ledger.accept_turn([call_envelope("a"), call_envelope("b"), call_envelope("a")])
    assert info.value.path == "[2].id"
    assert info.value.reason == "reused: call id 'a' appears twice in this turn"
    assert len(ledger) == 0
    with pytest.raises(EnvelopeError) as info:
        ledger.accept_turn([call_envelope("c"), {"kind": "final"}])
    assert (info.value.path, info.value.reason) == ("[1].text", "missing")
    assert "c" not in ledger
    assert ledger.accept_turn([call_envelope("a"), call_envelope("c")])
    assert len(ledger) == 2


def test_the_ledger_validates_parsed_envelopes_too() -> None:
    ledger = CallLedger()
    ledger.accept(ToolCallRequest("x1", "f", {}))
    with pytest.raises(EnvelopeError, match="reused"):
        ledger.accept(ToolCallRequest("x1", "f", {}))
    with pytest.raises(EnvelopeError) as info:
        ledger.accept(ToolCallRequest(" ", "f", {}))
    assert info.value.path == "id"
    with pytest.raises(EnvelopeError) as info:
        ledger.accept_turn([FinalAnswer("fine"), ToolCallRequest("x2", "f", {"t": (1,)})])
    assert info.value.path == "[1].arguments.t"


def test_the_ledger_is_a_strict_gate_for_a_response() -> None:
    data = json.loads((FIXTURES / "openai/parallel-tool-calls.body.json").read_text("utf-8"))
    response = laminate.normalize(data)
    ledger = CallLedger()
    accepted = ledger.accept_turn(to_envelopes(response))
    assert [e.id for e in accepted if isinstance(e, ToolCallRequest)] == [
        c.id for c in response.tool_uses()
    ]
    with pytest.raises(EnvelopeError, match=r"^\[0\]\.id: reused"):
        ledger.accept_turn(to_envelopes(response))
