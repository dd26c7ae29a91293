"""The OpenAI Responses API (``provider="openai-responses"``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..spec import Api, Counting, Endpoint, Hints, Http, Mock, Sdk, answer_field
from . import request
from .read import OpenAIResponsesHandler, parse_body
from .write_body import write_body
from .write_stream import OVERFLOW, OpenAIResponsesWriter, sources

__all__ = ["API"]

_ENDPOINTS = (Endpoint("/v1/responses", streams=False),)


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
    title="OpenAI Responses",
    framing="sse",
    handler=OpenAIResponsesHandler,
    read_body=parse_body,
    input_includes_cache=True,
    tool=request.tool,
    read_request=request.read_request,
    write_request=request.write_request,
    call_id_rule=r".{1,64}",
    assistant=request.assistant,
    results=request.results,
    write_body=write_body,
    encoder=OpenAIResponsesWriter,
    sources=sources,
    hints=Hints(
        matches_url=_matches_url,
        matches_frame=_matches_frame,
        matches_body=_matches_body,
    ),
    turn_key="input",
    sdk=Sdk(
        modules=("openai.types.responses", "openai.lib.streaming.responses"),
        holds_response=("openai",),
    ),
    http=Http(
        overflow=OVERFLOW,
        usage_keys=(b'"usage"',),
        endpoints=_ENDPOINTS,
        base_path="/v1",
        output_limits=(("max_output_tokens",),),
        keepalive=b": keep-alive\n\n",
        counting=Counting(
            lambda _: "/v1/responses/input_tokens",
            request.count_tokens_body,
            answer_field("input_tokens"),
        ),
    ),
    mock=Mock(
        demo_model="gpt-5-mini",
        demo_path="/v1/responses",
        demo_request=request.first_request,
    ),
)
