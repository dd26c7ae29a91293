"""What the request shapes and body writers of every API share: reading a normalized
response's calls and reasoning, and copying values so no two messages share state."""

from __future__ import annotations

import copy
import json
from typing import Any, Final

from .._core.response import InvalidToolUse, NormalizedResponse, Reasoning, ToolUse
from .spec import ToolDefinition, ToolOutcome

__all__ = [
    "CUSTOM_INPUT",
    "ERROR_PREFIX",
    "ToolCall",
    "arguments_object",
    "arguments_text",
    "calls",
    "chat_request",
    "copy_value",
    "counts",
    "described",
    "flagged",
    "is_custom",
    "reasoning_text",
]

ToolCall = ToolUse | InvalidToolUse

ERROR_PREFIX: Final = "Error: "


def described(tool: ToolDefinition) -> dict[str, Any]:
    """``{"description": ...}`` when the tool has one, else nothing."""
    return {"description": tool.description} if tool.description else {}


def calls(response: NormalizedResponse) -> list[ToolCall]:
    """The response's tool calls, finished or not, in order."""
    return [b for b in response.content if isinstance(b, ToolUse | InvalidToolUse)]


#: The one string parameter a custom (free-form) tool has in an API without such tools.
CUSTOM_INPUT: Final = "input"


def is_custom(call: ToolCall) -> bool:
    """Whether the call is a custom (free-form) tool's, its input text."""
    return isinstance(call, ToolUse) and call.kind == "custom"


def arguments_text(call: ToolCall) -> str:
    """The arguments as JSON text (an invalid call's text as the model wrote it; a custom
    call's text as the one string parameter of a function)."""
    if isinstance(call, InvalidToolUse):
        return call.raw_input  # as the model wrote it: the API takes a string
    value = {CUSTOM_INPUT: call.input.value} if is_custom(call) else call.input.value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def arguments_object(call: ToolCall) -> dict[str, Any]:
    """The arguments as an object (``{}`` for a call whose text is not one; a custom
    call's text as the one string parameter of a function)."""
    # An API that wants an object cannot carry text that is not one.
    if isinstance(call, InvalidToolUse):
        return {}
    if is_custom(call):
        return {CUSTOM_INPUT: call.input.value}
    arguments: dict[str, Any] = copy_value(call.input.value)
    return arguments


def reasoning_text(response: NormalizedResponse) -> str:
    """All readable reasoning text, joined."""
    return "".join(b.text for b in response.content if isinstance(b, Reasoning) and not b.redacted)


def flagged(result: ToolOutcome) -> str:
    """The output, marked as an error for an API that has no error flag."""
    if result.ok or result.output.startswith(ERROR_PREFIX.strip()):
        return result.output
    return ERROR_PREFIX + result.output


def counts(**values: int | None) -> dict[str, int]:
    """The counts that were reported, without the ``None`` ones."""
    return {key: value for key, value in values.items() if value is not None}


def copy_value(value: Any) -> Any:
    """A deep copy, so a message handed out shares nothing with the response."""
    return copy.deepcopy(value)


def chat_request(
    model: str, prompt: str, tools: list[dict[str, Any]], *, key: str = "messages"
) -> dict[str, Any]:
    """A streamed chat request: one user message under ``key``, and the tools."""
    return {
        "model": model,
        "stream": True,
        key: [{"role": "user", "content": prompt}],
        "tools": tools,
    }
