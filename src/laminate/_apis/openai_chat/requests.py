"""Chat Completions: the ``tools`` entry, the assistant turn, the tool results."""

from __future__ import annotations

from collections.abc import Sequence

from ..._core.response import NormalizedResponse, ToolUse
from ..shapes import (
    ToolCall,
    arguments_text,
    calls,
    copy_value,
    described,
    flagged,
    is_custom,
    reasoning_text,
)
from ..spec import Message, ToolDefinition, ToolOutcome

__all__ = ["assistant", "results", "tool"]


def tool(tool: ToolDefinition) -> Message:
    if tool.input_format is not None:  # a custom (free-form) tool
        custom = {"name": tool.name, **described(tool), "format": copy_value(tool.input_format)}
        return {"type": "custom", "custom": custom}
    function = {"name": tool.name, **described(tool), "parameters": copy_value(tool.parameters)}
    if tool.strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def assistant(response: NormalizedResponse, reasoning_field: str | None) -> Message:
    tool_calls = calls(response)
    text = response.text()
    message: Message = {"role": "assistant", "content": text or (None if tool_calls else "")}
    if reasoning_field is not None:
        reasoning = reasoning_text(response)
        if reasoning:
            message[reasoning_field] = reasoning
    if tool_calls:
        message["tool_calls"] = [_call(call) for call in tool_calls]
    return message


def _call(call: ToolCall) -> Message:
    if isinstance(call, ToolUse) and is_custom(call):
        custom = {"name": call.name, "input": call.input.value}
        return {"id": call.id, "type": "custom", "custom": custom}
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments_text(call)},
    }


def results(results: Sequence[ToolOutcome]) -> list[Message]:
    return [{"role": "tool", "tool_call_id": r.call_id, "content": flagged(r)} for r in results]
