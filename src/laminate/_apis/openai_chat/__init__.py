"""OpenAI Chat Completions, and every OpenAI-compatible server (``provider="openai"``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import shapes
from ..spec import Api, Endpoint, Hints, Http, Mock, Sdk
from . import request
from .read import OpenAIChatHandler, parse_body
from .write_body import write_body
from .write_stream import OVERFLOW, OpenAIChatWriter, sources

__all__ = ["API"]

_ENDPOINTS = (Endpoint("/v1/chat/completions", streams=False),)


def _asks_usage(body: Mapping[str, Any]) -> bool:
    """A streamed request carries usage in its last chunk only with
    ``stream_options.include_usage`` true, as OpenAI answers it."""
    options = body.get("stream_options")
    return isinstance(options, Mapping) and options.get("include_usage") is True


def _matches_url(path: str) -> bool:
    return path.endswith("/chat/completions")


def _matches_frame(event: str | None, obj: Any) -> bool:
    return obj.get("object") == "chat.completion.chunk" or isinstance(obj.get("choices"), list)


def _matches_body(body: Mapping[str, Any]) -> bool:
    return isinstance(body.get("choices"), list)


API = Api(
    name="openai",
    title="Chat Completions",
    framing="sse",
    handler=OpenAIChatHandler,
    read_body=parse_body,
    input_includes_cache=True,
    tool=request.tool,
    read_request=request.read_request,
    write_request=request.write_request,
    assistant=request.assistant,
    results=request.results,
    write_body=write_body,
    encoder=OpenAIChatWriter,
    sources=sources,
    hints=Hints(
        matches_url=_matches_url,
        matches_frame=_matches_frame,
        matches_body=_matches_body,
    ),
    sdk=Sdk(
        modules=("openai", "litellm"),
        accepted="openai Stream / AsyncStream, with_streaming_response, litellm chunk iterators",
        holds_response=("openai",),
    ),
    http=Http(
        overflow=OVERFLOW,
        stream_usage=_asks_usage,
        usage_keys=(b'"usage"',),
        endpoints=_ENDPOINTS,
        base_path="/v1",
        output_limits=(("max_tokens",), ("max_completion_tokens",)),
        keepalive=b": keep-alive\n\n",
    ),
    mock=Mock(
        demo_model="deepseek-reasoner",
        demo_path="/v1/chat/completions",
        demo_request=shapes.chat_request,
    ),
)
