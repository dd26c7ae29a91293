"""A complete the Responses API body for a normalized response (the writer behind the mock
server's non-streaming answers)."""

from __future__ import annotations

from typing import Any, Final

from ..._core.flex import FlexValue
from ..._core.response import InvalidToolUse, NormalizedResponse, Reasoning, Text, ToolUse, Unknown
from ..shapes import arguments_text
from ..writer import new_id

__all__ = ["ID_PREFIX", "usage_of", "write_body"]

ID_PREFIX: Final = "resp_"
"""How the API's response ids begin (an answer without one gets one so begun)."""


# Why a Responses answer stopped early, by stop-reason kind.
_INCOMPLETE: Final = {"max_tokens": "max_output_tokens", "content_filter": "content_filter"}


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
                "arguments": arguments_text(block),
            }
        case Unknown(block_type, FlexValue(value=dict() as data)):
            return {**data, "type": block_type}
    return None


def _output(blocks: list[Any], refusal: bool) -> list[dict[str, Any]]:
    """The output items; a citation goes into the annotations of the text it follows."""
    output: list[dict[str, Any]] = []
    for n, block in enumerate(blocks):
        if isinstance(block, Unknown) and block.block_type == "citation":
            parts = output[-1].get("content") if output else None
            cited = parts[-1] if parts else {}
            if cited.get("type") == "output_text" and isinstance(block.data.value, dict):
                cited["annotations"].append(block.data.value)
            continue
        item = _responses_item(n, block, refusal)
        if item is not None:
            output.append(item)
    return output


def usage_of(response: NormalizedResponse) -> dict[str, Any]:
    """The ``usage`` written for ``response``: the counts the schema requires (0 when not
    reported). ``input_tokens`` counts every input token, cached or not, as the
    Responses API's does (cache writes fold into it), whatever API the counts came
    from."""
    u = response.usage
    input_tokens = u.total_input_tokens or 0
    usage: dict[str, Any] = {"input_tokens": input_tokens, "output_tokens": u.output_tokens or 0}
    usage["total_tokens"] = input_tokens + (u.output_tokens or 0)
    usage["input_tokens_details"] = {"cached_tokens": u.cache_read_tokens or 0}
    usage["output_tokens_details"] = {"reasoning_tokens": u.reasoning_tokens or 0}
    return usage


def write_body(r: NormalizedResponse) -> dict[str, Any]:
    """The complete body, also the terminal event's ``response`` in a stream: the stop
    reason (``status``, ``incomplete_details``) and usage are decided here for both."""
    usage = usage_of(r)
    incomplete = _INCOMPLETE.get(r.stop_reason.kind or "")
    refusal = r.stop_reason.kind == "refusal"
    return {
        "id": r.id or new_id(ID_PREFIX),
        "object": "response",
        "created_at": 0,
        "status": "incomplete" if incomplete else "completed",
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "model": r.model,
        "output": _output(r.content, refusal),
        "usage": usage,
    }
