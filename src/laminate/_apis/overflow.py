"""A context overflow: an error that says the request's prompt does not fit the model's
context, recognised whatever API or server said it (:func:`is_overflow`), and how an
API's clients are told one (:class:`Overflow`, one per API, in its record's ``Http``).

Recognising is one table for every backend, because an API does not say which server
speaks it: a Chat Completions backend may be OpenAI, vLLM, llama.cpp's server, LM Studio
or a router, each with its own words. An error is an overflow when its type or code is
one of :data:`OVERFLOW_CODES`, or when its message says so in one of the phrasings of
:data:`_PHRASES` (each row names who says it). Writing is each API's own decision: the
error type its clients read as an overflow, and how its message begins (what an agent
matches before it compacts its conversation).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from .._core.errors import LaminateError, ProviderError

__all__ = ["OVERFLOW_CODES", "Overflow", "is_overflow"]

OVERFLOW_CODES: Final = frozenset(
    {
        "context_length_exceeded",  # the OpenAI APIs' `code`, and the routers that copy it
        "exceed_context_size_error",  # llama.cpp's server's `type`
        "context_window_exceeded",
        "contextwindowexceedederror",  # a router's exception name as a type
    }
)
"""Error types and codes (in lower case) that name an overflow."""

# How servers say it in words, in lower case; each row is a regular expression searched
# in the error's message.
_PHRASES: Final = (
    r"prompt is too long",  # the Messages API (and Claude behind Bedrock or Vertex)
    r"input is too long",  # Bedrock's ValidationException
    r"too many input tokens",  # Bedrock, for some models
    r"maximum context length",  # OpenAI's and vLLM's message ("... is N tokens")
    r"input token count.{0,40} exceeds the maximum",  # Gemini's INVALID_ARGUMENT
    r"exceeds the available context size",  # llama.cpp's server
    r"(?:input|prompt) length exceeds the (?:maximum )?context length",  # Ollama
    r"prompt too long",  # Ollama's runner
    r"longer than the maximum model length",  # vLLM
    r"exceeds? (?:the )?(?:model's )?context (?:window|length)",  # routers and others
    r"context length exceeded",
    r"too many tokens",  # Cohere
)
_PHRASE: Final = re.compile("|".join(_PHRASES))
# A message longer than this is only searched in its start: an overflow says so early.
_SEARCHED: Final = 4096


def is_overflow(error: LaminateError) -> bool:
    """Whether ``error`` is a provider's "the prompt does not fit the context" (by its
    type or code, else by its message)."""
    if not isinstance(error, ProviderError):
        return False
    if error.error_type.lower() in OVERFLOW_CODES or _code(error.raw) in OVERFLOW_CODES:
        return True
    return _PHRASE.search(error.message[:_SEARCHED].lower()) is not None


def _code(raw: Any) -> str:
    """The ``code`` of an error payload as sent (``{"error": {"code"}}`` or at the top)."""
    if isinstance(raw, Mapping):
        inner = raw.get("error")
        code = inner.get("code") if isinstance(inner, Mapping) else raw.get("code")
        if isinstance(code, str):
            return code.lower()
    return ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Overflow:
    """How an API's clients are told that their request does not fit the model's
    context: the proxy writes a backend's overflow so, whatever the backend's API, with
    an HTTP 400 before the answer began and as the API's in-stream error after."""

    kind: str
    """The error type (or status name, or exception name) the API's clients read."""
    lead: str = ""
    """How the message begins, before the backend's own text (``""``: the backend's
    text as it is)."""
    code: str | None = None
    """The error's ``code``, where the API's error object carries one."""
    param: str | None = None
    """The error's ``param``, where the API's error object carries one."""

    def message(self, text: str) -> str:
        """The message for a backend's overflow whose own text is ``text``: begun with
        :attr:`lead` (unless it already begins so)."""
        if not self.lead or text.lower().startswith(self.lead.lower()):
            return text
        return f"{self.lead}: {text}" if text else self.lead

    def body(self, body: dict[str, Any]) -> dict[str, Any]:
        """An error body of the API (its ``error_body``) with :attr:`code` and
        :attr:`param` set in its ``error`` object, where it has one."""
        inner = body.get("error")
        if isinstance(inner, dict):
            if self.code is not None:
                inner["code"] = self.code
            if self.param is not None:
                inner["param"] = self.param
        return body
