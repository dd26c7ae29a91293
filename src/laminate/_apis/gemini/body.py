"""A complete ``generateContent`` body for a normalized response (the writer behind the mock
server's non-streaming answers).

Signatures are written only for a response that came from Gemini. An ``InvalidToolUse``
has no body form (``args`` must be an object) and is left out, as in the other writers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..._core.response import NormalizedResponse, Reasoning, StopReason, Text, ToolUse, Unknown
from ..shapes import copy_value, counts
from .stream import METADATA

__all__ = ["error_body", "write_body"]

# The finishReason for a stop of another provider.
_FINISH: Final = {
    "end_turn": "STOP",
    "tool_use": "STOP",
    "stop_sequence": "STOP",
    "max_tokens": "MAX_TOKENS",
    "content_filter": "SAFETY",
}


def write_body(r: NormalizedResponse) -> dict[str, Any]:
    own = r.provider == "gemini"
    parts: list[dict[str, Any]] = []
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}}
    for block in r.content:
        signature: str | None = None
        match block:
            case Reasoning(text=text, signature=signature):
                part: dict[str, Any] = {"text": text, "thought": True}
            case Text(text=text, signature=signature):
                part = {"text": text}
            case ToolUse(id=id, name=name, input=input, signature=signature):
                part = {"functionCall": {"id": id, "name": name, "args": copy_value(input.value)}}
            case Unknown(block_type=kind, data=data) if own and isinstance(data.value, dict):
                if kind in METADATA:
                    candidate[kind] = copy_value(data.value)
                elif kind in data.value:
                    parts.append(copy_value(data.value))
                continue
            case _:
                continue
        if own and signature:
            part["thoughtSignature"] = signature
        parts.append(part)
    candidate["finishReason"] = _finish_reason(r.stop_reason, own)
    candidate["index"] = 0
    u = r.usage
    candidates = u.output_tokens
    if candidates is not None and u.reasoning_tokens is not None:
        candidates -= u.reasoning_tokens  # Gemini counts thoughts apart from the answer
    usage = counts(
        promptTokenCount=u.input_tokens,
        candidatesTokenCount=candidates,
        thoughtsTokenCount=u.reasoning_tokens,
        cachedContentTokenCount=u.cache_read_tokens,
    )
    if u.input_tokens is not None and u.output_tokens is not None:
        usage["totalTokenCount"] = u.input_tokens + u.output_tokens
    return {
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": r.model,
        "responseId": r.id,
    }


def _finish_reason(stop: StopReason, own: bool) -> str:
    if own and stop.raw:
        return stop.raw
    return _FINISH.get(stop.kind or "", "OTHER" if stop.raw else "STOP")


def error_body(status: int, kind: str, message: str) -> dict[str, Any]:
    """An error body as Google sends one: the status code and its name."""
    return {"error": {"code": status, "message": message, "status": kind}}


# google.rpc.Code names, as Google's HTTP errors carry them in `status`.
_KINDS: Final[Mapping[int, str]] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def error_kind(status: int) -> str:
    """The ``status`` name Google gives an HTTP status."""
    return _KINDS.get(status, "INTERNAL" if status >= 500 else "INVALID_ARGUMENT")
