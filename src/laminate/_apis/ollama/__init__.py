"""Ollama's native ``/api/chat`` (``provider="ollama"``): NDJSON."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import shapes
from ..spec import Api, Endpoint, Hints, Http, Mock
from . import request
from .read import OllamaHandler, parse_body
from .sdk import SDK
from .write_body import error_body, write_body
from .write_stream import OVERFLOW, OllamaWriter

__all__ = ["API"]

_ENDPOINTS = (Endpoint("/api/chat", streams=True),)


def _matches_url(path: str) -> bool:
    return path.endswith(("/api/chat", "/api/generate"))


def _matches_frame(event: str | None, obj: Any) -> bool:
    return "done" in obj and ("message" in obj or "response" in obj)


def _matches_body(body: Mapping[str, Any]) -> bool:
    return "done" in body and "message" in body


API = Api(
    name="ollama",
    title="Ollama",
    arguments_marker="tool_calls",
    framing="ndjson",
    handler=OllamaHandler,
    read_body=parse_body,
    input_includes_cache=True,
    tool=request.tool,
    assistant=request.assistant,
    results=request.results,
    read_request=request.read_request,
    write_request=request.write_request,
    tool_name_rule=r".+",
    write_body=write_body,
    encoder=OllamaWriter,
    hints=Hints(
        matches_url=_matches_url,
        matches_frame=_matches_frame,
        matches_body=_matches_body,
    ),
    sdk=SDK,
    http=Http(
        overflow=OVERFLOW,
        usage_keys=(b'"eval_count"', b'"prompt_eval_count"'),
        output_limits=(("options", "num_predict"),),
        endpoints=_ENDPOINTS,
        error_body=error_body,
    ),
    mock=Mock(
        demo_model="qwen3:8b",
        demo_path="/api/chat",
        demo_request=shapes.chat_request,
    ),
)
