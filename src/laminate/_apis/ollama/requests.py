"""Ollama's native /api/chat: the ``tools`` entry, the assistant turn, the tool results."""

from __future__ import annotations

from collections.abc import Sequence

from ..._core.response import NormalizedResponse
from ..shapes import (
    arguments_object,
    calls,
    copy_value,
    described,
    flagged,
    reasoning_text,
)
from ..spec import Message, ToolDefinition, ToolOutcome

__all__ = ["assistant", "results", "tool"]


def tool(tool: ToolDefinition) -> Message:
    function = {"name": tool.name, **described(tool), "parameters": copy_value(tool.parameters)}
    return {"type": "function", "function": function}


def assistant(response: NormalizedResponse, reasoning_field: str | None) -> Message:
    message: Message = {"role": "assistant", "content": response.text()}
    thinking = reasoning_text(response)
    if thinking:
        message["thinking"] = thinking
    tool_calls = calls(response)
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "function": {
                    "index": index,
                    "name": call.name,
                    "arguments": arguments_object(call),
                },
            }
            for index, call in enumerate(tool_calls)
        ]
    return message


def results(results: Sequence[ToolOutcome]) -> list[Message]:
    return [
        {"role": "tool", "tool_name": r.name, "tool_call_id": r.call_id, "content": flagged(r)}
        for r in results
    ]
