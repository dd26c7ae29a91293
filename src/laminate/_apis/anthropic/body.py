"""A complete Anthropic Messages body for a normalized response (the writer behind the mock
server's non-streaming answers)."""

from __future__ import annotations

from typing import Any

from ..._core.flex import FlexValue
from ..._core.response import NormalizedResponse, Reasoning, Text, ToolUse, Unknown
from ..shapes import counts

__all__ = ["error_body", "write_body"]


def _anthropic_block(block: Any) -> dict[str, Any] | None:
    match block:
        case Text(text):
            return {"type": "text", "text": text}
        case Reasoning(text, signature, True, _):
            return {"type": "redacted_thinking", "data": signature or ""}
        case Reasoning(text, signature, False, _):
            return {"type": "thinking", "thinking": text, "signature": signature or ""}
        case ToolUse(id, name, input):
            return {"type": "tool_use", "id": id, "name": name, "input": input.value}
        case Unknown(block_type, FlexValue(value=dict() as data)):
            return {**data, "type": block_type}
    return None  # an InvalidToolUse has no Anthropic body form: its input must be an object


def write_body(r: NormalizedResponse) -> dict[str, Any]:
    u = r.usage
    return {
        "id": r.id,
        "type": "message",
        "role": "assistant",
        "model": r.model,
        "content": [b for b in map(_anthropic_block, r.content) if b is not None],
        "stop_reason": r.stop_reason.raw or None,
        "stop_sequence": None,
        "usage": counts(
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            cache_read_input_tokens=u.cache_read_tokens,
            cache_creation_input_tokens=u.cache_write_tokens,
        ),
    }


def error_body(status: int, kind: str, message: str) -> dict[str, Any]:
    """An error body as the Messages API sends one."""
    return {"type": "error", "error": {"type": kind, "message": message}}
