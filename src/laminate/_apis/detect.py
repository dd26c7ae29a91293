"""Which provider sent these bytes: from a response's URL and content type, or from
the first frames themselves."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .._core.errors import UnknownProviderError
from .base import error_from_payload

__all__ = [
    "NDJSON_TYPES",
    "body_provider",
    "describe",
    "provider_from_body",
    "provider_from_frame",
    "provider_from_url",
]

NDJSON_TYPES: Final = (
    "application/x-ndjson",
    "application/ndjson",
    "application/jsonl",
    "application/stream+json",
)

_ANTHROPIC_EVENTS: Final = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)


def provider_from_url(path: str) -> str | None:
    """The provider named by an endpoint path, if it is a well-known one."""
    path = path.rstrip("/")
    if path.endswith("/chat/completions"):
        return "openai"
    if path.endswith("/responses") or "/responses/" in path:
        return "openai-responses"
    if path.endswith(("/v1/messages", "/messages")):
        return "anthropic"
    if path.endswith(("/api/chat", "/api/generate")):
        return "ollama"
    return None


def provider_from_frame(event: str | None, obj: Any) -> str | None:
    """The provider whose frame this is, or ``None`` when this frame does not tell."""
    if not isinstance(obj, Mapping):
        return None
    kind = obj.get("type")
    if not isinstance(kind, str):
        kind = event
    if isinstance(kind, str):
        if kind in _ANTHROPIC_EVENTS:
            return "anthropic"
        if kind.startswith("response."):
            return "openai-responses"
    if obj.get("object") == "chat.completion.chunk" or isinstance(obj.get("choices"), list):
        return "openai"
    if "done" in obj and ("message" in obj or "response" in obj):
        return "ollama"
    return None


def describe(event: str | None, data: str) -> str:
    """A short account of a frame for an error message."""
    text = data if len(data) <= 120 else data[:117] + "..."
    return f"event {event!r} data {text!r}" if event else f"data {text!r}"


def provider_from_body(data: Mapping[str, Any]) -> str | None:
    """The provider of a complete (non-streaming) body, from its shape."""
    if isinstance(data.get("choices"), list):
        return "openai"
    if data.get("object") == "response" or isinstance(data.get("output"), list):
        return "openai-responses"
    if data.get("type") == "message" or (
        "stop_reason" in data and isinstance(data.get("content"), list)
    ):
        return "anthropic"
    if "done" in data and "message" in data:
        return "ollama"
    return None


def body_provider(data: Mapping[str, Any]) -> str:
    """The provider of a complete body; a bare error body raises as the error it is,
    anything else unrecognised as :class:`UnknownProviderError`."""
    provider = provider_from_body(data)
    if provider is not None:
        return provider
    if data.get("error"):
        raise error_from_payload(data)
    keys = ", ".join(sorted(map(str, data))[:8])
    raise UnknownProviderError(
        f"could not detect the provider of a body with keys: {keys}", seen=keys
    )
