"""The Responses API: the ``tools`` entry, the assistant turn, the tool results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._core.response import InvalidToolUse, NormalizedResponse, Reasoning, Text, ToolUse, Unknown
from ..shapes import (
    arguments_text,
    chat_request,
    copy_value,
    described,
    flagged,
    is_custom,
)
from ..spec import Message, ToolDefinition, ToolOutcome

__all__ = ["assistant", "first_request", "results", "tool"]


def tool(tool: ToolDefinition) -> Message:
    if tool.input_format is not None:  # a custom (free-form) tool
        return {
            "type": "custom",
            "name": tool.name,
            **described(tool),
            "format": _flat_format(tool.input_format),
        }
    # ``strict`` defaults to true in this API, which would reject an ordinary schema
    # (optional properties): say which one it is.
    return {
        "type": "function",
        "name": tool.name,
        **described(tool),
        "parameters": copy_value(tool.parameters),
        "strict": tool.strict,
    }


def assistant(response: NormalizedResponse, reasoning_field: str | None) -> list[Message]:
    own = response.provider == "openai-responses"
    items: list[Message] = []
    for block in response.content:
        match block:
            case Reasoning() if own and (block.id or block.signature):
                items.append(_responses_reasoning(block))
            case Text(text=text) if text:
                items.append({"type": "message", "role": "assistant", "content": text})
            case ToolUse(id=call_id, name=name, input=text) if is_custom(block):
                items.append(
                    {
                        "type": "custom_tool_call",
                        "call_id": call_id,
                        "name": name,
                        "input": text.value,
                    }
                )
            case ToolUse() | InvalidToolUse():
                items.append(
                    {
                        "type": "function_call",
                        "call_id": block.id,
                        "name": block.name,
                        "arguments": arguments_text(block),
                    }
                )
            case Unknown(block_type="citation"):
                pass  # it annotates the text sent back: not a block of a request
            case Unknown(block_type=kind, data=data) if own:
                items.append({"type": kind, **copy_value(data.value or {})})
            case _:
                pass  # reasoning from another API, empty text
    return items


def _responses_reasoning(block: Reasoning) -> Message:
    item: Message = {"type": "reasoning"}
    if block.id:
        item["id"] = block.id
    # The summary is required (possibly empty); the text comes back as one part.
    item["summary"] = [{"type": "summary_text", "text": block.text}] if block.text else []
    if block.signature is not None:
        item["encrypted_content"] = block.signature
    return item


def results(results: Sequence[ToolOutcome]) -> list[Message]:
    return [
        {
            "type": "custom_tool_call_output" if r.kind == "custom" else "function_call_output",
            "call_id": r.call_id,
            "output": flagged(r),
        }
        for r in results
    ]


def _flat_format(input_format: dict[str, Any]) -> dict[str, Any]:
    """This API spells a grammar's fields beside its type (``{"type": "grammar",
    "syntax", "definition"}``); Chat Completions nests them in ``grammar``."""
    grammar = input_format.get("grammar")
    if input_format.get("type") == "grammar" and isinstance(grammar, dict):
        return {"type": "grammar", **copy_value(grammar)}
    copied: dict[str, Any] = copy_value(input_format)
    return copied


def first_request(model: str, prompt: str, tools: list[Message]) -> Message:
    """A streamed first request: the prompt as the one ``input`` item."""
    return chat_request(model, prompt, tools, key="input")
