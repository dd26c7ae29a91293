"""The APIs laminate reads and writes: one record each, in the order detection tries them.

Adding an API is one package under ``_apis`` and one line here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from .._core.assembler import Assembler
from .._core.errors import UnknownProviderError
from . import anthropic, bedrock, cohere, gemini, ollama, openai_chat, openai_responses
from .base import bare_error
from .spec import Api, HandlerOptions

__all__ = ["APIS", "PROVIDERS", "ItemsTurn", "MessageTurn", "api", "read_body"]

APIS: Final[Mapping[str, Api]] = {
    record.name: record
    for record in (
        openai_chat.API,
        openai_responses.API,
        anthropic.API,
        ollama.API,
        gemini.API,
        cohere.API,
        bedrock.API,
    )
}

PROVIDERS: Final = tuple(APIS)

# For the typing of `assistant_message` only: whose assistant turn is one message, and
# whose is a list of items.
MessageTurn = Literal["openai", "anthropic", "ollama", "gemini", "bedrock", "cohere"]
ItemsTurn = Literal["openai-responses"]


def api(provider: str, *, wanted: str = "reader or writer") -> Api:
    """The record of ``provider``; an unknown name is an :class:`UnknownProviderError`
    that says what was ``wanted`` of it."""
    record = APIS.get(provider)
    if record is None:
        known = ", ".join(map(repr, APIS))
        raise UnknownProviderError(
            f"provider {provider!r} has no {wanted}; use one of {known}", seen=provider
        )
    return record


def read_body(
    assembler: Assembler, data: Mapping[str, Any], provider: str, options: HandlerOptions
) -> None:
    """Read a complete body into ``assembler`` and complete the response."""
    error = bare_error(data)
    if error is not None:
        raise error
    record = api(provider)
    assembler.input_includes_cache = record.input_includes_cache
    record.read_body(assembler, data, options)
    assembler.complete()
