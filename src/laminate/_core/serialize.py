"""Plain-JSON renderings of events and responses (the command line prints these)."""

from __future__ import annotations

from typing import Any

from .events import (
    BlockEnd,
    BlockStart,
    Event,
    ReasoningDelta,
    ResponseDone,
    ResponseStart,
    TextDelta,
    ToolInputDelta,
)
from .response import (
    ContentBlock,
    InvalidToolUse,
    NormalizedResponse,
    Reasoning,
    StopReason,
    Text,
    ToolUse,
    Unknown,
    Usage,
)

__all__ = [
    "block_to_dict",
    "event_to_dict",
    "response_to_dict",
    "stop_reason_to_dict",
    "usage_to_dict",
]


def block_to_dict(block: ContentBlock) -> dict[str, Any]:
    match block:
        case Text(text):
            return {"type": "text", "text": text}
        case ToolUse(id, name, input):
            return {"type": "tool_use", "id": id, "name": name, "input": input.value}
        case InvalidToolUse(id, name, raw_input, reason):
            return {
                "type": "invalid_tool_use",
                "id": id,
                "name": name,
                "raw_input": raw_input,
                "reason": reason,
            }
        case Reasoning(text, signature, redacted, id):
            return {
                "type": "reasoning",
                "text": text,
                "signature": signature,
                "redacted": redacted,
                "id": id,
            }
        case Unknown(block_type, data):
            return {"type": "unknown", "block_type": block_type, "data": data.value}
    raise TypeError(f"not a content block: {block!r}")  # pragma: no cover


def stop_reason_to_dict(stop: StopReason) -> dict[str, Any]:
    return {"kind": stop.kind, "raw": stop.raw}


def usage_to_dict(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
    }


def response_to_dict(response: NormalizedResponse) -> dict[str, Any]:
    return {
        "provider": response.provider,
        "id": response.id,
        "model": response.model,
        "content": [block_to_dict(b) for b in response.content],
        "stop_reason": stop_reason_to_dict(response.stop_reason),
        "usage": usage_to_dict(response.usage),
    }


def event_to_dict(event: Event) -> dict[str, Any]:
    match event:
        case ResponseStart(id, model, provider):
            return {"event": "response_start", "id": id, "model": model, "provider": provider}
        case BlockStart(index, block):
            return {"event": "block_start", "index": index, "block": block_to_dict(block)}
        case TextDelta(index, text):
            return {"event": "text_delta", "index": index, "text": text}
        case ReasoningDelta(index, text):
            return {"event": "reasoning_delta", "index": index, "text": text}
        case ToolInputDelta(index, fragment):
            return {"event": "tool_input_delta", "index": index, "fragment": fragment}
        case BlockEnd(index, block):
            return {"event": "block_end", "index": index, "block": block_to_dict(block)}
        case ResponseDone(response):
            return {"event": "response_done", "response": response_to_dict(response)}
    raise TypeError(f"not an event: {event!r}")  # pragma: no cover
