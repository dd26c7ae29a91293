"""The OpenAI Responses API (``provider="openai-responses"``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._core.assembler import Assembler
from ..spec import Api, Endpoint, HandlerOptions, Http, Mock, Sdk
from . import request
from .body import write_body
from .encode import OpenAIResponsesWriter, sources
from .stream import OpenAIResponsesHandler, parse_body

__all__ = ["API"]

_ENDPOINTS = (Endpoint("/v1/responses", streams=False),)


def _handler(assembler: Assembler, options: HandlerOptions) -> OpenAIResponsesHandler:
    return OpenAIResponsesHandler(assembler)


def _read_body(assembler: Assembler, body: Mapping[str, Any], options: HandlerOptions) -> None:
    parse_body(assembler, body)


def _matches_url(path: str) -> bool:
    return path.endswith("/responses") or "/responses/" in path


def _matches_frame(event: str | None, obj: Any) -> bool:
    kind = obj.get("type")
    if not isinstance(kind, str):
        kind = event
    return isinstance(kind, str) and kind.startswith("response.")


def _matches_body(body: Mapping[str, Any]) -> bool:
    return body.get("object") == "response" or isinstance(body.get("output"), list)


API = Api(
    name="openai-responses",
    framing="sse",
    handler=_handler,
    read_body=_read_body,
    tool=request.tool,
    read_request=request.read_request,
    write_request=request.write_request,
    call_id_rule=r".{1,64}",
    assistant=request.assistant,
    results=request.results,
    write_body=write_body,
    encoder=OpenAIResponsesWriter,
    sources=sources,
    matches_url=_matches_url,
    matches_frame=_matches_frame,
    matches_body=_matches_body,
    turn_key="input",
    sdk=Sdk(
        modules=("openai.types.responses", "openai.lib.streaming.responses"),
        holds_response=("openai",),
    ),
    http=Http(endpoints=_ENDPOINTS, base_path="/v1"),
    mock=Mock(
        endpoints=_ENDPOINTS,
        demo_model="gpt-5-mini",
        demo_path="/v1/responses",
        demo_request=request.first_request,
    ),
)
