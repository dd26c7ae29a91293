"""Complete (non-streaming) bodies in each provider's own shape, built from a
normalized response: how the mock provider answers a non-streaming request for a
recording that has no ``.body.json`` beside it."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from .._core.flex import FlexValue
from .._core.response import InvalidToolUse, NormalizedResponse, Reasoning, Text, ToolUse, Unknown

__all__ = ["render_body"]


def _arguments(block: ToolUse | InvalidToolUse) -> str:
    if isinstance(block, ToolUse):
        return json.dumps(block.input.value, ensure_ascii=False)
    return block.raw_input


def _counts(**counts: int | None) -> dict[str, int]:
    return {key: value for key, value in counts.items() if value is not None}


def _openai_body(r: NormalizedResponse) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": r.text() or None}
    reasoning = "".join(b.text for b in r.reasoning())
    if reasoning:
        message["reasoning_content"] = reasoning
    calls = [
        {"id": b.id, "type": "function", "function": {"name": b.name, "arguments": _arguments(b)}}
        for b in r.content
        if isinstance(b, ToolUse | InvalidToolUse)
    ]
    if calls:
        message["tool_calls"] = calls
    u = r.usage
    usage: dict[str, Any] = _counts(prompt_tokens=u.input_tokens, completion_tokens=u.output_tokens)
    usage["total_tokens"] = (u.input_tokens or 0) + (u.output_tokens or 0)
    if u.cache_read_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": u.cache_read_tokens}
    if u.reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": u.reasoning_tokens}
    choice = {"index": 0, "message": message, "finish_reason": r.stop_reason.raw or None}
    return {
        "id": r.id,
        "object": "chat.completion",
        "created": 0,
        "model": r.model,
        "choices": [choice],
        "usage": usage,
    }


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


def _anthropic_body(r: NormalizedResponse) -> dict[str, Any]:
    u = r.usage
    return {
        "id": r.id,
        "type": "message",
        "role": "assistant",
        "model": r.model,
        "content": [b for b in map(_anthropic_block, r.content) if b is not None],
        "stop_reason": r.stop_reason.raw or None,
        "stop_sequence": None,
        "usage": _counts(
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            cache_read_input_tokens=u.cache_read_tokens,
            cache_creation_input_tokens=u.cache_write_tokens,
        ),
    }


def _ollama_body(r: NormalizedResponse) -> dict[str, Any]:
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
        "done_reason": r.stop_reason.raw or "stop",
        **_counts(prompt_eval_count=r.usage.input_tokens, eval_count=r.usage.output_tokens),
    }


def _responses_item(n: int, block: Any, refusal: bool) -> dict[str, Any] | None:
    match block:
        case Reasoning(text, signature, _, id):
            item: dict[str, Any] = {"id": id or f"rs_{n}", "type": "reasoning", "summary": []}
            if text:
                item["summary"] = [{"type": "summary_text", "text": text}]
            if signature:
                item["encrypted_content"] = signature
            return item
        case Text(text):
            part: dict[str, Any] = (
                {"type": "refusal", "refusal": text}
                if refusal
                else {"type": "output_text", "text": text, "annotations": []}
            )
            return {
                "id": f"msg_{n}",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [part],
            }
        case ToolUse() | InvalidToolUse():
            return {
                "id": f"fc_{n}",
                "type": "function_call",
                "status": "completed",
                "call_id": block.id,
                "name": block.name,
                "arguments": _arguments(block),
            }
        case Unknown(block_type, FlexValue(value=dict() as data)):
            return {**data, "type": block_type}
    return None


# Why a Responses answer stopped early, by stop-reason kind.
_INCOMPLETE: Final = {"max_tokens": "max_output_tokens", "content_filter": "content_filter"}


def _responses_body(r: NormalizedResponse) -> dict[str, Any]:
    u = r.usage
    usage: dict[str, Any] = _counts(input_tokens=u.input_tokens, output_tokens=u.output_tokens)
    usage["total_tokens"] = (u.input_tokens or 0) + (u.output_tokens or 0)
    usage["input_tokens_details"] = {"cached_tokens": u.cache_read_tokens or 0}
    usage["output_tokens_details"] = {"reasoning_tokens": u.reasoning_tokens or 0}
    incomplete = _INCOMPLETE.get(r.stop_reason.kind or "")
    refusal = r.stop_reason.kind == "refusal"
    items = (_responses_item(n, b, refusal) for n, b in enumerate(r.content))
    return {
        "id": r.id,
        "object": "response",
        "created_at": 0,
        "status": "incomplete" if incomplete else "completed",
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "model": r.model,
        "output": [item for item in items if item is not None],
        "usage": usage,
    }


_RENDERERS: Final[Mapping[str, Callable[[NormalizedResponse], dict[str, Any]]]] = {
    "openai": _openai_body,
    "openai-responses": _responses_body,
    "anthropic": _anthropic_body,
    "ollama": _ollama_body,
}


def render_body(response: NormalizedResponse) -> dict[str, Any]:
    """The provider's complete (non-streaming) body for ``response``."""
    return _RENDERERS[response.provider](response)
