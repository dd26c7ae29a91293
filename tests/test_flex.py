"""FlexValue: navigation, the path grammar, and the coercion rules of ``extract``."""

from __future__ import annotations

import dataclasses
import enum
import math
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import (
    Annotated,
    Any,
    Literal,
    NewType,
    NotRequired,
    Optional,
    Required,
    TypedDict,
    Union,
    get_type_hints,
)

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from laminate._core.coerce import Change, coerce, format_path
from laminate._core.errors import ExtractError
from laminate._core.flex import FlexValue, MalformedPathError, parse_path

# --- shared types ------------------------------------------------------------------------


@dataclass
class Filter:
    field: str
    limit: int = 10


@dataclass
class Query:
    max_results: int
    filters: list[Filter] = dataclasses.field(default_factory=list)
    exact: bool = False


@dataclass(frozen=True)
class Point:
    x: float
    y: float


@dataclass
class Positive:
    n: int
    computed: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        if self.n <= 0:
            raise ValueError("n must be positive")


class Order(TypedDict):
    item: str
    qty: int
    note: NotRequired[str]


class Options(TypedDict, total=False):
    verbose: bool
    depth: Required[int]


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


UserId = NewType("UserId", int)


def fails(fv: FlexValue, path: Any, tp: Any, *, strict: bool = False) -> ExtractError:
    with pytest.raises(ExtractError) as info:
        fv.extract(path, type=tp, strict=strict)
    return info.value


# --- the view ----------------------------------------------------------------------------

DOC = {"city": "Paris", "days": [1, 2, 3], "nested": {"a.b": {"c": [10, {"d": None}]}}}


def test_value_is_the_wrapped_object_not_a_copy() -> None:
    fv = FlexValue(DOC)
    assert fv.value is DOC
    assert fv["days"].value is DOC["days"]
    assert FlexValue(fv).value is DOC


def test_getitem_returns_views() -> None:
    fv = FlexValue(DOC)
    assert fv["city"] == FlexValue("Paris")
    assert fv["days"][0].value == 1
    assert fv["days"][-1].value == 3
    assert fv["nested"]["a.b"]["c"][1]["d"].value is None


def test_getitem_raises_like_a_dict_or_a_list() -> None:
    fv = FlexValue(DOC)
    with pytest.raises(KeyError):
        fv["country"]
    with pytest.raises(IndexError):
        fv["days"][3]
    with pytest.raises(TypeError):
        fv["days"]["x"]
    with pytest.raises(TypeError):
        fv["city"][0]
    with pytest.raises(TypeError):
        fv["days"][True]


def test_container_protocol() -> None:
    fv = FlexValue(DOC)
    assert "city" in fv
    assert "Paris" not in fv
    assert 2 in fv["days"]
    assert FlexValue(2) in fv["days"]
    assert len(fv) == 3
    assert len(fv["days"]) == 3
    assert list(fv) == ["city", "days", "nested"]
    assert list(fv["days"]) == [FlexValue(1), FlexValue(2), FlexValue(3)]
    assert all(isinstance(item, FlexValue) for item in fv["days"])


@pytest.mark.parametrize("scalar", ["text", 5, 2.5, True, None])
def test_container_protocol_refuses_scalars(scalar: Any) -> None:
    fv = FlexValue(scalar)
    with pytest.raises(TypeError):
        len(fv)
    with pytest.raises(TypeError):
        iter(fv)
    with pytest.raises(TypeError):
        "x" in fv  # noqa: B015


def test_equality_bool_repr_hash() -> None:
    assert FlexValue({"a": [1]}) == FlexValue({"a": [1]})
    assert FlexValue({"a": [1]}) != FlexValue({"a": [2]})
    assert FlexValue(1) != 1  # a view is not its value
    assert bool(FlexValue({})) is False
    assert bool(FlexValue([0])) is True
    assert bool(FlexValue(None)) is False
    assert repr(FlexValue({"a": 1})) == "FlexValue({'a': 1})"
    with pytest.raises(TypeError):
        hash(FlexValue(1))


def test_read_only() -> None:
    fv = FlexValue({"a": 1})
    with pytest.raises(TypeError):
        fv["a"] = 2  # type: ignore[index]
    with pytest.raises(AttributeError):
        fv.value = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        fv.extra = 1  # type: ignore[attr-defined]


def test_get_returns_plain_values_or_the_default() -> None:
    fv = FlexValue(DOC)
    assert fv.get("city") == "Paris"
    assert fv.get("days[1]") == 2
    assert fv.get(["nested", "a.b", "c", 0]) == 10
    assert fv.get('nested["a.b"].c[1].d', default="x") is None  # present, and null
    assert fv.get("country") is None
    assert fv.get("country", "France") == "France"
    assert fv.get("days[9]", 0) == 0
    assert fv.get("city.name", "-") == "-"  # a step into a string leads nowhere
    assert fv.get("") is DOC
    with pytest.raises(MalformedPathError):
        fv.get("days[x]")


# --- paths -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "steps"),
    [
        ("", ()),
        ("city", ("city",)),
        ("a.b[0].c", ("a", "b", 0, "c")),
        ("[0]", (0,)),
        ("[0][1]", (0, 1)),
        ("items[-1]", ("items", -1)),
        ("a.0", ("a", "0")),
        ("first name", ("first name",)),
        ('["a.b"].c', ("a.b", "c")),
        ('a[""]', ("a", "")),
        ('a["x\\"y"]', ("a", 'x"y')),
        ((), ()),
        (["a", 0, "b.c"], ("a", 0, "b.c")),
        (("x",), ("x",)),
    ],
)
def test_parse_path(path: Any, steps: tuple[Any, ...]) -> None:
    assert parse_path(path) == steps


@pytest.mark.parametrize(
    "path",
    [
        "a[x]",
        "a..b",
        ".a",
        "a.",
        "a[0",
        "a]",
        "a[0]b",
        '["open]',
        r'["\x"]',
        '["tab\there"]',
        "[]",
        "a[1.5]",
        "a[ 1]",
    ],
)
def test_malformed_paths(path: str) -> None:
    with pytest.raises(MalformedPathError) as info:
        FlexValue({"a": [1]}).extract(path)
    assert info.value.reason.startswith("malformed path:")
    assert isinstance(info.value, ExtractError)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("path", [[1.5], [True], [None], 7, b"ab"])
def test_malformed_sequence_paths(path: Any) -> None:
    with pytest.raises(MalformedPathError):
        parse_path(path)


def test_format_path() -> None:
    assert format_path([]) == ""
    assert format_path(["a", "b", 0, "c"]) == "a.b[0].c"
    assert format_path([0, "a"]) == "[0].a"
    assert format_path(["a.b", ""]) == '["a.b"][""]'
    assert format_path([1, "x"], prefix="items") == "items[1].x"
    assert format_path(["q"], prefix="args") == "args.q"


@given(st.lists(st.one_of(st.text(max_size=8), st.integers(-5, 50)), max_size=6))
@settings(max_examples=200)
def test_format_then_parse_round_trips(steps: list[str | int]) -> None:
    assert parse_path(format_path(steps)) == tuple(steps)


def test_missing_is_told_from_wrong_type_while_navigating() -> None:
    fv = FlexValue({"items": [{"qty": 1}, {"qty": 2}], "name": "x"})
    error = fails(fv, "items[1].price", int)
    assert (error.path, error.reason) == ("items[1].price", "missing")
    error = fails(fv, "items[5].qty", int)
    assert (error.path, error.reason) == ("items[5]", "missing")
    error = fails(fv, "name.first", str)
    assert error.path == "name"
    assert error.reason.startswith("wrong type: expected dict")
    error = fails(fv, "items.qty", int)
    assert error.path == "items"
    assert error.reason.startswith("wrong type:")
    error = fails(fv, "[0]", Any)
    assert error.path == ""
    assert error.reason == "wrong type: expected list, got dict"


# --- scalar coercions --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "tp", "expected"),
    [
        ("5", int, 5),
        (" 7 ", int, 7),
        ("-3", int, -3),
        ("+4", int, 4),
        ("5.0", int, 5),
        ("12345678901234567890123", int, 12345678901234567890123),
        (5.0, int, 5),
        (1e20, int, 10**20),
        ("2.5", float, 2.5),
        ("5", float, 5.0),
        ("1e3", float, 1000.0),
        ("-.5", float, -0.5),
        ("true", bool, True),
        ("False", bool, False),
        (" TRUE ", bool, True),
        (5, str, "5"),
        (2.5, str, "2.5"),
        (-0.0, str, "-0.0"),
    ],
)
def test_forgiving_coercions(value: Any, tp: Any, expected: Any) -> None:
    result, changes = FlexValue({"v": value}).extract_with_changes("v", type=tp)
    assert type(result) is tp
    assert result == expected
    assert changes == [Change("v", value, expected)]
    with pytest.raises(ExtractError):
        FlexValue({"v": value}).extract("v", type=tp, strict=True)


@pytest.mark.parametrize(
    ("value", "tp", "expected"),
    [(5, int, 5), (3, float, 3.0), (2.5, float, 2.5), ("x", str, "x"), (False, bool, False)],
)
def test_exact_types_need_no_coercion(value: Any, tp: Any, expected: Any) -> None:
    for strict in (False, True):
        result, changes = FlexValue(value).extract_with_changes(type=tp, strict=strict)
        assert type(result) is tp
        assert result == expected
        assert changes == []


@pytest.mark.parametrize(
    ("value", "tp", "detail"),
    [
        ("5.7", int, "not a whole number"),
        (5.7, int, "not a whole number"),
        ("1e3", int, "not an integer literal"),
        pytest.param("1" * 5000, int, "too many digits", id="huge-str-to-int"),
        ("1e400", float, "out of range"),
        ("-1e400", float, "out of range"),
        (2**53 + 1, float, "not exactly representable as a float"),
        (10**400, float, "out of range"),
        pytest.param(10**5000, str, "too many digits", id="huge-int-to-str"),
    ],
)
def test_never_lossy(value: Any, tp: type, detail: str) -> None:
    error = fails(FlexValue({"v": value}), "v", tp)
    assert error.path == "v"
    assert error.reason.startswith(f"wrong type: expected {tp.__name__}, got ")
    assert error.reason.endswith(f"({detail})")


@pytest.mark.parametrize(
    ("value", "tp"),
    [
        (True, int),
        (False, float),
        (True, str),
        (1, bool),
        (0, bool),
        ("yes", bool),
        ("1", bool),
        ("abc", int),
        ("1_000", int),
        ("\u0665", int),  # ARABIC-INDIC DIGIT FIVE: int() would take it
        ("0x10", int),
        ("", int),
        ("inf", float),
        ("NaN", float),
        (float("inf"), int),
        (float("nan"), int),
        (None, int),
        (None, str),
        ("null", type(None)),
        ([1], int),
        ({"a": 1}, str),
    ],
)
def test_refused_conversions(value: Any, tp: type) -> None:
    error = fails(FlexValue(value), (), tp)
    assert error.reason.startswith("wrong type:")


def test_wrong_type_reason_names_both_types() -> None:
    error = fails(FlexValue({"qty": "5.7"}), "qty", int)
    assert error.reason == "wrong type: expected int, got str '5.7' (not a whole number)"
    assert str(error) == "qty: wrong type: expected int, got str '5.7' (not a whole number)"
    error = fails(FlexValue({"qty": None}), "qty", int)
    assert error.reason == "wrong type: expected int, got None"


def test_long_values_are_shortened_in_reasons() -> None:
    error = fails(FlexValue("x" * 1000), (), int)
    assert len(error.reason) < 120


def test_none_and_any() -> None:
    assert FlexValue(None).extract(type=None) is None
    assert FlexValue(None).extract(type=type(None)) is None
    doc = {"a": [1, {"b": 2}]}
    extracted: object = FlexValue(doc).extract(type=Any)
    assert extracted is doc
    assert FlexValue(doc).extract(type=object) is doc
    assert FlexValue(doc).extract() is doc


def test_annotated_and_newtype_are_read_as_their_base() -> None:
    fv = FlexValue({"n": "5", "id": "42"})
    assert fv.extract("n", type=Annotated[int, "a count"]) == 5
    assert fv.extract("id", type=UserId) == 42

    def handler(count: Annotated[int, "how many"], ids: list[Annotated[UserId, "x"]]) -> None:
        del count, ids

    hints = get_type_hints(handler, include_extras=True)
    assert coerce("3", hints["count"]) == (3, [Change("", "3", 3)])
    assert coerce(["1"], hints["ids"])[0] == [1]


# --- containers --------------------------------------------------------------------------


def test_lists() -> None:
    fv = FlexValue({"ids": ["1", 2, "3"]})
    result, changes = fv.extract_with_changes("ids", type=list[int])
    assert result == [1, 2, 3]
    assert changes == [Change("ids[0]", "1", 1), Change("ids[2]", "3", 3)]
    assert fv.extract("ids", type=typing.List[str]) == ["1", "2", "3"]  # noqa: UP006
    assert fv.extract("ids", type=Sequence[float]) == [1.0, 2.0, 3.0]
    assert fv.extract("ids", type=list) == ["1", 2, "3"]
    error = fails(fv, "ids", list[int], strict=True)
    assert error.path == "ids[0]"
    error = fails(FlexValue({"ids": "1,2"}), "ids", list[int])
    assert error.reason == "wrong type: expected list[int], got str '1,2'"


def test_tuples() -> None:
    assert FlexValue(["1", 2]).extract(type=tuple[int, str]) == (1, "2")
    assert FlexValue(["1", 2]).extract(type=tuple[int, ...]) == (1, 2)
    assert FlexValue([]).extract(type=tuple[()]) == ()
    assert FlexValue([1, "a"]).extract(type=tuple) == (1, "a")
    assert FlexValue([1, "a"]).extract(type=typing.Tuple) == (1, "a")  # noqa: UP006
    error = fails(FlexValue([1]), (), tuple[()])
    assert error.reason == "wrong type: expected tuple[()], got list [1] (1 items, not 0)"
    error = fails(FlexValue([1, 2, 3]), (), tuple[int, int])
    assert error.reason.endswith("(3 items, not 2)")
    error = fails(FlexValue({"a": 1}), (), tuple[int, int])
    assert error.reason.startswith("wrong type: expected tuple[int, int], got dict")


def test_dicts() -> None:
    fv = FlexValue({"scores": {"a": "1", "b": 2.0}})
    result, changes = fv.extract_with_changes("scores", type=dict[str, int])
    assert result == {"a": 1, "b": 2}
    assert changes == [Change("scores.a", "1", 1), Change("scores.b", 2.0, 2)]
    assert fv.extract("scores", type=Mapping[str, Any]) == {"a": "1", "b": 2.0}
    assert fv.extract("scores", type=dict) == {"a": "1", "b": 2.0}
    with pytest.raises(ExtractError) as info:
        coerce({"a": 1, 2: "b"}, dict[str, Any], path="d")
    assert info.value.path == "d.2"
    assert info.value.reason == "wrong type: expected a str key, got int 2"
    error = fails(FlexValue({"s": [1]}), "s", dict[str, int])
    assert error.reason.startswith("wrong type: expected dict[str, int], got list")
    # Keys that need a quoted path segment are written so in change records.
    _, changes = FlexValue({"a.b": "1"}).extract_with_changes(type=dict[str, int])
    assert changes == [Change('["a.b"]', "1", 1)]


def test_dict_keys_other_than_str_are_a_programming_error() -> None:
    with pytest.raises(TypeError):
        FlexValue({"1": "a"}).extract(type=dict[int, str])


@pytest.mark.parametrize("tp", [set[int], frozenset, complex, bytes, Decimal])
def test_unsupported_types_are_a_programming_error(tp: Any) -> None:
    with pytest.raises(TypeError, match="unsupported type"):
        FlexValue([1]).extract(type=tp)


# --- unions, literals, enums -------------------------------------------------------------


def test_optional() -> None:
    assert FlexValue({"n": None}).extract("n", type=int | None) is None
    assert FlexValue({"n": None}).extract("n", type=Optional[int]) is None  # noqa: UP045
    assert FlexValue({"n": "5"}).extract_with_changes("n", type=int | None) == (
        5,
        [Change("n", "5", 5)],
    )
    error = fails(FlexValue({"n": "abc"}), "n", int | None)
    assert error.reason == "wrong type: expected int | None, got str 'abc'"


def test_union_prefers_an_exact_match_to_a_coercion() -> None:
    assert FlexValue("5").extract_with_changes(type=int | str) == ("5", [])
    five = FlexValue(5).extract(type=float | int)
    assert type(five) is int
    assert FlexValue(5.5).extract(type=int | float) == 5.5
    assert FlexValue(True).extract(type=Union[int, bool]) is True  # noqa: UP007
    result = FlexValue([1]).extract(type=list[float] | list[int])
    assert type(result[0]) is int
    # No exact or strict match: members are tried in order with coercion.
    assert FlexValue("5").extract_with_changes(type=float | int) == (5.0, [Change("", "5", 5.0)])


def test_union_keeps_only_the_winning_members_changes() -> None:
    result, changes = FlexValue(["1", "x", 3]).extract_with_changes(type=list[int] | list[str])
    assert result == ["1", "x", "3"]
    assert changes == [Change("[2]", 3, "3")]


def test_union_reports_the_error_that_got_furthest() -> None:
    error = fails(FlexValue({"q": {"filters": []}}), "q", Query | None)
    assert (error.path, error.reason) == ("q.max_results", "missing")


def test_literals() -> None:
    units = Literal["celsius", "fahrenheit"]
    assert FlexValue("celsius").extract(type=units) == "celsius"
    error = fails(FlexValue({"u": "kelvin"}), "u", units)
    assert error.path == "u"
    assert error.reason == 'wrong type: expected one of "celsius", "fahrenheit", got str \'kelvin\''
    assert FlexValue("5").extract_with_changes(type=Literal[5, 10]) == (5, [Change("", "5", 5)])
    assert FlexValue(5).extract_with_changes(type=Literal["5"]) == ("5", [Change("", 5, "5")])
    assert FlexValue(10.0).extract(type=Literal[5, 10]) == 10
    assert FlexValue("TRUE").extract(type=Literal[True]) is True
    assert FlexValue(None).extract(type=Literal["a", None]) is None
    assert FlexValue(1).extract(type=Literal["1", 1]) == 1
    assert FlexValue("1").extract(type=Literal["1", 1]) == "1"
    fails(FlexValue(True), (), Literal[1])
    fails(FlexValue(1), (), Literal[True])
    fails(FlexValue("5"), (), Literal[5], strict=True)


def test_enums_by_value() -> None:
    assert FlexValue("red").extract(type=Color) is Color.RED
    assert FlexValue(2).extract(type=Level) is Level.HIGH
    assert FlexValue("2").extract_with_changes(type=Level) == (
        Level.HIGH,
        [Change("", "2", Level.HIGH)],
    )
    assert FlexValue("green").extract(type=Literal[Color.GREEN]) is Color.GREEN
    error = fails(FlexValue("RED"), (), Color)
    assert error.reason == 'wrong type: expected one of "red", "green", got str \'RED\''
    fails(FlexValue(True), (), Level)
    fails(FlexValue("2"), (), Level, strict=True)


# --- dataclasses and TypedDict -----------------------------------------------------------


def test_dataclass_with_nested_change_records() -> None:
    args = FlexValue(
        {
            "max_results": "5",
            "filters": [{"field": "city", "limit": "2"}, {"field": 7}],
            "unknown": "ignored",
        }
    )
    query, changes = args.extract_with_changes(type=Query)
    assert query == Query(5, [Filter("city", 2), Filter("7", 10)], exact=False)
    assert changes == [
        Change("max_results", "5", 5),
        Change("filters[0].limit", "2", 2),
        Change("filters[1].field", 7, "7"),
    ]
    assert [str(change) for change in changes] == [
        'max_results: "5" -> 5',
        'filters[0].limit: "2" -> 2',
        'filters[1].field: 7 -> "7"',
    ]


def test_dataclass_defaults_and_missing_fields() -> None:
    assert FlexValue({"max_results": 1}).extract(type=Query) == Query(1)
    error = fails(FlexValue({"filters": []}), (), Query)
    assert (error.path, error.reason) == ("max_results", "missing")
    error = fails(FlexValue({"req": {"max_results": 1, "filters": [{"limit": 1}]}}), "req", Query)
    assert (error.path, error.reason) == ("req.filters[0].field", "missing")
    error = fails(FlexValue({"q": [1]}), "q", Query)
    assert error.reason.startswith("wrong type: expected Query, got list")


def test_dataclass_fields_and_construction() -> None:
    assert FlexValue({"x": 1, "y": "2.5"}).extract(type=Point) == Point(1.0, 2.5)
    assert FlexValue({"n": 3, "computed": 99}).extract(type=Positive).computed == 0
    error = fails(FlexValue({"p": {"n": 0}}), "p", Positive)
    assert error.path == "p"
    assert error.reason == "invalid: Positive: n must be positive"


def test_dataclass_with_unresolvable_annotations_is_a_programming_error() -> None:
    class Local:
        pass

    @dataclass
    class UsesLocal:
        item: Local

    with pytest.raises(TypeError, match="cannot resolve"):
        FlexValue({"item": {}}).extract(type=UsesLocal)


def test_typeddict() -> None:
    order, changes = FlexValue({"item": "tea", "qty": "2", "extra": 1}).extract_with_changes(
        type=Order
    )
    assert order == {"item": "tea", "qty": 2}
    assert changes == [Change("qty", "2", 2)]
    assert FlexValue({"item": "a", "qty": 1, "note": 5}).extract(type=Order) == {
        "item": "a",
        "qty": 1,
        "note": "5",
    }
    error = fails(FlexValue({"orders": [{"item": "a"}]}), "orders", list[Order])
    assert (error.path, error.reason) == ("orders[0].qty", "missing")
    error = fails(FlexValue("tea"), (), Order)
    assert error.reason.startswith("wrong type: expected Order, got str")


def test_typeddict_totality_and_required_markers() -> None:
    assert FlexValue({"depth": "3"}).extract(type=Options) == {"depth": 3}
    assert FlexValue({"depth": 1, "verbose": "true"}).extract(type=Options) == {
        "depth": 1,
        "verbose": True,
    }
    error = fails(FlexValue({"verbose": True}), (), Options)
    assert (error.path, error.reason) == ("depth", "missing")


# --- strict mode and the coerce entry point ----------------------------------------------


def test_strict_mode_accepts_only_exact_json_types() -> None:
    fv = FlexValue({"max_results": 5, "filters": [{"field": "a", "limit": 1}]})
    assert fv.extract_with_changes(type=Query, strict=True) == (
        Query(5, [Filter("a", 1)]),
        [],
    )
    error = fails(FlexValue({"max_results": "5"}), (), Query, strict=True)
    assert error.path == "max_results"
    assert error.reason == "wrong type: expected int, got str '5'"
    assert FlexValue({"x": 1, "y": 2}).extract(type=Point, strict=True) == Point(1.0, 2.0)


def test_coerce_entry_point() -> None:
    assert coerce("5", int, path="max_results") == (5, [Change("max_results", "5", 5)])
    assert coerce(["2"], list[int], path="args.ids") == ([2], [Change("args.ids[0]", "2", 2)])
    assert coerce(5, int, strict=True, path="n") == (5, [])
    with pytest.raises(ExtractError) as info:
        coerce({"limit": "x"}, Filter, path="filters[3]")
    assert info.value.path == "filters[3].field"
    assert info.value.reason == "missing"
    with pytest.raises(ExtractError) as info:
        coerce("x", int)
    assert str(info.value) == "<root>: wrong type: expected int, got str 'x'"


def test_extract_error_path_is_the_full_path() -> None:
    fv = FlexValue({"order": {"items": [{"qty": 1}, {"qty": 2}, {"qty": "many"}]}})
    error = fails(fv, "order", dict[str, list[dict[str, int]]])
    assert error.path == "order.items[2].qty"
    error = fails(fv, ["order", "items"], list[dict[str, int]])
    assert error.path == "order.items[2].qty"


def test_change_is_a_frozen_slotted_dataclass() -> None:
    change = Change("n", "5", 5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        change.path = "m"  # type: ignore[misc]
    assert not hasattr(change, "__dict__")
    assert str(Change("", "x", Color.RED)) == "<root>: \"x\" -> <Color.RED: 'red'>"
    assert str(Change("n", 10**5000, "x")) == 'n: <int too long to show> -> "x"'


# --- properties --------------------------------------------------------------------------

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=10)
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
@settings(max_examples=150)
def test_extract_any_returns_the_value(value: Any) -> None:
    assert FlexValue(value).extract((), type=Any) == value
    assert FlexValue(value).extract_with_changes(type=Any) == (value, [])


def values_for(tp: Any) -> st.SearchStrategy[Any]:
    """Values that already are of the annotation ``tp``."""
    scalars: dict[Any, st.SearchStrategy[Any]] = {
        int: st.integers(),
        float: st.floats(allow_nan=False),
        str: st.text(max_size=10),
        bool: st.booleans(),
        None: st.none(),
        type(None): st.none(),
        Any: json_values,
        Literal["a", 1, None]: st.sampled_from(["a", 1, None]),
    }
    if tp in scalars:
        return scalars[tp]
    origin = getattr(tp, "__origin__", None)
    if origin is list:
        return st.lists(values_for(tp.__args__[0]), max_size=4)
    if origin is dict:
        return st.dictionaries(st.text(max_size=5), values_for(tp.__args__[1]), max_size=4)
    return st.one_of(st.none(), values_for(tp.__args__[0]))  # ``T | None``


annotation_types: st.SearchStrategy[Any] = st.recursive(
    st.sampled_from([int, float, str, bool, None, Any, Literal["a", 1, None]]),
    lambda inner: st.one_of(
        inner.map(lambda t: list[t]),  # type: ignore[valid-type]
        inner.map(lambda t: dict[str, t]),  # type: ignore[valid-type]
        inner.map(lambda t: Optional[t]),  # noqa: UP045
    ),
    max_leaves=4,
)


@given(st.data())
@settings(max_examples=150)
def test_values_of_the_right_type_are_kept_without_changes(data: st.DataObject) -> None:
    tp = data.draw(annotation_types)
    value = data.draw(values_for(tp))
    for strict in (False, True):
        result, changes = coerce(value, tp, strict=strict)
        assert changes == []
        assert result == value


@given(json_values, annotation_types)
@settings(max_examples=200)
def test_strict_success_implies_the_same_forgiving_result(value: Any, tp: Any) -> None:
    try:
        strict_result, _ = coerce(value, tp, strict=True)
    except ExtractError:
        return
    assert coerce(value, tp) == (strict_result, [])


@given(st.one_of(st.text(max_size=12), st.from_regex(r"\s?[+-]?[0-9]{1,25}(\.[0-9]{0,4})?\s?")))
@settings(max_examples=200)
def test_strings_become_numbers_only_exactly(text: str) -> None:
    try:
        number = coerce(text, int)[0]
    except ExtractError:
        pass
    else:
        assert Decimal(text.strip()) == number
    try:
        real = coerce(text, float)[0]
    except ExtractError:
        pass
    else:
        assert math.isfinite(real)
        assert float(text.strip()) == real


@given(st.one_of(st.floats(), st.integers()))
@settings(max_examples=200)
def test_numbers_round_trip_through_strings(number: float) -> None:
    as_text, changes = coerce(number, str)
    assert len(changes) == 1
    if isinstance(number, int):
        assert coerce(as_text, int)[0] == number
    elif math.isfinite(number):
        assert coerce(as_text, float)[0] == number
    try:
        whole = coerce(number, int)[0]
    except ExtractError:
        assert isinstance(number, float)
        assert not number.is_integer()
    else:
        assert whole == number
