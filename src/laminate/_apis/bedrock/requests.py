"""Bedrock Converse: the ``toolConfig.tools`` entry, the assistant turn, the tool results.

- Tool: ``{"toolSpec": {"name", "description", "inputSchema": {"json": schema}}}``.
- Assistant: one message of content blocks in order: ``reasoningContent`` (the text with
  its signature, or a redacted block's data) only when the response came from Bedrock,
  which alone can verify it; ``text``; ``toolUse`` with the arguments as an object; and
  the server-tool blocks laminate keeps as ``Unknown``, echoed as they came.
  ``redactedContent`` is handed back as ``bytes``, the form boto3 takes and
  base64-encodes itself (a JSON body written by hand wants the base64 text instead:
  ``Reasoning.signature``).
- Results: ONE ``user`` message of ``toolResult`` blocks, ``status: "error"`` on a failed
  one (the field is left out otherwise: some models reject it). A ``toolResult`` always
  holds one ``text`` block, since Bedrock rejects an empty content list; an empty output
  is sent as ``"(no output)"`` because models behind Bedrock reject empty text too.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any, Final

from ..._core.response import InvalidToolUse, NormalizedResponse, Reasoning, Text, ToolUse, Unknown
from ..shapes import arguments_object, copy_value, described
from ..spec import Message, ToolDefinition, ToolOutcome

__all__ = ["EMPTY_OUTPUT", "assistant", "first_request", "results", "tool"]

EMPTY_OUTPUT: Final = "(no output)"


def tool(tool: ToolDefinition) -> Message:
    spec = {
        "name": tool.name,
        **described(tool),
        "inputSchema": {"json": copy_value(tool.parameters)},
    }
    return {"toolSpec": spec}


def assistant(response: NormalizedResponse, reasoning_field: str | None) -> Message:
    own = response.provider == "bedrock"
    content: list[Message] = []
    for block in response.content:
        match block:
            case Reasoning(redacted=True, signature=str(data)) if own:
                content.append({"reasoningContent": {"redactedContent": _blob(data)}})
            case Reasoning(redacted=False, signature=str(signature)) if own:
                text = {"text": block.text, "signature": signature}
                content.append({"reasoningContent": {"reasoningText": text}})
            case Text(text=text) if text:  # Bedrock rejects blank text blocks
                content.append({"text": text})
            case ToolUse() | InvalidToolUse():
                call = {"toolUseId": block.id, "name": block.name, "input": arguments_object(block)}
                content.append({"toolUse": call})
            case Unknown(block_type="citation"):
                pass  # it annotates the text sent back: not a block of a request
            case Unknown(block_type=kind, data=data) if own:
                content.append(_unknown_block(kind, copy_value(data.value or {})))
            case _:
                pass  # unsigned or foreign reasoning cannot be sent back
    return {"role": "assistant", "content": content}


def _unknown_block(kind: str, data: dict[str, Any]) -> Message:
    # A server tool's call was a `toolUse` block of type `server_tool_use`.
    return {"toolUse": data} if kind == "server_tool_use" else {kind: data}


def _blob(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return data.encode()  # not base64: sent as the bytes it is


def results(results: Sequence[ToolOutcome]) -> list[Message]:
    if not results:
        return []
    blocks = []
    for r in results:
        result: Message = {"toolUseId": r.call_id, "content": [{"text": r.output or EMPTY_OUTPUT}]}
        if not r.ok:
            result["status"] = "error"
        blocks.append({"toolResult": result})
    return [{"role": "user", "content": blocks}]


def first_request(model: str, prompt: str, tools: list[Message]) -> Message:
    """A Converse first request: content blocks, the tools under ``toolConfig``; the model
    is named in the path, and the endpoint says whether the answer streams."""
    return {
        "messages": [{"role": "user", "content": [{"text": prompt}]}],
        "toolConfig": {"tools": tools},
        "inferenceConfig": {"maxTokens": 2048},
    }
