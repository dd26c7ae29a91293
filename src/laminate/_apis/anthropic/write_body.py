"""A complete Anthropic Messages body for a normalized response (the writer behind the mock
server's non-streaming answers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..._core.flex import FlexValue
from ..._core.response import NormalizedResponse, Reasoning, Text, ToolUse, Unknown
from ..writer import new_id
from .write_stream import AnthropicWriter, stop_of, usage_of

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


def _content(blocks: list[Any]) -> list[dict[str, Any]]:
    """The content list; a citation goes into the text block it follows, as sent."""
    content: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, Unknown) and block.block_type == "citation":
            if content and content[-1]["type"] == "text" and isinstance(block.data.value, dict):
                content[-1].setdefault("citations", []).append(block.data.value)
            continue
        written = _anthropic_block(block)
        if written is not None:
            content.append(written)
    return content


def write_body(r: NormalizedResponse) -> dict[str, Any]:
    return {
        "id": r.id or new_id(AnthropicWriter.id_prefix),
        "type": "message",
        "role": "assistant",
        "model": r.model,
        "content": _content(r.content),
        "stop_reason": stop_of(r),
        "stop_sequence": None,
        "usage": usage_of(r),
    }


def error_body(status: int, kind: str, message: str) -> dict[str, Any]:
    """An error body as the Messages API sends one."""
    return {"type": "error", "error": {"type": kind, "message": message}}


_KINDS: Final[Mapping[int, str]] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def error_kind(status: int) -> str:
    """The error type the Messages API gives an HTTP status."""
    return _KINDS.get(status, "api_error" if status >= 500 else "invalid_request_error")
