"""A complete Ollama's native /api/chat body for a normalized response (the writer behind the mock
server's non-streaming answers)."""

from __future__ import annotations

from typing import Any

from ..._core.response import NormalizedResponse
from .write_stream import stop_of, usage_of

__all__ = ["error_body", "write_body"]


def write_body(r: NormalizedResponse) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": r.text()}
    reasoning = "".join(b.text for b in r.reasoning())
    if reasoning:
        message["thinking"] = reasoning
    calls = [{"function": {"name": b.name, "arguments": b.input.value}} for b in r.tool_uses()]
    if calls:
        message["tool_calls"] = calls
    return {
        "model": r.model,
        "created_at": "1970-01-01T00:00:00Z",
        "message": message,
        "done": True,
        "done_reason": stop_of(r),
        **usage_of(r),
    }


def error_body(status: int, kind: str, message: str) -> dict[str, Any]:
    """An error body as Ollama sends one: the message only."""
    return {"error": message}
