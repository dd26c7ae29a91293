"""The token-counting endpoints (Anthropic's ``/v1/messages/count_tokens``, and any API's
``Http.count_tokens``): the backend's own count when it has one, asked through the same
seam as every answer (:meth:`~.calls.BackendClient.send`); else, or when that fails, an
estimate (:func:`~.counting.estimate_tokens`). The log says why a count was estimated,
never what the backend answered.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .._apis.translate import translate_request
from .._core.errors import LaminateError, TranslationError
from .backend import backend_headers, backend_url, forwarded_headers, http_of
from .calls import BackendClient, Call
from .client import BACKEND_HEADER, json_object, path_of, read_body
from .config import Backend, ConfigError
from .counting import Exchange, estimate_tokens
from .people import People
from .refusals import Refusal, error_response
from .relay import back_headers, read_capped

__all__ = ["count_tokens"]


class _CountFailed(Exception):
    """The backend's counting endpoint gave no count (the message says why, never what
    the backend answered)."""


async def count_tokens(
    request: Request,
    api: str,
    backends: BackendClient,
    people: People,
    log: Callable[[Exchange], None],
) -> Response:
    """Answer one token-counting request of a client of ``api`` (its key and its models
    are checked; it counts against no limit)."""
    exchange = Exchange(api, request.scope["method"], path_of(request))
    try:
        response = await _count(request, api, exchange, backends, people)
    except Refusal as refusal:
        response = error_response(api, refusal.status, refusal.message, refusal.headers)
    exchange.status = response.status_code
    if exchange.backend is not None:
        response.headers[BACKEND_HEADER] = exchange.backend
    exchange.first_byte = time.perf_counter()
    log(exchange)
    return response


async def _count(
    request: Request, api: str, exchange: Exchange, backends: BackendClient, people: People
) -> Response:
    config = backends.config
    client = people.identify(request, http_of(api))
    exchange.client_name = client.name if client is not None else None
    body = await read_body(request, config.max_request_bytes)
    data = json_object(body)
    model = data.get("model")
    if not isinstance(model, str) or not model:
        raise Refusal(400, "the request names no model")
    people.check_model(client, model)
    backend, backend_model = config.route(model)
    exchange.backend, exchange.backend_model = backend.name, backend_model
    exchange.client_model = model
    try:
        counted = await _backend_count(
            request, api, backends, body=body, data=data, backend=backend, model=backend_model
        )
    except _CountFailed as failed:
        # Why, never what: a backend's error body may quote the prompt.
        exchange.error = f"the backend's count failed ({failed}); estimated"
        counted = None
    if counted is None:
        exchange.input_tokens = estimate_tokens(data)
        return JSONResponse({"input_tokens": exchange.input_tokens})
    exchange.input_tokens, response = counted
    return response


async def _backend_count(
    request: Request,
    api: str,
    backends: BackendClient,
    *,
    body: bytes,
    data: dict[str, Any],
    backend: Backend,
    model: str,
) -> tuple[int, Response] | None:
    """The backend's own count and the client's answer with it; ``None`` when the
    backend's API has no counting endpoint (:class:`_CountFailed` when it has one
    and the count failed)."""
    own = http_of(backend.api).count_tokens
    if backend.api == api and own is not None:  # the request as it is, the answer too
        if model != data.get("model"):
            body = json.dumps({**data, "model": model}, ensure_ascii=False).encode()
        forwarded = forwarded_headers(request.headers.items())
        content, headers = await _ask_count(backends, backend, own, body, forwarded)
        count = _count_in(content, lambda answer: answer.get("input_tokens"))
        return count, Response(content, 200, back_headers(headers))
    counter = http_of(backend.api).counting
    if counter is None:
        return None
    try:
        translation = translate_request(
            {**data, "model": model},
            api,
            backend.api,
            max_tokens_field=backend.max_tokens_field,
        )
    except LaminateError as exc:
        reason = exc.reason if isinstance(exc, TranslationError) else ""
        message = f"the request cannot be written for it: {reason or 'invalid'}"
        raise _CountFailed(message) from None
    content = json.dumps(counter.body(translation.body, model), ensure_ascii=False).encode()
    answer, _ = await _ask_count(backends, backend, counter.path(model), content, {})
    count = _count_in(answer, counter.count)
    return count, JSONResponse({"input_tokens": count})


async def _ask_count(
    backends: BackendClient,
    backend: Backend,
    path: str,
    content: bytes,
    headers: Mapping[str, str],
) -> tuple[bytes, httpx.Headers]:
    """The backend counting endpoint's answer (a 2xx), and its headers."""
    url = backend_url(backend, path)
    try:
        signed = backend_headers(backend, url, content, headers)
        _, answer = await backends.send(Call(backend, url, content, signed, False, None))
    except ConfigError:
        raise _CountFailed("the request cannot be signed") from None
    except Refusal as refusal:
        raise _CountFailed(refusal.message) from None
    try:
        body = await read_capped(answer, backends.config.timeouts.idle)
    finally:
        await answer.aclose()
    if answer.status_code >= 300:
        raise _CountFailed(f"it answered {answer.status_code}")
    return body, answer.headers


def _count_in(content: bytes, count: Callable[[Any], object]) -> int:
    try:
        found = count(json.loads(content))
    except (ValueError, RecursionError, AttributeError):
        found = None
    if not isinstance(found, int) or isinstance(found, bool) or found < 0:
        raise _CountFailed("its answer holds no count")
    return found
