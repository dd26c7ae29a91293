"""Cohere v2 chat: the ``tools`` entry, the assistant turn, the tool results.

- ``tools``: ``{"type": "function", "function": {name, description, parameters}}``.
- The assistant turn: one message with ``tool_plan`` (the plan this API wrote, echoed
  only to Cohere), ``tool_calls`` (ids, ``type: "function"``, arguments as a JSON string;
  an ``InvalidToolUse`` keeps its raw text), ``content`` (the text, as a string, when
  there is any) and the ``citations`` Cohere sent with it. Thinking is not echoed: the
  request's assistant content takes text only.
- Results: one ``tool`` message per result with ``tool_call_id``; the content is the
  output as a string. The format has no error flag, so a failed result's content starts
  with ``Error:``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..._core.response import NormalizedResponse, Reasoning, Unknown
from ..shapes import arguments_text, calls, copy_value, described, flagged
from ..spec import Message, ToolDefinition, ToolOutcome
from .stream import PLAN_ID

__all__ = ["assistant", "results", "tool"]


def tool(tool: ToolDefinition) -> Message:
    function = {"name": tool.name, **described(tool), "parameters": copy_value(tool.parameters)}
    return {"type": "function", "function": function}


def assistant(response: NormalizedResponse, reasoning_field: str | None) -> Message:
    message: Message = {"role": "assistant"}
    own = response.provider == "cohere"
    plan = "".join(b.text for b in response.content if isinstance(b, Reasoning) and b.id == PLAN_ID)
    if plan and own:
        message["tool_plan"] = plan
    tool_calls = calls(response)
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": arguments_text(call)},
            }
            for call in tool_calls
        ]
    text = response.text()
    if text or not tool_calls:
        message["content"] = text
    citations = [
        copy_value(b.data.value)
        for b in response.content
        if isinstance(b, Unknown) and b.block_type == "citation" and isinstance(b.data.value, dict)
    ]
    if citations and own:
        message["citations"] = citations
    return message


def results(results: Sequence[ToolOutcome]) -> list[Message]:
    return [{"role": "tool", "tool_call_id": r.call_id, "content": flagged(r)} for r in results]
