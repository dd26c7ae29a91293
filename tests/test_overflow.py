"""The context-overflow table: which errors are a backend's "the prompt does not fit the
context", and how each API's clients are told one (its record's ``Http.overflow``)."""

from __future__ import annotations

import json

import pytest

from laminate import (
    IncompleteStreamError,
    MalformedStreamError,
    ProviderError,
    StreamEncoder,
)
from laminate._apis.overflow import Overflow, is_overflow
from laminate._apis.registry import APIS
from laminate._io.sources import http_error

from .scripted_backend import OVERFLOWS
from .support import run_chunks


@pytest.mark.parametrize("server", sorted(OVERFLOWS))
def test_every_servers_own_overflow_answer_is_recognised(server: str) -> None:
    status, body, headers = OVERFLOWS[server]
    error = http_error(status, json.dumps(body).encode(), headers)
    assert is_overflow(error), error


@pytest.mark.parametrize(
    "message",
    [
        "prompt is too long: 210000 tokens > 200000 maximum",
        "Input is too long for requested model.",
        "The model returned the following errors: too many input tokens",
        "This model's maximum context length is 131072 tokens. However, you requested 140000",
        "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).",
        "the request exceeds the available context size, try increasing it",
        "the input length exceeds the context length",
        "prompt too long; exceeded max context length by 412 tokens",
        "Prompt length of 40000 is longer than the maximum model length of 32768.",
        "too many tokens: size limit exceeded by 1311 tokens",
    ],
)
def test_overflow_messages_are_recognised_whatever_their_type(message: str) -> None:
    assert is_overflow(ProviderError(message, error_type="error", retryable=False))


def test_an_overflow_code_is_enough() -> None:
    raw = {
        "error": {
            "message": "no",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }
    }
    assert is_overflow(
        ProviderError("no", error_type="invalid_request_error", retryable=False, raw=raw)
    )
    assert is_overflow(ProviderError("no", error_type="exceed_context_size_error", retryable=False))


@pytest.mark.parametrize(
    "error",
    [
        ProviderError(
            "max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens",
            error_type="invalid_request_error",
            retryable=False,
        ),
        ProviderError("Overloaded", error_type="overloaded_error", retryable=True),
        ProviderError(
            "request_too_large: the body exceeds 32 MB",
            error_type="request_too_large",
            retryable=False,
        ),
        ProviderError("invalid x-api-key", error_type="authentication_error", retryable=False),
        IncompleteStreamError("the stream ended inside a frame"),
        MalformedStreamError("prompt is too long", offset=0, snippet="x"),  # not the provider's
    ],
)
def test_other_errors_are_not_overflows(error: ProviderError) -> None:
    assert not is_overflow(error)


def test_the_lead_is_added_once() -> None:
    told = Overflow(kind="invalid_request_error", lead="prompt is too long")
    assert told.message("x exceeds y") == "prompt is too long: x exceeds y"
    assert told.message("Prompt is too long: 9 > 8") == "Prompt is too long: 9 > 8"
    assert told.message("") == "prompt is too long"
    assert Overflow(kind="INVALID_ARGUMENT").message("as it is") == "as it is"


# What each client API's overflow is: (HTTP error type or status name, code, how the
# message begins).
TOLD = {
    "openai": ("invalid_request_error", "context_length_exceeded", ""),
    "openai-responses": ("invalid_request_error", "context_length_exceeded", ""),
    "anthropic": ("invalid_request_error", None, "prompt is too long"),
    "gemini": ("INVALID_ARGUMENT", None, ""),
    "bedrock": ("ValidationException", None, "Input is too long for requested model"),
    "ollama": ("invalid_request_error", None, "the input length exceeds the context length"),
    "cohere": ("invalid_request_error", None, "too many tokens"),
}


@pytest.mark.parametrize("api", sorted(TOLD))
def test_each_api_states_its_own_overflow(api: str) -> None:
    http = APIS[api].http
    assert http is not None
    kind, code, lead = TOLD[api]
    assert (http.overflow.kind, http.overflow.code, http.overflow.lead) == (kind, code, lead)


@pytest.mark.parametrize("api", sorted(TOLD))
def test_each_writer_writes_an_in_stream_overflow_its_reader_reads_back(api: str) -> None:
    backend = ProviderError(
        "The input token count (9) exceeds the maximum number of tokens allowed (8).",
        error_type="INVALID_ARGUMENT",
        retryable=False,
    )
    written = StreamEncoder(api).error(backend)
    got = run_chunks([written], api).error
    assert isinstance(got, ProviderError)
    assert is_overflow(got), got.message
    _, code, lead = TOLD[api]
    assert got.message.startswith(lead)
    if code is not None:
        assert got.error_type == code or json.dumps(got.raw).count(code)
