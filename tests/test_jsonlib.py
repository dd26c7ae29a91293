"""The JSON backends give the same results: what orjson would read differently from the
standard library is left to the standard library."""

from __future__ import annotations

import copy
import dataclasses
import json
import marshal
import math
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import laminate
from laminate._core import jsonlib

BIG = 123456789012345678901234567890


@pytest.fixture(autouse=True)
def _restore_backend(json_backend: str) -> Iterator[None]:
    """Tests here switch backends; the session's stays in use for the tests after them."""
    yield
    jsonlib.use(json_backend)


GEMINI_CALL = (
    b'data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":'
    b'{"name":"f","args":{"n":%d,"x":1.5}}}]},"finishReason":"STOP"}]}\r\n\r\n' % BIG
)
OLLAMA_CALL = (
    b'{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":'
    b'{"name":"f","arguments":{"n":%d}}}]},"done":true,"done_reason":"stop"}\n' % BIG
)
OPENAI_CALL = b"".join(
    b"data: " + json.dumps(chunk).encode() + b"\n\n"
    for chunk in (
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_1",
                                "function": {"name": "f", "arguments": f'{{"n": {BIG}}}'},
                            }
                        ]
                    },
                }
            ],
        },
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
        },
    )
)


@pytest.mark.parametrize("body", [GEMINI_CALL, OLLAMA_CALL, OPENAI_CALL])
def test_integers_past_64_bits_stay_exact_in_tool_arguments(body: bytes) -> None:
    [call] = laminate.collect_sync([body]).tool_uses()
    assert call.input.value["n"] == BIG
    assert isinstance(call.input.value["n"], int)


def test_both_backends_read_alike() -> None:
    texts = [
        '{"a": 1, "a": 2}',
        f'{{"n": {BIG}}}',
        '{"f": 1e400}',
        '{"s": "\\ud800"}',
        '{"x": NaN}',
        '  {"padded": true}  ',
    ]
    for backend in jsonlib.available():
        jsonlib.use(backend)
        for text in texts:
            expected = json.loads(text)
            assert repr(jsonlib.loads_exact(text)) == repr(expected), (backend, text)
            if str(BIG) not in text:  # `loads` reads frames that hold no such numbers
                assert repr(jsonlib.loads(text)) == repr(expected), (backend, text)


def test_errors_are_worded_by_the_standard_library() -> None:
    for backend in jsonlib.available():
        jsonlib.use(backend)
        with pytest.raises(json.JSONDecodeError) as caught:
            jsonlib.loads('{"a": ')
        assert caught.value.msg == "Expecting value"


def test_nan_written_stays_nan_and_numbers_keep_their_value() -> None:
    for backend in jsonlib.available():
        jsonlib.use(backend)
        assert jsonlib.dumps({"x": math.nan}) == '{"x":NaN}'
        assert json.loads(jsonlib.dumps({"v": 1e16, "n": BIG})) == {"v": 1e16, "n": BIG}


def test_nan_in_tool_arguments_is_refused_by_either_backend() -> None:
    body = OPENAI_CALL.replace(b"%d" % BIG, b"NaN")
    [block] = laminate.collect_sync([body]).content
    assert isinstance(block, laminate.InvalidToolUse)
    assert "NaN is not JSON" in block.reason


def test_a_key_spelled_with_an_escape_still_keeps_the_arguments_exact() -> None:
    body = GEMINI_CALL.replace(b'"functionCall"', b'"function\\u0043all"')
    [call] = laminate.collect_sync([body]).tool_uses()
    assert call.input.value["n"] == BIG


def test_frames_without_the_arguments_marker_need_no_exact_reading() -> None:
    for backend in jsonlib.available():
        jsonlib.use(backend)
        read = jsonlib.exact_where("tool_calls")
        assert read(f'{{"tool_calls": [{BIG}]}}') == {"tool_calls": [BIG]}
        assert read('{"message": {"content": "a"}}') == {"message": {"content": "a"}}


@pytest.mark.parametrize(
    "value",
    [
        {"manager": None, "score": 1.5, "tags": ["a", None]},
        {"x": math.nan, "y": None},
        {"x": math.inf, "y": None},
        {"x": -math.inf, "y": [None]},
        {"n": BIG, "m": None},
        {"s": "\x00\x00\x00\x00\x00\x00\xf8\x7f", "z": None},
    ],
)
def test_arguments_sent_as_objects_are_written_as_the_standard_library_writes_them(
    value: dict[str, object],
) -> None:
    for backend in jsonlib.available():
        jsonlib.use(backend)
        assert jsonlib.dumps_parsed(value) == jsonlib.dumps(value), backend


def _ollama_call(arguments: bytes) -> bytes:
    return OLLAMA_CALL.replace(b'{"n":%d}' % BIG, arguments)


def test_whole_object_arguments_are_the_value_sent() -> None:
    body = _ollama_call(b'{"a": [1, 2.5, null], "b": {"c": "d\\u00e9"}, "a": 3}')
    [call] = laminate.collect_sync([body]).tool_uses()
    assert call.input.value == {"a": 3, "b": {"c": "d\u00e9"}}
    events = list(laminate.normalize_stream_sync([body]))
    [delta] = [e for e in events if isinstance(e, laminate.ToolInputDelta)]
    assert delta.fragment == '{"a":3,"b":{"c":"dé"}}'


@pytest.mark.parametrize("number", [b"NaN", b"Infinity", b"-Infinity", b"1e400"])
def test_whole_object_arguments_holding_no_json_number_are_refused(number: bytes) -> None:
    body = _ollama_call(b'{"x": %s, "y": null}' % number)
    [block] = laminate.collect_sync([body]).content
    assert isinstance(block, laminate.InvalidToolUse)
    assert "is not JSON" in block.reason


# -- arguments sent whole: their text is written only when read ------------------------


@pytest.mark.parametrize(
    "value",
    [
        {},
        {"a": False, "b": None, "c": True},
        {"k" * 40: [False] * 30, "s": "\x00\x01\u2028é😀\ud800", "n": [-(2**70), 0, 7]},
        {"f": [1e-7, -0.0, 1.7976931348623157e308, 5e-324, 0.1], "l": [[[[]]]], "o": {}},
        {"esc": '"\\/\b\f\n\r\t' * 20},
    ],
)
def test_the_size_bound_is_never_below_the_text(value: dict[str, object]) -> None:
    bound = jsonlib.written_size_bound(value)
    assert bound is not None
    for backend in jsonlib.available():
        jsonlib.use(backend)
        assert len(jsonlib.dumps_parsed(value)) <= bound, backend


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_the_size_bound_refuses_what_json_cannot_say(number: float) -> None:
    assert jsonlib.written_size_bound({"x": [1.5, {"y": number}]}) is None
    assert jsonlib.written_size_bound({"x": object()}) is None


def _whole_calls(*arguments: bytes) -> bytes:
    calls = b",".join(b'{"function":{"name":"f","arguments":%s}}' % a for a in arguments)
    return OLLAMA_CALL.replace(
        b'[{"function":{"name":"f","arguments":{"n":%d}}}]' % BIG, b"[%s]" % calls
    )


def test_whole_arguments_read_by_nobody_are_never_written(monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[object] = []
    real = jsonlib.dumps_parsed

    def counting(value: object) -> str:
        written.append(value)
        return real(value)

    monkeypatch.setattr(jsonlib, "dumps_parsed", counting)
    body = _whole_calls(b'{"path": "a.py", "content": "print(1)\\n"}', b'{"n": [1, 2.5]}')
    response = laminate.collect_sync([body])
    assert [call.input.value for call in response.tool_uses()] == [
        {"path": "a.py", "content": "print(1)\n"},
        {"n": [1, 2.5]},
    ]
    assert written == []
    deltas = [
        e for e in laminate.normalize_stream_sync([body]) if isinstance(e, laminate.ToolInputDelta)
    ]
    assert written == []
    # Read, each is the value's compact JSON text, written once and kept.
    assert [d.fragment for d in deltas] == [
        '{"path":"a.py","content":"print(1)\\n"}',
        '{"n":[1,2.5]}',
    ]
    assert deltas[0] == deltas[0]
    assert deltas[0].fragment is deltas[0].fragment
    assert len(written) == 2
    assert deltas[1].is_complete(("n", 1))
    assert deltas[1].partial["n"][1].value == 2.5


def test_whole_arguments_equal_the_same_text_sent_as_a_string() -> None:
    value = b'{"path": "a.py", "content": "x\\u00e9\\n", "n": [1, -2.5e-3, true, null]}'
    whole = list(laminate.normalize_stream_sync([_whole_calls(value)]))
    text = json.dumps(json.dumps(json.loads(value), ensure_ascii=False, separators=(",", ":")))
    as_text = list(laminate.normalize_stream_sync([_whole_calls(text.encode())]))
    assert whole == as_text
    assert repr(whole) == repr(as_text)
    [delta] = [e for e in whole if isinstance(e, laminate.ToolInputDelta)]
    assert hash(delta) == hash(next(e for e in as_text if isinstance(e, laminate.ToolInputDelta)))
    assert isinstance(delta, laminate.ToolInputDelta)
    assert copy.copy(delta) == delta
    assert dataclasses.replace(delta, index=2).fragment == delta.fragment
    match delta:
        case laminate.ToolInputDelta(index=0, fragment=fragment):
            assert fragment.startswith('{"path":"a.py"')
        case _:
            pytest.fail("the event does not match its own pattern")


def test_a_whole_argument_past_the_cap_is_refused_when_it_arrives() -> None:
    body = _whole_calls(b'{"content": "%s"}' % (b"x" * 500))
    normalizer = laminate.StreamNormalizer(provider="ollama", max_tool_input_size=400)
    with pytest.raises(laminate.MalformedStreamError, match="max_tool_input_size"):
        list(normalizer.feed(body)) + list(normalizer.close())
    # Under the cap by its text, but not by the bound: written at once, and taken.
    fits = laminate.StreamNormalizer(provider="ollama", max_tool_input_size=514)
    events = list(fits.feed(body)) + list(fits.close())
    [delta] = [e for e in events if isinstance(e, laminate.ToolInputDelta)]
    assert len(delta.fragment) == 514


# -- loads_whole: the value, and a bound on its text ------------------------------------

_NUMBERS = st.one_of(
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=False, allow_infinity=False),
)
_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), _NUMBERS, st.text()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=6), st.dictionaries(st.text(max_size=8), inner, max_size=6)
    ),
    max_leaves=30,
)


def _same(a: Any, b: Any) -> bool:
    """Equal, type for type (1 is not 1.0), NaN aside."""
    return marshal.dumps(a, 2) == marshal.dumps(b, 2)


@settings(max_examples=300, deadline=None)
@given(value=_VALUES, ascii_only=st.booleans(), spaced=st.booleans())
def test_loads_whole_reads_as_json_does_and_bounds_the_text(
    value: object, ascii_only: bool, spaced: bool
) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, separators=(", ", ": ") if spaced else None)
    for backend in jsonlib.available():
        jsonlib.use(backend)
        for given_text in (text, text.encode()):
            read, bound = jsonlib.loads_whole(given_text)
            assert _same(read, json.loads(text)), backend
            assert bound == 0 or bound >= len(jsonlib.dumps_parsed(read)), backend


@pytest.mark.parametrize(
    "text",
    [
        '{"a":[1e15,9e15,-1e15,1E15,1e+15,0.0001,1e-7,5e-324,1.7976931348623157e308]}',
        '{"a":[1e0,2e1,3e2,4e3,5e4,6e5,7e6,8e7,9e8,1e9,1e10,1e11,1e12,1e13,1e14,1e15]}',
        '["\\u00e9\\ud83d\\ude00\\/\\b\\u0000", -0, 0e0, -0.0]',
    ],
)
def test_the_bound_holds_for_what_grows_most_when_written(text: str) -> None:
    for backend in jsonlib.available():
        jsonlib.use(backend)
        read, bound = jsonlib.loads_whole(text)
        assert bound, backend
        assert len(jsonlib.dumps_parsed(read)) <= bound, backend


@pytest.mark.parametrize(
    "text", ['{"x": NaN}', "[Infinity]", "[-Infinity]", '{"x": [1e400]}', "[-1e999]"]
)
def test_loads_whole_knows_no_bound_where_a_number_is_not_finite(text: str) -> None:
    for backend in jsonlib.available():
        jsonlib.use(backend)
        read, bound = jsonlib.loads_whole(text)
        assert bound == 0, backend
        assert repr(read) == repr(json.loads(text)), backend


def test_loads_whole_raises_as_json_loads_does() -> None:
    for backend in jsonlib.available():
        jsonlib.use(backend)
        for text in ("", "{", '{"a": 1} x', b"\xff"):
            with pytest.raises(ValueError) as expected:  # noqa: PT011 (each its own message)
                json.loads(text)
            with pytest.raises(type(expected.value), match=re.escape(str(expected.value))):
                jsonlib.loads_whole(text)


@settings(max_examples=300, deadline=None)
@given(
    filler=st.sampled_from([b"ab", b"a0", b"a0 ,", b"0123456789x", b"9,"]),
    size=st.integers(min_value=4000, max_value=9000),
    runs=st.lists(st.tuples(st.integers(0, 9000), st.integers(10, 24)), max_size=4),
    seed=st.integers(0, 2**16),
)
def test_the_sampled_search_for_long_digit_runs_finds_what_a_whole_search_finds(
    filler: bytes, size: int, runs: list[tuple[int, int]], seed: int
) -> None:
    rng = random.Random(seed)
    data = bytearray(rng.choice(filler) for _ in range(size))
    for at, length in runs:
        data[at : at + length] = b"7" * length
    whole = b"0" * 19 in bytes(data).translate(bytes.maketrans(b"123456789", b"0" * 9))
    assert jsonlib._long_digit_run(bytes(data)) == whole
