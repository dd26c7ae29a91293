"""Anthropic Messages (``provider="anthropic"``), also Anthropic models on Vertex; the
clouds' endpoints of it (Bedrock's InvokeModel, Vertex's rawPredict) are served by the
proxy as its own (``clouds.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..spec import Api, Endpoint, Hints, Http, Mock, Sdk
from . import request
from .clouds import CLOUD_ENDPOINTS
from .read import AnthropicHandler, parse_body
from .write_body import error_body, error_kind, write_body
from .write_stream import OVERFLOW, AnthropicWriter, sources

__all__ = ["API"]

_ENDPOINTS = (Endpoint("/v1/messages", streams=False),)

_EVENTS: Final = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)


def _matches_url(path: str) -> bool:
    # Bedrock's InvokeModelWithResponseStream: what laminate reads there is Anthropic's.
    return path.endswith(("/v1/messages", "/messages", "/invoke-with-response-stream"))


def _matches_frame(event: str | None, obj: Any) -> bool:
    kind = obj.get("type")
    if not isinstance(kind, str):
        kind = event
    if kind in _EVENTS:
        return True
    # A Bedrock InvokeModelWithResponseStream chunk, binary (`chunk` event, base64
    # `bytes`) or from boto3 (`{"chunk": {"bytes": b"..."}}`).
    chunk = obj if event == "chunk" else obj.get("chunk") if event is None else None
    return isinstance(chunk, Mapping) and "bytes" in chunk


def _matches_body(body: Mapping[str, Any]) -> bool:
    return body.get("type") == "message" or (
        "stop_reason" in body and isinstance(body.get("content"), list)
    )


API = Api(
    name="anthropic",
    title="Anthropic Messages",
    framing="sse",
    handler=AnthropicHandler,
    read_body=parse_body,
    tool=request.tool,
    read_request=request.read_request,
    write_request=request.write_request,
    call_id_rule=r"[A-Za-z0-9_-]+",
    assistant=request.assistant,
    results=request.results,
    write_body=write_body,
    encoder=AnthropicWriter,
    sources=sources,
    hints=Hints(
        matches_url=_matches_url,
        matches_frame=_matches_frame,
        matches_body=_matches_body,
    ),
    sdk=Sdk(
        modules=("anthropic",),
        accepted="anthropic Stream / AsyncStream, messages.stream()",
        holds_response=("anthropic",),
    ),
    http=Http(
        overflow=OVERFLOW,
        usage_keys=(b'"usage"',),
        usage_split=True,
        endpoints=(*_ENDPOINTS, *CLOUD_ENDPOINTS),
        key_headers=("x-api-key", "authorization"),
        headers=(("anthropic-version", "2023-06-01"),),
        error_body=error_body,
        error_kind=error_kind,
        count_tokens="/v1/messages/count_tokens",
        output_limits=(("max_tokens",),),
        keepalive=b'event: ping\ndata: {"type": "ping"}\n\n',
    ),
    mock=Mock(
        demo_model="claude-sonnet-4-5",
        demo_path="/v1/messages",
        demo_request=request.first_request,
    ),
)
