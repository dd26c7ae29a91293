"""The assembler's rules (``_core/assembler.py``), through the stream that exercises them:
a tool call is finished only when the provider says so and its arguments parse as an
object; ids are never empty or repeated; a call cut off is invalid and keeps its text;
the argument cap."""

from __future__ import annotations

import pytest

from laminate import (
    BlockEnd,
    IncompleteStreamError,
    InvalidToolUse,
    MalformedStreamError,
    StopReason,
    StreamNormalizer,
    ToolInputDelta,
    ToolUse,
)

from .builders import chat_chunk, sse_of
from .support import run_chunks


def test_tool_call_is_not_finalized_because_its_buffer_parses() -> None:
    normalizer = StreamNormalizer("openai")
    opener = {
        "index": 0,
        "id": "call_a",
        "type": "function",
        "function": {"name": "f", "arguments": ""},
    }
    events = normalizer.feed(
        sse_of(
            chat_chunk(tool_calls=[opener]),
            chat_chunk(tool_calls=[{"index": 0, "function": {"arguments": "{}"}}]),
        )
    )
    assert not any(isinstance(e, BlockEnd) for e in events)
    with pytest.raises(IncompleteStreamError) as info:
        normalizer.close()
    partial = info.value.partial
    assert partial is not None
    assert partial.tool_uses() == []
    block = partial.content[0]
    assert isinstance(block, InvalidToolUse)
    assert block.raw_input == "{}"
    assert "unfinished" in block.reason


def test_arguments_that_are_not_an_object_are_invalid() -> None:
    opener = {"index": 0, "id": "call_a", "function": {"name": "f", "arguments": "[1, 2]"}}
    outcome = run_chunks(
        [sse_of(chat_chunk(tool_calls=[opener]), chat_chunk(finish_reason="tool_calls"), "[DONE]")]
    )
    assert outcome.response is not None
    block = outcome.response.content[0]
    assert isinstance(block, InvalidToolUse)
    assert block.raw_input == "[1, 2]"
    assert "not an object" in block.reason
    assert not outcome.response.has_tool_use()


def test_empty_arguments_mean_no_arguments() -> None:
    opener = {"index": 0, "id": "call_a", "function": {"name": "now", "arguments": ""}}
    outcome = run_chunks(
        [sse_of(chat_chunk(tool_calls=[opener]), chat_chunk(finish_reason="tool_calls"), "[DONE]")]
    )
    assert outcome.response is not None
    assert outcome.response.tool_uses() == [
        ToolUse("call_a", "now", outcome.response.tool_uses()[0].input)
    ]
    assert outcome.response.tool_uses()[0].input.value == {}


def test_tool_ids_are_never_empty_or_repeated() -> None:
    calls = [
        {"index": 0, "id": "", "function": {"name": "a", "arguments": "{}"}},
        {"index": 1, "id": "dup", "function": {"name": "b", "arguments": "{}"}},
        {"index": 2, "id": "dup", "function": {"name": "c", "arguments": "{}"}},
    ]
    outcome = run_chunks(
        [sse_of(chat_chunk(tool_calls=calls), chat_chunk(finish_reason="tool_calls"), "[DONE]")]
    )
    assert outcome.response is not None
    ids = [t.id for t in outcome.response.tool_uses()]
    assert all(ids)
    assert len(set(ids)) == 3
    assert ids[1] == "dup"


def test_tool_input_cap() -> None:
    opener = {"index": 0, "id": "c", "function": {"name": "f", "arguments": '{"a": "'}}
    more = [
        chat_chunk(tool_calls=[{"index": 0, "function": {"arguments": "y" * 100}}])
        for _ in range(20)
    ]
    outcome = run_chunks(
        [sse_of(chat_chunk(tool_calls=[opener]), *more)],
        provider="openai",
        max_tool_input_size=1000,
    )
    assert isinstance(outcome.error, MalformedStreamError)
    assert "max_tool_input_size" in str(outcome.error)
    assert outcome.error.partial is not None
    assert isinstance(outcome.error.partial.content[0], InvalidToolUse)


def test_tool_input_delta_events_carry_fragments() -> None:
    opener = {"index": 0, "id": "c", "function": {"name": "f", "arguments": '{"a"'}}
    body = sse_of(
        chat_chunk(tool_calls=[opener]),
        chat_chunk(tool_calls=[{"index": 0, "function": {"arguments": ": 1}"}}]),
    )
    events = StreamNormalizer("openai").feed(body)
    assert [e.fragment for e in events if isinstance(e, ToolInputDelta)] == ['{"a"', ": 1}"]


def test_open_tool_call_at_content_filter_is_cut_off() -> None:
    opener = {"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}
    body = sse_of(
        chat_chunk(tool_calls=[opener]), chat_chunk(finish_reason="content_filter"), "[DONE]"
    )
    outcome = run_chunks([body])
    assert outcome.response is not None
    block = outcome.response.content[0]
    assert isinstance(block, InvalidToolUse)
    assert "content_filter" in block.reason
    assert outcome.response.stop_reason == StopReason.CONTENT_FILTER


def test_a_call_that_never_got_a_name_is_invalid() -> None:
    opener = {"index": 0, "id": "c", "function": {"arguments": "{}"}}
    outcome = run_chunks(
        [sse_of(chat_chunk(tool_calls=[opener]), chat_chunk(finish_reason="tool_calls"), "[DONE]")]
    )
    assert outcome.response is not None
    block = outcome.response.content[0]
    assert isinstance(block, InvalidToolUse)
    assert "name" in block.reason
    assert outcome.response.tool_uses() == []


def test_nan_in_arguments_is_not_json() -> None:
    opener = {"index": 0, "id": "c", "function": {"name": "f", "arguments": '{"x": NaN}'}}
    outcome = run_chunks(
        [sse_of(chat_chunk(tool_calls=[opener]), chat_chunk(finish_reason="tool_calls"), "[DONE]")]
    )
    assert outcome.response is not None
    block = outcome.response.content[0]
    assert isinstance(block, InvalidToolUse)
    assert "NaN" in block.reason


def test_text_after_arguments_sent_whole_follows_their_text() -> None:
    from laminate._core.assembler import Assembler

    more = " " * 200 + '{"b": 2}'
    for cap, refused in ((1000, False), (150, True)):
        assembler = Assembler("ollama", max_tool_input_size=cap)
        assembler.tool_start("k", "call_1", "f")
        assembler.tool_arguments("k", {"a": [1, True]})  # written only when read
        if refused:  # its text and the next fragment pass the cap together
            with pytest.raises(MalformedStreamError, match="max_tool_input_size"):
                assembler.tool_input("k", more)
            continue
        assembler.tool_input("k", more)
        assembler.end("k")
        deltas = [e for e in assembler.events if isinstance(e, ToolInputDelta)]
        assert [d.fragment for d in deltas] == ['{"a":[1,true]}', more]
        [end] = [e for e in assembler.events if isinstance(e, BlockEnd)]
        assert isinstance(end.block, InvalidToolUse)  # two objects are not arguments
        assert end.block.raw_input == '{"a":[1,true]}' + more
        assert deltas[0].is_complete(("a",))
        assert deltas[1].invalid is not None


def test_merging_gives_a_run_of_one_blocks_pieces_as_one_delta() -> None:
    # What the proxy asks of its normalizer: the same content and answer, with each
    # run of plain deltas read at once as one delta.
    from laminate import TextDelta
    from laminate._normalizer import merging

    frames = [chat_chunk(content=f"w{n} ") for n in range(200)]
    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}
    frames.append(chat_chunk(tool_calls=[call]))
    frames += [
        chat_chunk(tool_calls=[{"index": 0, "function": {"arguments": part}}])
        for part in ['{"a"', ": ", "1", "}"] * 1
    ]
    body = sse_of(*frames, "[DONE]")
    one = StreamNormalizer("openai")
    merged = merging(StreamNormalizer("openai"))
    plain = one.feed(body[:1]) + one.feed(body[1:]) + one.close()
    fewer = merged.feed(body[:1]) + merged.feed(body[1:]) + merged.close()
    assert one.response is not None
    assert merged.response is not None
    assert merged.response.to_dict() == one.response.to_dict()
    assert len([e for e in fewer if isinstance(e, TextDelta)]) < 10
    assert len([e for e in plain if isinstance(e, TextDelta)]) >= 200
    merged_args = [e for e in fewer if isinstance(e, ToolInputDelta)]
    assert "".join(e.fragment for e in merged_args) == '{"a": 1}'
    assert merged_args[-1].partial.value == {"a": 1}
