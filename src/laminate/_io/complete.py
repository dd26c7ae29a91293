"""Complete (non-streaming) bodies, read with the same rules as streams."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._apis.detect import body_provider
from .._apis.registry import APIS, read_body
from .._apis.spec import HandlerOptions
from .._core.assembler import Assembler
from .._core.errors import LaminateError, MalformedStreamError, UnknownProviderError
from .._core.flex import FlexValue
from .._core.response import NormalizedResponse
from .._normalizer import DEFAULT_MAX_TOOL_INPUT_SIZE, plain_payload
from .sdk import provider_of

__all__ = [
    "normalize",
    "parse_anthropic_response",
    "parse_bedrock_response",
    "parse_cohere_response",
    "parse_gemini_response",
    "parse_ollama_response",
    "parse_openai_response",
    "parse_responses_response",
]

Body = bytes | str | Mapping[str, Any]


def _load(body: object) -> Mapping[str, Any]:
    if isinstance(body, Mapping):
        return body
    if not isinstance(body, bytes | bytearray | memoryview | str):
        if not callable(getattr(body, "model_dump", None)) and not callable(
            getattr(body, "to_dict", None)
        ):
            raise TypeError(
                "a complete body is bytes, str, a dict, or an SDK response object (openai "
                "ChatCompletion or Response, anthropic Message, google-genai "
                "GenerateContentResponse, ollama ChatResponse, boto3's converse() dict); got "
                f"{type(body).__module__}.{type(body).__qualname__}"
            )
        value = plain_payload(body)  # model_dump(by_alias, exclude_unset) or to_dict()
        if not isinstance(value, Mapping):
            raise TypeError(f"{type(body).__qualname__} did not dump to a JSON object")
        return value
    if not isinstance(body, bytes | str):
        body = bytes(body)
    try:
        value = json.loads(body)
    except (ValueError, RecursionError) as exc:
        text = body if isinstance(body, str) else body[:80].decode("utf-8", "replace")
        raise MalformedStreamError(
            f"the body is not JSON: {exc}", offset=0, snippet=text[:80]
        ) from exc
    if not isinstance(value, Mapping):
        raise MalformedStreamError(
            "the body is not a JSON object", offset=0, snippet=str(value)[:80]
        )
    return value


def _parse(provider: str, body: Body, options: HandlerOptions) -> NormalizedResponse:
    data = _load(body)
    assembler = Assembler(provider, max_tool_input_size=DEFAULT_MAX_TOOL_INPUT_SIZE)
    try:
        read_body(assembler, data, provider, options)
    except LaminateError as exc:
        if exc.partial is None:
            exc.partial = assembler.snapshot()
        raise
    response = assembler.response
    if response is None:  # complete() always builds one
        raise MalformedStreamError("the body did not give a response")
    return NormalizedResponse(
        response.id,
        response.model,
        response.provider,
        response.content,
        response.stop_reason,
        response.usage,
        FlexValue(data),
    )


def parse_openai_response(body: Body, *, choice: int = 0) -> NormalizedResponse:
    """A complete Chat Completions body (``chat.completion``)."""
    return _parse("openai", body, HandlerOptions(choice=choice))


def parse_responses_response(body: Body) -> NormalizedResponse:
    """A complete Responses API body (``"object": "response"``)."""
    return _parse("openai-responses", body, HandlerOptions())


def parse_anthropic_response(body: Body) -> NormalizedResponse:
    """A complete Anthropic Messages body."""
    return _parse("anthropic", body, HandlerOptions())


def parse_bedrock_response(body: Body) -> NormalizedResponse:
    """A complete Bedrock ``converse()`` output (``output.message.content``, ``stopReason``,
    ``usage``), as boto3 returns it or as JSON."""
    return _parse("bedrock", body, HandlerOptions())


def parse_cohere_response(body: Body) -> NormalizedResponse:
    """A complete Cohere v2 chat body (``message`` with ``content``, ``tool_plan``,
    ``tool_calls`` and ``citations``; ``finish_reason``; ``usage``)."""
    return _parse("cohere", body, HandlerOptions())


def parse_gemini_response(body: Body) -> NormalizedResponse:
    """A complete Gemini or Vertex ``generateContent`` body (``candidates[0].content.parts``,
    ``finishReason``, ``usageMetadata``; a blocked prompt's ``promptFeedback``)."""
    return _parse("gemini", body, HandlerOptions())


def parse_ollama_response(body: Body) -> NormalizedResponse:
    """A complete Ollama ``/api/chat`` body."""
    return _parse("ollama", body, HandlerOptions())


def normalize(
    body: Body | object, provider: str | None = None, *, choice: int = 0
) -> NormalizedResponse:
    """A complete (non-streaming) answer of any supported provider, as a
    :class:`NormalizedResponse`.

    ``body`` is ``bytes``, ``str``, an already parsed ``dict`` (boto3's ``converse()``
    answer included), or an SDK's response object: openai's ``ChatCompletion`` and
    Responses ``Response``, anthropic's ``Message``, google-genai's
    ``GenerateContentResponse``, ollama-python's ``ChatResponse`` (read through
    ``model_dump()``; the provider is known from the object's type). ``provider`` is
    detected from the body when ``None``; ``choice`` picks a Chat Completions choice.
    """
    if provider is None:
        provider = provider_of(body)
    data = _load(body)
    if provider is None:
        provider = body_provider(data)
    if provider not in APIS:
        raise UnknownProviderError(f"provider {provider!r} is not supported", seen=provider)
    return _parse(provider, data, HandlerOptions(choice=choice))
