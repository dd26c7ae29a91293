"""Counting a request's input tokens with the backend's own counting endpoint.

``/v1/messages/count_tokens`` (Anthropic's) answers with the backend's count where the
backend's API has a counting endpoint, and with an estimate otherwise (``app.py``). A
backend of the client's API is asked with the client's request as it is; a backend of
another API is asked with the request translated (§10), wrapped as its endpoint wants:

- Gemini: ``POST /v1beta/models/{model}:countTokens`` with ``{"generateContentRequest":
  {"model": "models/{model}", ...}}`` (so the system instruction and the tools count
  too); the answer's ``totalTokens``.
- OpenAI Responses: ``POST /v1/responses/input_tokens`` with the request's fields that
  endpoint takes (it refuses the others: ``stream``, ``max_output_tokens``, ...); the
  answer's ``input_tokens`` (``"object": "response.input_tokens"``).
- Bedrock: ``POST /model/{modelId}/count-tokens`` with ``{"input": {"converse": {...}}}``
  (the Converse request's messages, system, tool configuration and model fields); the
  answer's ``inputTokens``.

Chat Completions, Ollama and Cohere v2 have no counting endpoint for a chat request
(Cohere's ``/v1/tokenize`` counts one text), so their counts are estimated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote

__all__ = ["COUNTERS", "Counter"]

# What /v1/responses/input_tokens takes (openai-python's InputTokenCountParams).
_RESPONSES_FIELDS: Final = frozenset(
    {
        "model",
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "reasoning",
        "text",
        "truncation",
        "conversation",
        "previous_response_id",
    }
)
# What a Converse request is counted by (botocore's ConverseTokensRequest).
_CONVERSE_FIELDS: Final = ("messages", "system", "toolConfig", "additionalModelRequestFields")


@dataclass(frozen=True, slots=True)
class Counter:
    """A backend API's counting endpoint."""

    path: Callable[[str], str]
    """Its path (with the path prefix its SDKs' base URL holds) for a model."""
    body: Callable[[Mapping[str, Any], str], dict[str, Any]]
    """Its request, from a chat request written for its API and the model."""
    count: Callable[[Any], object]
    """The count in its answer (anything but an ``int`` is an unreadable answer)."""


def _gemini_body(body: Mapping[str, Any], model: str) -> dict[str, Any]:
    name = model if model.startswith("models/") else f"models/{model}"
    return {"generateContentRequest": {**body, "model": name}}


def _responses_body(body: Mapping[str, Any], model: str) -> dict[str, Any]:
    return {**{k: v for k, v in body.items() if k in _RESPONSES_FIELDS}, "model": model}


def _bedrock_body(body: Mapping[str, Any], _: str) -> dict[str, Any]:
    return {"input": {"converse": {k: body[k] for k in _CONVERSE_FIELDS if k in body}}}


def _field(name: str) -> Callable[[Any], object]:
    return lambda answer: answer.get(name) if isinstance(answer, dict) else None


COUNTERS: Final[Mapping[str, Counter]] = {
    "gemini": Counter(
        lambda model: f"/v1beta/models/{quote(model, safe='')}:countTokens",
        _gemini_body,
        _field("totalTokens"),
    ),
    "openai-responses": Counter(
        lambda _: "/v1/responses/input_tokens", _responses_body, _field("input_tokens")
    ),
    "bedrock": Counter(
        lambda model: f"/model/{quote(model, safe='')}/count-tokens",
        _bedrock_body,
        _field("inputTokens"),
    ),
}
"""The counting endpoints of the backend APIs other than the client's own (Anthropic's
``/v1/messages/count_tokens`` takes the client's request as it is)."""
