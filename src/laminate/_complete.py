"""Complete (non-streaming) bodies, read with the same rules as streams."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from ._assembler import Assembler
from ._errors import LaminateError, MalformedStreamError, UnknownProviderError
from ._flex import FlexValue
from ._normalizer import DEFAULT_MAX_TOOL_INPUT_SIZE
from ._providers import anthropic, ollama, openai_chat, openai_responses
from ._providers._common import error_from_payload
from ._response import NormalizedResponse

__all__ = [
    "BODY_PARSERS",
    "normalize",
    "parse_anthropic_response",
    "parse_ollama_response",
    "parse_openai_response",
    "parse_responses_response",
]

Body = bytes | str | Mapping[str, Any]


def _load(body: Body) -> Mapping[str, Any]:
    if isinstance(body, Mapping):
        return body
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


def _parse(
    provider: str, reader: Callable[[Assembler, Mapping[str, Any]], None], body: Body
) -> NormalizedResponse:
    data = _load(body)
    if data.get("error") and "output" not in data:
        # A bare error body. A Responses body carries `error` beside its output and is
        # classified by its own parser.
        raise error_from_payload(data)
    assembler = Assembler(provider, max_tool_input_size=DEFAULT_MAX_TOOL_INPUT_SIZE)
    try:
        reader(assembler, data)
    except LaminateError as exc:
        if exc.partial is None:
            exc.partial = assembler.snapshot()
        raise
    assembler.complete()
    if assembler.response is None:  # complete() always builds one
        raise MalformedStreamError("the body did not give a response")
    response = assembler.response
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
    return _parse(
        "openai", lambda asm, data: openai_chat.parse_body(asm, data, choice=choice), body
    )


def parse_responses_response(body: Body) -> NormalizedResponse:
    """A complete Responses API body (``"object": "response"``)."""
    return _parse("openai-responses", openai_responses.parse_body, body)


def parse_anthropic_response(body: Body) -> NormalizedResponse:
    """A complete Anthropic Messages body."""
    return _parse("anthropic", anthropic.parse_body, body)


def parse_ollama_response(body: Body) -> NormalizedResponse:
    """A complete Ollama ``/api/chat`` body."""
    return _parse("ollama", ollama.parse_body, body)


BODY_PARSERS: Final[dict[str, Callable[[Body], NormalizedResponse]]] = {
    "openai": parse_openai_response,
    "openai-responses": parse_responses_response,
    "anthropic": parse_anthropic_response,
    "ollama": parse_ollama_response,
}


def _detect(data: Mapping[str, Any]) -> str | None:
    if isinstance(data.get("choices"), list):
        return "openai"
    if data.get("object") == "response" or isinstance(data.get("output"), list):
        return "openai-responses"
    if data.get("type") == "message" or (
        "stop_reason" in data and isinstance(data.get("content"), list)
    ):
        return "anthropic"
    if "done" in data and "message" in data:
        return "ollama"
    return None


def normalize(body: Body, provider: str | None = None) -> NormalizedResponse:
    """A complete body (``bytes``, ``str`` or a parsed ``dict``) of any supported provider."""
    data = _load(body)
    if provider is None:
        provider = _detect(data)
        if provider is None:
            if data.get("error"):
                raise error_from_payload(data)
            keys = ", ".join(sorted(map(str, data))[:8])
            raise UnknownProviderError(
                f"could not detect the provider of a body with keys: {keys}", seen=keys
            )
    parser = BODY_PARSERS.get(provider)
    if parser is None:
        raise UnknownProviderError(f"provider {provider!r} is not supported", seen=provider)
    return parser(data)
