"""AWS Bedrock Converse and ConverseStream (``provider="bedrock"``), in the binary AWS
event stream framing, as boto3's parsed events, or as ``converse()`` output.

An Anthropic model's InvokeModelWithResponseStream stream (``chunk`` events wrapping
Messages events) or InvokeModel body (a Messages body) given as ``"bedrock"`` is read as
what it holds: Anthropic's, and the response says ``provider="anthropic"``, the API its
turn is written back in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, unquote

from ..._framing.eventstream import is_exception_name
from ..spec import Api, Counting, Endpoint, Hints, Http, Mock, answer_field
from . import request
from .read import EVENTS, BedrockHandler, parse_body
from .sdk import SDK
from .write_body import error_body, error_kind, write_body
from .write_stream import OVERFLOW, BedrockWriter, sources

__all__ = ["API"]

# The model is named in the path; the endpoint says whether the answer streams.
_ENDPOINTS = (
    Endpoint("/model/{model}/converse-stream", streams=True),
    Endpoint("/model/{model}/converse", streams=False),
)


def _matches_url(path: str) -> bool:
    # POST /model/{modelId}/converse-stream and /model/{modelId}/converse
    return path.endswith(("/converse-stream", "/converse"))


def _model_from_url(path: str) -> str:
    # /model/{modelId}/{operation}: AWS clients percent-encode the id (an ARN's colons and
    # slashes); one sent unencoded may hold slashes, so the operation is the last segment.
    _, found, rest = path.partition("/model/")
    model, slash, _ = rest.rpartition("/")
    return unquote(model) if found and slash else ""


def _matches_frame(event: str | None, obj: Any) -> bool:
    if event is not None:
        return event in EVENTS
    # boto3's shape: exactly one key, the event's (or an exception's) name.
    if len(obj) != 1:
        return False
    name = next(iter(obj))
    return name in EVENTS or is_exception_name(name)


def _matches_body(body: Mapping[str, Any]) -> bool:
    output = body.get("output")
    return isinstance(output, Mapping) and "message" in output and "stopReason" in body


API = Api(
    name="bedrock",
    title="Bedrock Converse",
    framing="eventstream",
    handler=BedrockHandler,
    read_body=parse_body,
    tool=request.tool,
    assistant=request.assistant,
    results=request.results,
    read_request=request.read_request,
    write_request=request.write_request,
    call_id_rule=r"[A-Za-z0-9_-]{1,64}",
    write_body=write_body,
    encoder=BedrockWriter,
    sources=sources,
    hints=Hints(
        matches_url=_matches_url,
        matches_frame=_matches_frame,
        matches_body=_matches_body,
    ),
    model_from_url=_model_from_url,
    # AWS names an error's type in a header ("ThrottlingException:http://...").
    error_type_header="x-amzn-errortype",
    sdk=SDK,
    http=Http(
        overflow=OVERFLOW,
        usage_keys=(b'"usage"',),
        endpoints=_ENDPOINTS,
        # Bedrock API keys are bearer tokens; without one, requests are signed (SigV4).
        error_body=error_body,
        error_kind=error_kind,
        signing="bedrock",
        output_limits=(("inferenceConfig", "maxTokens"),),
        counting=Counting(
            lambda model: f"/model/{quote(model, safe='')}/count-tokens",
            request.count_tokens_body,
            answer_field("inputTokens"),
        ),
    ),
    mock=Mock(
        demo_model="us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        demo_path="/model/{model}/converse-stream",
        demo_request=request.first_request,
    ),
)
