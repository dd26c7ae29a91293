"""A complete ``generateContent`` body for a normalized response (the writer behind the mock
server's non-streaming answers).

Signatures are written only for a response that came from Gemini. An ``InvalidToolUse``
has no body form (``args`` must be an object) and is left out, as in the other writers.
The finish reason and usage are the stream writer's (``encode.stop_of``,
``encode.usage_of``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..._core.response import NormalizedResponse, Reasoning, Text, ToolUse, Unknown
from ..shapes import copy_value
from ..writer import new_id
from .read import METADATA
from .write_stream import GeminiWriter, stop_of, usage_of

__all__ = ["error_body", "write_body"]


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
    candidate["finishReason"] = stop_of(r)
    candidate["index"] = 0
    return {
        "candidates": [candidate],
        "usageMetadata": usage_of(r),
        "modelVersion": r.model,
        "responseId": r.id or new_id(GeminiWriter.id_prefix),
    }


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
