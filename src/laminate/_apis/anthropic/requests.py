"""Anthropic Messages: the ``tools`` entry, the assistant turn, the tool results."""

from __future__ import annotations

from collections.abc import Sequence

from ..._core.response import InvalidToolUse, NormalizedResponse, Reasoning, Text, ToolUse, Unknown
from ..shapes import (
    arguments_object,
    chat_request,
    copy_value,
    described,
)
from ..spec import Message, ToolDefinition, ToolOutcome

__all__ = ["assistant", "first_request", "results", "tool"]


def tool(tool: ToolDefinition) -> Message:
    return {"name": tool.name, **described(tool), "input_schema": copy_value(tool.parameters)}


def assistant(response: NormalizedResponse, reasoning_field: str | None) -> Message:
    own = response.provider == "anthropic"
    content: list[Message] = []
    for block in response.content:
        match block:
            case Reasoning(redacted=True, signature=str(data)) if own:
                content.append({"type": "redacted_thinking", "data": data})
            case Reasoning(redacted=False, signature=str(signature)) if own:
                content.append({"type": "thinking", "thinking": block.text, "signature": signature})
            case Text(text=text) if text:  # the API rejects empty text blocks
                content.append({"type": "text", "text": text})
            case ToolUse() | InvalidToolUse():
                content.append(
                    {
                        "type": "tool_use",
                        "id": block.id,
                        "name": block.name,
                        "input": arguments_object(block),
                    }
                )
            case Unknown(block_type="citation"):
                pass  # it annotates the text sent back: not a block of a request
            case Unknown(block_type=kind, data=data) if own:
                content.append({"type": kind, **copy_value(data.value or {})})
            case _:
                pass  # unsigned or foreign reasoning cannot be sent back
    return {"role": "assistant", "content": content}


def results(results: Sequence[ToolOutcome]) -> list[Message]:
    if not results:
        return []
    blocks = [
        {
            "type": "tool_result",
            "tool_use_id": r.call_id,
            "content": r.output,
            "is_error": not r.ok,
        }
        for r in results
    ]
    return [{"role": "user", "content": blocks}]


def first_request(model: str, prompt: str, tools: list[Message]) -> Message:
    """A streamed first request (Messages requires ``max_tokens``)."""
    return {**chat_request(model, prompt, tools), "max_tokens": 2048}
