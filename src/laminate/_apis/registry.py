"""The table of wire formats: how each is framed and which handler reads it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

from .._core.assembler import Assembler
from .anthropic import stream as anthropic
from .anthropic.stream import AnthropicHandler
from .base import Handler, error_from_payload
from .ollama import stream as ollama
from .ollama.stream import OllamaHandler
from .openai_chat import stream as openai_chat
from .openai_chat.stream import OpenAIChatHandler
from .openai_responses import stream as openai_responses
from .openai_responses.stream import OpenAIResponsesHandler

__all__ = [
    "BODY_READERS",
    "FRAMING",
    "HANDLERS",
    "PROVIDERS",
    "BodyReader",
    "HandlerOptions",
    "read_body",
]


class HandlerOptions:
    """Provider options a handler may read (``choice``, ``think_tags``)."""

    __slots__ = ("choice", "think_tags")

    def __init__(self, *, choice: int = 0, think_tags: bool = False) -> None:
        self.choice = choice
        self.think_tags = think_tags


def _openai(asm: Assembler, opts: HandlerOptions) -> Handler:
    return OpenAIChatHandler(asm, choice=opts.choice, think_tags=opts.think_tags)


def _openai_responses(asm: Assembler, opts: HandlerOptions) -> Handler:
    return OpenAIResponsesHandler(asm)


def _anthropic(asm: Assembler, opts: HandlerOptions) -> Handler:
    return AnthropicHandler(asm)


def _ollama(asm: Assembler, opts: HandlerOptions) -> Handler:
    return OllamaHandler(asm, think_tags=opts.think_tags)


HANDLERS: Final[dict[str, Callable[[Assembler, HandlerOptions], Handler]]] = {
    "openai": _openai,
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
    "ollama": _ollama,
}

FRAMING: Final[Mapping[str, Literal["sse", "ndjson"]]] = {
    "openai": "sse",
    "openai-responses": "sse",
    "anthropic": "sse",
    "ollama": "ndjson",
}

PROVIDERS: Final = tuple(HANDLERS)

BodyReader = Callable[[Assembler, Mapping[str, Any], HandlerOptions], None]

# Complete (non-streaming) bodies, read into an assembler with the same rules as streams.
BODY_READERS: Final[dict[str, BodyReader]] = {
    "openai": lambda asm, body, opts: openai_chat.parse_body(asm, body, choice=opts.choice),
    "openai-responses": lambda asm, body, opts: openai_responses.parse_body(asm, body),
    "anthropic": lambda asm, body, opts: anthropic.parse_body(asm, body),
    "ollama": lambda asm, body, opts: ollama.parse_body(asm, body),
}


def read_body(
    assembler: Assembler, data: Mapping[str, Any], provider: str, options: HandlerOptions
) -> None:
    """Read a complete body into ``assembler`` and complete the response."""
    if data.get("error") and "output" not in data:
        # A bare error body. A Responses body carries `error` beside its output and is
        # classified by its own reader.
        raise error_from_payload(data)
    BODY_READERS[provider](assembler, data, options)
    assembler.complete()
