"""Error payloads of every shape the APIs and compatible servers send, classified into a
:class:`ProviderError`'s type and whether a retry may help (``_apis/base.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from laminate._apis.base import error_from_payload


@pytest.mark.parametrize(
    ("payload", "error_type", "retryable"),
    [
        ({"error": {"code": 429, "message": "slow down"}}, "429", True),
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
