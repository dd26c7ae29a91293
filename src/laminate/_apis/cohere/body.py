"""A complete Cohere v2 chat body for a normalized response (the writer behind the mock
server's non-streaming answers).

Text and thinking become ``message.content`` items, the tool plan ``message.tool_plan``,
calls ``message.tool_calls`` (arguments as a JSON string), ``Unknown("citation")``
blocks ``message.citations``, and other ``Unknown`` blocks content items of their own
type. A stop reason of another API is written as Cohere's name for its kind.
"""

from __future__ import annotations

from typing import Any, Final

from ..._core.flex import FlexValue
from ..._core.response import InvalidToolUse, NormalizedResponse, Reasoning, Text, ToolUse, Unknown
from ..shapes import arguments_text, copy_value, counts
from .stream import PLAN_ID, STOP_REASONS

__all__ = ["write_body"]

_FINISH: Final = {str(kind): raw for raw, kind in STOP_REASONS.items()}


def write_body(r: NormalizedResponse) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    citations: list[Any] = []
    plan: list[str] = []
    tool_calls: list[dict[str, Any]] = []
    for block in r.content:
        match block:
            case Text(text):
                content.append({"type": "text", "text": text})
            case Reasoning(text, _, _, id) if id == PLAN_ID:
                plan.append(text)
            case Reasoning(text):
                content.append({"type": "thinking", "thinking": text})
            case ToolUse() | InvalidToolUse():
                tool_calls.append(
                    {
                        "id": block.id,
                        "type": "function",
                        "function": {"name": block.name, "arguments": arguments_text(block)},
                    }
                )
            case Unknown("citation", FlexValue(value=dict() as data)):
                citations.append(copy_value(data))
            case Unknown(block_type, FlexValue(value=dict() as data)):
                content.append({**copy_value(data), "type": block_type})
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if plan:
        message["tool_plan"] = "".join(plan)
    if tool_calls:
        message["tool_calls"] = tool_calls
    if citations:
        message["citations"] = citations
    stop = r.stop_reason
    finish = stop.raw if r.provider == "cohere" else _FINISH.get(str(stop), stop.raw)
    u = r.usage
    usage: dict[str, Any] = {
        "tokens": counts(input_tokens=u.input_tokens, output_tokens=u.output_tokens)
    }
    if u.cache_read_tokens is not None:
        usage["cached_tokens"] = u.cache_read_tokens
    return {"id": r.id, "message": message, "finish_reason": finish or None, "usage": usage}
