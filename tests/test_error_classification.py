"""Error payloads and bodies of every shape the APIs and compatible servers send, classified into a
:class:`ProviderError`'s type and whether a retry may help (``_apis/base.py``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from laminate import ProviderError, normalize
from laminate._apis.base import error_from_payload, plain_error
from laminate._io.sources import http_error

from .support import run_chunks


@pytest.mark.parametrize(
    ("payload", "error_type", "retryable"),
    [
        ({"error": {"code": 429, "message": "slow down"}}, "429", True),
        ({"error": {"code": "RateLimitReached", "message": "m"}}, "RateLimitReached", True),
        ({"error": {"code": 400, "message": "bad"}}, "400", False),
        (
            {
                "error": {
                    "code": 502,
                    "message": "m",
                    "metadata": {"error_type": "provider_overloaded"},
                }
            },
            "provider_overloaded",
            True,
        ),
        ({"error": {"message": "m", "type": "server_error"}}, "server_error", True),
        (
            {"error": {"message": "m", "type": "invalid_request_error", "code": "x"}},
            "invalid_request_error",
            False,
        ),
        ({"error": {"message": "m", "code": "500"}}, "500", True),
        ({"error": "model runner stopped"}, "error", False),
        (
            {"object": "error", "message": "m", "type": "BadRequestError", "code": 400},
            "BadRequestError",
            False,
        ),
    ],
)
def test_error_payload_classification(payload: Any, error_type: str, retryable: bool) -> None:
    error = error_from_payload(payload)
    assert (error.error_type, error.retryable) == (error_type, retryable)
    assert error.raw == payload


# -- error bodies without an `error` object ---------------------------------------------------

# Mistral's auth error (FastAPI's shape), Cohere's with and without its type.
PLAIN_ERRORS = [
    ({"detail": "Invalid API Key"}, "Invalid API Key", "error"),
    ({"id": "c1", "message": "Incorrect API key provided"}, "Incorrect API key provided", "error"),
    (
        {"error_type": "TOO_MANY_TOKENS", "id": "c2", "message": "too many tokens"},
        "too many tokens",
        "TOO_MANY_TOKENS",
    ),
]


@pytest.mark.parametrize(("body", "message", "error_type"), PLAIN_ERRORS)
@pytest.mark.parametrize("provider", [None, "openai", "cohere", "anthropic"])
def test_a_plain_error_body_is_a_provider_error(
    body: dict[str, Any], message: str, error_type: str, provider: str | None
) -> None:
    with pytest.raises(ProviderError) as caught:
        normalize(json.dumps(body), provider)
    assert (caught.value.message, caught.value.error_type) == (message, error_type)
    assert caught.value.retryable is False
    streamed = run_chunks([json.dumps(body).encode()], provider)
    assert isinstance(streamed.error, ProviderError)
    assert (streamed.error.message, streamed.error.error_type) == (message, error_type)


@pytest.mark.parametrize(("body", "message", "error_type"), PLAIN_ERRORS)
def test_a_plain_error_body_with_its_status(
    body: dict[str, Any], message: str, error_type: str
) -> None:
    error = http_error(401, json.dumps(body).encode())
    assert (error.message, error.error_type, error.status_code) == (
        f"HTTP 401: {message}",
        error_type,
        401,
    )


@pytest.mark.parametrize(
    "body",
    [
        {"detail": "x", "choices": []},  # not only a detail
        {"id": "c", "message": {"role": "assistant"}},  # a message object: not an error
        {"message": "m", "id": "c", "finish_reason": "COMPLETE"},
    ],
)
def test_what_is_not_a_plain_error(body: dict[str, Any]) -> None:
    assert plain_error(body) is None
