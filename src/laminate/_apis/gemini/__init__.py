"""Gemini ``generateContent`` / ``streamGenerateContent`` (``provider="gemini"``), on the
Gemini API and on Vertex AI."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from ..spec import Api, Counting, Endpoint, Hints, Http, Mock, answer_field
from . import request
from .read import GeminiHandler, parse_body
from .sdk import SDK
from .write_body import error_body, error_kind, write_body
from .write_stream import OVERFLOW, GeminiWriter, sources

__all__ = ["API"]

# The model is named in the path; the method after the colon says whether the answer
# streams (requests carry no `stream` field).
_ENDPOINTS = tuple(
    Endpoint(f"/{version}/models/{{model}}:{method}", streams, model="[^/:]+")
    for version in ("v1beta", "v1")
    for method, streams in (("streamGenerateContent", True), ("generateContent", False))
)


def _matches_url(path: str) -> bool:
    # `/v1beta/models/{model}:streamGenerateContent`, Vertex's
    # `.../publishers/google/models/{model}:generateContent`.
    return path.endswith((":streamGenerateContent", ":generateContent"))


def _is_response(obj: Mapping[str, Any]) -> bool:
    return (
        "candidates" in obj
        or "promptFeedback" in obj
        or ("usageMetadata" in obj and "modelVersion" in obj)
    )


def _matches_frame(event: str | None, obj: Any) -> bool:
    return event is None and _is_response(obj)


API = Api(
    name="gemini",
    title="Gemini",
    arguments_marker="functionCall",  # args are objects: their numbers must stay exact
    framing="sse",
    handler=GeminiHandler,
    read_body=parse_body,
    input_includes_cache=True,
    tool=request.tool,
    tools_array=request.tools_array,
    assistant=request.assistant,
    results=request.results,
    read_request=request.read_request,
    write_request=request.write_request,
    tool_name_rule=r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}",
    write_body=write_body,
    encoder=GeminiWriter,
    sources=sources,
    hints=Hints(
        matches_url=_matches_url,
        matches_frame=_matches_frame,
        matches_body=_is_response,
    ),
    turn_key="contents",
    sdk=SDK,
    http=Http(
        overflow=OVERFLOW,
        usage_keys=(b'"usageMetadata"',),
        sse_query="alt=sse",
        output_limits=(
            ("generationConfig", "maxOutputTokens"),
            ("generation_config", "max_output_tokens"),
        ),
        # No keep-alive: the official SDKs read any SSE line that is not `data: ` as the
        # start of a JSON answer (Python) or wait for the next `data: ` line (JavaScript).
        endpoints=_ENDPOINTS,
        key_headers=("x-goog-api-key",),
        key_query="key",
        error_body=error_body,
        error_kind=error_kind,
        counting=Counting(
            lambda model: f"/v1beta/models/{quote(model, safe='')}:countTokens",
            request.count_tokens_body,
            answer_field("totalTokens"),
        ),
    ),
    mock=Mock(
        demo_model="gemini-3-pro-preview",
        demo_path="/v1beta/models/{model}:streamGenerateContent?alt=sse",
        demo_request=request.first_request,
    ),
)
