"""Cohere v2 chat (``provider="cohere"``): typed SSE events and complete bodies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .. import shapes
from ..spec import Api, Endpoint, Hints, Http, Mock, Sdk
from . import request
from .read import CohereHandler, parse_body
from .write_body import write_body
from .write_stream import OVERFLOW, CohereWriter, sources

__all__ = ["API"]

_ENDPOINTS = (Endpoint("/v2/chat", streams=False),)

# Every v2 event type. Hyphenated, unlike Anthropic's: no other API sends these.
_EVENTS: Final = frozenset(
    {
        "message-start",
        "content-start",
        "content-delta",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
        "message-end",
    }
)


def _matches_url(path: str) -> bool:
    return path.endswith("/v2/chat")


def _matches_frame(event: str | None, obj: Any) -> bool:
    kind = obj.get("type")
    if isinstance(kind, str):
        return kind in _EVENTS
    # Cohere's v1 stream is claimed too, so that its handler can say it is not read.
    return "event_type" in obj and "is_finished" in obj


def _matches_body(body: Mapping[str, Any]) -> bool:
    if "finish_reason" not in body:
        return False
    # v2: {"id", "message": {...}, "finish_reason", "usage"}; v1 (claimed, to be refused
    # clearly): {"generation_id", "text", "finish_reason", ...}.
    return isinstance(body.get("message"), Mapping) or "generation_id" in body


API = Api(
    name="cohere",
    title="Cohere",
    framing="sse",
    handler=CohereHandler,
    read_body=parse_body,
    input_includes_cache=True,
    tool=request.tool,
    assistant=request.assistant,
    results=request.results,
    read_request=request.read_request,
    write_request=request.write_request,
    tool_name_rule=r".+",
    write_body=write_body,
    encoder=CohereWriter,
    sources=sources,
    hints=Hints(
        matches_url=_matches_url,
        matches_frame=_matches_frame,
        matches_body=_matches_body,
    ),
    sdk=Sdk(modules=("cohere",)),
    http=Http(
        overflow=OVERFLOW,
        usage_keys=(b'"usage"',),
        endpoints=_ENDPOINTS,
        output_limits=(("max_tokens",),),
        keepalive=b": keep-alive\n\n",
    ),
    mock=Mock(
        demo_model="command-a-03-2025",
        demo_path="/v2/chat",
        demo_request=shapes.chat_request,
    ),
)
