"""A complete Chat Completions body for a normalized response (the writer behind the mock
server's non-streaming answers)."""

from __future__ import annotations

from typing import Any

from ..._core.response import InvalidToolUse, NormalizedResponse, ToolUse, Unknown
from ..shapes import arguments_text, counts
from .encode import stop_string

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
    u = r.usage
    usage: dict[str, Any] = counts(prompt_tokens=u.input_tokens, completion_tokens=u.output_tokens)
    usage["total_tokens"] = (u.input_tokens or 0) + (u.output_tokens or 0)
    if u.cache_read_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": u.cache_read_tokens}
    if u.reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": u.reasoning_tokens}
    choice = {"index": 0, "message": message, "finish_reason": stop_string(r.stop_reason)}
    return {
        "id": r.id,
        "object": "chat.completion",
        "created": 0,
        "model": r.model,
        "choices": [choice],
        "usage": usage,
    }
