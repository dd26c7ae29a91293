"""StopReason, Usage, blocks and NormalizedResponse accessors."""

from __future__ import annotations

import copy
import pickle

import pytest

from laminate import (
    ContentBlock,
    FlexValue,
    InvalidToolUse,
    NormalizedResponse,
    Reasoning,
    StopReason,
    Text,
    ToolUse,
    Unknown,
    Usage,
)


def test_named_kinds_compare_equal_whatever_their_raw() -> None:
    assert StopReason.END_TURN.with_raw("stop") == StopReason.END_TURN
    assert StopReason.TOOL_USE.with_raw("tool_calls") == StopReason.TOOL_USE.with_raw("stop")
    assert StopReason.END_TURN != StopReason.MAX_TOKENS
    assert StopReason.TOOL_USE.with_raw("stop").raw == "stop"
    assert hash(StopReason.END_TURN.with_raw("x")) == hash(StopReason.END_TURN)


def test_unknown_stop_reason_is_kept() -> None:
    reason = StopReason.unknown("eos_token")
    assert reason.is_unknown
    assert reason.raw == "eos_token"
    assert str(reason) == "eos_token"
    assert reason.kind is None
    assert reason == StopReason.unknown("eos_token")
    assert reason != StopReason.unknown("eos")
    assert reason != StopReason.END_TURN
    assert not StopReason.END_TURN.is_unknown
    assert str(StopReason.END_TURN.with_raw("stop")) == "end_turn"
    assert "eos_token" in repr(reason)


def test_stop_reason_is_immutable_and_picklable() -> None:
    reason = StopReason.MAX_TOKENS.with_raw("length")
    with pytest.raises(AttributeError):
        reason._raw = "x"
    again = pickle.loads(pickle.dumps(reason))
    assert again == reason
    assert again.raw == "length"
    assert copy.deepcopy(reason).raw == "length"


def test_stop_reason_rejects_unknown_kind_names() -> None:
    with pytest.raises(ValueError, match="unknown"):
        StopReason("finished", "finished")


def _response(content: list[ContentBlock]) -> NormalizedResponse:
    return NormalizedResponse("id", "model", "openai", content, StopReason.END_TURN, Usage(1, 2))


def test_accessors() -> None:
    call = ToolUse("c1", "f", FlexValue({"a": 1}))
    bad = InvalidToolUse("c2", "g", '{"a":', "unfinished")
    response = _response(
        [Reasoning("think"), Text("Hello, "), call, bad, Text("world"), Unknown("x", FlexValue({}))]
    )
    assert response.text() == "Hello, world"
    assert response.tool_uses() == [call]
    assert response.has_tool_use()
    assert response.reasoning() == [Reasoning("think")]
    assert not _response([bad]).has_tool_use()


def test_block_helpers() -> None:
    call = ToolUse("c1", "f", FlexValue({"a": 1}))
    assert call.as_tool_use() == ("c1", "f", FlexValue({"a": 1}))
    assert call.as_text() is None
    assert Text("hi").as_text() == "hi"
    assert Text("hi").as_tool_use() is None
    for block in (InvalidToolUse("c", "f", "{", "r"), Reasoning("t"), Unknown("x", FlexValue(1))):
        assert block.as_tool_use() is None
        assert block.as_text() is None


def test_usage_raw_takes_no_part_in_equality() -> None:
    assert Usage(1, 2, raw={"a": 1}) == Usage(1, 2, raw={"b": 2})
    assert Usage(1, 2) != Usage(1, 3)
    assert Usage().input_tokens is None


def test_blocks_are_frozen() -> None:
    with pytest.raises(AttributeError):
        Text("x").text = "y"  # type: ignore[misc]
