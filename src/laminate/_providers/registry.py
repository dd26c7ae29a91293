"""The table of wire formats: how each is framed and which handler reads it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final, Literal

from .._assembler import Assembler
from ._common import Handler
from .anthropic import AnthropicHandler
from .ollama import OllamaHandler
from .openai_chat import OpenAIChatHandler
from .openai_responses import OpenAIResponsesHandler

__all__ = ["FRAMING", "HANDLERS", "PROVIDERS", "HandlerOptions"]


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
