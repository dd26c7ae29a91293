"""A complete ``converse()`` output for a normalized response (the writer behind the mock
server's non-streaming answers)."""

from __future__ import annotations

from typing import Any

from ..._core.flex import FlexValue
from ..._core.response import NormalizedResponse, Reasoning, Text, ToolUse, Unknown
from ..base import aws_error_body as error_body
from ..base import aws_error_kind as error_kind
from ..shapes import copy_value
from .write_stream import stop_of, usage_of

__all__ = ["error_body", "error_kind", "write_body"]


def _converse_block(block: Any) -> dict[str, Any] | None:
    match block:
        case Text(text):
            return {"text": text}
        case Reasoning(text, signature, True, _):
            return {"reasoningContent": {"redactedContent": signature or ""}}
        case Reasoning(text, signature, False, _):
            reasoning = {"text": text, **({"signature": signature} if signature else {})}
            return {"reasoningContent": {"reasoningText": reasoning}}
        case ToolUse(id, name, input):
            return {"toolUse": {"toolUseId": id, "name": name, "input": copy_value(input.value)}}
        case Unknown("server_tool_use", FlexValue(value=dict() as data)):
            return {"toolUse": copy_value(data)}
        case Unknown(block_type, FlexValue(value=dict() as data)):
            return {block_type: copy_value(data)}
    return None  # an InvalidToolUse has no Converse form: its input must be an object


def _content(blocks: list[Any]) -> list[dict[str, Any]]:
    """The content list; citations make the text block they follow a ``citationsContent``
    block, as Converse writes cited text."""
    content: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, Unknown) and block.block_type == "citation":
            last = content[-1] if content else {}
            if "text" in last:
                last["citationsContent"] = {"content": [{"text": last.pop("text")}]}
                last["citationsContent"]["citations"] = []
            cited = last.get("citationsContent")
            if isinstance(cited, dict) and isinstance(block.data.value, dict):
                cited["citations"].append(copy_value(block.data.value))
            continue
        written = _converse_block(block)
        if written is not None:
            content.append(written)
    return content


def write_body(r: NormalizedResponse) -> dict[str, Any]:
    return {
        "output": {
            "message": {
                "role": "assistant",
                "content": _content(r.content),
            }
        },
        "stopReason": stop_of(r),
        "usage": usage_of(r),
        "metrics": {"latencyMs": 0},
    }
