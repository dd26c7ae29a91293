"""A complete Cohere v2 chat body for a normalized response (the writer behind the mock
server's non-streaming answers).

Text and thinking become ``message.content`` items, the tool plan ``message.tool_plan``,
calls ``message.tool_calls`` (arguments as a JSON string), ``Unknown("citation")``
blocks ``message.citations``, and other ``Unknown`` blocks content items of their own
type. The stop reason and usage are the stream writer's (``encode.stop_of``,
``encode.usage_of``).
"""

from __future__ import annotations

from typing import Any

from ..._core.flex import FlexValue
from ..._core.response import InvalidToolUse, NormalizedResponse, Reasoning, Text, ToolUse, Unknown
from ..shapes import arguments_text, copy_value
from ..writer import new_id
from .read import PLAN_ID
from .write_stream import CohereWriter, stop_of, usage_of

__all__ = ["write_body"]


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
    answer_id = r.id or new_id(CohereWriter.id_prefix)
    return {"id": answer_id, "message": message, "finish_reason": stop_of(r), "usage": usage_of(r)}
