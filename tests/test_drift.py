"""How laminate reads servers that depart from the documented formats: the stop-reason
tables, the tool-call matching policy, keep-alive payloads, ``choice=`` and
``think_tags=True``. Whole streams live in fixtures/openai-compat, fixtures/anthropic-drift
and fixtures/ollama-drift; these tests pin the rules the fixtures only sample."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from laminate import (
    BlockEnd,
    BlockStart,
    IncompleteStreamError,
    InvalidToolUse,
    MalformedStreamError,
    ProviderError,
    Reasoning,
    ReasoningDelta,
    StopReason,
    Text,
    ToolInputDelta,
    ToolUse,
)
from laminate._apis.base import error_from_payload
from laminate._apis.think import ThinkSplitter

from .support import FIXTURES, Outcome, bytes_of, lines_of, run_chunks, split_at

# -- small stream builders ---------------------------------------------------------------


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **top: Any) -> bytes:
    choice: dict[str, Any] = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    body = {
        "id": "chatcmpl-t",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [choice],
    }
    body.update(top)
    return b"data: " + json.dumps(body).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"


def call(
    index: Any = None, id: str | None = None, name: str | None = None, args: Any = None
) -> Any:
    element: dict[str, Any] = {"type": "function", "function": {}}
    if index is not None:
        element["index"] = index
    if id is not None:
        element["id"] = id
    if name is not None:
        element["function"]["name"] = name
    if args is not None:
        element["function"]["arguments"] = args
    return element


def openai(*frames: bytes, **options: Any) -> Outcome:
    return run_chunks([b"".join(frames)], "openai", **options)


def done_response(outcome: Outcome) -> Any:
    assert outcome.error is None, repr(outcome.error)
    assert outcome.response is not None
    return outcome.response


def anthropic(stop: str) -> bytes:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {"id": "msg_t", "model": "c", "content": [], "usage": {}},
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def ollama(done_reason: str, *, tool_call: bool = False) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": "" if tool_call else "x"}
    if tool_call:
        message["tool_calls"] = [{"function": {"name": "f", "arguments": {}}}]
    lines = [
        {"model": "o", "message": message, "done": False},
        {
            "model": "o",
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": done_reason,
        },
    ]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


# -- stop-reason tables ------------------------------------------------------------------

OPENAI_STOPS = [
    ("stop", "end_turn"),
    ("length", "max_tokens"),
    ("tool_calls", "tool_use"),
    ("function_call", "tool_use"),
    ("content_filter", "content_filter"),
    # Values other servers invent stay unknown, kept as sent.
    ("eos_token", None),
    ("eos", None),
    ("stop_sequence", None),
    ("end_turn", None),
    ("abort", None),
    ("model_length", None),
    ("insufficient_system_resource", None),
    ("unknown", None),
]


@pytest.mark.parametrize(("raw", "kind"), OPENAI_STOPS)
def test_openai_stop_reason_table(raw: str, kind: str | None) -> None:
    response = done_response(openai(chunk({"content": "x"}), chunk(finish=raw), DONE))
    assert response.stop_reason.kind == kind
    assert response.stop_reason.raw == raw
    assert str(response.stop_reason) == (kind or raw)


def test_openai_stop_with_tool_calls_is_tool_use_and_keeps_raw() -> None:
    tool = chunk({"tool_calls": [call(0, "call_1", "f", "{}")]})
    response = done_response(openai(tool, chunk(finish="stop"), DONE))
    assert response.stop_reason == StopReason.TOOL_USE
    assert response.stop_reason.raw == "stop"


def test_openai_only_stop_is_promoted_by_tool_calls() -> None:
    tool = chunk({"tool_calls": [call(0, "call_1", "f", "{}")]})
    response = done_response(openai(tool, chunk(finish="eos"), DONE))
    assert response.stop_reason == StopReason.unknown("eos")
    assert response.tool_uses()[0].name == "f"


def test_openai_stop_after_refusal_is_refusal() -> None:
    response = done_response(openai(chunk({"refusal": "No."}), chunk(finish="stop"), DONE))
    assert response.stop_reason == StopReason.REFUSAL
    assert response.stop_reason.raw == "stop"
    assert response.content == [Text("No.")]


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        ("end_turn", "end_turn"),
        ("tool_use", "tool_use"),
        ("max_tokens", "max_tokens"),
        ("stop_sequence", "stop_sequence"),
        ("pause_turn", "pause_turn"),
        ("refusal", "refusal"),
        ("model_context_window_exceeded", "context_window_exceeded"),
        ("compaction", None),
    ],
)
def test_anthropic_stop_reason_table(raw: str, kind: str | None) -> None:
    response = done_response(run_chunks([anthropic(raw)], "anthropic"))
    assert response.stop_reason.kind == kind
    assert response.stop_reason.raw == raw


@pytest.mark.parametrize(
    ("raw", "tool_call", "kind"),
    [
        ("stop", False, "end_turn"),
        ("stop", True, "tool_use"),
        ("length", False, "max_tokens"),
        ("load", False, None),
        ("unload", False, None),
    ],
)
def test_ollama_stop_reason_table(raw: str, tool_call: bool, kind: str | None) -> None:
    response = done_response(run_chunks([ollama(raw, tool_call=tool_call)], "ollama"))
    assert response.stop_reason.kind == kind
    assert response.stop_reason.raw == raw


# -- stream endings and keep-alives ------------------------------------------------------


@pytest.mark.parametrize(
    "payload", ["", "ping", "PING", "keep-alive", "Keep-Alive", "keepalive", "heartbeat", " ping "]
)
def test_keepalive_payloads_are_ignored(payload: str) -> None:
    keepalive = f"data: {payload}\n\n".encode()
    response = done_response(
        openai(keepalive, chunk({"content": "a"}), keepalive, chunk({"content": "b"}, "stop"), DONE)
    )
    assert response.text() == "ab"


@pytest.mark.parametrize("payload", ["pong", "retry later", "{", "[DONE"])
def test_other_non_json_payloads_are_malformed(payload: str) -> None:
    outcome = openai(chunk({"content": "a"}), f"data: {payload}\n\n".encode(), DONE)
    assert isinstance(outcome.error, MalformedStreamError)
    assert outcome.error.partial is not None
    assert outcome.error.partial.text() == "a"


def test_done_with_nothing_before_it_is_incomplete() -> None:
    outcome = openai(b": ping\n\n", DONE)
    assert isinstance(outcome.error, IncompleteStreamError)


def test_done_after_an_empty_role_chunk_is_incomplete() -> None:
    outcome = openai(chunk({"role": "assistant", "content": ""}), DONE)
    assert isinstance(outcome.error, IncompleteStreamError)


def test_done_after_content_without_finish_reason_is_complete() -> None:
    response = done_response(openai(chunk({"content": "ok"}), DONE))
    assert response.stop_reason == StopReason.END_TURN
    assert response.stop_reason.raw == ""


def test_done_after_only_a_finish_reason_is_complete() -> None:
    response = done_response(openai(chunk(finish="stop"), DONE))
    assert response.content == []
    assert response.stop_reason.raw == "stop"


def test_later_null_finish_reason_never_clears_it() -> None:
    response = done_response(
        openai(chunk({"content": "a"}, "length"), chunk({"content": ""}, None), DONE)
    )
    assert response.stop_reason == StopReason.MAX_TOKENS


def test_usage_null_and_absent_counts_never_clear() -> None:
    usage = {"prompt_tokens": 3, "completion_tokens": 1, "prompt_cache_hit_tokens": 2}
    response = done_response(
        openai(
            chunk({"content": "a"}, usage=usage),
            chunk({"content": "b"}, usage=None),
            chunk(finish="stop", usage={"completion_tokens": 2}),
            DONE,
        )
    )
    assert (response.usage.input_tokens, response.usage.output_tokens) == (3, 2)
    assert response.usage.cache_read_tokens == 2  # DeepSeek's top-level cache count


def test_anthropic_done_marker_before_the_stop_reason_is_incomplete() -> None:
    cut = anthropic("end_turn").split(b"event: message_delta")[0]
    outcome = run_chunks([cut + DONE], "anthropic")
    assert isinstance(outcome.error, IncompleteStreamError)
    assert outcome.error.partial is not None
    assert outcome.error.partial.text() == "x"


def test_anthropic_done_marker_after_the_stop_reason_ends_the_answer() -> None:
    before_stop = anthropic("end_turn").split(b"event: message_stop")[0]
    response = done_response(run_chunks([before_stop + DONE], "anthropic"))
    assert response.stop_reason == StopReason.END_TURN


# -- n > 1 --------------------------------------------------------------------------------


def test_choice_option_selects_another_choice() -> None:
    data = (FIXTURES / "openai-compat" / "n2-choices.sse").read_bytes()
    response = done_response(run_chunks([data], choice=1))
    assert response.content == [Text("Tails, and more")]
    assert response.stop_reason == StopReason.MAX_TOKENS
    assert response.usage.output_tokens == 5


def test_choice_index_missing_means_choice_zero() -> None:
    frame = b'data: {"id":"x","model":"m","choices":[{"delta":{"content":"hi"}}]}\n\n'
    assert done_response(openai(frame, chunk(finish="stop"), DONE)).text() == "hi"


# -- tool-call fragments --------------------------------------------------------------------


def test_tool_block_starts_at_first_fragment_even_without_a_name() -> None:
    outcome = openai(
        chunk({"tool_calls": [call(0, "call_a", "", "")]}),
        chunk({"tool_calls": [call(0, None, "lookup", '{"q": 1}')]}),
        chunk(finish="tool_calls"),
        DONE,
    )
    starts = [e for e in outcome.events if isinstance(e, BlockStart)]
    ends = [e for e in outcome.events if isinstance(e, BlockEnd)]
    first = starts[0].block
    assert isinstance(first, ToolUse)
    assert (first.id, first.name, first.input.value) == ("call_a", "", {})
    assert isinstance(ends[0].block, ToolUse)
    assert ends[0].block.name == "lookup"


def test_different_id_without_name_is_the_same_call(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="laminate"):
        response = done_response(
            openai(
                chunk({"tool_calls": [call(0, "call_a", "f", '{"x":')]}),
                chunk({"tool_calls": [call(0, "call_b", None, " 1}")]}),
                chunk(finish="tool_calls"),
                DONE,
            )
        )
    assert [(t.id, t.name, t.input.value) for t in response.tool_uses()] == [
        ("call_a", "f", {"x": 1})
    ]
    assert "call_b" in caplog.text


def test_different_id_and_name_at_a_known_index_is_a_new_call() -> None:
    response = done_response(
        openai(
            chunk({"tool_calls": [call(0, "call_a", "f", "{}")]}),
            chunk({"tool_calls": [call(0, "call_b", "g", '{"y": 2}')]}),
            chunk(finish="tool_calls"),
            DONE,
        )
    )
    assert [(t.id, t.name) for t in response.tool_uses()] == [("call_a", "f"), ("call_b", "g")]


def test_new_id_and_name_before_the_first_call_has_a_name_continue_it() -> None:
    # The call at index 0 has no name yet: the element names it, it does not start a
    # new call (its id conflicts and is logged).
    response = done_response(
        openai(
            chunk({"tool_calls": [call(0, "call_a", "", '{"x":')]}),
            chunk({"tool_calls": [call(0, "call_b", "f", " 1}")]}),
            chunk(finish="tool_calls"),
            DONE,
        )
    )
    assert [(t.id, t.name) for t in response.tool_uses()] == [("call_a", "f")]


def test_conflicting_name_is_logged_and_the_first_kept(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="laminate"):
        response = done_response(
            openai(
                chunk({"tool_calls": [call(0, None, "first", '{"a":')]}),
                chunk({"tool_calls": [call(0, None, "second", " 1}")]}),
                chunk(finish="tool_calls"),
                DONE,
            )
        )
    assert response.tool_uses()[0].name == "first"
    assert "second" in caplog.text


def test_a_new_index_is_a_new_call_even_with_a_known_id() -> None:
    # The index is the key: a repeated id at another index is another call, and gets
    # a unique id of its own.
    response = done_response(
        openai(
            chunk({"tool_calls": [call(0, "dup", "f", "{}")]}),
            chunk({"tool_calls": [call(1, "dup", "g", "{}")]}),
            chunk(finish="tool_calls"),
            DONE,
        )
    )
    calls = response.tool_uses()
    assert [c.name for c in calls] == ["f", "g"]
    assert calls[0].id == "dup"
    assert calls[1].id not in ("", "dup")


def test_object_arguments_are_one_fragment_of_compact_json() -> None:
    outcome = openai(
        chunk({"tool_calls": [call(0, "c", "f", {"city": "Zürich", "n": [1, 2]})]}),
        chunk(finish="tool_calls"),
        DONE,
    )
    fragments = [e.fragment for e in outcome.events if isinstance(e, ToolInputDelta)]
    assert fragments == ['{"city":"Zürich","n":[1,2]}']


def test_arguments_after_the_call_was_finished_are_malformed() -> None:
    outcome = openai(
        chunk({"tool_calls": [call(0, "c", "f", "{}")]}, "tool_calls"),
        chunk({"tool_calls": [call(0, None, None, '{"late": true}')]}),
        DONE,
    )
    assert isinstance(outcome.error, MalformedStreamError)
    assert "after the call" in str(outcome.error)
    assert outcome.error.partial is not None
    assert outcome.error.partial.tool_uses()[0].id == "c"


def test_cut_off_call_is_invalid_even_if_it_parses() -> None:
    response = done_response(
        openai(chunk({"tool_calls": [call(0, "c", "f", '{"a": 1}')]}, "length"), DONE)
    )
    assert isinstance(response.content[0], InvalidToolUse)
    assert response.content[0].raw_input == '{"a": 1}'


def test_tool_calls_that_are_not_a_list_are_malformed() -> None:
    outcome = openai(chunk({"tool_calls": {"index": 0}}), DONE)
    assert isinstance(outcome.error, MalformedStreamError)


# -- errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "error_type", "retryable"),
    [
        ({"error": {"code": 429, "message": "slow down"}}, "429", True),
        ({"error": {"code": 400, "message": "bad"}}, "400", False),
        (
            {
                "error": {
                    "code": 502,
                    "message": "m",
                    "metadata": {"error_type": "provider_overloaded"},
                }
            },
            "provider_overloaded",
            True,
        ),
        ({"error": {"message": "m", "type": "server_error"}}, "server_error", True),
        (
            {"error": {"message": "m", "type": "invalid_request_error", "code": "x"}},
            "invalid_request_error",
            False,
        ),
        ({"error": {"message": "m", "code": "500"}}, "500", True),
        ({"error": "model runner stopped"}, "error", False),
        (
            {"object": "error", "message": "m", "type": "BadRequestError", "code": 400},
            "BadRequestError",
            False,
        ),
    ],
)
def test_error_payload_classification(payload: Any, error_type: str, retryable: bool) -> None:
    error = error_from_payload(payload)
    assert (error.error_type, error.retryable) == (error_type, retryable)
    assert error.raw == payload


def test_error_event_without_error_key_is_a_provider_error() -> None:
    frame = b'event: error\ndata: {"message": "overloaded", "type": "overloaded_error"}\n\n'
    outcome = openai(chunk({"content": "a"}), frame)
    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.error_type == "overloaded_error"
    assert outcome.error.retryable


# -- reasoning shapes ------------------------------------------------------------------------


def test_encrypted_details_without_ids_are_separate_blocks() -> None:
    details = [
        {"type": "reasoning.encrypted", "data": "AAA"},
        {"type": "reasoning.encrypted", "data": "BBB"},
    ]
    response = done_response(
        openai(chunk({"reasoning_details": details}), chunk({"content": "x"}, "stop"), DONE)
    )
    assert response.content == [
        Reasoning("", "AAA", True, None),
        Reasoning("", "BBB", True, None),
        Text("x"),
    ]


def test_summary_details_are_reasoning_text() -> None:
    details = [{"type": "reasoning.summary", "summary": "Plan.", "id": "rs_1"}]
    response = done_response(
        openai(chunk({"reasoning_details": details}), chunk({"content": "x"}, "stop"), DONE)
    )
    assert response.content[0] == Reasoning("Plan.", None, False, "rs_1")


# -- <think> tags (think_tags=True) ----------------------------------------------------------


def split_all(deltas: list[str]) -> list[tuple[bool, str]]:
    splitter = ThinkSplitter()
    pieces = [p for d in deltas for p in splitter.feed(d)] + splitter.flush()
    merged: list[tuple[bool, str]] = []
    for is_reasoning, text in pieces:
        if merged and merged[-1][0] == is_reasoning:
            merged[-1] = (is_reasoning, merged[-1][1] + text)
        else:
            merged.append((is_reasoning, text))
    return merged


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>plan</think>answer", [(True, "plan"), (False, "answer")]),
        ("  \n<think>\nplan\n</think>\n\nanswer", [(True, "\nplan\n"), (False, "answer")]),
        ("answer <think>not reasoning</think>", [(False, "answer <think>not reasoning</think>")]),
        ("<thinking>x</thinking>", [(False, "<thinking>x</thinking>")]),
        ("<think>never closed", [(True, "never closed")]),
        ("<think>cut </thi", [(True, "cut </thi")]),
        ("<thi", [(False, "<thi")]),
        ("  ", [(False, "  ")]),
        ("<think></think>", []),
        ("<think>a</think>b<think>c</think>", [(True, "a"), (False, "b<think>c</think>")]),
        ("", []),
    ],
)
def test_think_splitter(text: str, expected: list[tuple[bool, str]]) -> None:
    assert split_all([text]) == expected


@settings(max_examples=200, deadline=None)
@given(
    text=st.sampled_from(
        [
            " <think>\nr < s </think x\n</think>\n\nans <think> wer",
            "<think>a</think>",
            "<thin>k",
            "\n<think>x</thinK></think>  y",
        ]
    ),
    cuts=st.lists(st.integers(0, 60), max_size=10),
)
def test_think_splitter_ignores_where_deltas_are_cut(text: str, cuts: list[int]) -> None:
    deltas = [part.decode() for part in split_at(text.encode(), cuts)]
    assert split_all(deltas) == split_all([text])


def test_think_tags_option_on_an_openai_stream() -> None:
    data = (FIXTURES / "openai-compat" / "think-tags-in-text.sse").read_bytes()
    whole = run_chunks([data], think_tags=True)
    response = done_response(whole)
    assert response.content == [
        Reasoning("\nShort question. Use the <b> tag? No.\n"),
        Text("Write <think> literally."),
    ]
    for chunks in (lines_of(data), bytes_of(data)):
        assert run_chunks(chunks, think_tags=True).events == whole.events


def test_think_tags_option_on_an_ollama_stream() -> None:
    data = (FIXTURES / "ollama-drift" / "think-tags-in-content.ndjson").read_bytes()
    whole = run_chunks([data], think_tags=True)
    response = done_response(whole)
    assert response.content == [Reasoning("\nThey want the date.\n"), Text("It is Friday.")]
    assert [type(e) for e in whole.events if isinstance(e, ReasoningDelta)]
    assert run_chunks(bytes_of(data), think_tags=True).events == whole.events


def test_think_tags_unclosed_at_the_end_of_the_stream_is_reasoning() -> None:
    response = done_response(
        openai(
            chunk({"content": "<think>still thinking </th"}),
            chunk(finish="length"),
            DONE,
            think_tags=True,
        )
    )
    assert response.content == [Reasoning("still thinking </th")]
