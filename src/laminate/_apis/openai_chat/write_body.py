"""A complete Chat Completions body for a normalized response (the writer behind the mock
server's non-streaming answers)."""

from __future__ import annotations

from typing import Any

from ..._core.response import InvalidToolUse, NormalizedResponse, ToolUse, Unknown
from ..shapes import arguments_text
from ..writer import new_id
from .write_stream import OpenAIChatWriter, stop_of, usage_of

__all__ = ["write_body"]


def write_body(r: NormalizedResponse) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": r.text() or None}
    reasoning = "".join(b.text for b in r.reasoning())
    if reasoning:
        message["reasoning_content"] = reasoning
    calls = [
        {
            "id": b.id,
            "type": "function",
            "function": {"name": b.name, "arguments": arguments_text(b)},
        }
        for b in r.content
        if isinstance(b, ToolUse | InvalidToolUse)
    ]
    if calls:
        message["tool_calls"] = calls
    annotations = [
        b.data.value for b in r.content if isinstance(b, Unknown) and b.block_type == "citation"
    ]
    if annotations:
        message["annotations"] = annotations
    choice = {"index": 0, "message": message, "finish_reason": stop_of(r)}
    body: dict[str, Any] = {
        "id": r.id or new_id(OpenAIChatWriter.id_prefix),
        "object": "chat.completion",
        "created": 0,
        "model": r.model,
        "choices": [choice],
    }
    usage = usage_of(r)
    if usage:
        body["usage"] = usage
    return body
