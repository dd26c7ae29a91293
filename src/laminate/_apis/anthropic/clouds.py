"""Anthropic Messages as the clouds serve it (the endpoints Claude Code and the SDKs'
``AnthropicBedrock`` and ``AnthropicVertex`` clients call):

- AWS's InvokeModel, ``POST /model/{model}/invoke``, and InvokeModelWithResponseStream,
  ``POST /model/{model}/invoke-with-response-stream``: the body is a Messages request
  without ``model`` and ``stream`` (the path says both), with ``anthropic_version``
  (``bedrock-2023-05-31``) and the betas as ``anthropic_beta``. The answer is a Messages
  body, or its stream in AWS's binary event stream: one ``chunk`` message per event,
  whose payload ``{"bytes": ...}`` holds the event's JSON in base64; an error is an
  ``exception`` message (``:exception-type`` one of the stream's exception names).
  Errors before the answer are AWS's: ``{"message": ...}`` with the exception's name in
  ``x-amzn-errortype``.
- Vertex AI's ``.../publishers/anthropic/models/{model}:rawPredict`` and
  ``:streamRawPredict``: the body is a Messages request without ``model``, with
  ``anthropic_version`` (``vertex-2023-10-16``); the answer and its errors are
  Anthropic's own, the stream SSE. Its token count is
  ``.../publishers/anthropic/models/count-tokens:rawPredict``, a count request whose body
  names the model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from ..base import aws_error_body, aws_error_kind
from ..spec import Chunks, CloudEnvelope, Endpoint

__all__ = ["CLOUD_ENDPOINTS", "unwrap"]

_OWN_PATH: Final = "/v1/messages"
_VERTEX_MODELS: Final = "/v1/projects/{project}/locations/{location}/publishers/anthropic/models"

# The fields a cloud's body holds that a Messages request does not: its version of the
# API (dropped), and the betas (the `anthropic-beta` header of the Messages API).
_VERSION: Final = "anthropic_version"
_BETAS: Final = "anthropic_beta"

# The exception names of InvokeModelWithResponseStream's stream, for the error an
# Anthropic stream's `error` event names.
_STREAM_EXCEPTIONS: Final[Mapping[str, str]] = {
    "invalid_request_error": "validationException",
    "rate_limit_error": "throttlingException",
    "overloaded_error": "serviceUnavailableException",
    "timeout_error": "modelTimeoutException",
}
_STREAM_FAILURE: Final = "internalServerException"


def unwrap(
    data: Mapping[str, Any], model: str | None, stream: bool
) -> tuple[dict[str, Any], dict[str, str]]:
    """A Messages request from a cloud's body: its version dropped, its betas as the
    ``anthropic-beta`` header, the model the path names (``None``: the body's, for a
    count) and the path's ``stream`` (``False``: none written). Betas that are not a list
    of strings stay in the body as sent."""
    body = {k: v for k, v in data.items() if k not in (_VERSION, "stream")}
    headers: dict[str, str] = {}
    betas = body.get(_BETAS)
    if isinstance(betas, list) and all(isinstance(beta, str) for beta in betas):
        del body[_BETAS]
        if betas:
            headers["anthropic-beta"] = ",".join(betas)
    if model is not None:
        body = {"model": model, **{k: v for k, v in body.items() if k != "model"}}
    if stream and model is not None:
        body["stream"] = True
    return body, headers


def _stream_error(event: str | None, data: str) -> tuple[str, str] | None:
    """The exception an Anthropic stream's ``error`` event becomes: its name from the
    error's type, its message the error's."""
    if event != "error":
        return None
    try:
        error = json.loads(data).get("error")
    except (ValueError, AttributeError):
        error = None
    if not isinstance(error, Mapping):
        return _STREAM_FAILURE, data or "the answer failed"
    kind, message = error.get("type"), error.get("message")
    name = _STREAM_EXCEPTIONS.get(kind, _STREAM_FAILURE) if isinstance(kind, str) else None
    return name or _STREAM_FAILURE, message if isinstance(message, str) else data


_AWS: Final = CloudEnvelope(
    path=_OWN_PATH,
    unwrap=unwrap,
    chunks=Chunks(error=_stream_error, failure=_STREAM_FAILURE),
    error_body=aws_error_body,
    error_kind=aws_error_kind,
    error_type_header="x-amzn-errortype",
)
_VERTEX: Final = CloudEnvelope(
    path=_OWN_PATH,
    unwrap=unwrap,
    count_tokens=f"{_VERTEX_MODELS}/count-tokens:rawPredict",
)

CLOUD_ENDPOINTS: Final = (
    Endpoint("/model/{model}/invoke-with-response-stream", streams=True, envelope=_AWS),
    Endpoint("/model/{model}/invoke", streams=False, envelope=_AWS),
    Endpoint(f"{_VERTEX_MODELS}/{{model}}:streamRawPredict", streams=True, envelope=_VERTEX),
    Endpoint(f"{_VERTEX_MODELS}/{{model}}:rawPredict", streams=False, envelope=_VERTEX),
)
"""The clouds' endpoints of Anthropic Messages, answered as ``/v1/messages``."""
