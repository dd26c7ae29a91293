"""Refusals and failures in the client's shape: what a request that gets no answer from a
backend is told, and what a failure before the first byte of an answer becomes.

Before the first byte, every failure is an HTTP status with the client API's error body
(and its error-type header where it has one): :class:`Refusal` carries the status and the
message to the one place that writes them (:func:`error_response`). The status of a
failure the answer raised is :func:`~laminate._io.sources.status_of`'s, as a gateway's
(the mock server answers from the same table, as the provider itself). After the first
byte a failure is the API's in-stream error, written by the client's stream writer.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.responses import JSONResponse, Response

from .._apis.registry import APIS
from .._core.errors import LaminateError, ProviderError, StreamTimeoutError
from .._io.sources import status_of
from .backend import http_of

__all__ = ["Refusal", "display_name", "error_response", "failure"]


class Refusal(Exception):
    """A request answered with an error before reaching the backend, or without it."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


def failure(exc: LaminateError) -> Refusal:
    """A failure before the first byte of the answer, as the status the client gets."""
    status = status_of(exc, gateway=True)
    if isinstance(exc, StreamTimeoutError):
        return Refusal(status, f"the backend stopped sending its answer: {exc}")
    if isinstance(exc, ProviderError):
        return Refusal(status, exc.message)
    return Refusal(status, f"the backend's answer cannot be read: {exc}")


def error_response(
    api: str, status: int, message: str, headers: Mapping[str, str] | None = None
) -> Response:
    """An HTTP error in the shape ``api``'s clients read (its body, and its error-type
    header where it has one)."""
    record = APIS[api]
    http = http_of(api)
    kind = http.error_kind(status)
    out = dict(headers or {})
    if record.error_type_header is not None:
        out[record.error_type_header] = kind
    return JSONResponse(http.error_body(status, kind, message), status, out)


def display_name(api: str) -> str:
    """An API's name in a message: ``"the Ollama backend"``, not ``"a ollama backend"``."""
    return APIS[api].title if api in APIS else api
