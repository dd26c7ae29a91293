"""The JSON backends give the same results: what orjson would read differently from the
standard library is left to the standard library."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

import pytest

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
