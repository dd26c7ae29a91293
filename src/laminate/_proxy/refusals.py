"""Refusals and failures in the client's shape: what a request that gets no answer from a
backend is told, and what a failure before the first byte of an answer becomes.

Before the first byte, every failure is an HTTP status with the client API's error body
(and its error-type header where it has one): :class:`Refusal` carries the status and the
message to the one place that writes them (:func:`error_response`). The status of a
failure the answer raised is :func:`~laminate._io.sources.status_of`'s, as a gateway's
(the mock server answers from the same table, as the provider itself). After the first
byte a failure is the API's in-stream error, written by the client's stream writer.

Two failures are told apart from the rest, whatever the backend's API (both before the
first byte and after it): a context overflow (the backend said the prompt does not fit
its model's context: :func:`~laminate._apis.overflow.is_overflow`) reaches the client as
its own API's overflow (``Http.overflow``: a 400 whose type, code and message its agents
compact on), and a backend that refuses the proxy's credentials (401, 403: the key is the
operator's, never the client's) is a 502 with the backend's message, not the client's
own 401 (:func:`backend_refusal`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from starlette.responses import JSONResponse, Response

from .._apis.overflow import is_overflow
from .._apis.registry import APIS
from .._core.errors import LaminateError, ProviderError, StreamTimeoutError
from .._io.sources import status_of
from .backend import http_of

__all__ = [
    "Refusal",
    "backend_refusal",
    "display_name",
    "error_response",
    "failure",
    "refuses_credentials",
]


class Refusal(Exception):
    """A request answered with an error before reaching the backend, or without it
    (``overflow``: the backend's context overflow, written as the client API's own)."""

    def __init__(
        self,
        status: int,
        message: str,
        headers: Mapping[str, str] | None = None,
        *,
        overflow: bool = False,
    ):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})
        self.overflow = overflow


# The statuses with which a backend refuses the proxy's own credentials.
_CREDENTIALS: Final = frozenset({401, 403})


def refuses_credentials(status: int | None) -> bool:
    """Whether a backend's ``status`` refuses the proxy's own credentials."""
    return status in _CREDENTIALS


def failure(exc: LaminateError) -> Refusal:
    """A failure before the first byte of the answer, as the status the client gets."""
    if isinstance(exc, ProviderError) and (
        is_overflow(exc) or refuses_credentials(exc.status_code)
    ):
        return backend_refusal(exc)
    status = status_of(exc, gateway=True)
    if isinstance(exc, StreamTimeoutError):
        return Refusal(status, f"the backend stopped sending its answer: {exc}")
    if isinstance(exc, ProviderError):
        return Refusal(status, exc.message)
    return Refusal(status, f"the backend's answer cannot be read: {exc}")


def backend_refusal(error: ProviderError, headers: Mapping[str, str] | None = None) -> Refusal:
    """A backend's error answer (a non-2xx, or an error before its answer began) as
    the client is told it: its context overflow as an overflow (400), its refusal of
    the proxy's credentials as a 502 with its message, anything else with its status
    (the backend's ``headers`` that go back to the client kept)."""
    status = error.status_code
    # The backend's own words, without the "HTTP 400: " that names its status.
    text = error.message
    if status is not None:
        text = text.removeprefix(f"HTTP {status}: ")
    if is_overflow(error):
        return Refusal(400, text, headers, overflow=True)
    if refuses_credentials(status):
        message = f"the backend refused the proxy's credentials (HTTP {status}): {text}"
        return Refusal(502, message)
    return Refusal(status_of(error, gateway=True), error.message, headers)


def error_response(
    api: str,
    status: int,
    message: str,
    headers: Mapping[str, str] | None = None,
    *,
    overflow: bool = False,
) -> Response:
    """An HTTP error in the shape ``api``'s clients read (its body, and its error-type
    header where it has one); ``overflow``: the API's own context overflow (a 400, with
    ``message``, the backend's text, begun as its clients expect)."""
    record = APIS[api]
    http = http_of(api)
    out = dict(headers or {})
    if overflow:
        kind = http.overflow.kind
        body = http.overflow.body(http.error_body(400, kind, http.overflow.message(message)))
        status = 400
    else:
        kind = http.error_kind(status)
        body = http.error_body(status, kind, message)
    if record.error_type_header is not None:
        out[record.error_type_header] = kind
    return JSONResponse(body, status, out)


def display_name(api: str) -> str:
    """An API's name in a message: ``"the Ollama backend"``, not ``"a ollama backend"``."""
    return APIS[api].title if api in APIS else api
